-- gpu_pgr_signatures: every function of the schema gpu_pgr has the signature of pgRouting 3.4's
-- function of the same name and argument types (installed in public in the test database), read
-- from pg_proc: argument names, modes, types and defaults, result columns and their types, set
-- returning, volatility and strictness; and every shape pgRouting has of the functions gpu_pgr
-- claims is there.
BEGIN;
SET LOCAL client_min_messages = warning;

SELECT plan(251);

-- The functions gpu_pgr claims, all their shapes.
CREATE TEMP TABLE claimed (name text);
INSERT INTO claimed VALUES ('pgr_dijkstra'), ('pgr_dijkstracost'), ('pgr_dijkstracostmatrix'),
  ('pgr_drivingdistance'), ('pgr_johnson'), ('pgr_floydwarshall'), ('pgr_bddijkstra'),
  ('pgr_bddijkstracost'), ('pgr_astar'), ('pgr_astarcost');

-- Seven checks of one gpu_pgr function against pgRouting's twin (same name, same argument types).
CREATE FUNCTION pg_temp.twin_checks(ours oid) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  p pg_proc;
  theirs oid;
  label text;
BEGIN
  SELECT * INTO p FROM pg_proc WHERE oid = ours;
  label := 'gpu_pgr.' || p.proname || '(' || pg_get_function_identity_arguments(ours) || ')';
  SELECT t.oid INTO theirs FROM pg_proc t
  WHERE t.pronamespace = 'public'::regnamespace AND t.proname = p.proname AND t.proargtypes = p.proargtypes;
  RETURN NEXT ok(theirs IS NOT NULL, label || ': pgRouting has it (public, same argument types)');
  RETURN NEXT is(pg_get_function_arguments(ours), pg_get_function_arguments(theirs),
                 label || ': argument names, modes, types and defaults, result columns (OUT) as pgRouting''s');
  RETURN NEXT is(pg_get_function_result(ours), pg_get_function_result(theirs), label || ': result type as pgRouting''s');
  RETURN NEXT is(ARRAY[p.proretset::text, p.prokind::text, p.pronargs::text, p.pronargdefaults::text],
                 (SELECT ARRAY[t.proretset::text, t.prokind::text, t.pronargs::text, t.pronargdefaults::text] FROM pg_proc t WHERE t.oid = theirs),
                 label || ': set returning, kind, argument and default counts as pgRouting''s');
  RETURN NEXT is(p.provolatile, (SELECT t.provolatile FROM pg_proc t WHERE t.oid = theirs), label || ': volatility as pgRouting''s');
  RETURN NEXT is(p.proisstrict, (SELECT t.proisstrict FROM pg_proc t WHERE t.oid = theirs), label || ': strictness as pgRouting''s');
  RETURN NEXT ok(coalesce(obj_description(ours, 'pg_proc'), '') <> '', label || ' has a comment');
END
$$;

-- 35 functions x 7 = 245.
SELECT pg_temp.twin_checks(p.oid) FROM pg_proc p
WHERE p.pronamespace = 'gpu_pgr'::regnamespace AND p.proname LIKE 'pgr\_%'
ORDER BY p.proname, pg_get_function_identity_arguments(p.oid);

SELECT is((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'gpu_pgr'::regnamespace AND proname LIKE 'pgr\_%'), 35,
          'gpu_pgr has 35 pgr_* functions');
-- Every shape of the claimed functions that pgRouting has, gpu_pgr has; and no other pgr_*.
SELECT set_eq(
  $$SELECT proname || '(' || proargtypes::regtype[]::text || ')' FROM pg_proc
    WHERE pronamespace = 'gpu_pgr'::regnamespace AND proname LIKE 'pgr\_%'$$,
  $$SELECT proname || '(' || proargtypes::regtype[]::text || ')' FROM pg_proc
    WHERE pronamespace = 'public'::regnamespace AND proname IN (SELECT name FROM claimed)$$,
  'gpu_pgr has every shape pgRouting 3.4 has of the ten functions, and no other pgr_*');
-- The functions the (lowercase) names in pg_proc answer to, with pgRouting's spelling in calls.
SELECT is((SELECT count(DISTINCT proname)::int FROM pg_proc WHERE pronamespace = 'gpu_pgr'::regnamespace AND proname LIKE 'pgr\_%'),
          10, 'ten function names');
-- The extension owns the schema; everyone may use it; nothing runs as its owner or in parallel.
SELECT ok(EXISTS (SELECT 1 FROM pg_depend d JOIN pg_extension x ON x.oid = d.refobjid
                  WHERE d.classid = 'pg_namespace'::regclass AND d.objid = 'gpu_pgr'::regnamespace
                    AND d.deptype = 'e' AND x.extname = 'gpu_routing'),
          'the schema gpu_pgr belongs to the extension gpu_routing');
SELECT ok(has_schema_privilege('public', 'gpu_pgr', 'USAGE'), 'PUBLIC may use the schema gpu_pgr');
SELECT is((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'gpu_pgr'::regnamespace
           AND (prosecdef OR proparallel <> 'u')), 0,
          'no gpu_pgr function is SECURITY DEFINER or PARALLEL SAFE/RESTRICTED');

SELECT * FROM finish();
ROLLBACK;

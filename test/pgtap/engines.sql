-- engines: every engine gpu_routing_info() lists ('engine <name> (cpu|gpu)'), chosen by name
-- through gpu_routing.sssp_algorithm / apsp_algorithm, gives the rows of CPU Dijkstra on Rome and
-- the random graphs, and is the engine that ran (gpu_routing_last_run). GPU engines run only when
-- a GPU is usable ('gpu 0' in gpu_routing_info()), else they are skipped. Then the settings'
-- errors: unknown names, an engine of the other family, device = gpu without a GPU, a GPU engine
-- under device = cpu; and device = cpu never creating a CUDA context.
BEGIN;
SET LOCAL client_min_messages = warning;
SET LOCAL gpu_routing.device = auto;

CREATE TEMP TABLE engines AS
SELECT m[1] AS name, m[2] AS device, split_part(value, ':', 1) LIKE '%sssp%' AS sssp,
       split_part(value, ':', 1) LIKE '%apsp%' AS apsp
FROM gpu_routing_info(), regexp_match(name, '^engine (\S+) \((cpu|gpu)\)$') AS m
WHERE m IS NOT NULL;
CREATE TEMP TABLE machine AS
SELECT EXISTS (SELECT 1 FROM gpu_routing_info() WHERE name = 'gpu 0') AS gpu_usable,
       EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'dblink') AS has_dblink;

-- 5 checks per single-source engine, 6 per many-source engine, 14 more.
SELECT plan((SELECT 5 * count(*) FILTER (WHERE sssp) + 6 * count(*) FILTER (WHERE apsp) + 14 FROM engines)::int);

SELECT ok((SELECT count(*) FROM engines WHERE name = 'dijkstra' AND device = 'cpu' AND sssp AND apsp) = 1,
          'gpu_routing_info lists the CPU dijkstra engine for both families');
SELECT ok((SELECT count(*) FROM engines WHERE apsp) >= 2 AND (SELECT count(*) FROM engines WHERE sssp) >= 1,
          'gpu_routing_info lists engines of both families');

\set rome 'SELECT id, source, target, cost FROM rome_edges ORDER BY id'
-- A part of Rome (1000 vertices) for the many-source engines, which may be dense (V^3).
\set rome_part 'SELECT id, source, target, cost FROM rome_edges WHERE source <= 1000 AND target <= 1000 ORDER BY id'
\set rint 'SELECT id, source, target, cost, reverse_cost FROM random_int_edges ORDER BY id'
\set rreal 'SELECT id, source, target, cost, reverse_cost FROM random_real_edges ORDER BY id'
CREATE TEMP TABLE calls (name text PRIMARY KEY, call text, tolerant boolean);
INSERT INTO calls VALUES
  ('sssp rome', format('SELECT * FROM gpu_sssp(%L, 1)', :'rome'), false),
  ('sssp random_int undirected', format('SELECT * FROM gpu_sssp(%L, 3, false)', :'rint'), false),
  ('sssp random_real', format('SELECT * FROM gpu_sssp(%L, 1)', :'rreal'), false),
  ('path rome one to many', format('SELECT * FROM gpu_path(%L, 1, ARRAY[7, 700, 2000, 3353])', :'rome'), false),
  ('apsp random_int', format('SELECT * FROM gpu_apsp(%L)', :'rint'), false),
  ('apsp random_real undirected', format('SELECT * FROM gpu_apsp(%L, false)', :'rreal'), true),
  ('matrix rome part', format('SELECT * FROM gpu_apsp(%L, ARRAY(SELECT generate_series(1, 1000, 33)::bigint), '
                              'ARRAY(SELECT generate_series(7, 1000, 31)::bigint))', :'rome_part'), false),
  ('sssp many rome part', format('SELECT * FROM gpu_sssp(%L, ARRAY[1, 500, 999])', :'rome_part'), false),
  ('path many to many rome part undirected', format('SELECT * FROM gpu_path(%L, ARRAY[1, 500, 999], ARRAY[7, 700, 400], false)', :'rome_part'), false);

-- The reference: CPU Dijkstra.
CREATE FUNCTION pg_temp.reference(call_name text) RETURNS text LANGUAGE sql AS $$
  SELECT 'SELECT * FROM reference_' || replace(call_name, ' ', '_')
$$;
CREATE FUNCTION pg_temp.make_references() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  c calls;
BEGIN
  PERFORM set_config('gpu_routing.device', 'cpu', true);
  PERFORM set_config('gpu_routing.sssp_algorithm', 'dijkstra', true);
  PERFORM set_config('gpu_routing.apsp_algorithm', 'dijkstra', true);
  FOR c IN SELECT * FROM calls LOOP
    EXECUTE format('CREATE TEMP TABLE reference_%s AS SELECT row_number() OVER () AS rn, r.* FROM (%s) AS r',
                   replace(c.name, ' ', '_'), c.call);
  END LOOP;
  PERFORM set_config('gpu_routing.device', 'auto', true);
  PERFORM set_config('gpu_routing.sssp_algorithm', 'auto', true);
  PERFORM set_config('gpu_routing.apsp_algorithm', 'auto', true);
END
$$;
SELECT pg_temp.make_references();
SELECT ok((SELECT count(*) FROM reference_sssp_rome) = 3353 AND (SELECT count(*) FROM reference_apsp_random_int) > 50000
          AND (SELECT count(*) FROM reference_matrix_rome_part) > 500,
          'the Dijkstra references are full-sized');

-- The rows of `call` under the current settings equal the reference, in order. tolerant: the
-- double precision columns may differ by 1e-12 relative (dense engines and the road index add
-- real costs in another order; integer costs stay exact).
CREATE FUNCTION pg_temp.same_as_reference(c calls, description text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  mismatches bigint;
BEGIN
  IF NOT c.tolerant THEN
    RETURN results_eq(c.call, format('SELECT %s FROM reference_%s ORDER BY rn',
                                     (SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
                                      WHERE attrelid = ('reference_' || replace(c.name, ' ', '_'))::regclass
                                        AND attnum > 1 AND NOT attisdropped),
                                     replace(c.name, ' ', '_')), description);
  END IF;
  IF c.name LIKE 'sssp %' THEN
    -- Single-source rows: the same vertices, distances within the tolerance (a predecessor may
    -- differ only where two paths tie within it).
    EXECUTE format('SELECT count(*) FROM (SELECT row_number() OVER () AS rn, o.* FROM (%s) AS o) AS o '
                   'FULL JOIN reference_%s AS r ON r.rn = o.rn '
                   'WHERE o.node IS DISTINCT FROM r.node '
                   'OR NOT abs(o.distance - r.distance) <= 1e-12 * greatest(abs(r.distance), 1)',
                   c.call, replace(c.name, ' ', '_')) INTO mismatches;
    RETURN is(mismatches, 0::bigint, description);
  END IF;
  EXECUTE format('SELECT count(*) FROM (SELECT row_number() OVER () AS rn, o.* FROM (%s) AS o) AS o '
                 'FULL JOIN reference_%s AS r ON r.rn = o.rn '
                 'WHERE o.start_vid IS DISTINCT FROM r.start_vid OR o.end_vid IS DISTINCT FROM r.end_vid '
                 'OR NOT abs(o.agg_cost - r.agg_cost) <= 1e-12 * greatest(abs(r.agg_cost), 1)',
                 c.call, replace(c.name, ' ', '_')) INTO mismatches;
  RETURN is(mismatches, 0::bigint, description);
END
$$;

CREATE FUNCTION pg_temp.engine_checks(e engines) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  family text;
  setting text;
  call_names text[];
  c calls;
  n int;
BEGIN
  FOREACH family IN ARRAY ARRAY['sssp', 'apsp'] LOOP
    CONTINUE WHEN (family = 'sssp' AND NOT e.sssp) OR (family = 'apsp' AND NOT e.apsp);
    setting := 'gpu_routing.' || family || '_algorithm';
    call_names := CASE family
      WHEN 'sssp' THEN ARRAY['sssp rome', 'sssp random_int undirected', 'sssp random_real', 'path rome one to many']
      ELSE ARRAY['apsp random_int', 'apsp random_real undirected', 'matrix rome part', 'sssp many rome part',
                 'path many to many rome part undirected'] END;
    n := array_length(call_names, 1) + 1;
    IF e.device = 'gpu' AND NOT (SELECT gpu_usable FROM machine) THEN
      RETURN NEXT skip(format('no usable GPU for engine %s (%s)', e.name, family), n);
      CONTINUE;
    END IF;
    PERFORM set_config('gpu_routing.device', e.device, true);
    PERFORM set_config(setting, e.name, true);
    FOR c IN SELECT * FROM calls WHERE name = ANY (call_names) ORDER BY array_position(call_names, name) LOOP
      -- The road index sums fractional costs in another order than Dijkstra (documented).
      IF e.name = 'cch' AND c.name LIKE '%random_real%' THEN
        c.tolerant := true;
      END IF;
      RETURN NEXT pg_temp.same_as_reference(c, format('%s = %s (%s): %s as Dijkstra', setting, e.name, e.device, c.name));
    END LOOP;
    RETURN NEXT is((SELECT algorithm || ' on ' || CASE WHEN device LIKE 'CPU%' THEN 'cpu' ELSE 'gpu' END
                    FROM gpu_routing_last_run()), e.name || ' on ' || e.device,
                   format('%s = %s (%s): gpu_routing_last_run names it', setting, e.name, e.device));
    PERFORM set_config('gpu_routing.device', 'auto', true);
    PERFORM set_config(setting, 'auto', true);
  END LOOP;
END
$$;
CREATE FUNCTION pg_temp.all_engine_checks() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  e engines;
BEGIN
  FOR e IN SELECT * FROM engines ORDER BY device, name LOOP
    RETURN QUERY SELECT pg_temp.engine_checks(e);
  END LOOP;
END
$$;
SELECT pg_temp.all_engine_checks();

-- Settings errors. -----------------------------------------------------------------------------
SELECT throws_ok($$SET LOCAL gpu_routing.sssp_algorithm = 'no_such_engine'$$, '22023',
                 'invalid value for parameter "gpu_routing.sssp_algorithm": "no_such_engine"', 'unknown sssp engine refused');
SELECT throws_ok($$SET LOCAL gpu_routing.apsp_algorithm = 'no_such_engine'$$, '22023',
                 'invalid value for parameter "gpu_routing.apsp_algorithm": "no_such_engine"', 'unknown apsp engine refused');
SELECT throws_ok($$SET LOCAL gpu_routing.device = 'somewhere'$$, '22023',
                 'invalid value for parameter "gpu_routing.device": "somewhere"', 'unknown device refused');
SELECT throws_ok(format('SET LOCAL gpu_routing.sssp_algorithm = %I', (SELECT min(name) FROM engines WHERE apsp AND NOT sssp)), '22023',
                 format('invalid value for parameter "gpu_routing.sssp_algorithm": "%s"', (SELECT min(name) FROM engines WHERE apsp AND NOT sssp)),
                 'a many-source-only engine refused as sssp_algorithm');
SELECT lives_ok($$SET LOCAL gpu_routing.sssp_algorithm = 'auto'$$, 'auto accepted as sssp_algorithm');
SELECT lives_ok($$SET LOCAL gpu_routing.apsp_algorithm = 'auto'$$, 'auto accepted as apsp_algorithm');

-- device = gpu: a clear error without a GPU, the GPU with one.
CREATE FUNCTION pg_temp.device_gpu_check() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  got_state text;
  got_message text;
BEGIN
  PERFORM set_config('gpu_routing.device', 'gpu', true);
  IF (SELECT gpu_usable FROM machine) THEN
    PERFORM count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 6);
    PERFORM set_config('gpu_routing.device', 'auto', true);
    RETURN isnt((SELECT device FROM gpu_routing_last_run()), NULL, 'device = gpu with a GPU: runs')
           || E'\n' || diag('ran on ' || (SELECT device FROM gpu_routing_last_run()));
  END IF;
  BEGIN
    PERFORM count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 6);
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS got_state = RETURNED_SQLSTATE, got_message = MESSAGE_TEXT;
  END;
  PERFORM set_config('gpu_routing.device', 'auto', true);
  RETURN ok(got_state = '55000' AND got_message LIKE 'gpu_routing.device = gpu needs a GPU, but none is usable: %',
            'device = gpu without a GPU: a clear error (55000, "needs a GPU, but none is usable")')
         || CASE WHEN got_state IS NULL THEN E'\n' || diag('no error') ELSE E'\n' || diag(got_state || ' ' || got_message) END;
END
$$;
SELECT pg_temp.device_gpu_check();

-- A GPU engine under device = cpu: refused, naming it.
CREATE FUNCTION pg_temp.gpu_engine_under_cpu_check() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  engine text := (SELECT min(name) FROM engines WHERE device = 'gpu' AND sssp
                  AND name NOT IN (SELECT name FROM engines WHERE device = 'cpu'));
  result text;
BEGIN
  IF engine IS NULL THEN
    RETURN skip('this build has no GPU-only single-source engine', 1);
  END IF;
  PERFORM set_config('gpu_routing.device', 'cpu', true);
  PERFORM set_config('gpu_routing.sssp_algorithm', engine, true);
  result := throws_ok($q$SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 6)$q$, '22023',
                      format('gpu_routing.sssp_algorithm = "%s" does not run on the CPU', engine),
                      format('GPU engine %s under device = cpu: refused', engine));
  PERFORM set_config('gpu_routing.device', 'auto', true);
  PERFORM set_config('gpu_routing.sssp_algorithm', 'auto', true);
  RETURN result;
END
$$;
SELECT pg_temp.gpu_engine_under_cpu_check();

-- device = cpu never creates a CUDA context: a fresh session runs every function on the CPU, then
-- (device = auto) gpu_routing_info shows no context memory.
CREATE FUNCTION pg_temp.cpu_session_check() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  conn text := format('dbname=%s port=%s host=%s options=''-c gpu_routing.device=cpu''', current_database(),
                      current_setting('port'), split_part(current_setting('unix_socket_directories'), ',', 1));
  results text[];
BEGIN
  IF NOT (SELECT has_dblink FROM machine) THEN
    RETURN NEXT skip('dblink is not installed', 3);
    RETURN;
  END IF;
  CREATE EXTENSION IF NOT EXISTS dblink;
  PERFORM dblink_connect('cpu_session', conn);
  SELECT array_agg(v ORDER BY k) INTO results FROM dblink('cpu_session', $q$
    SELECT 1, (SELECT value FROM gpu_routing_info() WHERE name = 'gpu')
    UNION ALL SELECT 2, (SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM rome_edges', 1))::text
            || ' ' || (SELECT count(*) FROM gpu_path('SELECT id, source, target, cost FROM rome_edges', ARRAY[1, 2], ARRAY[3, 4]))
            || ' ' || (SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost, reverse_cost FROM random_int_edges'))
            || ' ' || (SELECT device FROM gpu_routing_last_run())
    $q$) AS t(k int, v text);
  RETURN NEXT is(results[1], 'not probed: gpu_routing.device = cpu', 'device = cpu: gpu_routing_info says the GPU is not probed');
  RETURN NEXT ok(results[2] LIKE '3353 % % CPU%', 'device = cpu: every call ran on the CPU') || E'\n' || diag(results[2]);
  PERFORM dblink_exec('cpu_session', 'SET gpu_routing.device = auto');
  RETURN NEXT is((SELECT count(*)::int FROM dblink('cpu_session', $q$SELECT name FROM gpu_routing_info() WHERE name = 'gpu context memory'$q$) AS t(name text)),
                 0, 'device = cpu: no CUDA context was created');
  PERFORM dblink_disconnect('cpu_session');
END
$$;
SELECT pg_temp.cpu_session_check();

SELECT * FROM finish();
ROLLBACK;

-- arrays: gpu_apsp_array (cost matrices and all pairs, one row per source with a float8[]) agrees
-- exactly with gpu_apsp's rows, for every many-source engine gpu_routing_info() lists (GPU engines
-- only where a GPU is usable): every finite entry is the row's cost, every Infinity a pair with no
-- row (or an id not in the graph), every self pair 0; the columns follow the targets as given
-- (duplicates included), or every vertex by ascending id.
BEGIN;
SET LOCAL client_min_messages = warning;

CREATE TEMP TABLE engines AS
SELECT m[1] AS name, m[2] AS device
FROM gpu_routing_info(), regexp_match(name, '^engine (\S+) \((cpu|gpu)\)$') AS m
WHERE m IS NOT NULL AND split_part(value, ':', 1) LIKE '%apsp%';
CREATE TEMP TABLE machine AS
SELECT EXISTS (SELECT 1 FROM gpu_routing_info() WHERE name = 'gpu 0') AS gpu_usable;

-- 4 checks per engine, 3 more.
SELECT plan((SELECT 4 * count(*) + 3 FROM engines)::int);

\set rome_part 'SELECT id, source, target, cost FROM rome_edges WHERE source <= 1000 AND target <= 1000'
\set rint 'SELECT id, source, target, cost, reverse_cost FROM random_int_edges'
\set rreal 'SELECT id, source, target, cost, reverse_cost FROM random_real_edges'

-- The entries of an array call that disagree with the rows of the same question: a finite entry
-- other than its row's cost, an Infinity where a row exists, a missing row, a self pair not 0,
-- a column out of its place. `columns` is the targets array (NULL: every vertex by id, taken from
-- the all-pairs sources, which are every vertex).
CREATE FUNCTION pg_temp.disagreements(array_call text, rows_call text, columns bigint[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  result bigint;
BEGIN
  EXECUTE format($q$
    WITH a AS (%s), r AS (%s),
    cols AS (SELECT id, ord FROM unnest(coalesce($1, (SELECT array_agg(start_vid ORDER BY start_vid) FROM a)))
                                 WITH ORDINALITY AS c(id, ord)),
    entries AS (SELECT a.start_vid, cols.id AS end_vid, a.agg_costs[cols.ord] AS cost,
                       array_length(a.agg_costs, 1) AS width
                FROM a CROSS JOIN cols)
    SELECT (SELECT count(*) FROM entries e LEFT JOIN r ON r.start_vid = e.start_vid AND r.end_vid = e.end_vid
            WHERE e.width <> (SELECT count(*) FROM cols)
               OR (e.start_vid = e.end_vid AND e.cost <> 0)
               OR (e.start_vid <> e.end_vid AND e.cost = 'Infinity' AND r.agg_cost IS NOT NULL)
               OR (e.start_vid <> e.end_vid AND e.cost <> 'Infinity' AND e.cost IS DISTINCT FROM r.agg_cost))
         + (SELECT count(*) FROM r WHERE NOT EXISTS (SELECT 1 FROM entries e
                                                     WHERE e.start_vid = r.start_vid AND e.end_vid = r.end_vid))
    $q$, array_call, rows_call) USING columns INTO result;
  RETURN result;
END
$$;

CREATE FUNCTION pg_temp.engine_checks(e engines) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  rome_part text := 'SELECT id, source, target, cost FROM rome_edges WHERE source <= 1000 AND target <= 1000';
  rint text := 'SELECT id, source, target, cost, reverse_cost FROM random_int_edges';
  rreal text := 'SELECT id, source, target, cost, reverse_cost FROM random_real_edges';
  sources bigint[] := ARRAY(SELECT generate_series(1, 1000, 33)::bigint);
  -- Out of order, a duplicate, and ids no edge has.
  targets bigint[] := ARRAY(SELECT generate_series(1000, 7, -31)::bigint) || ARRAY[40, 5000, -3]::bigint[];
  label text := format('apsp_algorithm = %s (%s)', e.name, e.device);
BEGIN
  IF e.device = 'gpu' AND NOT (SELECT gpu_usable FROM machine) THEN
    RETURN NEXT skip(format('no usable GPU for engine %s', e.name), 4);
    RETURN;
  END IF;
  PERFORM set_config('gpu_routing.device', e.device, true);
  PERFORM set_config('gpu_routing.apsp_algorithm', e.name, true);
  RETURN NEXT is(pg_temp.disagreements(
      format('SELECT * FROM gpu_apsp_array(%L, %L::bigint[], %L::bigint[])', rome_part, sources, targets),
      format('SELECT * FROM gpu_apsp(%L, %L::bigint[], %L::bigint[])', rome_part, sources, targets), targets),
    0::bigint, label || ': cost matrix on part of Rome, targets out of order, duplicated, absent');
  RETURN NEXT is(pg_temp.disagreements(
      format('SELECT * FROM gpu_apsp_array(%L)', rint), format('SELECT * FROM gpu_apsp(%L)', rint), NULL),
    0::bigint, label || ': all pairs, random_int (ties, one-way edges)');
  RETURN NEXT is(pg_temp.disagreements(
      format('SELECT * FROM gpu_apsp_array(%L, false)', rreal), format('SELECT * FROM gpu_apsp(%L, false)', rreal), NULL),
    0::bigint, label || ': all pairs, random_real undirected');
  RETURN NEXT is(pg_temp.disagreements(
      format('SELECT * FROM gpu_apsp_array(%L, ARRAY[3, 1, 2]::bigint[], NULL)', rint),
      format('SELECT * FROM gpu_apsp(%L, ARRAY[3, 1, 2]::bigint[], NULL)', rint),
      ARRAY(SELECT DISTINCT v FROM (SELECT source FROM random_int_edges UNION SELECT target FROM random_int_edges) e(v) ORDER BY v)),
    0::bigint, label || ': targets NULL: every vertex by ascending id');
  PERFORM set_config('gpu_routing.device', 'auto', true);
  PERFORM set_config('gpu_routing.apsp_algorithm', 'auto', true);
END
$$;
SELECT pg_temp.engine_checks(e) FROM (SELECT * FROM engines ORDER BY device, name) e;

-- The shape: one row per source in the graph, ascending; the width is the number of targets.
SELECT results_eq(
  format('SELECT start_vid, array_length(agg_costs, 1) FROM gpu_apsp_array(%L, ARRAY[700, 5, 9999, 5, 1]::bigint[], ARRAY[1, 1, 2]::bigint[])', :'rome_part'),
  $$VALUES (1::bigint, 3), (5, 3), (700, 3)$$,
  'rows: the sources in the graph, once each, ascending; columns: the targets as given');
SELECT is((SELECT agg_costs FROM gpu_apsp_array('SELECT id, source, target, cost, reverse_cost FROM sample_edges',
                                                ARRAY[6]::bigint[], ARRAY[10, 6, 99]::bigint[])),
          ARRAY[5, 0, 'Infinity']::float8[], 'sample network: 6 -> 10 costs 5, to itself 0, to an unknown id Infinity');
SELECT is((SELECT rows FROM gpu_routing_last_run()), 1::bigint, 'gpu_routing_last_run counts one row per source');

SELECT * FROM finish();
ROLLBACK;

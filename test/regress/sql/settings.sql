-- The gpu_routing.* settings: defaults, validation, and every CPU engine giving the same answers.
-- They exist once the library is loaded (by the first call, or by session_preload_libraries).
LOAD 'gpu_routing';
SHOW gpu_routing.threads;
SHOW gpu_routing.max_memory;
SHOW gpu_routing.sssp_algorithm;
SHOW gpu_routing.apsp_algorithm;
SET gpu_routing.device = 'somewhere';
SET gpu_routing.threads = -1;
SET gpu_routing.max_memory = '10kB';
SET gpu_routing.no_such_setting = 1;
SET gpu_routing.sssp_algorithm = 'no_such_engine';
SET gpu_routing.apsp_algorithm = 'no_such_engine';
-- A many-source engine is not a single-source one.
SET gpu_routing.sssp_algorithm = 'blocked_fw';
-- On the CPU, every all-pairs engine agrees with Dijkstra.
SET gpu_routing.device = cpu;
SET gpu_routing.threads = 1;
CREATE TEMP TABLE cpu_results AS
SELECT e.engine, a.* FROM (VALUES ('dijkstra'), ('blocked_fw'), ('floyd_warshall'), ('cch')) AS e(engine),
  LATERAL (SELECT set_config('gpu_routing.apsp_algorithm', e.engine, false)) AS s,
  LATERAL gpu_apsp('SELECT id, source, target, cost, reverse_cost FROM sample_edges') AS a;
SELECT engine, count(*), sum(agg_cost) FROM cpu_results GROUP BY engine ORDER BY engine;
SELECT count(*) AS disagreements FROM cpu_results a JOIN cpu_results b
  ON a.start_vid = b.start_vid AND a.end_vid = b.end_vid AND a.engine < b.engine
WHERE a.agg_cost <> b.agg_cost;
RESET gpu_routing.apsp_algorithm;
RESET gpu_routing.threads;
RESET gpu_routing.device;
-- gpu_routing.retained_memory: freed memory a routing session keeps for its next call.
SHOW gpu_routing.retained_memory;
SET gpu_routing.retained_memory = -1;
SET gpu_routing.retained_memory = '2GB';
-- Rows of 2.4 MB (a chain of 300,001 vertices, four trees as arrays a call) come from kept
-- blocks and the kept heap, whatever was there before, under every setting: each call's rows
-- are whole.
CREATE TEMP TABLE chain AS SELECT id, id AS source, id + 1 AS target, 1.0::float8 AS cost
  FROM generate_series(1, 300000) id;
CREATE FUNCTION pg_temp.tree_rows(start bigint)
RETURNS TABLE (s bigint, reached bigint, unreached bigint, total float8) AS $$
  SELECT a.start_vid, count(*) FILTER (WHERE c <> 'Infinity'), count(*) FILTER (WHERE c = 'Infinity'),
         sum(c) FILTER (WHERE c <> 'Infinity')
  FROM gpu_apsp_array('SELECT id, source, target, cost FROM chain',
                      ARRAY[start, start + 1, start + 2, start + 3]) a, unnest(a.agg_costs) c
  GROUP BY a.start_vid
$$ LANGUAGE sql;
CREATE TEMP TABLE tree_checks (setting text, start bigint, ok boolean);
DO $$
DECLARE
  setting text;
  start bigint;
  got record;
BEGIN
  FOREACH setting IN ARRAY ARRAY['64MB', '64MB', '0', '1MB', '256MB', '64MB'] LOOP
    PERFORM set_config('gpu_routing.retained_memory', setting, false);
    FOREACH start IN ARRAY ARRAY[1, 150000] LOOP
      FOR got IN SELECT * FROM pg_temp.tree_rows(start) LOOP
        INSERT INTO tree_checks VALUES (setting, got.s,
          got.reached = 300002 - got.s AND got.unreached = got.s - 1
          -- distances 0, 1, ..., 300001 - s along the chain
          AND got.total = (300001 - got.s) * (300002 - got.s) / 2.0);
      END LOOP;
    END LOOP;
  END LOOP;
END $$;
SELECT count(*) AS rows, count(*) FILTER (WHERE ok) AS whole_rows FROM tree_checks;
RESET gpu_routing.retained_memory;
SHOW gpu_routing.retained_memory;

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

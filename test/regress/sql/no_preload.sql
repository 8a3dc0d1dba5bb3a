-- A server without gpu_routing in shared_preload_libraries (test/deployments/run.sh runs this
-- after the suites that need no kept graph): loading the library neither ends the session nor
-- fails; every call with edges_sql works; what needs the library preloaded says so, naming the
-- line to add.
LOAD 'gpu_routing';
SELECT current_setting('shared_preload_libraries') = '' AS not_preloaded;
SELECT value FROM gpu_routing_info() WHERE name IN ('version', 'shared_preload_libraries', 'kept graphs', 'service')
ORDER BY name;
-- The GPU service's start-up settings are kept for the next start, not applied (sighup here, as
-- a library loaded after startup cannot define postmaster settings).
SELECT name, setting, context FROM pg_settings
WHERE name IN ('gpu_routing.service', 'gpu_routing.service_devices', 'gpu_routing.service_lanes') ORDER BY name;
SET gpu_routing.device = cpu;
SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6, 10) WHERE edge = -1;
SELECT count(*) FROM gpu_apsp_array('SELECT id, source, target, cost FROM rome_edges', ARRAY[1, 2, 3], ARRAY[7, 8]);
-- The road index on edges_sql (built for the call) needs no shared memory.
SET gpu_routing.sssp_algorithm = cch;
SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6, 10) WHERE edge = -1;
SELECT algorithm FROM gpu_routing_last_run();
RESET gpu_routing.sssp_algorithm;
-- Kept graphs: a clear error for each function that needs them.
\set VERBOSITY default
SELECT gpu_graph_create('np', 'SELECT id, source, target, cost FROM sample_edges');
SELECT gpu_graph_refresh('np');
SELECT gpu_graph_index('np');
SELECT * FROM gpu_path('graph:np', 6, 10);
SELECT * FROM gpu_routing_progress;
\set VERBOSITY terse
SELECT name, state, note FROM gpu_graphs();
RESET gpu_routing.device;

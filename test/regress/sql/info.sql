-- gpu_routing_info() and gpu_routing_last_run().
SELECT value FROM gpu_routing_info() WHERE name = 'version';
SELECT count(*) > 0 AS has_build, bool_and(value <> '') AS described FROM gpu_routing_info() WHERE name = 'build';
SELECT name FROM gpu_routing_info() WHERE name LIKE 'engine %(cpu)' ORDER BY name;
SELECT value::int > 0 AS threads_positive FROM gpu_routing_info() WHERE name = 'openmp threads';
SELECT count(*) FROM gpu_path('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6, ARRAY[10, 17]);
SELECT function, vertices, edges, sources, rows, load_ms >= 0 AND build_ms >= 0 AND compute_ms >= 0
       AND emit_ms >= 0 AND total_ms >= load_ms AS timed, device <> '' AS has_device, algorithm <> '' AS has_algorithm
FROM gpu_routing_last_run();
SELECT count(*) FROM gpu_apsp('SELECT source, target, cost FROM sample_edges');
SELECT function, vertices, edges, sources, rows FROM gpu_routing_last_run();
-- Every setting is listed (gpu_routing.service where the library is preloaded, as in the test
-- clusters), and whether kept graphs are on.
SELECT name FROM gpu_routing_info() WHERE name LIKE 'gpu_routing.%' ORDER BY name;
-- None of pg_settings' is missing (the test hooks aside).
SELECT name FROM pg_settings WHERE name LIKE 'gpu_routing.%' AND name NOT LIKE 'gpu_routing.test\_%'
EXCEPT SELECT name FROM gpu_routing_info();
SELECT value LIKE '% of % (gpu_routing.graph_memory)' AS kept_graphs_on FROM gpu_routing_info() WHERE name = 'kept graphs';
-- The GPU service's rows. They hold whether the service runs (gpu_routing.service = cpu, or auto
-- with a GPU) or not (auto without a GPU: state "no GPU", calls run in the backend).
SELECT name FROM gpu_routing_info() WHERE name IN ('service', 'service graphs', 'service queue') ORDER BY name;
SELECT value IN ('auto', 'cpu') AS service_setting FROM gpu_routing_info() WHERE name = 'gpu_routing.service';
SELECT value ~ '^(ready|starting|stopped|found no usable GPU), (GPU engines|CPU engines \(for tests\))(, pid [0-9]+)?, [0-9]+ restarts'
       AS service_described
FROM gpu_routing_info() WHERE name = 'service';
SELECT value ~ '^[0-9]+ graphs, .+ of .+ \(gpu_routing\.gpu_graph_memory\)$' AS graphs_described
FROM gpu_routing_info() WHERE name = 'service graphs';
SELECT value ~ '^[0-9]+ waiting, [0-9]+ claimed; [0-9]+ queued for a device; [0-9]+ requests, [0-9]+ batches run, mean batch size [0-9]+\.[0-9]{2}, [0-9]+ failed$'
       AS queue_described
FROM gpu_routing_info() WHERE name = 'service queue';
-- gpu_routing_last_run().batch_size and wait_ms: both NULL for a call computed in the backend, both
-- set for one the service answered (its device then says so); in CPU mode every call goes there.
CREATE TEMP TABLE info_service AS
SELECT value LIKE 'ready, CPU engines%' AS cpu_service FROM gpu_routing_info() WHERE name = 'service';
SELECT count(*) FROM gpu_path('SELECT id, source, target, cost FROM rome_edges', 1, 3000);
SELECT function, (batch_size IS NULL) = (wait_ms IS NULL) AS both_or_neither,
       batch_size IS NULL OR batch_size >= 1 AS batch_size_valid, wait_ms IS NULL OR wait_ms >= 0 AS wait_valid,
       (batch_size IS NOT NULL) = (device LIKE '%, through the GPU service') AS device_says,
       NOT (SELECT cpu_service FROM info_service) OR batch_size IS NOT NULL AS through_service_in_cpu_mode
FROM gpu_routing_last_run();
SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM sample_edges');
-- Many sources in one request: never shared with another request.
SELECT function, batch_size IS NULL OR batch_size = 1 AS alone, (batch_size IS NULL) = (wait_ms IS NULL) AS both_or_neither,
       (batch_size IS NOT NULL) = (device LIKE '%, through the GPU service') AS device_says,
       NOT (SELECT cpu_service FROM info_service) OR batch_size IS NOT NULL AS through_service_in_cpu_mode
FROM gpu_routing_last_run();
DROP TABLE info_service;

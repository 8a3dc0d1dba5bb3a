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
-- Every setting is listed, and whether kept graphs are on.
SELECT name FROM gpu_routing_info() WHERE name LIKE 'gpu_routing.%' ORDER BY name;
SELECT value LIKE '% of % (gpu_routing.graph_memory)' AS kept_graphs_on FROM gpu_routing_info() WHERE name = 'kept graphs';

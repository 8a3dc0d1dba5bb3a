-- gpu_apsp_array: cost matrices and all pairs as one row per source with a float8[] of costs.
\set edges 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'

-- Columns follow the targets as given: out of order, duplicated, absent (Infinity); 0 to itself.
SELECT * FROM gpu_apsp_array(:'edges', ARRAY[7, 6, 42, 6], ARRAY[10, 6, 42, 1, 10]);
SELECT start_vid, end_vid, agg_cost FROM gpu_apsp(:'edges', ARRAY[6, 7], ARRAY[1, 6, 10]) ORDER BY 1, 2;
-- Undirected; integer arrays of any width cast to bigint[].
SELECT * FROM gpu_apsp_array(:'edges', ARRAY[6]::int[], ARRAY[10, 5]::int[], false);
-- Targets NULL: every vertex by ascending id; all pairs: a square matrix in that order.
SELECT start_vid, array_length(agg_costs, 1) AS width, agg_costs[1:6] FROM gpu_apsp_array(:'edges', ARRAY[1, 2], NULL);
SELECT count(*) AS rows, min(array_length(agg_costs, 1)) AS width,
       bool_and(agg_costs[r] = 0) AS zero_diagonal
FROM (SELECT *, row_number() OVER (ORDER BY start_vid) AS r FROM gpu_apsp_array(:'edges')) m;
-- The same through a kept graph.
SELECT gpu_graph_create('arrays_sample', :'edges') LIKE 'kept graph arrays_sample: %' AS created;
SELECT (SELECT array_agg(agg_costs ORDER BY start_vid) FROM gpu_apsp_array('graph:arrays_sample'))
     = (SELECT array_agg(agg_costs ORDER BY start_vid) FROM gpu_apsp_array(:'edges')) AS kept_equals_edges_sql;
SELECT function, graph, rows FROM gpu_routing_last_run();
SELECT gpu_graph_drop('arrays_sample');
-- Rows in a chosen order, e.g. that of the sources as given.
SELECT m.start_vid, m.agg_costs
FROM gpu_apsp_array(:'edges', ARRAY[12, 3, 7], ARRAY[12, 3, 7]) m
ORDER BY array_position(ARRAY[12, 3, 7]::bigint[], m.start_vid);

-- NULL arguments: no rows, as gpu_apsp; bad arrays: errors naming the function.
SELECT count(*) FROM gpu_apsp_array(NULL, ARRAY[1]);
SELECT count(*) FROM gpu_apsp_array(:'edges', NULL::bigint[]);
SELECT count(*) FROM gpu_apsp_array(:'edges', ARRAY[1], ARRAY[2], NULL);
SELECT * FROM gpu_apsp_array(:'edges', ARRAY[]::bigint[]);
SELECT * FROM gpu_apsp_array(:'edges', ARRAY[1], ARRAY[1, NULL]);

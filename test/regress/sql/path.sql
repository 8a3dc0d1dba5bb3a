-- gpu_path: pgr_dijkstra's five shapes, columns and conventions.
\set edges 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
-- pgRouting's documented answer: 6 -> 10 over edges 4, 8, 9, 16, 3, agg_cost 5.
SELECT * FROM gpu_path(:'edges', 6, 10);
SELECT * FROM gpu_path(:'edges', 6, 10, false);
SELECT * FROM gpu_path(:'edges', 6, ARRAY[10, 17, 6, 10]);
SELECT * FROM gpu_path(:'edges', ARRAY[1, 6], 17);
SELECT * FROM gpu_path(:'edges', ARRAY[6, 1], ARRAY[10, 17], false);
SELECT * FROM gpu_path(:'edges', 'SELECT * FROM (VALUES (6, 10), (6, 6), (1, 17), (6, 10)) AS c(source, target)');
-- start = end, unreachable, and unknown vertices give no rows.
SELECT count(*) FROM gpu_path(:'edges', 6, 6);
SELECT count(*) FROM gpu_path(:'edges', 6, 2);
SELECT count(*) FROM gpu_path(:'edges', 6, 999);
SELECT count(*) FROM gpu_path(:'edges', 999, 6);
-- Parallel edges: the cheapest, and among equally cheap ones the smallest id.
SELECT node, edge, cost, agg_cost FROM gpu_path(
  'SELECT * FROM (VALUES (7, 1, 2, 3.0), (5, 1, 2, 2.0), (6, 1, 2, 2.0), (4, 1, 2, 9.0)) AS e(id, source, target, cost)', 1, 2);
-- Zero-cost edges and self loops are harmless.
SELECT node, edge, cost, agg_cost FROM gpu_path(
  'SELECT * FROM (VALUES (1, 1, 2, 0.0), (2, 2, 1, 0.0), (3, 2, 2, 0.0), (4, 2, 3, 1.0), (5, 1, 3, 1.0)) AS e(id, source, target, cost)', 1, 3);
-- Rome: the same pairs and the same total cost as pgRouting for every pair of a 4 x 4 matrix.
WITH ours AS (
  SELECT start_vid, end_vid, agg_cost FROM gpu_path('SELECT id, source, target, cost FROM rome_edges',
      ARRAY[1, 500, 1000, 3000], ARRAY[7, 700, 2000, 3353]) WHERE edge = -1),
theirs AS (
  SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra('SELECT id, source, target, cost FROM rome_edges',
      ARRAY[1, 500, 1000, 3000], ARRAY[7, 700, 2000, 3353]) WHERE edge = -1)
SELECT (SELECT count(*) FROM ours) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM ours EXCEPT SELECT * FROM theirs) d) AS ours_not_theirs,
       (SELECT count(*) FROM (SELECT * FROM theirs EXCEPT SELECT * FROM ours) d) AS theirs_not_ours;

-- gpu_sssp: one row per reachable vertex, the source first with distance 0 and no predecessor.
\set edges 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
SELECT * FROM gpu_sssp(:'edges', 6);
SELECT * FROM gpu_sssp(:'edges', 6, directed => false);
-- Many sources: ordered by source, node; duplicates merged; ids not in the graph give no rows.
SELECT * FROM gpu_sssp(:'edges', ARRAY[17, 2, 17, 999]);
-- A source that is not in the graph, and one with no way out.
SELECT count(*) FROM gpu_sssp(:'edges', 999);
SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 17);
-- NULL arguments give an empty result, as pgRouting's functions.
SELECT count(*) FROM gpu_sssp(NULL, 6);
SELECT count(*) FROM gpu_sssp(:'edges', NULL::bigint);
SELECT count(*) FROM gpu_sssp(:'edges', 6, NULL);
-- Zero edges.
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges WHERE false', 6);
-- Every distance equals pgRouting's pgr_drivingDistance on Rome, from several sources, both ways.
SELECT directed, count(*) AS reached,
       count(*) FILTER (WHERE p.agg_cost IS DISTINCT FROM g.distance) AS different
FROM (VALUES (true), (false)) AS d(directed),
     LATERAL (SELECT s FROM (VALUES (1), (1000), (2500)) v(s)) AS src,
     LATERAL gpu_sssp('SELECT id, source, target, cost FROM rome_edges', src.s, d.directed) AS g
     FULL JOIN LATERAL pgr_drivingDistance('SELECT id, source, target, cost FROM rome_edges', src.s,
                                           1e18, d.directed) AS p ON p.node = g.node
GROUP BY directed ORDER BY directed;
-- The predecessor tree is made of real, tight edges.
SELECT count(*) AS broken_tree_arcs
FROM gpu_sssp('SELECT id, source, target, cost FROM rome_edges', 1) AS g
JOIN gpu_sssp('SELECT id, source, target, cost FROM rome_edges', 1) AS p ON p.node = g.predecessor
JOIN rome_edges e ON e.id = g.edge
WHERE e.source <> g.predecessor OR e.target <> g.node OR p.distance + e.cost <> g.distance;

-- gpu_apsp: every finite pair with start_vid <> end_vid (pgr_floydWarshall / pgr_johnson), and
-- the cost matrix form (pgr_dijkstraCost many-to-many).
\set edges 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
SELECT * FROM gpu_apsp(:'edges') WHERE start_vid IN (1, 6) ORDER BY start_vid, end_vid;
SELECT count(*),
       (SELECT count(*) FROM (SELECT * FROM gpu_apsp(:'edges') EXCEPT SELECT * FROM pgr_floydWarshall(:'edges')) d) AS ours_not_theirs,
       (SELECT count(*) FROM (SELECT * FROM pgr_floydWarshall(:'edges') EXCEPT SELECT * FROM gpu_apsp(:'edges')) d) AS theirs_not_ours
FROM gpu_apsp(:'edges');
SELECT count(*),
       (SELECT count(*) FROM (SELECT * FROM gpu_apsp(:'edges', false) EXCEPT SELECT * FROM pgr_johnson(:'edges', false)) d) AS ours_not_theirs,
       (SELECT count(*) FROM (SELECT * FROM pgr_johnson(:'edges', false) EXCEPT SELECT * FROM gpu_apsp(:'edges', false)) d) AS theirs_not_ours
FROM gpu_apsp(:'edges', false);
-- No id column needed, as for pgr_floydWarshall.
SELECT count(*) FROM gpu_apsp('SELECT source, target, cost FROM sample_edges');
-- Cost matrix: duplicates merged, start = end omitted, unknown ids ignored.
SELECT * FROM gpu_apsp(:'edges', ARRAY[6, 1, 6, 999], ARRAY[10, 17, 6]);
SELECT * FROM gpu_apsp(:'edges', ARRAY[16], directed => false);
SELECT count(*) FROM gpu_apsp(:'edges', NULL::bigint[]);
SELECT count(*) FROM gpu_apsp(NULL, ARRAY[1]);
-- Rome: a 30 x 30 matrix equal to pgr_dijkstraCost.
WITH ids AS (SELECT array_agg(v) AS v FROM generate_series(1, 3353, 113) v),
ours AS (SELECT g.* FROM ids, gpu_apsp('SELECT id, source, target, cost FROM rome_edges', ids.v, ids.v) g),
theirs AS (SELECT p.* FROM ids, pgr_dijkstraCost('SELECT id, source, target, cost FROM rome_edges', ids.v, ids.v) p)
SELECT (SELECT count(*) FROM ours) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM ours EXCEPT SELECT * FROM theirs) d) AS ours_not_theirs,
       (SELECT count(*) FROM (SELECT * FROM theirs EXCEPT SELECT * FROM ours) d) AS theirs_not_ours;

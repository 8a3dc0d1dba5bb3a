-- pgRouting's own documentation queries, rewritten to gpu_* and checked against the pgr_* call on
-- the same server: each row counts the rows that differ, in both directions (EXCEPT ALL each way),
-- so every count is 0. The queries are those of pgRouting's repository (github.com/pgRouting/
-- pgrouting), docqueries/dijkstra/dijkstra.pg, docqueries/dijkstra/dijkstraCost.pg,
-- docqueries/allpairs/johnson.pg, docqueries/allpairs/floydWarshall.pg and
-- docqueries/driving_distance/drivingDistance.pg, labelled with their /* -- qN */ markers; the
-- documentation's table `edges` is `sample_edges` here (same network, same ids) and its table
-- `combinations` (5,6), (5,10), (6,5), (6,15), (6,14) is given inline as VALUES.
-- Where shortest paths tie, pgRouting and gpu_path may return different paths of the same cost (a
-- documented difference); the doc queries where that happens compare costs only (see below).
\set e_rc 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
\set e_c 'SELECT id, source, target, cost FROM sample_edges'
\set comb 'SELECT source, target FROM (VALUES (5, 6), (5, 10), (6, 5), (6, 15), (6, 14)) AS combinations (source, target)'
\set vals 'SELECT * FROM (VALUES (6, 10), (6, 7), (12, 10)) AS combinations (source, target)'

-- docqueries/dijkstra/dijkstra.pg: pgr_dijkstra -> gpu_path.
-- q2-q8: the five signatures (q51 only lists the combinations table). The doc queries with a pair
-- whose shortest paths tie compare the cost of each path only (agg_cost of its edge = -1 row,
-- labelled 'costs'): q3 to q7 (6 to 17 through 12 or through 16; 1 to 10, 1 to 17, 10 to 7 and 15
-- to 7 likewise) and, undirected, q93, q95, q96, q133, q135 and q136 (12 to 7 through 11 or
-- through 8). The other pairs have a single shortest path, and every row is compared.
SELECT 'dijkstra q2' AS query, count(*) AS differences FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, 10, true)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, 10, true))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, 10, true)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, 10, true))) d
UNION ALL SELECT 'dijkstra q3, costs', count(*) FROM (
  (SELECT end_vid, agg_cost FROM gpu_path(:'e_rc', 6, ARRAY[10, 17]) WHERE edge = -1
   EXCEPT ALL SELECT end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', 6, ARRAY[10, 17]) WHERE edge = -1)
  UNION ALL
  (SELECT end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', 6, ARRAY[10, 17]) WHERE edge = -1
   EXCEPT ALL SELECT end_vid, agg_cost FROM gpu_path(:'e_rc', 6, ARRAY[10, 17]) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q4, costs', count(*) FROM (
  (SELECT start_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[6, 1], 17) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[6, 1], 17) WHERE edge = -1)
  UNION ALL
  (SELECT start_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[6, 1], 17) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[6, 1], 17) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q5, costs', count(*) FROM (
  (SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[6, 1], ARRAY[10, 17], directed => false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[6, 1], ARRAY[10, 17], directed => false) WHERE edge = -1)
  UNION ALL
  (SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[6, 1], ARRAY[10, 17], directed => false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[6, 1], ARRAY[10, 17], directed => false) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q52', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', :'comb', false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', :'comb', false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', :'comb', false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', :'comb', false))) d
UNION ALL SELECT 'dijkstra q6, costs', count(*) FROM (
  (SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15]) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15]) WHERE edge = -1)
  UNION ALL
  (SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15]) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15]) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q7, costs', count(*) FROM (
  (SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[7, 10, 15], ARRAY[7, 10, 15]) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[7, 10, 15], ARRAY[7, 10, 15]) WHERE edge = -1)
  UNION ALL
  (SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[7, 10, 15], ARRAY[7, 10, 15]) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[7, 10, 15], ARRAY[7, 10, 15]) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q8', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', :'vals')
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', :'vals'))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', :'vals')
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', :'vals'))) d;

-- q70-q77: directed, with reverse_cost.
SELECT 'dijkstra q70' AS query, count(*) AS differences FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, 10)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, 10))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, 10)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, 10))) d
UNION ALL SELECT 'dijkstra q71', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, 7)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, 7))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, 7)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, 7))) d
UNION ALL SELECT 'dijkstra q72', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 12, 10)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 12, 10))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 12, 10)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 12, 10))) d
UNION ALL SELECT 'dijkstra q73', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 12, 7)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 12, 7))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 12, 7)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 12, 7))) d
UNION ALL SELECT 'dijkstra q74', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, ARRAY[10, 7])
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, ARRAY[10, 7]))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, ARRAY[10, 7])
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, ARRAY[10, 7]))) d
UNION ALL SELECT 'dijkstra q75', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', ARRAY[6, 12], 7)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', ARRAY[6, 12], 7))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', ARRAY[6, 12], 7)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', ARRAY[6, 12], 7))) d
UNION ALL SELECT 'dijkstra q76', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', ARRAY[6, 12], ARRAY[10, 7])
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', ARRAY[6, 12], ARRAY[10, 7]))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', ARRAY[6, 12], ARRAY[10, 7])
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', ARRAY[6, 12], ARRAY[10, 7]))) d
UNION ALL SELECT 'dijkstra q77', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', :'vals')
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', :'vals'))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', :'vals')
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', :'vals'))) d;

-- q90-q97: undirected, with reverse_cost.
SELECT 'dijkstra q90' AS query, count(*) AS differences FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, 10, false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, 10, false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, 10, false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, 10, false))) d
UNION ALL SELECT 'dijkstra q91', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, 7, false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, 7, false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, 7, false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, 7, false))) d
UNION ALL SELECT 'dijkstra q92', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 12, 10, false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 12, 10, false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 12, 10, false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 12, 10, false))) d
UNION ALL SELECT 'dijkstra q93, costs', count(*) FROM (
  (SELECT agg_cost FROM gpu_path(:'e_rc', 12, 7, false) WHERE edge = -1
   EXCEPT ALL SELECT agg_cost FROM pgr_dijkstra(:'e_rc', 12, 7, false) WHERE edge = -1)
  UNION ALL
  (SELECT agg_cost FROM pgr_dijkstra(:'e_rc', 12, 7, false) WHERE edge = -1
   EXCEPT ALL SELECT agg_cost FROM gpu_path(:'e_rc', 12, 7, false) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q94', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, ARRAY[10, 7], false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, ARRAY[10, 7], false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, ARRAY[10, 7], false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, ARRAY[10, 7], false))) d
UNION ALL SELECT 'dijkstra q95, costs', count(*) FROM (
  (SELECT start_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[6, 12], 7, false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[6, 12], 7, false) WHERE edge = -1)
  UNION ALL
  (SELECT start_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[6, 12], 7, false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[6, 12], 7, false) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q96, costs', count(*) FROM (
  (SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[6, 12], ARRAY[10, 7], false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[6, 12], ARRAY[10, 7], false) WHERE edge = -1)
  UNION ALL
  (SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_rc', ARRAY[6, 12], ARRAY[10, 7], false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_rc', ARRAY[6, 12], ARRAY[10, 7], false) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q97', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', :'vals', false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', :'vals', false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', :'vals', false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', :'vals', false))) d;

-- q11-q117: directed, without reverse_cost.
SELECT 'dijkstra q11' AS query, count(*) AS differences FROM (
  (SELECT * FROM gpu_path(:'e_c', 6, 10)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 6, 10))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 6, 10)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 6, 10))) d
UNION ALL SELECT 'dijkstra q111', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', 6, 7)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 6, 7))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 6, 7)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 6, 7))) d
UNION ALL SELECT 'dijkstra q112', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', 12, 10)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 12, 10))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 12, 10)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 12, 10))) d
UNION ALL SELECT 'dijkstra q113', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', 12, 7)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 12, 7))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 12, 7)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 12, 7))) d
UNION ALL SELECT 'dijkstra q114', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', 6, ARRAY[10, 7])
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 6, ARRAY[10, 7]))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 6, ARRAY[10, 7])
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 6, ARRAY[10, 7]))) d
UNION ALL SELECT 'dijkstra q115', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', ARRAY[6, 12], 7)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', ARRAY[6, 12], 7))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', ARRAY[6, 12], 7)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', ARRAY[6, 12], 7))) d
UNION ALL SELECT 'dijkstra q116', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', ARRAY[6, 12], ARRAY[10, 7])
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', ARRAY[6, 12], ARRAY[10, 7]))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', ARRAY[6, 12], ARRAY[10, 7])
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', ARRAY[6, 12], ARRAY[10, 7]))) d
UNION ALL SELECT 'dijkstra q117', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', :'vals')
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', :'vals'))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', :'vals')
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', :'vals'))) d;

-- q13-q137: undirected, without reverse_cost.
SELECT 'dijkstra q13' AS query, count(*) AS differences FROM (
  (SELECT * FROM gpu_path(:'e_c', 6, 10, false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 6, 10, false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 6, 10, false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 6, 10, false))) d
UNION ALL SELECT 'dijkstra q131', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', 6, 7, false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 6, 7, false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 6, 7, false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 6, 7, false))) d
UNION ALL SELECT 'dijkstra q132', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', 12, 10, false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 12, 10, false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 12, 10, false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 12, 10, false))) d
UNION ALL SELECT 'dijkstra q133, costs', count(*) FROM (
  (SELECT agg_cost FROM gpu_path(:'e_c', 12, 7, false) WHERE edge = -1
   EXCEPT ALL SELECT agg_cost FROM pgr_dijkstra(:'e_c', 12, 7, false) WHERE edge = -1)
  UNION ALL
  (SELECT agg_cost FROM pgr_dijkstra(:'e_c', 12, 7, false) WHERE edge = -1
   EXCEPT ALL SELECT agg_cost FROM gpu_path(:'e_c', 12, 7, false) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q134', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', 6, ARRAY[10, 7], false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', 6, ARRAY[10, 7], false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', 6, ARRAY[10, 7], false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', 6, ARRAY[10, 7], false))) d
UNION ALL SELECT 'dijkstra q135, costs', count(*) FROM (
  (SELECT start_vid, agg_cost FROM gpu_path(:'e_c', ARRAY[6, 12], 7, false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, agg_cost FROM pgr_dijkstra(:'e_c', ARRAY[6, 12], 7, false) WHERE edge = -1)
  UNION ALL
  (SELECT start_vid, agg_cost FROM pgr_dijkstra(:'e_c', ARRAY[6, 12], 7, false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, agg_cost FROM gpu_path(:'e_c', ARRAY[6, 12], 7, false) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q136, costs', count(*) FROM (
  (SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_c', ARRAY[6, 12], ARRAY[10, 7], false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_c', ARRAY[6, 12], ARRAY[10, 7], false) WHERE edge = -1)
  UNION ALL
  (SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'e_c', ARRAY[6, 12], ARRAY[10, 7], false) WHERE edge = -1
   EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'e_c', ARRAY[6, 12], ARRAY[10, 7], false) WHERE edge = -1)) d
UNION ALL SELECT 'dijkstra q137', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_c', :'vals', false)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_c', :'vals', false))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_c', :'vals', false)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_c', :'vals', false))) d;

-- q15-q154: the same path (6 to 10) through each signature.
SELECT 'dijkstra q15' AS query, count(*) AS differences FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, 10)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, 10))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, 10)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, 10))) d
UNION ALL SELECT 'dijkstra q151', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 6, ARRAY[10])
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 6, ARRAY[10]))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 6, ARRAY[10])
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 6, ARRAY[10]))) d
UNION ALL SELECT 'dijkstra q152', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', ARRAY[6], 10)
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', ARRAY[6], 10))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', ARRAY[6], 10)
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', ARRAY[6], 10))) d
UNION ALL SELECT 'dijkstra q153', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', ARRAY[6], ARRAY[10])
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', ARRAY[6], ARRAY[10]))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', ARRAY[6], ARRAY[10])
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', ARRAY[6], ARRAY[10]))) d
UNION ALL SELECT 'dijkstra q154', count(*) FROM (
  (SELECT * FROM gpu_path(:'e_rc', 'SELECT * FROM (VALUES(6, 10)) AS combinations (source, target)')
   EXCEPT ALL SELECT * FROM pgr_dijkstra(:'e_rc', 'SELECT * FROM (VALUES(6, 10)) AS combinations (source, target)'))
  UNION ALL
  (SELECT * FROM pgr_dijkstra(:'e_rc', 'SELECT * FROM (VALUES(6, 10)) AS combinations (source, target)')
   EXCEPT ALL SELECT * FROM gpu_path(:'e_rc', 'SELECT * FROM (VALUES(6, 10)) AS combinations (source, target)'))) d;

-- docqueries/dijkstra/dijkstraCost.pg: pgr_dijkstraCost -> gpu_apsp; one-to-one, one-to-many
-- and many-to-one are given as arrays (q51 only lists the combinations table).
SELECT 'dijkstraCost q2' AS query, count(*) AS differences FROM (
  (SELECT * FROM gpu_apsp(:'e_rc', ARRAY[6], ARRAY[10], true)
   EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'e_rc', 6, 10, true))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'e_rc', 6, 10, true)
   EXCEPT ALL SELECT * FROM gpu_apsp(:'e_rc', ARRAY[6], ARRAY[10], true))) d
UNION ALL SELECT 'dijkstraCost q3', count(*) FROM (
  (SELECT * FROM gpu_apsp(:'e_rc', ARRAY[6], ARRAY[10, 17])
   EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'e_rc', 6, ARRAY[10, 17]))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'e_rc', 6, ARRAY[10, 17])
   EXCEPT ALL SELECT * FROM gpu_apsp(:'e_rc', ARRAY[6], ARRAY[10, 17]))) d
UNION ALL SELECT 'dijkstraCost q4', count(*) FROM (
  (SELECT * FROM gpu_apsp(:'e_rc', ARRAY[6, 1], ARRAY[17])
   EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'e_rc', ARRAY[6, 1], 17))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'e_rc', ARRAY[6, 1], 17)
   EXCEPT ALL SELECT * FROM gpu_apsp(:'e_rc', ARRAY[6, 1], ARRAY[17]))) d
UNION ALL SELECT 'dijkstraCost q5', count(*) FROM (
  (SELECT * FROM gpu_apsp(:'e_rc', ARRAY[6, 1], ARRAY[10, 17], directed => false)
   EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'e_rc', ARRAY[6, 1], ARRAY[10, 17], directed => false))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'e_rc', ARRAY[6, 1], ARRAY[10, 17], directed => false)
   EXCEPT ALL SELECT * FROM gpu_apsp(:'e_rc', ARRAY[6, 1], ARRAY[10, 17], directed => false))) d
UNION ALL SELECT 'dijkstraCost q52', count(*) FROM (
  (SELECT * FROM gpu_apsp(:'e_rc', :'comb', false)
   EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'e_rc', :'comb', false))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'e_rc', :'comb', false)
   EXCEPT ALL SELECT * FROM gpu_apsp(:'e_rc', :'comb', false))) d
UNION ALL SELECT 'dijkstraCost q6', count(*) FROM (
  (SELECT * FROM gpu_apsp(:'e_rc', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15])
   EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'e_rc', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15]))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'e_rc', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15])
   EXCEPT ALL SELECT * FROM gpu_apsp(:'e_rc', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15]))) d
UNION ALL SELECT 'dijkstraCost q7', count(*) FROM (
  (SELECT * FROM gpu_apsp(:'e_rc', ARRAY[7, 10, 15], ARRAY[7, 10, 15])
   EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'e_rc', ARRAY[7, 10, 15], ARRAY[7, 10, 15]))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'e_rc', ARRAY[7, 10, 15], ARRAY[7, 10, 15])
   EXCEPT ALL SELECT * FROM gpu_apsp(:'e_rc', ARRAY[7, 10, 15], ARRAY[7, 10, 15]))) d
UNION ALL SELECT 'dijkstraCost q8', count(*) FROM (
  (SELECT * FROM gpu_apsp(:'e_rc', :'vals')
   EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'e_rc', :'vals'))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'e_rc', :'vals')
   EXCEPT ALL SELECT * FROM gpu_apsp(:'e_rc', :'vals'))) d;

-- docqueries/allpairs/johnson.pg and floydWarshall.pg: pgr_johnson / pgr_floydWarshall ->
-- gpu_apsp(edges_sql) (directed, as theirs by default).
SELECT 'johnson q1' AS query, count(*) AS differences FROM (
  (SELECT * FROM gpu_apsp('SELECT source, target, cost FROM sample_edges
  WHERE id < 5')
   EXCEPT ALL SELECT * FROM pgr_johnson('SELECT source, target, cost FROM sample_edges
  WHERE id < 5'))
  UNION ALL
  (SELECT * FROM pgr_johnson('SELECT source, target, cost FROM sample_edges
  WHERE id < 5')
   EXCEPT ALL SELECT * FROM gpu_apsp('SELECT source, target, cost FROM sample_edges
  WHERE id < 5'))) d
UNION ALL SELECT 'floydWarshall q1', count(*) FROM (
  (SELECT * FROM gpu_apsp('SELECT id, source, target, cost, reverse_cost
  FROM sample_edges where id < 5')
   EXCEPT ALL SELECT * FROM pgr_floydWarshall('SELECT id, source, target, cost, reverse_cost
  FROM sample_edges where id < 5'))
  UNION ALL
  (SELECT * FROM pgr_floydWarshall('SELECT id, source, target, cost, reverse_cost
  FROM sample_edges where id < 5')
   EXCEPT ALL SELECT * FROM gpu_apsp('SELECT id, source, target, cost, reverse_cost
  FROM sample_edges where id < 5'))) d;

-- docqueries/driving_distance/drivingDistance.pg: pgr_drivingDistance -> gpu_sssp, which has no
-- distance bound: its rows are filtered by distance <= 3.0, and compared on the node (and depot)
-- and agg_cost only, since the edge reaching a node may differ where shortest paths tie (11 to 17
-- through 12 or through 16, in q5).
-- q5: one source, directed.
SELECT 'drivingDistance q5' AS query, count(*) AS differences FROM (
  (SELECT node, distance FROM gpu_sssp(:'e_rc', 11) WHERE distance <= 3.0
   EXCEPT ALL SELECT node, agg_cost FROM pgr_drivingDistance(:'e_rc', 11, 3.0))
  UNION ALL
  (SELECT node, agg_cost FROM pgr_drivingDistance(:'e_rc', 11, 3.0)
   EXCEPT ALL SELECT node, distance FROM gpu_sssp(:'e_rc', 11) WHERE distance <= 3.0)) d
-- q6: depots 11 and 16 with equicost => true, which gives each node to its nearest depot (gpu_sssp
-- has no such option): adapted to the least distance over both depots' gpu_sssp rows. Compared
-- on node and agg_cost, since the depot pgRouting picks between equidistant depots is its own
-- rule (no node here is equidistant).
UNION ALL SELECT 'drivingDistance q6, equicost as least distance', count(*) FROM (
  (SELECT node, min(distance) FROM gpu_sssp(:'e_rc', ARRAY[11, 16]) WHERE distance <= 3.0 GROUP BY node
   EXCEPT ALL SELECT node, agg_cost FROM pgr_drivingDistance(:'e_rc', array[11, 16], 3.0, equicost => true))
  UNION ALL
  (SELECT node, agg_cost FROM pgr_drivingDistance(:'e_rc', array[11, 16], 3.0, equicost => true)
   EXCEPT ALL SELECT node, min(distance) FROM gpu_sssp(:'e_rc', ARRAY[11, 16]) WHERE distance <= 3.0 GROUP BY node)) d
-- q10: depots 11 and 16, undirected: gpu_sssp's source is pgRouting's from_v.
UNION ALL SELECT 'drivingDistance q10', count(*) FROM (
  (SELECT source, node, distance FROM gpu_sssp(:'e_rc', ARRAY[11, 16], directed => false) WHERE distance <= 3.0
   EXCEPT ALL SELECT from_v, node, agg_cost FROM pgr_drivingDistance(:'e_rc', array[11, 16], 3.0, directed => false))
  UNION ALL
  (SELECT from_v, node, agg_cost FROM pgr_drivingDistance(:'e_rc', array[11, 16], 3.0, directed => false)
   EXCEPT ALL SELECT source, node, distance FROM gpu_sssp(:'e_rc', ARRAY[11, 16], directed => false) WHERE distance <= 3.0)) d;

-- pgRouting compatibility: queries given as the names of prepared statements (edges_sql and
-- combinations_sql), as pgRouting accepts them; gpu_apsp's combinations form, as
-- pgr_dijkstraCost's.
PREPARE kg_edges AS SELECT id, source, target, cost, reverse_cost FROM sample_edges;
PREPARE kg_pairs AS
  SELECT * FROM (VALUES (6, 10), (7, 12)) AS p(source, target);
SELECT * FROM gpu_path('kg_edges', 6, 10);
SELECT * FROM gpu_path('kg_edges', 6, 10) EXCEPT ALL SELECT * FROM pgr_dijkstra('kg_edges', 6, 10);
SELECT start_vid, end_vid, agg_cost FROM gpu_path(' kg_edges ', 'kg_pairs') WHERE edge = -1 ORDER BY 1;
SELECT * FROM gpu_apsp('kg_edges', ARRAY[6], ARRAY[10, 12]);
SELECT count(*) FROM gpu_sssp('kg_edges', 6);
SELECT * FROM gpu_apsp_array('kg_edges', ARRAY[6], ARRAY[10]);
-- A statement prepared in a multi-statement string is cut to its own text.
PREPARE kg_small AS SELECT id, source, target, cost FROM sample_edges WHERE id < 5; SELECT count(*) FROM gpu_sssp('kg_small', 5);
-- Parameters cannot be given; a bare name that is no prepared statement is an error naming it.
PREPARE kg_param(int) AS SELECT id, source, target, cost FROM sample_edges WHERE id > $1;
SELECT count(*) FROM gpu_sssp('kg_param', 6);
SELECT count(*) FROM gpu_sssp('kg_nothing', 6);
SELECT count(*) FROM gpu_path('kg_edges', 'kg_nothing');
DEALLOCATE ALL;

-- gpu_apsp(edges_sql, combinations_sql, directed): one row per distinct pair with a path, as
-- pgr_dijkstraCost(edges_sql, combinations_sql, directed); pairs outside the graph, unreachable
-- or from a vertex to itself give no row.
\set edges 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
\set pairs 'SELECT * FROM (VALUES (6, 10), (6, 10), (7, 12), (12, 7), (3, 3), (6, 99), (1, 2), (10, 6)) AS p(source, target)'
SELECT * FROM gpu_apsp(:'edges', :'pairs');
SELECT * FROM gpu_apsp(:'edges', :'pairs', false);
SELECT count(*) AS differences FROM (
  (SELECT * FROM gpu_apsp(:'edges', :'pairs') EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'edges', :'pairs'))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'edges', :'pairs') EXCEPT ALL SELECT * FROM gpu_apsp(:'edges', :'pairs'))
  UNION ALL
  (SELECT * FROM gpu_apsp(:'edges', :'pairs', false) EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'edges', :'pairs', false))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost(:'edges', :'pairs', false) EXCEPT ALL SELECT * FROM gpu_apsp(:'edges', :'pairs', false))) d;
-- On Rome: 200 random pairs against pgr_dijkstraCost.
SELECT count(*) AS differences FROM (
  (SELECT * FROM gpu_apsp('SELECT id, source, target, cost FROM rome_edges',
                          'SELECT 1 + (i * 7919) % 3353 AS source, 1 + (i * 104729) % 3353 AS target FROM generate_series(1, 200) i')
   EXCEPT ALL
   SELECT * FROM pgr_dijkstraCost('SELECT id, source, target, cost FROM rome_edges',
                                  'SELECT 1 + (i * 7919) % 3353 AS source, 1 + (i * 104729) % 3353 AS target FROM generate_series(1, 200) i'))
  UNION ALL
  (SELECT * FROM pgr_dijkstraCost('SELECT id, source, target, cost FROM rome_edges',
                                  'SELECT 1 + (i * 7919) % 3353 AS source, 1 + (i * 104729) % 3353 AS target FROM generate_series(1, 200) i')
   EXCEPT ALL
   SELECT * FROM gpu_apsp('SELECT id, source, target, cost FROM rome_edges',
                          'SELECT 1 + (i * 7919) % 3353 AS source, 1 + (i * 104729) % 3353 AS target FROM generate_series(1, 200) i'))) d;
-- Errors name the query at fault.
SELECT * FROM gpu_apsp(:'edges', 'SELECT 6 AS source');
SELECT * FROM gpu_apsp(:'edges', 'SELECT 6 AS source, 1.5 AS target');

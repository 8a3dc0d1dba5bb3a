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

-- Vertex id arrays of any integer type and NUMERIC, as pgRouting's ANY-INTEGER arrays; the costs
-- agree with pgr_dijkstra / pgr_dijkstraCost given the same arrays (paths may differ where shortest
-- paths tie: the tie rule is a documented difference).
SELECT 'many to many, smallint[]' AS call, count(*) AS differences FROM (
  SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'edges', ARRAY[6, 7]::smallint[], ARRAY[10, 12]::smallint[]) WHERE edge = -1
  EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'edges', ARRAY[6, 7]::smallint[], ARRAY[10, 12]::smallint[]) WHERE edge = -1) d
UNION ALL SELECT 'many to many, numeric[]', count(*) FROM (
  SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'edges', ARRAY[6, 7]::numeric[], ARRAY[10, 12]::numeric[]) WHERE edge = -1
  EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'edges', ARRAY[6, 7]::numeric[], ARRAY[10, 12]::numeric[]) WHERE edge = -1) d
UNION ALL SELECT 'many to many, smallint[] and numeric[]', count(*) FROM (
  SELECT start_vid, end_vid, agg_cost FROM gpu_path(:'edges', ARRAY[6, 7]::smallint[], ARRAY[10, 12]::numeric[]) WHERE edge = -1
  EXCEPT ALL SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstra(:'edges', ARRAY[6, 7], ARRAY[10, 12]) WHERE edge = -1) d
UNION ALL SELECT 'one to many, numeric[]', count(*) FROM (
  SELECT end_vid, agg_cost FROM gpu_path(:'edges', 6, ARRAY[10, 12]::numeric[]) WHERE edge = -1
  EXCEPT ALL SELECT end_vid, agg_cost FROM pgr_dijkstra(:'edges', 6, ARRAY[10, 12]::numeric[]) WHERE edge = -1) d
UNION ALL SELECT 'many to one, integer[]', count(*) FROM (
  SELECT start_vid, agg_cost FROM gpu_path(:'edges', ARRAY[6, 7], 12) WHERE edge = -1
  EXCEPT ALL SELECT start_vid, agg_cost FROM pgr_dijkstra(:'edges', ARRAY[6, 7], 12) WHERE edge = -1) d
UNION ALL SELECT 'cost matrix, numeric[] and smallint[]', count(*) FROM (
  SELECT * FROM gpu_apsp(:'edges', ARRAY[6, 7]::numeric[], ARRAY[10, 12]::smallint[])
  EXCEPT ALL SELECT * FROM pgr_dijkstraCost(:'edges', ARRAY[6, 7]::numeric[], ARRAY[10, 12]::numeric[])) d
UNION ALL SELECT 'rows per path, numeric[] vs bigint[]', count(*) FROM (
  SELECT * FROM gpu_path(:'edges', ARRAY[6, 7]::numeric[], ARRAY[10, 12]::numeric[])
  EXCEPT ALL SELECT * FROM gpu_path(:'edges', ARRAY[6, 7]::bigint[], ARRAY[10, 12]::bigint[])) d;
SELECT * FROM gpu_apsp_array(:'edges', ARRAY[6]::smallint[], ARRAY[10, 12]::integer[]);
SELECT source, count(*) FROM gpu_sssp(:'edges', ARRAY[6, 7]::numeric[]) GROUP BY source ORDER BY source;
-- NUMERIC ids must be whole numbers; arrays of other types find no function, as with pgRouting.
SELECT * FROM gpu_path(:'edges', ARRAY[6.5], 10);
SELECT * FROM gpu_apsp(:'edges', ARRAY[6]::numeric[], ARRAY[10, 1e2, 12.25]);
SELECT * FROM gpu_path(:'edges', 6, ARRAY[10]::real[]);
SELECT * FROM gpu_sssp(:'edges', ARRAY[6, 1e30]);

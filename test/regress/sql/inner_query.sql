-- edges_sql: columns found by name, in any order, extra columns ignored; every integer type for
-- id, source and target, every numeric type for cost and reverse_cost; anything else refused.
SELECT count(*) FROM gpu_sssp('SELECT cost, target, id, source, ''x'' AS label FROM sample_edges', 6);
SELECT count(*) FROM gpu_sssp('SELECT id::smallint, source::smallint, target::smallint, cost::smallint FROM sample_edges', 6);
SELECT count(*) FROM gpu_sssp('SELECT id::integer, source::integer, target::integer, cost::integer FROM sample_edges', 6);
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost::bigint, reverse_cost::bigint FROM sample_edges', 6);
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost::real, reverse_cost::real FROM sample_edges', 6);
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost::numeric, reverse_cost::numeric FROM sample_edges', 6);
SELECT sum(distance) FROM gpu_sssp('SELECT id, source, target, (cost / 3)::numeric(10,4) AS cost FROM sample_edges', 5);
-- Refused types, each with the column and what was expected.
SELECT * FROM gpu_sssp('SELECT id::float8, source, target, cost FROM sample_edges', 6);
SELECT * FROM gpu_sssp('SELECT id, source::numeric, target, cost FROM sample_edges', 6);
SELECT * FROM gpu_sssp('SELECT id, source, target::text, cost FROM sample_edges', 6);
SELECT * FROM gpu_sssp('SELECT id, source, target, cost::text FROM sample_edges', 6);
SELECT * FROM gpu_sssp('SELECT id, source, target, cost, reverse_cost > 0 AS reverse_cost FROM sample_edges', 6);
-- Missing columns.
SELECT * FROM gpu_sssp('SELECT id, source, target FROM sample_edges', 6);
SELECT * FROM gpu_path('SELECT source, target, cost FROM sample_edges', 6, 10);
-- The same column twice.
SELECT * FROM gpu_sssp('SELECT id, source, target, cost, cost FROM sample_edges', 6);
-- combinations_sql: source and target, integers.
SELECT count(*) FROM gpu_path('SELECT id, source, target, cost FROM sample_edges', 'SELECT 6::smallint AS source, 7 AS target');
SELECT * FROM gpu_path('SELECT id, source, target, cost FROM sample_edges', 'SELECT 6 AS source, 7.0 AS target');
SELECT * FROM gpu_path('SELECT id, source, target, cost FROM sample_edges', 'SELECT 6 AS src, 7 AS target');

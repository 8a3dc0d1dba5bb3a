-- Bad input gets a clear error naming what is wrong; nothing crashes the backend.
\set edges 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
-- NULL values in a column.
SELECT * FROM gpu_sssp('SELECT id, source, target, CASE WHEN id = 3 THEN NULL ELSE cost END AS cost FROM sample_edges ORDER BY id', 6);
SELECT * FROM gpu_sssp('SELECT id, NULLIF(source, 5) AS source, target, cost FROM sample_edges ORDER BY id', 6);
-- NaN is an error; +Infinity and negative costs mean "no edge in that direction".
SELECT * FROM gpu_sssp('SELECT id, source, target, ''NaN''::float8 AS cost FROM sample_edges', 6);
SELECT * FROM gpu_path('SELECT 1 AS id, 1 AS source, 2 AS target, ''Infinity''::float8 AS cost', 1, 2);
SELECT * FROM gpu_path('SELECT 1 AS id, 1 AS source, 2 AS target, -5 AS cost, 3 AS reverse_cost', 2, 1);
SELECT count(*) FROM gpu_path('SELECT 1 AS id, 1 AS source, 2 AS target, -5 AS cost, 3 AS reverse_cost', 1, 2);
-- Arrays: empty, NULL inside, two-dimensional.
SELECT * FROM gpu_path(:'edges', ARRAY[]::bigint[], 10);
SELECT * FROM gpu_path(:'edges', ARRAY[6, NULL], 10);
SELECT * FROM gpu_apsp(:'edges', ARRAY[[1, 2], [3, 4]]);
SELECT * FROM gpu_sssp(:'edges', '{}'::bigint[]);
-- A failing edges_sql reports its own error.
SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM no_such_table', 6);
SELECT * FROM gpu_sssp('SELEKT 1', 6);
SELECT * FROM gpu_sssp('SELECT id, source, target, cost / 0 AS cost FROM sample_edges', 6);
-- One query only.
SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges; SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6);
SELECT * FROM gpu_sssp(' ; ', 6);
-- edges_sql may only read.
CREATE TABLE scratch (id bigint, source bigint, target bigint, cost float8);
SELECT * FROM gpu_sssp('INSERT INTO scratch VALUES (1, 1, 2, 1) RETURNING *', 1);
SELECT count(*) AS scratch_rows FROM scratch;
SELECT * FROM gpu_sssp('DELETE FROM scratch', 1);
DROP TABLE scratch;
-- gpu_routing.max_memory: refused before allocating, with the size asked for.
SET gpu_routing.max_memory = '64MB';
-- (the size depends on the engine the device setting picks: shown as N here)
DO $$
BEGIN
  PERFORM count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM rome_edges');
EXCEPTION WHEN out_of_memory THEN
  RAISE NOTICE 'out_of_memory: %', regexp_replace(SQLERRM, 'needs [0-9.]+ [kMGT]?B', 'needs N');
END $$;
SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM rome_edges', ARRAY[1, 2, 3]);
RESET gpu_routing.max_memory;
-- Extreme vertex ids.
SELECT * FROM gpu_path('SELECT 1 AS id, -9223372036854775808 AS source, 9223372036854775807 AS target, 1.5 AS cost', -9223372036854775808, 9223372036854775807);
-- The session is still alive.
SELECT 'still connected' AS status;

-- How results are written: the rows of every function go through a tuplestore of the extension's
-- own (its own memory context, and a pre-formed tuple for rows without NULLs). These check the
-- paths a result can take besides staying in memory: spilled to disk under a small work_mem, read
-- backwards by a scrollable cursor, and recomputed once per outer row (LATERAL).
\set rome 'SELECT id, source, target, cost FROM rome_edges'
\set sample 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
CREATE TEMP TABLE rome_matrix AS
SELECT * FROM gpu_apsp(:'rome', ARRAY(SELECT generate_series(1, 3353, 97)::bigint), NULL);
CREATE TEMP TABLE rome_tree AS SELECT * FROM gpu_sssp(:'rome', 1);
CREATE TEMP TABLE rome_paths AS
SELECT * FROM gpu_path(:'rome', ARRAY[1, 500, 2000]::bigint[], ARRAY[7, 3000, 3353]::bigint[]);
-- Spilled: 64 kB holds about a thousand rows, each result here has thousands to 120k.
SET work_mem = '64kB';
SELECT count(*) AS matrix_rows,
       (SELECT count(*) FROM (SELECT * FROM gpu_apsp(:'rome', ARRAY(SELECT generate_series(1, 3353, 97)::bigint), NULL)
                              EXCEPT ALL SELECT * FROM rome_matrix) d) AS spilled_not_in_memory,
       (SELECT count(*) FROM (SELECT * FROM rome_matrix
                              EXCEPT ALL SELECT * FROM gpu_apsp(:'rome', ARRAY(SELECT generate_series(1, 3353, 97)::bigint), NULL)) d) AS in_memory_not_spilled
FROM rome_matrix;
SELECT count(*) AS tree_rows,
       count(*) FILTER (WHERE predecessor IS NULL) AS without_predecessor,
       (SELECT count(*) FROM (SELECT * FROM gpu_sssp(:'rome', 1) EXCEPT ALL SELECT * FROM rome_tree) d) AS differing
FROM rome_tree;
SELECT count(*) AS path_rows,
       (SELECT count(*) FROM (SELECT * FROM gpu_path(:'rome', ARRAY[1, 500, 2000]::bigint[], ARRAY[7, 3000, 3353]::bigint[])
                              EXCEPT ALL SELECT * FROM rome_paths) d) AS differing
FROM rome_paths;
RESET work_mem;
-- Read backwards and from the end (a random-access tuplestore), in memory and spilled.
BEGIN;
DECLARE rows_cursor SCROLL CURSOR FOR SELECT * FROM gpu_apsp(:'sample') ORDER BY start_vid, end_vid;
DECLARE raw_cursor SCROLL CURSOR FOR SELECT * FROM gpu_apsp(:'sample', ARRAY[6, 1]::bigint[], ARRAY[10, 17]::bigint[]);
FETCH LAST FROM raw_cursor;
FETCH PRIOR FROM raw_cursor;
FETCH ABSOLUTE 1 FROM raw_cursor;
FETCH LAST FROM rows_cursor;
COMMIT;
BEGIN;
SET LOCAL work_mem = '64kB';
DECLARE spilled_cursor SCROLL CURSOR FOR SELECT * FROM gpu_apsp(:'rome', ARRAY[1, 2]::bigint[], NULL);
MOVE LAST IN spilled_cursor;
FETCH BACKWARD 2 FROM spilled_cursor;
FETCH ABSOLUTE 3352 FROM spilled_cursor;
COMMIT;
-- Once per outer row: each call's result replaces the previous one's in the same memory.
SELECT s AS start, count(*) AS rows, max(distance) AS farthest
FROM generate_series(1, 18) s, LATERAL gpu_sssp(:'sample', s) g
GROUP BY s ORDER BY s;
SELECT count(*) AS lateral_rows,
       count(*) FILTER (WHERE g.distance IS DISTINCT FROM r.distance
                          OR g.predecessor IS DISTINCT FROM r.predecessor) AS differing
FROM generate_series(1, 100) t(s)
CROSS JOIN LATERAL gpu_sssp(:'rome', 1 + 0 * t.s) g
JOIN rome_tree r ON r.node = g.node;

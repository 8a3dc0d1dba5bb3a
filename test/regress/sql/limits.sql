-- Limits: gpu_routing.max_memory holds while edges_sql's rows arrive and while path rows are
-- traced; administrators cap what sessions may set (gpu_routing.max_threads,
-- gpu_routing.max_memory_limit).
CREATE TABLE limits_grid AS
SELECT row_number() OVER () AS id, s AS source, t AS target, 1 + (s * 7919 % 9) AS cost
FROM (SELECT i * 200 + j AS s, i * 200 + j + 1 AS t FROM generate_series(0, 199) i, generate_series(0, 198) j
      UNION ALL
      SELECT i * 200 + j, (i + 1) * 200 + j FROM generate_series(0, 198) i, generate_series(0, 199) j) e;

-- Reading: 400,000 rows under 1MB stop at the first growth past it (a counter shows how many
-- rows the query produced before the error: far fewer than all).
CREATE SEQUENCE limits_rows;
SET gpu_routing.max_memory = '1MB';
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM limits_grid, generate_series(1, 5) k
                               WHERE nextval(''limits_rows'') > 0', 0);
SELECT currval('limits_rows') < 200000 AS stopped_early;
RESET gpu_routing.max_memory;

-- Tracing: one source to every vertex of the grid is 8M path rows (416 MB); 64MB stops it while
-- the rows grow, naming their size (the numbers depend on the engine's own memory: masked).
SET gpu_routing.max_memory = '64MB';
DO $$
BEGIN
  PERFORM count(*) FROM gpu_path('SELECT id, source, target, cost FROM limits_grid', 0,
                                 ARRAY(SELECT generate_series(1, 39999)::bigint));
EXCEPTION WHEN out_of_memory THEN
  RAISE NOTICE '%', regexp_replace(SQLERRM, '[0-9][0-9.]*', 'N', 'g');
END $$;
RESET gpu_routing.max_memory;

-- Caps: superuser settings (postgresql.conf, ALTER ROLE ... SET, or SET by a superuser, as
-- here); a session cannot raise them, nor set more than they allow.
CREATE ROLE limits_user;
GRANT SELECT ON limits_grid TO limits_user;
SET gpu_routing.max_threads = 1;
SET gpu_routing.max_memory_limit = '100MB';
SET SESSION AUTHORIZATION limits_user;
SHOW gpu_routing.max_threads;
SET gpu_routing.max_threads = 8;
SET gpu_routing.max_memory_limit = 0;
SET gpu_routing.threads = 2;
SET gpu_routing.max_memory = '1GB';
SET gpu_routing.max_memory = '50MB';
SET gpu_routing.device = cpu;
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM limits_grid', 0);
-- (Under gpu_routing.service = cpu the service runs it, with this session's thread count.)
SELECT replace(device, ', through the GPU service', '') AS device FROM gpu_routing_last_run();
RESET SESSION AUTHORIZATION;
RESET gpu_routing.max_threads;
RESET gpu_routing.max_memory_limit;
RESET gpu_routing.max_memory;
-- A cap lowered below what a session set still holds at the next call.
SET gpu_routing.threads = 2;
SET gpu_routing.max_threads = 1;
SET gpu_routing.device = cpu;
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM limits_grid', 0);
SELECT replace(device, ', through the GPU service', '') AS device FROM gpu_routing_last_run();
RESET gpu_routing.max_threads;
RESET gpu_routing.threads;
RESET gpu_routing.device;
DROP OWNED BY limits_user;
DROP ROLE limits_user;
DROP TABLE limits_grid;
DROP SEQUENCE limits_rows;

-- What edges_sql may do: read. Writing and locking statements are refused by name, as are
-- several statements; a STABLE function cannot write (PostgreSQL's rule for read-only queries).
-- A VOLATILE function it calls can write, as under pgRouting: its writes belong to the caller's
-- transaction.
CREATE TABLE limits_log (n int);
CREATE FUNCTION limits_stable_writer() RETURNS boolean LANGUAGE plpgsql STABLE AS
  $$ BEGIN INSERT INTO limits_log VALUES (2); RETURN true; END $$;
CREATE FUNCTION limits_volatile_writer() RETURNS boolean LANGUAGE plpgsql VOLATILE AS
  $$ BEGIN INSERT INTO limits_log VALUES (1); RETURN true; END $$;
SELECT count(*) FROM gpu_sssp('INSERT INTO limits_log VALUES (3) RETURNING 1 AS id, 1 AS source, 2 AS target, 1 AS cost', 1);
SELECT count(*) FROM gpu_sssp('WITH w AS (INSERT INTO limits_log VALUES (4) RETURNING 1) SELECT 1 AS id, 1 AS source, 2 AS target, 1 AS cost FROM w', 1);
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges FOR UPDATE', 6);
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges; DELETE FROM limits_log', 6);
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges WHERE limits_stable_writer()', 6);
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges WHERE limits_volatile_writer()', 6);
SELECT n, count(*) FROM limits_log GROUP BY n ORDER BY n;
DROP TABLE limits_log;
DROP FUNCTION limits_stable_writer();
DROP FUNCTION limits_volatile_writer();

-- Result rows stay in memory up to work_mem and at most half of what gpu_routing.max_memory leaves
-- after the graph and the engine; past that they go to a temporary file. 1,005,900 rows (about
-- 56 MB) with work_mem 1GB: written to a temporary file under max_memory 48MB (the engine needs
-- 29 MB on the CPU, 43 MB on a GPU), kept in memory under 1GB.
\set rome 'SELECT id, source, target, cost FROM rome_edges'
SET work_mem = '1GB';
SELECT pg_stat_force_next_flush();
SELECT temp_files AS temp_before FROM pg_stat_database WHERE datname = current_database() \gset
SET gpu_routing.max_memory = '48MB';
SELECT count(*) FROM gpu_sssp(:'rome', ARRAY(SELECT generate_series(1, 300)));
SELECT pg_stat_force_next_flush();
SELECT temp_files - :temp_before AS temp_files_under_48mb FROM pg_stat_database WHERE datname = current_database();
SELECT temp_files AS temp_before FROM pg_stat_database WHERE datname = current_database() \gset
SET gpu_routing.max_memory = '1GB';
SELECT count(*) FROM gpu_sssp(:'rome', ARRAY(SELECT generate_series(1, 300)));
SELECT pg_stat_force_next_flush();
SELECT temp_files - :temp_before AS temp_files_under_1gb FROM pg_stat_database WHERE datname = current_database();
RESET gpu_routing.max_memory;
RESET work_mem;

-- gpu_routing_progress: running calls as other sessions see them. A call's own edges_sql and
-- combinations_sql run while the call is reading, so they can look at the call itself.
SELECT count(*) AS running FROM gpu_routing_progress;

-- The call sees itself: reading, its function, edges_sql, nothing computed yet, no device yet.
SELECT count(*) FROM gpu_sssp(
  'SELECT id, source, target, cost, reverse_cost FROM sample_edges
   WHERE (SELECT count(*) FROM gpu_routing_progress
          WHERE pid = pg_backend_pid() AND function = ''gpu_sssp'' AND graph = ''edges_sql''
            AND phase = ''reading'' AND sources_done = 0 AND rows_written = 0
            AND device IS NULL AND usename = current_user AND datname = current_database()
            AND elapsed >= ''0''::interval) = 1', 6);

-- combinations_sql too; a gpu_routing call nested in edges_sql does not replace the outer one.
SELECT count(*) FROM gpu_path(
  'SELECT id, source, target, cost, reverse_cost FROM sample_edges
   WHERE EXISTS (SELECT 1 FROM gpu_sssp(''SELECT id, source, target, cost, reverse_cost FROM sample_edges'', 6))
     AND (SELECT function FROM gpu_routing_progress WHERE pid = pg_backend_pid()) = ''gpu_path''',
  'SELECT 6 AS source, 10 AS target
   WHERE (SELECT phase FROM gpu_routing_progress WHERE pid = pg_backend_pid()) = ''reading''');

-- Finished, failed and cancelled calls leave nothing behind, in a subtransaction too.
SELECT count(*) FROM gpu_path('SELECT id, source, target, 1 / (cost - cost) AS cost, reverse_cost FROM sample_edges', 6, 10);
SELECT count(*) AS mine FROM gpu_routing_progress WHERE pid = pg_backend_pid();
DO $$
BEGIN
  PERFORM count(*) FROM gpu_sssp('SELECT id, source, target, 1 / (cost - cost) AS cost, reverse_cost FROM sample_edges', 6);
EXCEPTION WHEN division_by_zero THEN
  RAISE NOTICE 'caught: %', SQLERRM;
END $$;
SELECT count(*) AS mine FROM gpu_routing_progress WHERE pid = pg_backend_pid();
SET statement_timeout = '200ms';
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost, reverse_cost FROM sample_edges WHERE pg_sleep(0.1) IS NOT NULL', 6);
RESET statement_timeout;
SELECT count(*) AS mine FROM gpu_routing_progress WHERE pid = pg_backend_pid();

-- A kept graph's name; gpu_graph_create shows its build (a query reading the view cannot be
-- tracked: refresh => 'manual').
SELECT gpu_graph_create('progress_sample',
  'SELECT id, source, target, cost, reverse_cost FROM sample_edges
   WHERE (SELECT function || '' '' || graph || '' '' || phase FROM gpu_routing_progress
          WHERE pid = pg_backend_pid()) = ''gpu_graph_create progress_sample building''',
  refresh => 'manual')
  LIKE 'kept graph progress_sample: 17 vertices, %' AS created;
SELECT count(*) FROM gpu_path('graph:progress_sample', 6, 10);
SELECT gpu_graph_drop('progress_sample');

-- gpu_routing.track_progress = off: nothing is reported. Only superusers may change it.
SET gpu_routing.track_progress = off;
SELECT count(*) FROM gpu_sssp(
  'SELECT id, source, target, cost, reverse_cost FROM sample_edges
   WHERE NOT EXISTS (SELECT 1 FROM gpu_routing_progress WHERE pid = pg_backend_pid())', 6);
RESET gpu_routing.track_progress;
CREATE ROLE progress_user;
SET ROLE progress_user;
SET gpu_routing.track_progress = off;
RESET ROLE;
DROP ROLE progress_user;

-- The columns.
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'gpu_routing_progress'::regclass AND attnum > 0 ORDER BY attnum;

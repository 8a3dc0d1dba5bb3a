-- cancel: a cancel stops a long call within about a second, the session goes on, nothing
-- restarts. statement_timeout = 500ms on calls that would run for minutes (on a GPU too: the
-- rows of a 40000-vertex all-pairs call alone take minutes to emit), timed with clock_timestamp()
-- around the call; pg_cancel_backend from a second connection (dblink); and gpu_routing.max_memory
-- refusing too-large calls at once, among them the case that breaks pgRouting: all pairs over a
-- 316 x 316 grid (99856 vertices) with default settings.
BEGIN;
SET LOCAL client_min_messages = warning;

SELECT plan(31);

CREATE TEMP TABLE start_state AS SELECT pg_backend_pid() AS pid, pg_postmaster_start_time() AS started;

-- Runs `query`; the SQLSTATE and message it raised ('00000' when none) and the seconds it took.
-- A statement timeout (57014) must be caught by name: WHEN OTHERS does not catch query_canceled.
CREATE FUNCTION pg_temp.timed(query text, OUT state text, OUT message text, OUT seconds float8)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
BEGIN
  BEGIN
    EXECUTE query;
    state := '00000';
  EXCEPTION
    WHEN query_canceled THEN
      GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
    WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
  END;
  seconds := extract(epoch FROM clock_timestamp() - started);
END
$$;

-- Two checks of a timed call: the error, and the time (diagnostics say what happened).
CREATE FUNCTION pg_temp.timed_checks(t record, state text, pattern text, max_seconds float8, what text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN NEXT ok(t.state = state AND t.message LIKE pattern, what || ': ' || state || ' ' || pattern)
              || CASE WHEN t.state = state AND t.message LIKE pattern THEN ''
                      ELSE E'\n' || diag(format('got %s %s', t.state, t.message)) END;
  RETURN NEXT ok(t.seconds < max_seconds, format('%s: returned within %s s', what, max_seconds))
              || E'\n' || diag(format('%s: %s s', what, round(t.seconds::numeric, 3)));
END
$$;

\set grid 'SELECT * FROM grid_edges(200, 200)'
CREATE TEMP TABLE long_calls (n int, what text, call text);
INSERT INTO long_calls VALUES
  (1, 'gpu_apsp all pairs, 40000 vertices', format('SELECT count(*) FROM gpu_apsp(%L)', :'grid')),
  (2, 'gpu_apsp 20000 sources x every vertex', format('SELECT count(*) FROM gpu_apsp(%L, ARRAY(SELECT generate_series(1, 40000, 2)::bigint))', :'grid')),
  (3, 'gpu_sssp 20000 sources', format('SELECT count(*) FROM gpu_sssp(%L, ARRAY(SELECT generate_series(1, 40000, 2)::bigint))', :'grid')),
  (4, 'gpu_path 413 x 450 long paths', format('SELECT count(*) FROM gpu_path(%L, ARRAY(SELECT generate_series(1, 40000, 97)::bigint), '
                                              'ARRAY(SELECT generate_series(3, 40000, 89)::bigint))', :'grid')),
  (5, 'gpu_path one source to every vertex (8M rows to trace)',
   format('SELECT count(*) FROM gpu_path(%L, 1, ARRAY(SELECT generate_series(2, 40000)::bigint))', :'grid')),
  (6, 'gpu_sssp reading 50M edges_sql rows',
   -- generate_series in the select list streams its rows (in FROM it would be materialized first).
   $$SELECT count(*) FROM gpu_sssp('SELECT g AS id, g AS source, g + 1 AS target, 1 AS cost FROM (SELECT generate_series(1, 50000000) AS g) s', 1)$$),
  -- Arrays the engine writes straight into their tuples, and arrays gathered there from its rows
  -- (columns in descending order): the tuples a batch was writing are freed by the error only
  -- once the batch has stopped.
  (7, 'gpu_apsp_array 20000 trees written in place', format('SELECT count(*) FROM gpu_apsp_array(%L, ARRAY(SELECT generate_series(1, 40000, 2)::bigint))', :'grid')),
  -- (Every vertex as a column: with 4000 of them the two H200s' host answered in 0.496 s.)
  (8, 'gpu_apsp_array 20000 x 40000 gathered in place', format('SELECT count(*) FROM gpu_apsp_array(%L, ARRAY(SELECT generate_series(1, 40000, 2)::bigint), '
                                                              'ARRAY(SELECT generate_series(40000, 1, -1)::bigint))', :'grid'));

-- statement_timeout: 8 calls x 2 = 16. Each call is its own statement, so each gets its own 500 ms.
SET LOCAL gpu_routing.max_memory = '64GB';
CREATE TEMP TABLE timeouts (n int, state text, message text, seconds float8);
SET LOCAL statement_timeout = '500ms';
INSERT INTO timeouts SELECT 1, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 1)) AS t;
INSERT INTO timeouts SELECT 2, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 2)) AS t;
INSERT INTO timeouts SELECT 3, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 3)) AS t;
INSERT INTO timeouts SELECT 4, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 4)) AS t;
INSERT INTO timeouts SELECT 5, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 5)) AS t;
INSERT INTO timeouts SELECT 6, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 6)) AS t;
INSERT INTO timeouts SELECT 7, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 7)) AS t;
INSERT INTO timeouts SELECT 8, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 8)) AS t;
SET LOCAL statement_timeout = 0;
-- 500 ms of timeout plus at most about a second to stop (GPU and CPU alike: 0.52-0.65 s
-- measured on an H200 machine and on the 2-core development machine).
SELECT pg_temp.timed_checks(t, '57014', 'canceling statement due to statement timeout', 1.5,
                            'statement_timeout 500ms, ' || c.what)
FROM timeouts t JOIN long_calls c USING (n) ORDER BY n;

-- The session goes on as before. 1.
SELECT results_eq($$SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6, 10) WHERE edge = -1$$,
                  $$VALUES (5::float8)$$, 'after the cancels the session still computes (sample 6 -> 10 = 5)');

-- pg_cancel_backend from a second connection. 3.
CREATE FUNCTION pg_temp.cancel_from_outside() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  conn text := format('dbname=%s port=%s host=%s options=''-c gpu_routing.max_memory=64GB -c gpu_routing.device=%s''',
                      current_database(), current_setting('port'),
                      split_part(current_setting('unix_socket_directories'), ',', 1),
                      current_setting('gpu_routing.device'));
  remote_pid int;
  waited int := 0;
  cancelled_at timestamptz;
  seconds float8;
  error_text text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'dblink') THEN
    RETURN NEXT skip('dblink is not installed', 3);
    RETURN;
  END IF;
  CREATE EXTENSION IF NOT EXISTS dblink;
  PERFORM dblink_connect('long_call', conn);
  SELECT p INTO remote_pid FROM dblink('long_call', 'SELECT pg_backend_pid()') AS t(p int);
  PERFORM dblink_send_query('long_call', (SELECT call FROM long_calls WHERE n = 1));
  -- Let it get going: running for at least 0.7 s (edges read, computing and emitting).
  LOOP
    PERFORM pg_sleep(0.05);
    waited := waited + 1;
    EXIT WHEN waited > 200 OR EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = remote_pid AND state = 'active'
                                      AND query_start < clock_timestamp() - interval '0.7 s');
  END LOOP;
  cancelled_at := clock_timestamp();
  PERFORM pg_cancel_backend(remote_pid);
  WHILE dblink_is_busy('long_call') = 1 AND clock_timestamp() - cancelled_at < interval '60 s' LOOP
    PERFORM pg_sleep(0.01);
  END LOOP;
  seconds := extract(epoch FROM clock_timestamp() - cancelled_at);
  PERFORM * FROM dblink_get_result('long_call', false) AS t(n bigint);
  error_text := dblink_error_message('long_call');
  PERFORM * FROM dblink_get_result('long_call', false) AS t(n bigint);
  RETURN NEXT ok(error_text LIKE '%canceling statement due to user request%', 'pg_cancel_backend: the call raised the cancel error')
              || E'\n' || diag('remote error: ' || coalesce(error_text, 'none'));
  RETURN NEXT ok(seconds < 1.0, 'pg_cancel_backend: the call returned within 1 s')
              || E'\n' || diag(format('returned %s s after pg_cancel_backend', round(seconds::numeric, 3)));
  RETURN NEXT is((SELECT p FROM dblink('long_call', 'SELECT pg_backend_pid() FROM gpu_path(''SELECT id, source, target, cost FROM sample_edges'', 6, 17) LIMIT 1') AS t(p int)),
                 remote_pid, 'pg_cancel_backend: the cancelled session goes on in the same backend');
  PERFORM dblink_disconnect('long_call');
END
$$;
SELECT pg_temp.cancel_from_outside();

-- gpu_routing.max_memory: refused at once, naming the sizes; while edges_sql's rows arrive and
-- while path rows are traced, as soon as they pass it. 10.
SET LOCAL gpu_routing.max_memory = '1MB';
CREATE TEMP TABLE refusals (n int, state text, message text, seconds float8);
INSERT INTO refusals SELECT 1, t.* FROM pg_temp.timed($$SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM rome_edges')$$) AS t;
INSERT INTO refusals SELECT 2, t.* FROM pg_temp.timed(format('SELECT count(*) FROM gpu_sssp(%L, 1)', :'grid')) AS t;
INSERT INTO refusals SELECT 5, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 6)) AS t;
SET LOCAL gpu_routing.max_memory = '64MB';
INSERT INTO refusals SELECT 4, t.* FROM pg_temp.timed((SELECT call FROM long_calls WHERE n = 5)) AS t;
RESET gpu_routing.max_memory;
-- pgRouting's breaking case: all pairs over 99856 vertices. The default limit (4GB) refuses it
-- before anything is computed.
INSERT INTO refusals SELECT 3, t.* FROM pg_temp.timed($$SELECT count(*) FROM gpu_apsp('SELECT * FROM grid_edges(316, 316)')$$) AS t;
SELECT pg_temp.timed_checks(t, '53200', 'gpu_apsp over 3353 vertices (its 3353 x 3353 result included) needs % MB, more than gpu_routing.max_memory (1.0 MB)',
                            1.0, 'max_memory 1MB, gpu_apsp over Rome') FROM refusals t WHERE n = 1;
SELECT pg_temp.timed_checks(t, '53200', 'edges_sql of gpu_sssp: 26214 rows read so far, % MB to hold them and more to come, more than gpu_routing.max_memory (1.0 MB)',
                            1.0, 'max_memory 1MB, gpu_sssp over the 200 x 200 grid') FROM refusals t WHERE n = 2;
SELECT pg_temp.timed_checks(t, '53200', 'gpu_apsp over 99856 vertices (its 99856 x 99856 result included) needs %GB, more than gpu_routing.max_memory (4.0 GB)',
                            3.0, 'default settings, gpu_apsp over a 316 x 316 grid') FROM refusals t WHERE n = 3;

SELECT pg_temp.timed_checks(t, '53200', 'the path rows of 1 source(s) (% rows so far, 52 bytes each) needs % MB, more than gpu_routing.max_memory (64.0 MB)',
                            2.0, 'max_memory 64MB, gpu_path one source to every vertex') FROM refusals t WHERE n = 4;
SELECT pg_temp.timed_checks(t, '53200', 'edges_sql of gpu_sssp: % rows read so far, % to hold them and more to come, more than gpu_routing.max_memory (1.0 MB)',
                            1.0, 'max_memory 1MB, gpu_sssp reading 50M edges_sql rows') FROM refusals t WHERE n = 5;

SELECT is(pg_postmaster_start_time(), (SELECT started FROM start_state), 'the postmaster did not restart');

SELECT * FROM finish();
ROLLBACK;

-- no_crash: NULL in every argument of every overload (empty result: the functions are STRICT, and
-- gpu_apsp's matrix form treats NULL targets as every vertex), empty and NULL-holding and
-- two-dimensional arrays (errors), NULL values in the queries' rows (errors), empty edge sets,
-- vertices not in the graph, queries that are not queries; and after all of it the backend is
-- the same process and the postmaster did not restart.
BEGIN;
SET LOCAL client_min_messages = warning;

SELECT plan(116);

CREATE TEMP TABLE start_state AS SELECT pg_backend_pid() AS pid, pg_postmaster_start_time() AS started;

-- Raises an error with SQLSTATE `state` and a message LIKE `pattern`.
CREATE FUNCTION pg_temp.throws_state_like(query text, state text, pattern text, description text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  got_state text;
  got_message text;
BEGIN
  EXECUTE query;
  RETURN ok(false, description) || E'\n' || diag('    no error was raised');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS got_state = RETURNED_SQLSTATE, got_message = MESSAGE_TEXT;
  IF got_state = state AND got_message LIKE pattern THEN
    RETURN ok(true, description);
  END IF;
  RETURN ok(false, description) || E'\n'
         || diag(format('    got: %s %s', got_state, got_message)) || E'\n'
         || diag(format('    expected: %s %s', state, pattern));
END
$$;

\set e 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
\set c 'SELECT * FROM (VALUES (6, 10), (1, 17)) AS c(source, target)'

-- Every overload gives rows with these arguments (so an empty result below means something). 9.
SELECT isnt_empty(format('SELECT * FROM gpu_sssp(%L, 6)', :'e'), 'gpu_sssp(edges, source) gives rows');
SELECT isnt_empty(format('SELECT * FROM gpu_sssp(%L, ARRAY[6])', :'e'), 'gpu_sssp(edges, sources) gives rows');
SELECT isnt_empty(format('SELECT * FROM gpu_path(%L, 6, 10)', :'e'), 'gpu_path one to one gives rows');
SELECT isnt_empty(format('SELECT * FROM gpu_path(%L, 6, ARRAY[10])', :'e'), 'gpu_path one to many gives rows');
SELECT isnt_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], 10)', :'e'), 'gpu_path many to one gives rows');
SELECT isnt_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], ARRAY[10])', :'e'), 'gpu_path many to many gives rows');
SELECT isnt_empty(format('SELECT * FROM gpu_path(%L, %L)', :'e', :'c'), 'gpu_path combinations gives rows');
SELECT isnt_empty(format('SELECT * FROM gpu_apsp(%L)', :'e'), 'gpu_apsp(edges) gives rows');
SELECT isnt_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[6], ARRAY[10])', :'e'), 'gpu_apsp(edges, sources, targets) gives rows');

-- NULL in each argument position: an empty result. 30.
SELECT is_empty($$SELECT * FROM gpu_sssp(NULL::text, 6)$$, 'gpu_sssp(NULL, source)');
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, NULL::bigint)', :'e'), 'gpu_sssp(edges, NULL)');
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, 6, NULL::boolean)', :'e'), 'gpu_sssp(edges, source, NULL)');
SELECT is_empty($$SELECT * FROM gpu_sssp(NULL::text, ARRAY[6])$$, 'gpu_sssp(NULL, sources)');
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, NULL::bigint[])', :'e'), 'gpu_sssp(edges, NULL::bigint[])');
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, ARRAY[6], NULL::boolean)', :'e'), 'gpu_sssp(edges, sources, NULL)');
SELECT is_empty($$SELECT * FROM gpu_path(NULL::text, 6, 10)$$, 'gpu_path(NULL, 6, 10)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, NULL::bigint, 10)', :'e'), 'gpu_path(edges, NULL, 10)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, NULL::bigint)', :'e'), 'gpu_path(edges, 6, NULL)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, 10, NULL::boolean)', :'e'), 'gpu_path(edges, 6, 10, NULL)');
SELECT is_empty($$SELECT * FROM gpu_path(NULL::text, 6, ARRAY[10])$$, 'gpu_path(NULL, 6, {10})');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, NULL::bigint, ARRAY[10])', :'e'), 'gpu_path(edges, NULL, {10})');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, NULL::bigint[])', :'e'), 'gpu_path(edges, 6, NULL::bigint[])');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, ARRAY[10], NULL::boolean)', :'e'), 'gpu_path(edges, 6, {10}, NULL)');
SELECT is_empty($$SELECT * FROM gpu_path(NULL::text, ARRAY[6], 10)$$, 'gpu_path(NULL, {6}, 10)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, NULL::bigint[], 10)', :'e'), 'gpu_path(edges, NULL::bigint[], 10)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], NULL::bigint)', :'e'), 'gpu_path(edges, {6}, NULL)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], 10, NULL::boolean)', :'e'), 'gpu_path(edges, {6}, 10, NULL)');
SELECT is_empty($$SELECT * FROM gpu_path(NULL::text, ARRAY[6], ARRAY[10])$$, 'gpu_path(NULL, {6}, {10})');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, NULL::bigint[], ARRAY[10])', :'e'), 'gpu_path(edges, NULL::bigint[], {10})');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], NULL::bigint[])', :'e'), 'gpu_path(edges, {6}, NULL::bigint[])');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], ARRAY[10], NULL::boolean)', :'e'), 'gpu_path(edges, {6}, {10}, NULL)');
SELECT is_empty(format('SELECT * FROM gpu_path(NULL::text, %L)', :'c'), 'gpu_path(NULL, combinations)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, NULL::text)', :'e'), 'gpu_path(edges, NULL::text)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, %L, NULL::boolean)', :'e', :'c'), 'gpu_path(edges, combinations, NULL)');
SELECT is_empty($$SELECT * FROM gpu_apsp(NULL::text)$$, 'gpu_apsp(NULL)');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, NULL::boolean)', :'e'), 'gpu_apsp(edges, NULL)');
SELECT is_empty(format('SELECT * FROM gpu_apsp(NULL::text, ARRAY[6], ARRAY[10])'), 'gpu_apsp(NULL, sources, targets)');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, NULL::bigint[], ARRAY[10])', :'e'), 'gpu_apsp(edges, NULL, targets)');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[6], ARRAY[10], NULL::boolean)', :'e'), 'gpu_apsp(edges, sources, targets, NULL)');

-- gpu_apsp's matrix form: targets NULL (or left out) means every vertex. 3.
SELECT results_eq(format('SELECT * FROM gpu_apsp(%L, ARRAY[6, 1], NULL::bigint[])', :'e'),
                  format('SELECT * FROM gpu_apsp(%L, ARRAY[6, 1], ARRAY(SELECT generate_series(1, 17)::bigint))', :'e'),
                  'gpu_apsp(edges, sources, NULL): the same rows as every vertex as target');
SELECT results_eq(format('SELECT * FROM gpu_apsp(%L, ARRAY[6, 1])', :'e'),
                  format('SELECT * FROM gpu_apsp(%L, ARRAY[6, 1], NULL::bigint[])', :'e'),
                  'gpu_apsp(edges, sources): targets defaults to NULL');
SELECT set_eq(format('SELECT * FROM gpu_apsp(%L, ARRAY[6, 1], NULL::bigint[], false)', :'e'),
              format('SELECT * FROM gpu_apsp(%L, false) WHERE start_vid IN (1, 6)', :'e'),
              'gpu_apsp(edges, sources, NULL, false): the rows of the all-pairs form for those sources');

-- Empty arrays: an error naming the argument. 7.
SELECT throws_ok(format('SELECT * FROM gpu_sssp(%L, ARRAY[]::bigint[])', :'e'), '22023', 'sources of gpu_sssp is an empty array', 'gpu_sssp: sources {}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, 6, ARRAY[]::bigint[])', :'e'), '22023', 'end_vids of gpu_path is an empty array', 'gpu_path one to many: end_vids {}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[]::bigint[], 10)', :'e'), '22023', 'start_vids of gpu_path is an empty array', 'gpu_path many to one: start_vids {}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[]::bigint[], ARRAY[10])', :'e'), '22023', 'start_vids of gpu_path is an empty array', 'gpu_path many to many: start_vids {}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[6], ARRAY[]::bigint[])', :'e'), '22023', 'end_vids of gpu_path is an empty array', 'gpu_path many to many: end_vids {}');
SELECT throws_ok(format('SELECT * FROM gpu_apsp(%L, ARRAY[]::bigint[])', :'e'), '22023', 'sources of gpu_apsp is an empty array', 'gpu_apsp: sources {}');
SELECT throws_ok(format('SELECT * FROM gpu_apsp(%L, ARRAY[6], ARRAY[]::bigint[])', :'e'), '22023', 'targets of gpu_apsp is an empty array', 'gpu_apsp: targets {}');

-- Arrays holding a NULL: an error naming the argument and the position. 7.
SELECT throws_ok(format('SELECT * FROM gpu_sssp(%L, ARRAY[6, NULL])', :'e'), '22004', 'sources of gpu_sssp contains NULL at position 2', 'gpu_sssp: sources {6,NULL}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, 6, ARRAY[NULL, 10])', :'e'), '22004', 'end_vids of gpu_path contains NULL at position 1', 'gpu_path one to many: end_vids {NULL,10}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[6, 1, NULL], 10)', :'e'), '22004', 'start_vids of gpu_path contains NULL at position 3', 'gpu_path many to one: start_vids {6,1,NULL}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[NULL::bigint], ARRAY[10])', :'e'), '22004', 'start_vids of gpu_path contains NULL at position 1', 'gpu_path many to many: start_vids {NULL}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[6], ARRAY[10, NULL])', :'e'), '22004', 'end_vids of gpu_path contains NULL at position 2', 'gpu_path many to many: end_vids {10,NULL}');
SELECT throws_ok(format('SELECT * FROM gpu_apsp(%L, ARRAY[NULL, 6])', :'e'), '22004', 'sources of gpu_apsp contains NULL at position 1', 'gpu_apsp: sources {NULL,6}');
SELECT throws_ok(format('SELECT * FROM gpu_apsp(%L, ARRAY[6], ARRAY[10, NULL])', :'e'), '22004', 'targets of gpu_apsp contains NULL at position 2', 'gpu_apsp: targets {10,NULL}');

-- Two-dimensional arrays. 7.
SELECT throws_ok(format('SELECT * FROM gpu_sssp(%L, ARRAY[[6]])', :'e'), '2202E', 'sources of gpu_sssp must be a one-dimensional array, not 2-dimensional', 'gpu_sssp: sources {{6}}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, 6, ARRAY[[10, 17]])', :'e'), '2202E', 'end_vids of gpu_path must be a one-dimensional array, not 2-dimensional', 'gpu_path one to many: end_vids {{10,17}}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[[6], [1]], 10)', :'e'), '2202E', 'start_vids of gpu_path must be a one-dimensional array, not 2-dimensional', 'gpu_path many to one: start_vids {{6},{1}}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[[[6]]], ARRAY[10])', :'e'), '2202E', 'start_vids of gpu_path must be a one-dimensional array, not 3-dimensional', 'gpu_path many to many: start_vids {{{6}}}');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, ARRAY[6], ARRAY[[10]])', :'e'), '2202E', 'end_vids of gpu_path must be a one-dimensional array, not 2-dimensional', 'gpu_path many to many: end_vids {{10}}');
SELECT throws_ok(format('SELECT * FROM gpu_apsp(%L, ARRAY[[6, 1]])', :'e'), '2202E', 'sources of gpu_apsp must be a one-dimensional array, not 2-dimensional', 'gpu_apsp: sources {{6,1}}');
SELECT throws_ok(format('SELECT * FROM gpu_apsp(%L, ARRAY[6], ARRAY[[10]])', :'e'), '2202E', 'targets of gpu_apsp must be a one-dimensional array, not 2-dimensional', 'gpu_apsp: targets {{10}}');

-- NULL values inside the queries' rows: an error naming the column and the row. 7.
SELECT throws_ok($$SELECT * FROM gpu_sssp('SELECT NULLIF(id, 4) AS id, source, target, cost FROM sample_edges ORDER BY sample_edges.id', 6)$$,
                 '22004', 'column "id" of edges_sql is NULL in row 4', 'NULL id');
SELECT throws_ok($$SELECT * FROM gpu_path('SELECT id, NULLIF(source, 5) AS source, target, cost FROM sample_edges ORDER BY id', 6, 10)$$,
                 '22004', 'column "source" of edges_sql is NULL in row 1', 'NULL source');
SELECT throws_ok($$SELECT * FROM gpu_apsp('SELECT id, source, NULLIF(target, 17) AS target, cost FROM sample_edges ORDER BY id')$$,
                 '22004', 'column "target" of edges_sql is NULL in row 13', 'NULL target');
SELECT throws_ok($$SELECT * FROM gpu_path('SELECT id, source, target, NULLIF(cost, -1) AS cost FROM sample_edges ORDER BY id', ARRAY[6], ARRAY[10])$$,
                 '22004', 'column "cost" of edges_sql is NULL in row 2', 'NULL cost');
SELECT throws_ok($$SELECT * FROM gpu_sssp('SELECT id, source, target, cost, NULLIF(reverse_cost, -1) AS reverse_cost FROM sample_edges ORDER BY id', ARRAY[6])$$,
                 '22004', 'column "reverse_cost" of edges_sql is NULL in row 5', 'NULL reverse_cost');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, %L)', :'e', 'SELECT * FROM (VALUES (6, 10), (NULL, 17)) AS c(source, target)'),
                 '22004', 'column "source" of combinations_sql is NULL in row 2', 'NULL combination source');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, %L)', :'e', 'SELECT * FROM (VALUES (6, NULL::int)) AS c(source, target)'),
                 '22004', 'column "target" of combinations_sql is NULL in row 1', 'NULL combination target');

-- edges_sql returning no rows: an empty result. 9.
\set none 'SELECT id, source, target, cost, reverse_cost FROM sample_edges WHERE false'
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, 6)', :'none'), 'no edges: gpu_sssp(edges, source)');
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, ARRAY[6])', :'none'), 'no edges: gpu_sssp(edges, sources)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, 10)', :'none'), 'no edges: gpu_path one to one');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, ARRAY[10])', :'none'), 'no edges: gpu_path one to many');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], 10)', :'none'), 'no edges: gpu_path many to one');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], ARRAY[10])', :'none'), 'no edges: gpu_path many to many');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, %L)', :'none', :'c'), 'no edges: gpu_path combinations');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L)', :'none'), 'no edges: gpu_apsp(edges)');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[6])', :'none'), 'no edges: gpu_apsp(edges, sources)');

-- Edges none of which can be travelled (negative or infinite costs): an empty graph. 9.
\set dead 'SELECT id, source, target, CASE WHEN id % 2 = 0 THEN -1 ELSE ''Infinity''::float8 END AS cost, CASE WHEN id % 3 = 0 THEN ''-Infinity''::float8 ELSE -0.5 END AS reverse_cost FROM sample_edges'
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, 6)', :'dead'), 'no usable edge: gpu_sssp(edges, source)');
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, ARRAY[6], false)', :'dead'), 'no usable edge: gpu_sssp(edges, sources)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, 10, false)', :'dead'), 'no usable edge: gpu_path one to one');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, ARRAY[10])', :'dead'), 'no usable edge: gpu_path one to many');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], 10)', :'dead'), 'no usable edge: gpu_path many to one');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6], ARRAY[10])', :'dead'), 'no usable edge: gpu_path many to many');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, %L, false)', :'dead', :'c'), 'no usable edge: gpu_path combinations');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, false)', :'dead'), 'no usable edge: gpu_apsp(edges)');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[6])', :'dead'), 'no usable edge: gpu_apsp(edges, sources)');

-- Vertices not in the graph: no rows for them. 12.
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, 999)', :'e'), 'unknown source: gpu_sssp(edges, source)');
SELECT is_empty(format('SELECT * FROM gpu_sssp(%L, ARRAY[998, 999, -1])', :'e'), 'unknown sources: gpu_sssp(edges, sources)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 999, 10)', :'e'), 'unknown start: gpu_path one to one');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, 999)', :'e'), 'unknown end: gpu_path one to one');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 999, ARRAY[10])', :'e'), 'unknown start: gpu_path one to many');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, ARRAY[998, 999])', :'e'), 'unknown ends: gpu_path one to many');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[998, 999], 10)', :'e'), 'unknown starts: gpu_path many to one');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[998], ARRAY[999])', :'e'), 'unknown vertices: gpu_path many to many');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, %L)', :'e', 'SELECT * FROM (VALUES (6, 999), (999, 10), (0, 0)) AS c(source, target)'),
                'unknown vertices: gpu_path combinations');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[999])', :'e'), 'unknown source: gpu_apsp(edges, sources)');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[6], ARRAY[999])', :'e'), 'unknown target: gpu_apsp(edges, sources, targets)');
SELECT results_eq(format('SELECT * FROM gpu_path(%L, ARRAY[999, 6, 998], ARRAY[-5, 10, 997])', :'e'),
                  format('SELECT * FROM gpu_path(%L, ARRAY[6], ARRAY[10])', :'e'),
                  'known and unknown vertices mixed: the rows of the known ones');

-- A combinations_sql returning no rows. 1.
SELECT is_empty(format('SELECT * FROM gpu_path(%L, %L)', :'e', 'SELECT 6 AS source, 10 AS target WHERE false'),
                'no combinations: gpu_path combinations');

-- Text that is not a row-returning query. 8.
SELECT pg_temp.throws_state_like($$SELECT * FROM gpu_sssp('', 6)$$, '22023', 'edges_sql of gpu_sssp must be a query returning rows%', 'edges_sql empty');
SELECT pg_temp.throws_state_like($$SELECT * FROM gpu_path('SELECT id, source, target, cost FROM sample_edges', ';')$$, '22023',
                                 'combinations_sql of gpu_path must be a query returning rows%', 'combinations_sql just a semicolon');
SELECT throws_ok($$SELECT * FROM gpu_apsp('CREATE TABLE should_not_exist (id int)')$$, '22023', 'edges_sql of gpu_apsp must only read: it is not a SELECT (or VALUES, TABLE)', 'edges_sql a CREATE TABLE');
SELECT throws_ok($$SELECT * FROM gpu_sssp('UPDATE sample_edges SET cost = 0 RETURNING id, source, target, cost', 6)$$, '22023', 'edges_sql of gpu_sssp must only read: it is not a SELECT (or VALUES, TABLE)', 'edges_sql an UPDATE ... RETURNING');
SELECT throws_ok($$SELECT * FROM gpu_sssp('SELECT 1', 6)$$, '42703', 'edges_sql of gpu_sssp has no column named "id"', 'edges_sql without the columns');
SELECT throws_ok($$SELECT * FROM gpu_sssp('SELEKT id, source, target, cost FROM sample_edges', 6)$$, '42601', NULL, 'edges_sql a syntax error');
SELECT throws_ok($$SELECT * FROM gpu_apsp('SELECT id, source, target, 1 / (id - 9) AS cost FROM sample_edges', ARRAY[6])$$, '22012', 'division by zero', 'edges_sql failing while it runs');
SELECT results_eq(
  $$SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges WHERE id <= (SELECT 2 * count(*) FROM gpu_path(''SELECT id, source, target, cost FROM sample_edges'', 6, 17))', 6)$$,
  $$SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges WHERE id <= 10', 6)$$,
  'a gpu_routing call inside edges_sql');

-- Several statements in one edges_sql / combinations_sql are refused (pgRouting refuses them
-- too): run one after another they would mix rows of two shapes into the same arrays. 3.
SELECT throws_ok($$SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges WHERE id < 5; SELECT id, source, target, cost FROM sample_edges', 6)$$,
                 '22023', 'edges_sql of gpu_sssp must be one SQL query, not 2 statements',
                 'edges_sql with two statements is refused');
SELECT throws_ok(format('SELECT * FROM gpu_path(%L, %L)', :'e', 'SELECT 6 AS source, 10 AS target; SELECT 1 AS source, 17 AS target'),
                 '22023', 'combinations_sql of gpu_path must be one SQL query, not 2 statements',
                 'combinations_sql with two statements is refused');
-- Once crashed the backend (a later statement with a column the first lacked).
SELECT throws_ok($$SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges; SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6)$$,
                 '22023', NULL, 'edges_sql whose second statement adds reverse_cost is refused');

-- Many unknown ids. 1.
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY(SELECT generate_series(1000, 200999)::bigint), ARRAY[-1, 6])', :'e'),
                '200000 unknown sources: empty');

-- Still working, in the same backend of the same postmaster. 3.
SELECT results_eq(format('SELECT node, edge, agg_cost FROM gpu_path(%L, 6, 10)', :'e'),
                  $$VALUES (6::bigint, 4::bigint, 0::float8), (7, 8, 1), (11, 9, 2), (16, 16, 3), (15, 3, 4), (10, -1, 5)$$,
                  'gpu_path(sample, 6, 10) is still pgRouting''s documented path 6,7,11,16,15,10, agg_cost 5');
SELECT is(pg_backend_pid(), (SELECT pid FROM start_state), 'the same backend process');
SELECT is(pg_postmaster_start_time(), (SELECT started FROM start_state), 'the postmaster did not restart');

SELECT * FROM finish();
ROLLBACK;

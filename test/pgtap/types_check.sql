-- types_check: every function and overload of gpu_routing exists with the documented argument
-- names, types and defaults, returns the documented columns and types, and has the declared
-- language, strictness and volatility (sql/gpu_routing--0.5.0.sql is the documentation).
BEGIN;
SET LOCAL client_min_messages = warning;

SELECT plan(309);

-- The columns of a function with the given argument modes ('i' in, 'o' out, 't' table), in order,
-- as 'name type'.
CREATE FUNCTION pg_temp.columns_of(signature regprocedure, modes text[]) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(a.name || ' ' || format_type(a.type, NULL) ORDER BY a.n), '{}')
  FROM pg_proc p,
       unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]),
              coalesce(p.proargmodes::text[], array_fill('i'::text, ARRAY[p.pronargs::int])),
              p.proargnames) WITH ORDINALITY AS a(type, mode, name, n)
  WHERE p.oid = signature AND a.mode = ANY (modes)
$$;

-- Nine checks of one overload: exists, language C, returns a set of records, strict or not,
-- volatile, the full argument list (names, types, defaults), the IN arguments, the result columns,
-- a comment.
CREATE FUNCTION pg_temp.overload_checks(fn name, args name[], strict boolean, arguments text,
                                        in_columns text[], out_columns text[])
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  signature text := fn || '(' || array_to_string(args, ', ') || ')';
  proc regprocedure := to_regprocedure('public.' || signature);
BEGIN
  RETURN NEXT has_function('public', fn, args, signature || ' exists');
  RETURN NEXT function_lang_is('public', fn, args, 'c', signature || ' is written in C');
  RETURN NEXT function_returns('public', fn, args, 'setof record', signature || ' returns a set of rows');
  IF strict THEN
    RETURN NEXT is_strict('public', fn, args, signature || ' is STRICT');
  ELSE
    RETURN NEXT isnt_strict('public', fn, args, signature || ' is not STRICT');
  END IF;
  RETURN NEXT volatility_is('public', fn, args, 'volatile', signature || ' is VOLATILE');
  RETURN NEXT is(pg_get_function_arguments(proc), arguments, signature || ': argument names, types and defaults');
  RETURN NEXT is(pg_temp.columns_of(proc, '{i}'), in_columns, signature || ': IN arguments');
  RETURN NEXT is(pg_temp.columns_of(proc, '{o,t}'), out_columns, signature || ': result columns');
  RETURN NEXT ok(coalesce(obj_description(proc, 'pg_proc'), '') <> '', signature || ' has a comment');
END
$$;

-- 16 overloads x 9 checks = 144.
SELECT pg_temp.overload_checks('gpu_sssp', '{text,bigint,boolean}', true,
  'edges_sql text, source bigint, directed boolean DEFAULT true',
  '{"edges_sql text","source bigint","directed boolean"}',
  '{"node bigint","distance double precision","predecessor bigint","edge bigint"}');
SELECT pg_temp.overload_checks('gpu_sssp', '{text,bigint[],boolean}', true,
  'edges_sql text, sources bigint[], directed boolean DEFAULT true',
  '{"edges_sql text","sources bigint[]","directed boolean"}',
  '{"source bigint","node bigint","distance double precision","predecessor bigint","edge bigint"}');
SELECT pg_temp.overload_checks('gpu_path', '{text,bigint,bigint,boolean}', true,
  'edges_sql text, start_vid bigint, end_vid bigint, directed boolean DEFAULT true, OUT seq integer, '
  'OUT path_seq integer, OUT node bigint, OUT edge bigint, OUT cost double precision, OUT agg_cost double precision',
  '{"edges_sql text","start_vid bigint","end_vid bigint","directed boolean"}',
  '{"seq integer","path_seq integer","node bigint","edge bigint","cost double precision","agg_cost double precision"}');
SELECT pg_temp.overload_checks('gpu_path', '{text,bigint,bigint[],boolean}', true,
  'edges_sql text, start_vid bigint, end_vids bigint[], directed boolean DEFAULT true, OUT seq integer, '
  'OUT path_seq integer, OUT end_vid bigint, OUT node bigint, OUT edge bigint, OUT cost double precision, '
  'OUT agg_cost double precision',
  '{"edges_sql text","start_vid bigint","end_vids bigint[]","directed boolean"}',
  '{"seq integer","path_seq integer","end_vid bigint","node bigint","edge bigint","cost double precision","agg_cost double precision"}');
SELECT pg_temp.overload_checks('gpu_path', '{text,bigint[],bigint,boolean}', true,
  'edges_sql text, start_vids bigint[], end_vid bigint, directed boolean DEFAULT true, OUT seq integer, '
  'OUT path_seq integer, OUT start_vid bigint, OUT node bigint, OUT edge bigint, OUT cost double precision, '
  'OUT agg_cost double precision',
  '{"edges_sql text","start_vids bigint[]","end_vid bigint","directed boolean"}',
  '{"seq integer","path_seq integer","start_vid bigint","node bigint","edge bigint","cost double precision","agg_cost double precision"}');
SELECT pg_temp.overload_checks('gpu_path', '{text,bigint[],bigint[],boolean}', true,
  'edges_sql text, start_vids bigint[], end_vids bigint[], directed boolean DEFAULT true, OUT seq integer, '
  'OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint, OUT edge bigint, '
  'OUT cost double precision, OUT agg_cost double precision',
  '{"edges_sql text","start_vids bigint[]","end_vids bigint[]","directed boolean"}',
  '{"seq integer","path_seq integer","start_vid bigint","end_vid bigint","node bigint","edge bigint","cost double precision","agg_cost double precision"}');
SELECT pg_temp.overload_checks('gpu_path', '{text,text,boolean}', true,
  'edges_sql text, combinations_sql text, directed boolean DEFAULT true, OUT seq integer, '
  'OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint, OUT edge bigint, '
  'OUT cost double precision, OUT agg_cost double precision',
  '{"edges_sql text","combinations_sql text","directed boolean"}',
  '{"seq integer","path_seq integer","start_vid bigint","end_vid bigint","node bigint","edge bigint","cost double precision","agg_cost double precision"}');
SELECT pg_temp.overload_checks('gpu_apsp', '{text,boolean}', true,
  'edges_sql text, directed boolean DEFAULT true',
  '{"edges_sql text","directed boolean"}',
  '{"start_vid bigint","end_vid bigint","agg_cost double precision"}');
-- Not STRICT: targets NULL means every vertex.
SELECT pg_temp.overload_checks('gpu_apsp', '{text,bigint[],bigint[],boolean}', false,
  'edges_sql text, sources bigint[], targets bigint[] DEFAULT NULL::bigint[], directed boolean DEFAULT true',
  '{"edges_sql text","sources bigint[]","targets bigint[]","directed boolean"}',
  '{"start_vid bigint","end_vid bigint","agg_cost double precision"}');
SELECT pg_temp.overload_checks('gpu_routing_info', '{}', false, '', '{}',
  '{"name text","value text"}');
SELECT pg_temp.overload_checks('gpu_routing_last_run', '{}', false, '', '{}',
  '{"function text","device text","algorithm text","reason text","vertices bigint","edges bigint",'
  '"sources bigint","rows bigint","rounds bigint","load_ms double precision","build_ms double precision",'
  '"compute_ms double precision","transfer_ms double precision","emit_ms double precision",'
  '"total_ms double precision","notes text","graph text","batch_size integer",'
  '"wait_ms double precision"}');
SELECT pg_temp.overload_checks('gpu_routing_calibrate', '{}', false, '', '{}',
  '{"speed text","value double precision","source text"}');
-- It writes a file of the server's: superusers only.
SELECT ok(NOT has_function_privilege('public', 'gpu_routing_calibrate()', 'EXECUTE'),
          'gpu_routing_calibrate() is not executable by PUBLIC');
SELECT pg_temp.overload_checks('gpu_graphs', '{}', false, '', '{}',
  '{"name text","owner regrole","edges_sql text","tables regclass[]","refresh text","state text",'
  '"forms text","vertices bigint","edges bigint","host_bytes bigint","device_bytes bigint",'
  '"built_at timestamp with time zone","build_ms double precision","calls bigint",'
  '"last_used timestamp with time zone","note text"}');

SELECT pg_temp.overload_checks('gpu_apsp', '{text,text,boolean}', true,
  'edges_sql text, combinations_sql text, directed boolean DEFAULT true',
  '{"edges_sql text","combinations_sql text","directed boolean"}',
  '{"start_vid bigint","end_vid bigint","agg_cost double precision"}');
SELECT pg_temp.overload_checks('gpu_apsp_array', '{text,boolean}', true,
  'edges_sql text, directed boolean DEFAULT true',
  '{"edges_sql text","directed boolean"}',
  '{"start_vid bigint","agg_costs double precision[]"}');
-- Not STRICT: targets NULL means every vertex.
SELECT pg_temp.overload_checks('gpu_apsp_array', '{text,bigint[],bigint[],boolean}', false,
  'edges_sql text, sources bigint[], targets bigint[] DEFAULT NULL::bigint[], directed boolean DEFAULT true',
  '{"edges_sql text","sources bigint[]","targets bigint[]","directed boolean"}',
  '{"start_vid bigint","agg_costs double precision[]"}');
SELECT pg_temp.overload_checks('gpu_routing_get_progress', '{}', false, '', '{}',
  '{"pid integer","datname text","usename text","function text","graph text","phase text",'
  '"sources_done bigint","sources_total bigint","rows_written bigint","device text",'
  '"started timestamp with time zone","elapsed interval"}');
SELECT has_view('public', 'gpu_routing_progress', 'the view gpu_routing_progress exists');

-- Vertex id arrays of every integer type and NUMERIC (pgRouting's ANY-INTEGER): each bigint[]
-- overload has a smallint[], integer[] and numeric[] twin on the same C function, with the same
-- strictness and result columns. 18 twins x 6 checks = 108.
CREATE FUNCTION pg_temp.twin_checks(fn name, args name[], bigint_args name[]) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  signature text := fn || '(' || array_to_string(args, ', ') || ')';
  twin regprocedure := to_regprocedure('public.' || signature);
  original regprocedure := to_regprocedure('public.' || fn || '(' || array_to_string(bigint_args, ', ') || ')');
BEGIN
  RETURN NEXT has_function('public', fn, args, signature || ' exists');
  RETURN NEXT is((SELECT prosrc FROM pg_proc WHERE oid = twin), (SELECT prosrc FROM pg_proc WHERE oid = original),
                 signature || ' runs the C function of its bigint[] form');
  RETURN NEXT is((SELECT proisstrict FROM pg_proc WHERE oid = twin), (SELECT proisstrict FROM pg_proc WHERE oid = original),
                 signature || ' is as STRICT as its bigint[] form');
  RETURN NEXT volatility_is('public', fn, args, 'volatile', signature || ' is VOLATILE');
  RETURN NEXT is(pg_temp.columns_of(twin, '{o,t}'), pg_temp.columns_of(original, '{o,t}'),
                 signature || ': the result columns of its bigint[] form');
  RETURN NEXT ok(coalesce(obj_description(twin, 'pg_proc'), '') <> '', signature || ' has a comment');
END
$$;
SELECT pg_temp.twin_checks(f.fn, replace(f.args, 'bigint[]', t || '[]')::name[], f.args::name[])
FROM (VALUES ('gpu_sssp', '{text,bigint[],boolean}'), ('gpu_path', '{text,bigint,bigint[],boolean}'),
             ('gpu_path', '{text,bigint[],bigint,boolean}'), ('gpu_path', '{text,bigint[],bigint[],boolean}'),
             ('gpu_apsp', '{text,bigint[],bigint[],boolean}'),
             ('gpu_apsp_array', '{text,bigint[],bigint[],boolean}')) AS f(fn, args),
     unnest(ARRAY['smallint', 'integer', 'numeric']) AS t;

-- The kept-graph commands: six checks each (4 x 6 = 24).
CREATE FUNCTION pg_temp.command_checks(fn name, args name[], returns text, arguments text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  signature text := fn || '(' || array_to_string(args, ', ') || ')';
BEGIN
  RETURN NEXT has_function('public', fn, args, signature || ' exists');
  RETURN NEXT function_lang_is('public', fn, args, 'c', signature || ' is written in C');
  RETURN NEXT function_returns('public', fn, args, returns, signature || ' returns ' || returns);
  RETURN NEXT is_strict('public', fn, args, signature || ' is STRICT');
  RETURN NEXT is(pg_get_function_arguments(to_regprocedure('public.' || signature)), arguments,
                 signature || ': argument names, types and defaults');
  RETURN NEXT ok(coalesce(obj_description(to_regprocedure('public.' || signature), 'pg_proc'), '') <> '',
                 signature || ' has a comment');
END
$$;
SELECT pg_temp.command_checks('gpu_graph_create', '{text,text,text}', 'text',
  'name text, edges_sql text, refresh text DEFAULT ''auto''::text');
SELECT pg_temp.command_checks('gpu_graph_refresh', '{text}', 'text', 'name text');
SELECT pg_temp.command_checks('gpu_graph_drop', '{text}', 'void', 'name text');
SELECT pg_temp.command_checks('gpu_graph_index', '{text,boolean}', 'text', 'name text, enabled boolean DEFAULT true');

-- What keeps graphs fresh: the change-tracking trigger function, the DDL watcher on both events,
-- and the registry that pg_dump keeps (5).
SELECT function_returns('public', 'gpu_routing_track_changes', '{}', 'trigger',
                        'gpu_routing_track_changes() is a trigger function');
SELECT function_returns('public', 'gpu_routing_watch_ddl', '{}', 'event_trigger',
                        'gpu_routing_watch_ddl() is an event trigger function');
SELECT set_eq($$SELECT evtevent::text || ' ' || evtenabled::text FROM pg_event_trigger
                WHERE evtfoid = 'gpu_routing_watch_ddl()'::regprocedure$$,
              ARRAY['ddl_command_end O', 'sql_drop O'],
              'gpu_routing_watch_ddl() runs, enabled, at ddl_command_end and sql_drop');
SELECT has_table('public', 'gpu_routing_graphs', 'the registry gpu_routing_graphs exists');
SELECT set_eq($$SELECT c.relname::text FROM pg_extension x, unnest(x.extconfig) AS t(oid)
                JOIN pg_class c ON c.oid = t.oid WHERE x.extname = 'gpu_routing'$$,
              ARRAY['gpu_routing_graphs', 'gpu_routing_graphs_id_seq'],
              'pg_dump keeps the registry and its sequence');

-- The extension holds exactly these functions, no more (gpu_pgr's: its own file,
-- gpu_pgr_signatures.sql, checks each against pgRouting's).
SELECT set_eq(
  $$SELECT p.oid::regprocedure::text FROM pg_proc p
    JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
    JOIN pg_extension x ON x.oid = d.refobjid AND x.extname = 'gpu_routing'$$,
  ARRAY['gpu_sssp(text,bigint,boolean)', 'gpu_sssp(text,bigint[],boolean)',
        'gpu_path(text,bigint,bigint,boolean)', 'gpu_path(text,bigint,bigint[],boolean)',
        'gpu_path(text,bigint[],bigint,boolean)', 'gpu_path(text,bigint[],bigint[],boolean)',
        'gpu_path(text,text,boolean)', 'gpu_apsp(text,boolean)',
        'gpu_apsp(text,bigint[],bigint[],boolean)', 'gpu_routing_info()', 'gpu_routing_last_run()',
        'gpu_routing_calibrate()', 'gpu_graph_create(text,text,text)', 'gpu_graph_refresh(text)', 'gpu_graph_drop(text)',
        'gpu_graph_index(text,boolean)', 'gpu_graphs()', 'gpu_routing_track_changes()', 'gpu_routing_watch_ddl()',
        'gpu_routing_get_progress()', 'gpu_apsp_array(text,boolean)',
        'gpu_apsp_array(text,bigint[],bigint[],boolean)', 'gpu_apsp(text,text,boolean)',
        'gpu_driving_distance(text,bigint,double precision,boolean)',
        'gpu_driving_distance(text,bigint[],double precision,boolean,boolean)']
  || (SELECT array_agg(replace(f, 'bigint[]', t || '[]'))
      FROM unnest(ARRAY['gpu_sssp(text,bigint[],boolean)', 'gpu_path(text,bigint,bigint[],boolean)',
                        'gpu_driving_distance(text,bigint[],double precision,boolean,boolean)',
                        'gpu_path(text,bigint[],bigint,boolean)', 'gpu_path(text,bigint[],bigint[],boolean)',
                        'gpu_apsp(text,bigint[],bigint[],boolean)',
                        'gpu_apsp_array(text,bigint[],bigint[],boolean)']) AS f,
           unnest(ARRAY['smallint', 'integer', 'numeric']) AS t)
  || (SELECT array_agg('gpu_pgr.' || f || '(' || a || ')')
      FROM unnest(ARRAY['pgr_dijkstra', 'pgr_bddijkstra']) AS f,
           unnest(ARRAY['text,bigint,bigint,boolean', 'text,bigint,anyarray,boolean', 'text,anyarray,bigint,boolean',
                        'text,anyarray,anyarray,boolean', 'text,text,boolean']) AS a)
  || (SELECT array_agg('gpu_pgr.' || f || '(' || a || ')')
      FROM unnest(ARRAY['pgr_dijkstracost', 'pgr_bddijkstracost']) AS f,
           unnest(ARRAY['text,bigint,bigint,boolean', 'text,bigint,anyarray,boolean', 'text,anyarray,bigint,boolean',
                        'text,anyarray,anyarray,boolean', 'text,text,boolean']) AS a)
  || (SELECT array_agg('gpu_pgr.' || f || '(' || a || ')')
      FROM unnest(ARRAY['pgr_astar', 'pgr_astarcost']) AS f,
           unnest(ARRAY['text,bigint,bigint,boolean,integer,double precision,double precision',
                        'text,bigint,anyarray,boolean,integer,double precision,double precision',
                        'text,anyarray,bigint,boolean,integer,double precision,double precision',
                        'text,anyarray,anyarray,boolean,integer,double precision,double precision',
                        'text,text,boolean,integer,double precision,double precision']) AS a)
  || ARRAY['gpu_pgr.pgr_dijkstracostmatrix(text,anyarray,boolean)',
           'gpu_pgr.pgr_drivingdistance(text,bigint,double precision,boolean)',
           'gpu_pgr.pgr_drivingdistance(text,anyarray,double precision,boolean,boolean)',
           'gpu_pgr.pgr_johnson(text,boolean)', 'gpu_pgr.pgr_floydwarshall(text,boolean)',
           'gpu_pgr._gpu_pgr_vertex_ids(anyarray,text,text,boolean)', 'gpu_pgr._gpu_pgr_query_text(text)',
           'gpu_pgr._gpu_pgr_has_column(text,text)', 'gpu_pgr._gpu_pgr_vertex_order(text)',
           'gpu_pgr._gpu_pgr_astar_edges(text,text,bigint[],bigint[],text,boolean,integer,double precision,double precision)'],
  'gpu_routing defines exactly the documented functions');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'gpu_routing'), '0.5.0', 'extension version 0.5.0');

-- None runs as its owner, none is marked parallel safe (they run SPI queries and hold devices).
SELECT is((SELECT count(*)::int FROM pg_proc p
           JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
           JOIN pg_extension x ON x.oid = d.refobjid AND x.extname = 'gpu_routing'
           WHERE p.prosecdef OR p.proparallel <> 'u'), 0,
          'no function is SECURITY DEFINER or PARALLEL SAFE/RESTRICTED');

-- gpu_driving_distance is pgr_drivingDistance: the same result columns, both forms.
SELECT is(pg_temp.columns_of('gpu_driving_distance(text,bigint,double precision,boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_drivingdistance(text,bigint,double precision,boolean)', '{o,t}'),
          'gpu_driving_distance one start: the columns of pgr_drivingDistance');
SELECT is(pg_temp.columns_of('gpu_driving_distance(text,bigint[],double precision,boolean,boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_drivingdistance(text,anyarray,double precision,boolean,boolean)', '{o,t}'),
          'gpu_driving_distance many starts: the columns of pgr_drivingDistance');

-- gpu_path and gpu_apsp are drop-in replacements: the same result columns as pgRouting 3.4's
-- pgr_dijkstra (each shape), pgr_floydWarshall / pgr_johnson and pgr_dijkstraCost.
SELECT is(pg_temp.columns_of('gpu_path(text,bigint,bigint,boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_dijkstra(text,bigint,bigint,boolean)', '{o,t}'),
          'gpu_path one to one: the columns of pgr_dijkstra one to one');
SELECT is(pg_temp.columns_of('gpu_path(text,bigint,bigint[],boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_dijkstra(text,bigint,anyarray,boolean)', '{o,t}'),
          'gpu_path one to many: the columns of pgr_dijkstra one to many');
SELECT is(pg_temp.columns_of('gpu_path(text,bigint[],bigint,boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_dijkstra(text,anyarray,bigint,boolean)', '{o,t}'),
          'gpu_path many to one: the columns of pgr_dijkstra many to one');
SELECT is(pg_temp.columns_of('gpu_path(text,bigint[],bigint[],boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_dijkstra(text,anyarray,anyarray,boolean)', '{o,t}'),
          'gpu_path many to many: the columns of pgr_dijkstra many to many');
SELECT is(pg_temp.columns_of('gpu_path(text,text,boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_dijkstra(text,text,boolean)', '{o,t}'),
          'gpu_path combinations: the columns of pgr_dijkstra combinations');
SELECT is(pg_temp.columns_of('gpu_apsp(text,boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_floydWarshall(text,boolean)', '{o,t}'),
          'gpu_apsp: the columns of pgr_floydWarshall');
SELECT is(pg_temp.columns_of('gpu_apsp(text,boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_johnson(text,boolean)', '{o,t}'),
          'gpu_apsp: the columns of pgr_johnson');
SELECT is(pg_temp.columns_of('gpu_apsp(text,bigint[],bigint[],boolean)', '{o,t}'),
          pg_temp.columns_of('pgr_dijkstraCost(text,anyarray,anyarray,boolean)', '{o,t}'),
          'gpu_apsp cost matrix: the columns of pgr_dijkstraCost many to many');

-- Calls written the usual ways resolve to one overload (no "function is not unique") and to the
-- expected one (its result columns).
CREATE TEMP TABLE resolved_one_to_one AS
  SELECT * FROM gpu_path('SELECT id, source, target, cost FROM sample_edges', 6, 10) LIMIT 0;
CREATE TEMP TABLE resolved_combinations AS
  SELECT * FROM gpu_path('SELECT id, source, target, cost FROM sample_edges', 'SELECT 6 AS source, 10 AS target') LIMIT 0;
CREATE TEMP TABLE resolved_matrix AS
  SELECT * FROM gpu_apsp('SELECT id, source, target, cost FROM sample_edges', ARRAY[6, 10]) LIMIT 0;
CREATE TEMP TABLE resolved_sssp AS
  SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 6, directed => false) LIMIT 0;
SELECT is(ARRAY(SELECT attname::text FROM pg_attribute WHERE attrelid = 'resolved_one_to_one'::regclass AND attnum > 0 ORDER BY attnum),
          '{seq,path_seq,node,edge,cost,agg_cost}', 'gpu_path(edges, 6, 10) is the one-to-one shape');
SELECT is(ARRAY(SELECT attname::text FROM pg_attribute WHERE attrelid = 'resolved_combinations'::regclass AND attnum > 0 ORDER BY attnum),
          '{seq,path_seq,start_vid,end_vid,node,edge,cost,agg_cost}', 'gpu_path(edges, ''SELECT ...'') is the combinations shape');
SELECT is(ARRAY(SELECT attname::text FROM pg_attribute WHERE attrelid = 'resolved_matrix'::regclass AND attnum > 0 ORDER BY attnum),
          '{start_vid,end_vid,agg_cost}', 'gpu_apsp(edges, ARRAY[...]) is the cost matrix with integer[] sources');
SELECT is(ARRAY(SELECT attname::text FROM pg_attribute WHERE attrelid = 'resolved_sssp'::regclass AND attnum > 0 ORDER BY attnum),
          '{node,distance,predecessor,edge}', 'gpu_sssp(edges, 6, directed => false) is the one-source form');

SELECT * FROM finish();
ROLLBACK;

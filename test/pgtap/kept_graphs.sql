-- kept_graphs: kept graphs (gpu_graph_create, then 'graph:NAME' in place of edges_sql).
--   Every computing function and shape (gpu_sssp one and many sources; gpu_path one-one,
--   one-many, many-one, many-many, combinations; gpu_apsp all pairs and matrix), directed and
--   undirected, on the kept graphs of test/fixtures.sql (Rome, its vertices 1..400, the sample
--   network with reverse_cost) gives exactly the rows, in order, of the same call on edges_sql:
--   with the run's gpu_routing.device and engines chosen automatically, then with every engine
--   gpu_routing_info() lists, chosen by name on its device, as engines.sql does (GPU engines skip
--   without a usable GPU; many-source engines, possibly dense, on Rome's part). Each graph call is
--   served by its kept graph with the engine asked for (gpu_routing_last_run()), each edges_sql
--   call by none.
--   gpu_routing_last_run().graph: 'graph:NAME'; an edges_sql equal to a graph's query but for
--   whitespace; NULL for another query and for the same text reading another table.
--   The API, on a graph this file registers first thing (before anything is written, so it is
--   built at once and shared; ROLLBACK removes it): gpu_graph_create's line and gpu_graphs()'s row
--   (vertices and edges as an edges_sql call reports them), its trigger, forms and calls; a
--   registration rolled back with its savepoint; refresh => 'manual'; ALTER making a graph
--   unusable; gpu_graph_refresh and gpu_graph_drop, and their trigger. Registered or refreshed
--   after the transaction wrote, a graph is built after commit and read privately until then.
--   Errors, by SQLSTATE and message: unknown and invalid names, a name taken, a bad refresh
--   option, a graph name as edges_sql, untrackable queries, a missing column (in a fresh session
--   through dblink: it is found when the graph is built), another role refreshing, dropping or
--   reading without the right to.
--   Freshness inside the transaction: after UPDATE, DELETE and INSERT on a graph's tables, its
--   calls read privately and give the rows of edges_sql, while the shared graph stays fresh.
-- Needs shared_preload_libraries = 'gpu_routing' (kept graphs live in shared memory).
BEGIN;
SET LOCAL client_min_messages = warning;
-- Registered before this transaction writes anything (plan() creates temporary tables): built at
-- once and shared, as a graph registered outside a transaction; ROLLBACK removes it, trigger
-- included.
SELECT gpu_graph_create('pgtap_created', 'SELECT id, source, target, cost, reverse_cost FROM random_int_edges') AS created \gset

CREATE TEMP TABLE kg_engines AS
SELECT m[1] AS name, m[2] AS device, split_part(value, ':', 1) LIKE '%sssp%' AS sssp,
       split_part(value, ':', 1) LIKE '%apsp%' AS apsp
FROM gpu_routing_info(), regexp_match(name, '^engine (\S+) \((cpu|gpu)\)$') AS m
WHERE m IS NOT NULL;
CREATE TEMP TABLE kg_machine AS
SELECT EXISTS (SELECT 1 FROM gpu_routing_info() WHERE name = 'gpu 0') AS gpu_usable;

-- The graphs: the kept graph, the edges_sql it is compared with (the same rows, spelled otherwise,
-- so that it is not served by the graph), and the vertices asked about.
CREATE TEMP TABLE kg_graphs (graph text, plain text, s1 bigint, t1 bigint, starts bigint[], ends bigint[],
                             combinations text, all_pairs boolean, sssp_engines boolean, apsp_engines boolean, ord int);
INSERT INTO kg_graphs VALUES
  ('pgtap_sample', 'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
   6, 10, '{6,1,12,17,2}', '{10,17,5,3,4}',
   'SELECT * FROM (VALUES (6, 10), (1, 17), (12, 5), (2, 2), (17, 99)) AS t(source, target)', true, true, true, 1),
  ('pgtap_rome', 'SELECT id, source, target, cost FROM rome_edges ORDER BY id',
   1, 3000, '{1,500,1000,3000}', '{7,700,2000,3353}',
   'SELECT * FROM (VALUES (1, 3000), (50, 7), (2, 2), (3353, 1)) AS t(source, target)', false, true, false, 2),
  ('pgtap_rome_part', 'SELECT id, source, target, cost FROM rome_edges WHERE source <= 400 AND target <= 400 ORDER BY id',
   1, 400, '{1,100,250,399}', '{7,150,300,400}',
   'SELECT * FROM (VALUES (1, 400), (100, 7), (2, 2), (399, 1)) AS t(source, target)', true, false, true, 3);

-- The calls, %s standing for the edges. family: the engine setting that runs it (single-source:
-- gpu_routing.sssp_algorithm, many-source: apsp_algorithm). per_engine: also run with every
-- engine of its family (full Rome only with single-source engines: the many-source ones may be
-- dense, V^3; all pairs over full Rome are 11 million rows, so Rome asks the matrix to every vertex).
CREATE TEMP TABLE kg_templates (family text, shape text, template text, ord int);
INSERT INTO kg_templates VALUES
  ('sssp', 'gpu_sssp one source', 'gpu_sssp(%1$s, %2$s, %7$s)', 1),
  ('sssp', 'gpu_path one to one', 'gpu_path(%1$s, %2$s, %3$s, %7$s)', 2),
  ('sssp', 'gpu_path one to many', 'gpu_path(%1$s, %2$s, %5$L::bigint[], %7$s)', 3),
  ('apsp', 'gpu_sssp many sources', 'gpu_sssp(%1$s, %4$L::bigint[], %7$s)', 4),
  ('apsp', 'gpu_path many to one', 'gpu_path(%1$s, %4$L::bigint[], %3$s, %7$s)', 5),
  ('apsp', 'gpu_path many to many', 'gpu_path(%1$s, %4$L::bigint[], %5$L::bigint[], %7$s)', 6),
  ('apsp', 'gpu_path combinations', 'gpu_path(%1$s, %6$L, %7$s)', 7),
  ('apsp', 'gpu_apsp matrix', 'gpu_apsp(%1$s, %4$L::bigint[], %5$L::bigint[], %7$s)', 8),
  ('apsp', 'gpu_apsp all pairs', 'gpu_apsp(%1$s, %7$s)', 9),
  ('apsp', 'gpu_apsp matrix to every vertex', 'gpu_apsp(%1$s, %4$L::bigint[], NULL, %7$s)', 9);
CREATE TEMP TABLE kg_calls AS
SELECT row_number() OVER (ORDER BY g.ord, t.ord, d DESC) AS ord, g.graph, g.plain, t.family,
       t.shape || CASE WHEN d THEN '' ELSE ' undirected' END AS shape,
       format(t.template, '%s', g.s1, g.t1, g.starts, g.ends, g.combinations, d::text) AS call,
       CASE t.family WHEN 'sssp' THEN g.sssp_engines ELSE g.apsp_engines END AS per_engine
FROM kg_graphs g, kg_templates t, (VALUES (true), (false)) AS dir(d)
WHERE (t.shape <> 'gpu_apsp all pairs' OR g.all_pairs) AND (t.shape <> 'gpu_apsp matrix to every vertex' OR NOT g.all_pairs)
  AND (g.graph <> 'pgtap_rome_part' OR t.family = 'apsp');

-- The configurations: the run's device with the engines chosen automatically (every call), then
-- every engine by name on its device (the calls of its families marked per_engine).
CREATE TEMP TABLE kg_configs AS
SELECT 0::bigint AS ord, format('device %s, engines auto', current_setting('gpu_routing.device')) AS label,
       NULL::text AS engine, NULL::text AS device, true AS sssp, true AS apsp, false AS per_engine
UNION ALL
SELECT row_number() OVER (ORDER BY device, name), format('engine %s (%s)', name, device), name, device, sssp, apsp, true
FROM kg_engines;
CREATE FUNCTION pg_temp.in_config(c kg_configs, k kg_calls) RETURNS boolean LANGUAGE sql AS $$
  SELECT ((k.family = 'sssp' AND c.sssp) OR (k.family = 'apsp' AND c.apsp)) AND (k.per_engine OR NOT c.per_engine)
$$;

-- Per configuration: one check per call and one that every call was served as it should be.
-- Then the fixed checks below.
SELECT plan((SELECT sum(1 + (SELECT count(*) FROM kg_calls k WHERE pg_temp.in_config(c, k))) FROM kg_configs c)::int
            + 63 + (SELECT count(*) FROM kg_calls WHERE graph = 'pgtap_sample')::int);

-- The fixtures' graphs are there. -------------------------------------------------------------
SELECT set_eq($$SELECT name FROM gpu_graphs() WHERE name LIKE 'pgtap\_%' AND state <> 'unusable' AND name <> 'pgtap_created'$$,
              ARRAY['pgtap_rome', 'pgtap_rome_part', 'pgtap_sample'],
              'test/fixtures.sql registered pgtap_rome, pgtap_rome_part, pgtap_sample (needs shared_preload_libraries = gpu_routing)');

-- The graph registered by this transaction. --------------------------------------------------
CREATE TEMP TABLE kg_plain_run AS
SELECT vertices, edges FROM gpu_sssp('SELECT id, source, target, cost, reverse_cost FROM random_int_edges ORDER BY id', 3), gpu_routing_last_run();
SELECT ok(:'created' LIKE format('kept graph pgtap_created: %s vertices, %% arcs from %s rows, %% built in %% ms',
                                 (SELECT DISTINCT vertices FROM kg_plain_run), (SELECT DISTINCT edges FROM kg_plain_run)),
          'gpu_graph_create says what it built: the vertices and rows of an edges_sql call')
       || E'\n' || diag(:'created');
SELECT results_eq(
  $$SELECT name, owner::text, edges_sql, tables::text[], refresh, state, forms, vertices, edges, host_bytes > 0,
           built_at >= now(), build_ms >= 0, calls, note FROM gpu_graphs() WHERE name = 'pgtap_created'$$,
  format($$VALUES ('pgtap_created', %L, 'SELECT id, source, target, cost, reverse_cost FROM random_int_edges',
                   '{random_int_edges}'::text[], 'auto', 'fresh', 'directed', %s::bigint, %s::bigint, true, true, true, 0::bigint, NULL::text)$$,
         current_user, (SELECT DISTINCT vertices FROM kg_plain_run), (SELECT DISTINCT edges FROM kg_plain_run)),
  'gpu_graphs(): the new graph, fresh, its directed form built, vertices and edges as edges_sql reports them, no calls yet');
SELECT results_eq($$SELECT tgenabled::text FROM pg_trigger WHERE tgrelid = 'random_int_edges'::regclass AND tgname = 'gpu_routing_track_changes'$$,
                  $$VALUES ('A')$$, 'gpu_graph_create puts its trigger on the table, firing always');
SELECT results_eq($$SELECT * FROM gpu_apsp('graph:pgtap_created', ARRAY[3, 50, 150], NULL, false)$$,
                  $$SELECT * FROM gpu_apsp('SELECT id, source, target, cost, reverse_cost FROM random_int_edges ORDER BY id', ARRAY[3, 50, 150], NULL, false)$$,
                  'graph:pgtap_created undirected: the rows of edges_sql');
SELECT results_eq($$SELECT graph, vertices, edges FROM gpu_routing_last_run()$$,
                  $$SELECT NULL::text, vertices, edges FROM kg_plain_run LIMIT 1$$,
                  'an undirected edges_sql call: no graph, the vertices and edges gpu_graphs() shows');
SELECT calls AS calls_before FROM gpu_graphs() WHERE name = 'pgtap_created' \gset
SELECT count(*) FROM gpu_path('graph:pgtap_created', 3, 7) \gset discard_
SELECT count(*) FROM gpu_sssp('graph:pgtap_created', ARRAY[3, 7]) \gset discard_
SELECT results_eq(format($$SELECT forms, calls - %s FROM gpu_graphs() WHERE name = 'pgtap_created'$$, :calls_before),
                  $$VALUES ('directed, undirected', 2::bigint)$$,
                  'gpu_graphs(): both forms built, two more calls on the directed form counted');
-- A registration rolled back with its savepoint leaves nothing, trigger included.
SAVEPOINT before_gone;
SELECT gpu_graph_create('pgtap_gone', 'SELECT id, source, target, cost FROM random_real_edges') AS gone \gset
ROLLBACK TO SAVEPOINT before_gone;
SELECT ok(:'gone' LIKE 'kept graph pgtap_gone: not built yet: this transaction wrote before; %'
          AND NOT EXISTS (SELECT 1 FROM gpu_graphs() WHERE name = 'pgtap_gone')
          AND NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'random_real_edges'::regclass),
          'a registration rolled back to its savepoint leaves no graph and no trigger');

-- Every function on a kept graph gives the rows of edges_sql. ----------------------------------
-- The rows of the graph call (in order: WITH ORDINALITY), then of the edges_sql call, compared
-- with results_eq; gpu_routing_last_run() read after each.
CREATE FUNCTION pg_temp.config_checks(c kg_configs) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  k kg_calls;
  n int := (SELECT count(*) FROM kg_calls kc WHERE pg_temp.in_config(c, kc));
  run_device text := current_setting('gpu_routing.device');
  problems text[] := '{}';
  expected_engine text;
  expected_device text;
  r record;
BEGIN
  IF c.device = 'gpu' AND NOT (SELECT gpu_usable FROM kg_machine) THEN
    RETURN NEXT skip(format('no usable GPU for %s', c.label), n + 1);
    RETURN;
  END IF;
  IF c.engine IS NOT NULL THEN
    PERFORM set_config('gpu_routing.device', c.device, true);
  END IF;
  FOR k IN SELECT * FROM kg_calls kc WHERE pg_temp.in_config(c, kc) ORDER BY kc.ord LOOP
    expected_engine := CASE WHEN (k.family = 'sssp' AND c.sssp) OR (k.family = 'apsp' AND c.apsp) THEN c.engine END;
    expected_device := coalesce(c.device, nullif(run_device, 'auto'));
    PERFORM set_config('gpu_routing.' || k.family || '_algorithm', coalesce(c.engine, 'auto'), true);
    EXECUTE format('CREATE TEMP TABLE kg_got AS SELECT * FROM %s WITH ORDINALITY', format(k.call, quote_literal('graph:' || k.graph)));
    SELECT * INTO r FROM gpu_routing_last_run();
    IF r.graph IS DISTINCT FROM k.graph THEN
      problems := problems || format('%s on graph:%s: served by graph %s (%s)', k.shape, k.graph, coalesce(r.graph, 'NULL'), r.notes);
    END IF;
    IF expected_engine IS NOT NULL AND r.algorithm IS DISTINCT FROM expected_engine THEN
      problems := problems || format('%s on graph:%s: engine %s', k.shape, k.graph, r.algorithm);
    END IF;
    IF expected_device IS NOT NULL AND (r.device LIKE 'CPU%') <> (expected_device = 'cpu') THEN
      problems := problems || format('%s on graph:%s: device %s', k.shape, k.graph, r.device);
    END IF;
    RETURN NEXT results_eq('SELECT * FROM kg_got ORDER BY ordinality',
                           format('SELECT * FROM %s WITH ORDINALITY', format(k.call, quote_literal(k.plain))),
                           format('%s: %s on graph:%s = on edges_sql', c.label, k.shape, k.graph));
    IF (SELECT graph FROM gpu_routing_last_run()) IS NOT NULL THEN
      problems := problems || format('%s on edges_sql of %s: served by graph %s', k.shape, k.graph,
                                     (SELECT graph FROM gpu_routing_last_run()));
    END IF;
    DROP TABLE kg_got;
  END LOOP;
  PERFORM set_config('gpu_routing.device', run_device, true);
  PERFORM set_config('gpu_routing.sssp_algorithm', 'auto', true);
  PERFORM set_config('gpu_routing.apsp_algorithm', 'auto', true);
  RETURN NEXT is(problems, '{}'::text[],
                 format('%s: every graph call served by its kept graph%s, every edges_sql call by none', c.label,
                        CASE WHEN c.engine IS NOT NULL THEN format(' with engine %s on the %s', c.engine, c.device) ELSE '' END));
END
$$;
CREATE FUNCTION pg_temp.all_config_checks() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  c kg_configs;
BEGIN
  FOR c IN SELECT * FROM kg_configs ORDER BY ord LOOP
    RETURN QUERY SELECT pg_temp.config_checks(c);
  END LOOP;
END
$$;
SELECT pg_temp.all_config_checks();

-- gpu_routing_last_run().graph. --------------------------------------------------------------
SELECT count(*) FROM gpu_path('graph:pgtap_rome', 1, 3000) \gset discard_
SELECT is((SELECT graph FROM gpu_routing_last_run()), 'pgtap_rome', 'last_run names the kept graph of a graph: call');
-- The registry's lookup is planned once a session (kept_graphs.cpp): after the registry table
-- changed in this session, the next call is planned again and finds the graph. The change in a
-- savepoint, whose rollback releases the table's lock (sessions opened later, by dblink, read the
-- registry); the checks after it (the rollback would take their results with it).
SAVEPOINT registry_altered;
ALTER TABLE gpu_routing_graphs ADD COLUMN pgtap_probe int;
SELECT md5(string_agg(t::text, ';')) AS altered_rows FROM gpu_path('graph:pgtap_rome', 1, 3000) t \gset
SELECT graph AS altered_graph FROM gpu_routing_last_run() \gset
ROLLBACK TO SAVEPOINT registry_altered;
SELECT is(:'altered_rows',
          (SELECT md5(string_agg(t::text, ';')) FROM gpu_path('SELECT id, source, target, cost FROM rome_edges ORDER BY id', 1, 3000) t),
          'the registry table altered in the session: graph:pgtap_rome gives the rows of edges_sql');
SELECT is(:'altered_graph'::text, 'pgtap_rome', 'the registry table altered in the session: last_run names the kept graph');
-- The graph's query with other whitespace is served by the graph, with the same rows.
SELECT results_eq(E'SELECT * FROM gpu_path(''SELECT  e.id,\n  e.source, e.target,\te.cost FROM   rome_edges AS e\nORDER BY e.id'', 1, ARRAY[7, 3353])',
                  $$SELECT * FROM gpu_path('SELECT id, source, target, cost FROM rome_edges ORDER BY id', 1, ARRAY[7, 3353])$$,
                  'the query of a kept graph, whitespace aside: the rows of edges_sql');
SELECT count(*) FROM gpu_path(E'SELECT  e.id,\n  e.source, e.target,\te.cost FROM   rome_edges AS e\nORDER BY e.id', 1, ARRAY[7, 3353]) \gset discard_
SELECT is((SELECT graph FROM gpu_routing_last_run()), 'pgtap_rome', 'the query of a kept graph, whitespace aside: last_run names the graph');
SELECT count(*) FROM gpu_apsp(E'SELECT id, source, target, cost, reverse_cost\n FROM random_int_edges ', ARRAY[3, 50], ARRAY[7, 100], false) \gset discard_
SELECT is((SELECT graph FROM gpu_routing_last_run()), 'pgtap_created', 'the query of a graph registered in this transaction, whitespace aside: last_run names it');
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM rome_edges', 1) \gset discard_
SELECT is((SELECT graph FROM gpu_routing_last_run()), NULL, 'another query: last_run.graph is NULL');
-- The same text reading another table (a temporary rome_edges, first in the search_path).
CREATE TEMP TABLE rome_edges AS SELECT * FROM public.rome_edges WHERE id <= 100;
SELECT is((SELECT count(*) FROM gpu_sssp('SELECT e.id, e.source, e.target, e.cost FROM rome_edges AS e ORDER BY e.id', 1)),
          (SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM pg_temp.rome_edges', 1)),
          'the text of a kept graph reading another table: that table''s rows');
SELECT is((SELECT graph FROM gpu_routing_last_run()), NULL, 'the text of a kept graph reading another table: not served by it');
SELECT is((SELECT count(*) FROM gpu_sssp('graph:pgtap_rome', 1)), 3353::bigint, 'graph:pgtap_rome reads its own tables whatever the search_path');
DROP TABLE pg_temp.rome_edges;

-- Errors. ------------------------------------------------------------------------------------
SELECT throws_ok($$SELECT * FROM gpu_path('graph:nowhere', 1, 2)$$, '42704',
                 'gpu_path: there is no kept graph named "nowhere" in this database', 'gpu_path on an unknown graph');
SELECT throws_ok($$SELECT * FROM gpu_sssp('graph:nowhere', ARRAY[1, 2])$$, '42704',
                 'gpu_sssp: there is no kept graph named "nowhere" in this database', 'gpu_sssp on an unknown graph');
SELECT throws_ok($$SELECT * FROM gpu_apsp('graph:nowhere')$$, '42704',
                 'gpu_apsp: there is no kept graph named "nowhere" in this database', 'gpu_apsp on an unknown graph');
SELECT throws_ok($$SELECT * FROM gpu_path('graph:no such', 1, 2)$$, '22023',
                 '"no such" is not a valid kept graph name', 'graph: with an invalid name');
SELECT throws_ok($$SELECT gpu_graph_create('1bad', 'SELECT id, source, target, cost FROM sample_edges')$$, '22023',
                 '"1bad" is not a valid kept graph name', 'gpu_graph_create: a name starting with a digit');
SELECT throws_ok(format('SELECT gpu_graph_create(%L, %L)', repeat('g', 64), 'SELECT id, source, target, cost FROM sample_edges'), '22023',
                 format('"%s" is not a valid kept graph name', repeat('g', 64)), 'gpu_graph_create: a name of 64 bytes');
SELECT throws_ok($$SELECT gpu_graph_create('pgtap_sample', 'SELECT id, source, target, cost FROM sample_edges')$$, '42710',
                 'kept graph "pgtap_sample" already exists', 'gpu_graph_create: a name taken');
SELECT throws_ok($$SELECT gpu_graph_create('pgtap_s2', 'SELECT id, source, target, cost FROM sample_edges', 'sometimes')$$, '22023',
                 'refresh of gpu_graph_create must be ''auto'' or ''manual'', not ''sometimes''', 'gpu_graph_create: a bad refresh option');
SELECT throws_ok($$SELECT gpu_graph_create('pgtap_s2', 'graph:pgtap_sample')$$, '22023',
                 'edges_sql of gpu_graph_create must be a query, not a graph name', 'gpu_graph_create: a graph name as edges_sql');
SELECT throws_ok($$SELECT gpu_graph_create('pgtap_s2', 'SELECT id, source, target, cost * random() AS cost FROM sample_edges')$$, '0A000',
                 'the changes edges_sql reads cannot be tracked: it calls a function that is not IMMUTABLE (such a function may read tables, the time or settings that no trigger sees)',
                 'gpu_graph_create: a query calling a volatile function, without refresh => manual');
CREATE MATERIALIZED VIEW pgtap_kg_mat AS SELECT * FROM sample_edges;
SELECT throws_ok($$SELECT gpu_graph_create('pgtap_s2', 'SELECT id, source, target, cost FROM pgtap_kg_mat')$$, '0A000',
                 'the changes edges_sql reads cannot be tracked: it reads the materialized view pgtap_kg_mat (REFRESH is not a change a trigger sees)',
                 'gpu_graph_create: a query reading a materialized view, without refresh => manual');
-- A query without id is refused when the graph is built: at once in a transaction that has not
-- written, so in a fresh session (dblink), inside a transaction it rolls back.
CREATE FUNCTION pg_temp.fresh_session_missing_column() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  conn text := format('dbname=%s port=%s host=%s', current_database(), current_setting('port'),
                      split_part(current_setting('unix_socket_directories'), ',', 1));
  result text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'dblink') THEN
    RETURN skip('dblink is not installed', 1);
  END IF;
  CREATE EXTENSION IF NOT EXISTS dblink;
  PERFORM dblink_connect('kg_fresh', conn);
  PERFORM dblink_exec('kg_fresh', 'BEGIN');
  result := throws_ok($q$SELECT * FROM dblink('kg_fresh', $r$SELECT gpu_graph_create('pgtap_fresh', 'SELECT source, target, cost FROM sample_edges')$r$) AS t(line text)$q$,
                      '42703', 'edges_sql of gpu_graph_create has no column named "id"', 'gpu_graph_create: a query without id');
  PERFORM dblink_exec('kg_fresh', 'ROLLBACK');
  PERFORM dblink_disconnect('kg_fresh');
  RETURN result;
END
$$;
SELECT pg_temp.fresh_session_missing_column();
SELECT throws_ok($$SELECT gpu_graph_refresh('nowhere')$$, '42704',
                 'gpu_graph_refresh: there is no kept graph named "nowhere" in this database', 'gpu_graph_refresh of an unknown graph');
SELECT throws_ok($$SELECT gpu_graph_drop('nowhere')$$, '42704',
                 'gpu_graph_drop: there is no kept graph named "nowhere" in this database', 'gpu_graph_drop of an unknown graph');
SELECT is((SELECT count(*) FROM gpu_graphs() WHERE name = 'pgtap_s2'), 0::bigint, 'the refused registrations left nothing');

-- refresh => 'manual': any query; read privately until commit here (this transaction wrote).
SELECT ok(gpu_graph_create('pgtap_manual', 'SELECT id, source, target, cost FROM pgtap_kg_mat', refresh => 'manual')
          LIKE 'kept graph pgtap_manual: not built yet: this transaction wrote before; the first call after commit builds it',
          'gpu_graph_create with refresh => manual: a materialized view accepted');
SELECT results_eq($$SELECT refresh, state FROM gpu_graphs() WHERE name = 'pgtap_manual'$$, $$VALUES ('manual', 'not built')$$,
                  'gpu_graphs(): refresh manual, not built yet');
SELECT results_eq($$SELECT * FROM gpu_path('graph:pgtap_manual', ARRAY[6, 1], ARRAY[10, 17])$$,
                  $$SELECT * FROM gpu_path('SELECT id, source, target, cost FROM pgtap_kg_mat ORDER BY id', ARRAY[6, 1], ARRAY[10, 17])$$,
                  'graph:pgtap_manual: the rows of edges_sql');
SELECT count(*) FROM gpu_path('graph:pgtap_manual', ARRAY[6, 1], ARRAY[10, 17]) \gset discard_
SELECT results_eq($$SELECT graph, left(notes, 82) FROM gpu_routing_last_run()$$,
                  $$SELECT NULL::text, 'read privately: registered by this transaction after it wrote; shared after commit'::text$$,
                  'a graph registered after the transaction wrote is read privately');

-- Owner only: refresh and drop by another role.
CREATE ROLE pgtap_kept_graphs_stranger;
SET LOCAL ROLE pgtap_kept_graphs_stranger;
SELECT throws_ok($$SELECT gpu_graph_refresh('pgtap_created')$$, '42501',
                 format('gpu_graph_refresh: only the owner of kept graph "pgtap_created" (%s) or a superuser may do this', session_user),
                 'gpu_graph_refresh by a role that does not own the graph');
SELECT throws_ok($$SELECT gpu_graph_drop('pgtap_sample')$$, '42501',
                 format('gpu_graph_drop: only the owner of kept graph "pgtap_sample" (%s) or a superuser may do this',
                        (SELECT owner FROM gpu_graphs() WHERE name = 'pgtap_sample')),
                 'gpu_graph_drop by a role that does not own the graph');
SELECT throws_ok($$SELECT * FROM gpu_sssp('graph:pgtap_sample', 6)$$, '42501', 'permission denied for table sample_edges',
                 'graph: by a role that may not read its table');
RESET ROLE;
-- A backend keeps the plan of a graph's query: the caller's rights are checked on it every call.
GRANT SELECT ON sample_edges TO pgtap_kept_graphs_stranger;
SET LOCAL ROLE pgtap_kept_graphs_stranger;
SELECT count(*) AS rows FROM gpu_sssp('graph:pgtap_sample', 6) \gset granted_
RESET ROLE;
REVOKE SELECT ON sample_edges FROM pgtap_kept_graphs_stranger;
SET LOCAL ROLE pgtap_kept_graphs_stranger;
SELECT throws_ok($$SELECT * FROM gpu_sssp('graph:pgtap_sample', 6)$$, '42501', 'permission denied for table sample_edges',
                 'graph: by a role whose SELECT on its table was revoked after a call in this session');
RESET ROLE;
SELECT is(:granted_rows::bigint, (SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6)),
          'graph: by a role granted SELECT on its table, the rows of edges_sql');

-- A column added leaves it as it is; a column it reads renamed makes it unusable until refreshed
-- (migrations.sql has the rules); refresh and drop. -------------------------------------------
ALTER TABLE random_int_edges ADD COLUMN pgtap_note text;
SELECT results_eq($$SELECT state, note FROM gpu_graphs() WHERE name = 'pgtap_created'$$,
                  $$VALUES ('fresh', NULL::text)$$,
                  'ALTER TABLE of its table adding a column: the graph is as it was');
ALTER TABLE random_int_edges RENAME COLUMN reverse_cost TO pgtap_reverse_cost;
SELECT results_eq($$SELECT state, note FROM gpu_graphs() WHERE name = 'pgtap_created'$$,
                  $$VALUES ('unusable', 'ALTER TABLE public.random_int_edges.pgtap_reverse_cost changed what it reads: column "reverse_cost" does not exist')$$,
                  'ALTER TABLE renaming a column it reads: the graph is unusable');
SELECT throws_ok($$SELECT * FROM gpu_sssp('graph:pgtap_created', 3)$$, '55000',
                 'kept graph "pgtap_created" is unusable: ALTER TABLE public.random_int_edges.pgtap_reverse_cost changed what it reads: column "reverse_cost" does not exist',
                 'an unusable graph refuses calls');
ALTER TABLE random_int_edges RENAME COLUMN pgtap_reverse_cost TO reverse_cost;
SELECT is(gpu_graph_refresh('pgtap_created'),
          'kept graph pgtap_created: not built yet: this transaction wrote before; the first call after commit builds it',
          'gpu_graph_refresh in a transaction that wrote: built after commit');
SELECT results_eq($$SELECT state, note, calls FROM gpu_graphs() WHERE name = 'pgtap_created'$$,
                  $$VALUES ('not built', 'built on first use (after a restart, an eviction or a refresh)', 0::bigint)$$,
                  'gpu_graph_refresh: usable again, its forms dropped');
SELECT results_eq($$SELECT * FROM gpu_path('graph:pgtap_created', 'SELECT * FROM (VALUES (3, 7), (50, 100), (299, 2)) AS t(source, target)', false)$$,
                  $$SELECT * FROM gpu_path('SELECT id, source, target, cost, reverse_cost FROM random_int_edges ORDER BY id', 'SELECT * FROM (VALUES (3, 7), (50, 100), (299, 2)) AS t(source, target)', false)$$,
                  'graph:pgtap_created after refresh: the rows of edges_sql');
SELECT count(*) FROM gpu_sssp('graph:pgtap_created', 3) \gset discard_
SELECT results_eq($$SELECT graph, left(notes, 82) FROM gpu_routing_last_run()$$,
                  $$SELECT NULL::text, 'read privately: registered by this transaction after it wrote; shared after commit'::text$$,
                  'refreshed after the transaction wrote: read privately');
SELECT lives_ok($$SELECT gpu_graph_drop('pgtap_created')$$, 'gpu_graph_drop by its owner');
SELECT ok(NOT EXISTS (SELECT 1 FROM gpu_graphs() WHERE name = 'pgtap_created'), 'gpu_graph_drop: the graph is gone');
SELECT is((SELECT count(*) FROM pg_trigger WHERE tgrelid = 'random_int_edges'::regclass), 0::bigint,
          'gpu_graph_drop: the trigger no other graph needs is gone');
SELECT throws_ok($$SELECT * FROM gpu_sssp('graph:pgtap_created', 3)$$, '42704',
                 'gpu_sssp: there is no kept graph named "pgtap_created" in this database', 'a dropped graph is unknown');
SELECT count(*) FROM gpu_apsp(E'SELECT id, source, target, cost, reverse_cost\n FROM random_int_edges ', ARRAY[3, 50], ARRAY[7, 100], false) \gset discard_
SELECT is((SELECT graph FROM gpu_routing_last_run()), NULL, 'a dropped graph''s query is no longer matched');

-- Freshness inside the transaction: its own changes are seen. ---------------------------------
SELECT results_eq($$SELECT agg_cost FROM gpu_path('graph:pgtap_sample', 6, 10) WHERE edge = -1$$, $$VALUES (5::float8)$$,
                  'graph:pgtap_sample before the change: 6 -> 10 costs 5');
SELECT results_eq($$SELECT node, edge FROM gpu_path('graph:pgtap_rome', 1, 3000)$$,
                  $$SELECT node, edge FROM gpu_path('SELECT id, source, target, cost FROM rome_edges ORDER BY id', 1, 3000)$$,
                  'graph:pgtap_rome before the change: the path of edges_sql');
CREATE TEMP TABLE kg_rome_path AS SELECT edge FROM gpu_path('graph:pgtap_rome', 1, 3000) WHERE edge > 0;
UPDATE sample_edges SET cost = 100 WHERE id = 4;
DELETE FROM sample_edges WHERE id = 17;
INSERT INTO sample_edges (id, source, target, cost, reverse_cost) VALUES (1001, 1, 17, 2, -1);
DELETE FROM rome_edges WHERE id IN (SELECT edge FROM kg_rome_path);
SELECT results_eq($$SELECT agg_cost FROM gpu_path('graph:pgtap_sample', 6, 10) WHERE edge = -1$$,
                  $$SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id', 6, 10) WHERE edge = -1$$,
                  'graph:pgtap_sample after UPDATE: the cost of edges_sql');
SELECT isnt((SELECT agg_cost FROM gpu_path('graph:pgtap_sample', 6, 10) WHERE edge = -1), 5::float8,
            'graph:pgtap_sample after UPDATE: not the cost before');
SELECT results_eq($$SELECT graph, split_part(notes, '; ', 1) FROM gpu_routing_last_run()$$,
                  $$SELECT NULL::text, 'read privately: this transaction changed its tables'::text$$,
                  'after this transaction changed its tables: read privately');
SELECT results_eq($$SELECT state FROM gpu_graphs() WHERE name = 'pgtap_sample'$$, $$VALUES ('fresh')$$,
                  'the uncommitted change leaves the shared graph fresh for other sessions');
SELECT results_eq($$SELECT * FROM gpu_path('graph:pgtap_rome', 1, 3000)$$,
                  $$SELECT * FROM gpu_path('SELECT id, source, target, cost FROM rome_edges ORDER BY id', 1, 3000)$$,
                  'graph:pgtap_rome after DELETE of its path''s edges: the rows of edges_sql');
SELECT ok(NOT EXISTS (SELECT 1 FROM gpu_path('graph:pgtap_rome', 1, 3000) WHERE edge IN (SELECT edge FROM kg_rome_path)),
          'graph:pgtap_rome after DELETE: the deleted edges are not used');
SELECT results_eq($$SELECT * FROM gpu_sssp('graph:pgtap_rome_part', 1)$$,
                  $$SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM rome_edges WHERE source <= 400 AND target <= 400 ORDER BY id', 1)$$,
                  'graph:pgtap_rome_part after DELETE on its table: the rows of edges_sql');
-- Every call on the changed sample network.
CREATE FUNCTION pg_temp.changed_sample_checks() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  k kg_calls;
BEGIN
  FOR k IN SELECT * FROM kg_calls WHERE graph = 'pgtap_sample' ORDER BY ord LOOP
    RETURN NEXT results_eq(format('SELECT * FROM %s', format(k.call, quote_literal('graph:' || k.graph))),
                           format('SELECT * FROM %s', format(k.call, quote_literal(k.plain))),
                           format('after the changes: %s on graph:%s = on edges_sql', k.shape, k.graph));
  END LOOP;
END
$$;
SELECT pg_temp.changed_sample_checks();

SELECT * FROM finish();
ROLLBACK;

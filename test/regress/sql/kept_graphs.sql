-- Kept graphs: the API, its errors, every function on a named graph against edges_sql, and never
-- a stale answer after changes. Needs shared_preload_libraries = 'gpu_routing'.
-- The kept-graph note comes first in gpu_routing_last_run().notes; engines (on the GPU) add theirs
-- after '; ', so the tests compare the first part only.
CREATE TABLE kg_rome AS SELECT * FROM rome_edges;
CREATE TABLE kg_sample AS SELECT * FROM sample_edges;
SELECT gpu_graph_create('rome', 'SELECT id, source, target, cost FROM kg_rome') LIKE 'kept graph rome: 3353 vertices, 8870 arcs from 8870 rows, %' AS created;
SELECT gpu_graph_create('sample', 'SELECT id, source, target, cost, reverse_cost FROM kg_sample') LIKE 'kept graph sample: 17 vertices, 30 arcs from 18 rows, %' AS created;
SELECT name, owner, edges_sql, tables, refresh, state, forms, vertices, edges, host_bytes > 0 AS has_bytes,
       build_ms >= 0 AS timed, calls, note FROM gpu_graphs();
-- The trigger that sees changes, on every table read, firing for replicated changes too.
SELECT tgrelid::regclass, tgname, tgenabled FROM pg_trigger WHERE tgname = 'gpu_routing_track_changes' ORDER BY 1;

-- Every function on a named graph gives the rows it gives with edges_sql (both directions of the
-- difference are empty), directed and undirected.
CREATE FUNCTION kg_differ(named text, plain text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) d', named, plain, plain, named) INTO n;
  RETURN n;
END $$;
CREATE TEMP TABLE kg_calls (call text);
INSERT INTO kg_calls VALUES
  ('gpu_sssp(%s, 1)'), ('gpu_sssp(%s, 1, false)'), ('gpu_sssp(%s, ARRAY[1, 500, 3000])'),
  ('gpu_path(%s, 1, 3000)'), ('gpu_path(%s, 1, 3000, false)'), ('gpu_path(%s, 1, ARRAY[7, 700, 2000, 3353])'),
  ('gpu_path(%s, ARRAY[2, 50, 150], 250)'), ('gpu_path(%s, ARRAY[2, 50, 150], ARRAY[7, 100, 2])'),
  ('gpu_path(%s, ''SELECT * FROM (VALUES (1, 3000), (50, 7), (2, 2)) AS t(source, target)'')'),
  ('gpu_apsp(%s, ARRAY[1, 500, 3000], ARRAY[7, 700, 2000])'), ('gpu_apsp(%s, ARRAY[1, 2, 3])'),
  ('gpu_apsp(%s, ARRAY[1, 500], NULL, false)');
SELECT call, kg_differ('SELECT * FROM ' || format(call, '''graph:rome'''),
                       'SELECT * FROM ' || format(call, '''SELECT id, source, target, cost FROM kg_rome''')) AS differing_rows
FROM kg_calls;
SELECT kg_differ($$SELECT * FROM gpu_apsp('graph:sample')$$, $$SELECT * FROM gpu_apsp('SELECT id, source, target, cost, reverse_cost FROM kg_sample')$$) AS apsp_all,
       kg_differ($$SELECT * FROM gpu_apsp('graph:sample', false)$$, $$SELECT * FROM gpu_apsp('SELECT id, source, target, cost, reverse_cost FROM kg_sample', false)$$) AS apsp_all_undirected;
SELECT function, graph, vertices, edges FROM gpu_routing_last_run();
-- Both forms are now built.
SELECT name, state, forms FROM gpu_graphs() ORDER BY name;

-- A call whose edges_sql is a registered query (whitespace aside) takes the graph.
SELECT count(*) FROM gpu_path('SELECT id, source, target,
    cost FROM   kg_rome', 1, 3000);
SELECT graph FROM gpu_routing_last_run();
-- The same text reading another table (another search_path) does not.
CREATE SCHEMA kg_other;
CREATE TABLE kg_other.kg_rome AS SELECT * FROM kg_rome LIMIT 100;
SET search_path = kg_other, public;
SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM kg_rome', 1);
SELECT graph IS NULL AS not_kept FROM gpu_routing_last_run();
-- A named graph reads its own tables whatever the caller's search_path.
SELECT count(*) FROM gpu_sssp('graph:rome', 1);
RESET search_path;

-- Never stale: a committed change is seen by the next call.
SELECT agg_cost FROM gpu_path('graph:sample', 6, 10) WHERE edge = -1;
UPDATE kg_sample SET cost = 100 WHERE id = 4;
SELECT state FROM gpu_graphs() WHERE name = 'sample';
SELECT agg_cost FROM gpu_path('graph:sample', 6, 10) WHERE edge = -1;
SELECT graph, split_part(notes, '; ', 1) LIKE 'kept graph built by this call (% ms)' AS rebuilt FROM gpu_routing_last_run();
-- A rolled-back change changes nothing; inside the transaction, the change is seen (read privately).
BEGIN;
DELETE FROM kg_sample WHERE id IN (2, 8);
SELECT agg_cost FROM gpu_path('graph:sample', 6, 10) WHERE edge = -1;
SELECT graph IS NULL AS private, split_part(notes, '; ', 1) AS notes FROM gpu_routing_last_run();
ROLLBACK;
SELECT agg_cost FROM gpu_path('graph:sample', 6, 10) WHERE edge = -1;
SELECT graph FROM gpu_routing_last_run();
-- REPEATABLE READ reads its own snapshot.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT agg_cost FROM gpu_path('graph:sample', 6, 10) WHERE edge = -1;
SELECT graph IS NULL AS private, split_part(notes, '; ', 1) AS notes FROM gpu_routing_last_run();
COMMIT;
-- TRUNCATE empties it; INSERT brings it back.
TRUNCATE kg_sample;
SELECT count(*) FROM gpu_sssp('graph:sample', 6);
INSERT INTO kg_sample SELECT * FROM sample_edges;
SELECT count(*) FROM gpu_sssp('graph:sample', 6);
-- A change inside a savepoint that is rolled back, then committed: the next call is right.
BEGIN;
SAVEPOINT a;
UPDATE kg_sample SET cost = 50;
ROLLBACK TO a;
COMMIT;
SELECT agg_cost FROM gpu_path('graph:sample', 6, 10) WHERE edge = -1;

-- A schema change its query does not read (a column added) leaves it as it is (migrations.sql
-- has the rules); one after which its query no longer plans makes it unusable until refreshed.
ALTER TABLE kg_sample ADD COLUMN note text;
SELECT name, state, note FROM gpu_graphs() WHERE name = 'sample';
SELECT count(*) FROM gpu_path('graph:sample', 6, 10);
ALTER TABLE kg_sample RENAME COLUMN cost TO cost_now;
SELECT name, state, note FROM gpu_graphs() WHERE name = 'sample';
SELECT count(*) FROM gpu_path('graph:sample', 6, 10);
ALTER TABLE kg_sample RENAME COLUMN cost_now TO cost;
SELECT gpu_graph_refresh('sample') LIKE 'kept graph sample: 17 vertices, %' AS refreshed;
SELECT name, state, forms FROM gpu_graphs() WHERE name = 'sample';
SELECT count(*) FROM gpu_path('graph:sample', 6, 10);
-- A rolled-back ALTER leaves it usable.
BEGIN;
ALTER TABLE kg_sample DROP COLUMN cost;
ROLLBACK;
SELECT state FROM gpu_graphs() WHERE name = 'sample';
DROP TABLE kg_rome;
SELECT name, state, note FROM gpu_graphs() WHERE name = 'rome';
SELECT count(*) FROM gpu_sssp('graph:rome', 1);
-- Dropping our trigger is noticed too (changes would no longer be seen).
DROP TRIGGER gpu_routing_track_changes ON kg_sample;
SELECT name, state, note FROM gpu_graphs() WHERE name = 'sample';
SELECT gpu_graph_refresh('sample') LIKE 'kept graph sample: %' AS refreshed;
SELECT tgrelid::regclass, tgenabled FROM pg_trigger WHERE tgname = 'gpu_routing_track_changes' ORDER BY 1;
-- What pg_restore and DBAs do that changes neither rows nor meaning leaves it usable: comments,
-- indexes, constraints, defaults, ownership, enabling triggers. Disabling our trigger does not.
COMMENT ON TABLE kg_sample IS 'the sample network';
CREATE INDEX kg_sample_source ON kg_sample (source);
ALTER TABLE kg_sample ADD CONSTRAINT kg_sample_cost_known CHECK (cost IS NOT NULL),
  ALTER COLUMN cost SET DEFAULT 1, OWNER TO CURRENT_USER;
ALTER TABLE kg_sample ENABLE ALWAYS TRIGGER gpu_routing_track_changes;
SELECT name, state, note FROM gpu_graphs() WHERE name = 'sample';
ALTER TABLE kg_sample DISABLE TRIGGER gpu_routing_track_changes;
SELECT name, state, note FROM gpu_graphs() WHERE name = 'sample';
ALTER TABLE kg_sample ENABLE ALWAYS TRIGGER gpu_routing_track_changes;
SELECT gpu_graph_refresh('sample') LIKE 'kept graph sample: %' AS refreshed;

-- Errors.
SELECT * FROM gpu_path('graph:nowhere', 1, 2);
SELECT * FROM gpu_path('graph:no such', 1, 2);
SELECT gpu_graph_create('sample', 'SELECT id, source, target, cost FROM kg_sample');
SELECT gpu_graph_create('1bad', 'SELECT id, source, target, cost FROM kg_sample');
SELECT gpu_graph_create('s2', 'SELECT id, source, target, cost FROM kg_sample', 'sometimes');
SELECT gpu_graph_create('s2', 'graph:sample');
SELECT gpu_graph_create('s2', 'SELECT id, source, target, cost * random() AS cost FROM kg_sample');
CREATE FUNCTION kg_factor() RETURNS float8 STABLE LANGUAGE sql AS 'SELECT max(cost) FROM kg_sample';
SELECT gpu_graph_create('s2', 'SELECT id, source, target, cost * kg_factor() AS cost FROM kg_sample');
CREATE MATERIALIZED VIEW kg_mat AS SELECT * FROM kg_sample;
SELECT gpu_graph_create('s2', 'SELECT id, source, target, cost FROM kg_mat');
SELECT gpu_graph_create('s2', 'SELECT source, target, cost FROM kg_sample');
SELECT gpu_graph_create('s2', 'SELECT id, source, target, cost FROM kg_missing');
SELECT gpu_graph_refresh('nowhere');
SELECT gpu_graph_drop('nowhere');
SELECT name FROM gpu_graphs() ORDER BY name;

-- refresh => 'manual': any query; changes are seen only after gpu_graph_refresh.
SELECT gpu_graph_create('mat', 'SELECT id, source, target, cost FROM kg_mat', refresh => 'manual') LIKE 'kept graph mat: %' AS created;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'kg_sample'::regclass AND tgname = 'gpu_routing_track_changes';
SELECT agg_cost FROM gpu_path('graph:mat', 6, 10) WHERE edge = -1;
UPDATE kg_sample SET cost = cost + 1;
REFRESH MATERIALIZED VIEW kg_mat;
SELECT name, state, note FROM gpu_graphs() WHERE name = 'mat';
SELECT agg_cost FROM gpu_path('graph:mat', 6, 10) WHERE edge = -1;
SELECT gpu_graph_refresh('mat') LIKE 'kept graph mat: %' AS refreshed;
SELECT agg_cost FROM gpu_path('graph:mat', 6, 10) WHERE edge = -1;

-- Privileges: served only to roles that may read its tables now; managed by its owner.
CREATE ROLE kg_reader;
CREATE ROLE kg_owner;
GRANT SELECT ON kg_sample TO kg_owner;
GRANT TRIGGER ON kg_sample TO kg_owner;
SET ROLE kg_reader;
SELECT count(*) FROM gpu_path('graph:sample', 6, 10);
SELECT gpu_graph_drop('sample');
SELECT gpu_graph_create('kg_reader_graph', 'SELECT id, source, target, cost FROM kg_sample');
-- What it may see: a graph over tables it may not read shows its name and owner alone; the
-- registry itself is the extension's (query texts may hold what their owners keep private).
SELECT name, owner, edges_sql, tables, state, host_bytes, note FROM gpu_graphs() WHERE name IN ('sample', 'rome') ORDER BY name;
SELECT count(*) FROM gpu_routing_graphs;
SELECT count(*) FROM gpu_routing_table_changes;
RESET ROLE;
GRANT SELECT ON kg_sample TO kg_reader;
SET ROLE kg_reader;
-- Once it may read the table, it sees the graph whole.
SELECT name, edges_sql, tables, state FROM gpu_graphs() WHERE name = 'sample';
SELECT count(*) FROM gpu_path('graph:sample', 6, 10);
SELECT gpu_graph_refresh('sample');
RESET ROLE;
SET ROLE kg_owner;
SELECT gpu_graph_create('owned', 'SELECT id, source, target, cost FROM kg_sample') LIKE 'kept graph owned: %' AS created;
SELECT name, owner FROM gpu_graphs() WHERE name = 'owned';
RESET ROLE;
SET ROLE kg_reader;
SELECT gpu_graph_drop('owned');
RESET ROLE;
SET ROLE kg_owner;
SELECT gpu_graph_drop('owned');
RESET ROLE;
-- Row-level security: never shared across roles; each call reads with its own policies.
CREATE TABLE kg_secure AS SELECT * FROM sample_edges;
ALTER TABLE kg_secure ENABLE ROW LEVEL SECURITY;
CREATE POLICY kg_some ON kg_secure FOR SELECT TO kg_reader USING (id <= 8);
GRANT SELECT ON kg_secure TO kg_reader;
SELECT gpu_graph_create('secure', 'SELECT id, source, target, cost, reverse_cost FROM kg_secure') LIKE 'kept graph secure: 17 vertices, %' AS created;
SET ROLE kg_reader;
SELECT count(*) FROM gpu_sssp('graph:secure', 6);
SELECT graph IS NULL AS private, split_part(notes, '; ', 1) AS notes FROM gpu_routing_last_run();
RESET ROLE;
SELECT count(*) FROM gpu_sssp('graph:secure', 6);

-- A call keeps its graph's query plan for the session: a relation made or dropped under another
-- name leaves it in use; a relation that the query's name would now find (a temporary table
-- first in the search_path) makes the next call prepare it again.
CREATE TABLE kg_plans AS SELECT id, source, target, cost FROM sample_edges;
SELECT gpu_graph_create('plans', 'SELECT id, source, target, cost FROM kg_plans') LIKE 'kept graph plans: %' AS created;
SELECT count(*) FROM gpu_path('graph:plans', 6, 10);
SELECT split_part(value, ' ', 6)::int AS plans_prepared FROM gpu_routing_info() WHERE name = 'kept graph query plans' \gset
CREATE TABLE kg_unrelated (a int);
DROP TABLE kg_unrelated;
SELECT count(*) FROM gpu_path('graph:plans', 6, 10);
SELECT split_part(value, ' ', 6)::int - :plans_prepared AS prepared_again FROM gpu_routing_info() WHERE name = 'kept graph query plans';
CREATE TEMP TABLE kg_plans AS SELECT * FROM public.kg_plans WHERE id <= 3;
SELECT count(*) FROM gpu_path('graph:plans', 6, 10);
SELECT split_part(value, ' ', 6)::int - :plans_prepared AS prepared_again FROM gpu_routing_info() WHERE name = 'kept graph query plans';
DROP TABLE pg_temp.kg_plans;
SELECT gpu_graph_drop('plans');
DROP TABLE kg_plans;

-- Dropping a graph drops the triggers no other graph needs.
SELECT gpu_graph_drop('rome');
SELECT gpu_graph_drop('secure');
SELECT tgrelid::regclass FROM pg_trigger WHERE tgname = 'gpu_routing_track_changes' ORDER BY 1;
SELECT gpu_graph_drop('sample');
SELECT gpu_graph_drop('mat');
SELECT count(*) FROM pg_trigger WHERE tgname = 'gpu_routing_track_changes';
SELECT count(*) FROM gpu_graphs();
-- A registration rolled back leaves nothing.
BEGIN;
SELECT gpu_graph_create('gone', 'SELECT id, source, target, cost FROM kg_sample') LIKE 'kept graph gone: %' AS created;
ROLLBACK;
SELECT count(*) FROM gpu_graphs();
SELECT count(*) FROM pg_trigger WHERE tgname = 'gpu_routing_track_changes';
-- A transaction that wrote before registering builds on first use, after commit.
BEGIN;
UPDATE kg_sample SET cost = cost WHERE id = 1;
SELECT gpu_graph_create('later', 'SELECT id, source, target, cost FROM kg_sample');
SELECT name, state FROM gpu_graphs();
COMMIT;
SELECT count(*) FROM gpu_sssp('graph:later', 6);
SELECT name, state FROM gpu_graphs();
SELECT gpu_graph_drop('later');
DROP POLICY kg_some ON kg_secure;
REVOKE ALL ON kg_sample, kg_secure FROM kg_reader, kg_owner;
DROP ROLE kg_reader;
DROP ROLE kg_owner;

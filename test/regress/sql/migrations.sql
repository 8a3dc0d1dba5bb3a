-- Schema migrations on the tables of kept graphs. A change the query does not read leaves the
-- graph as it is (its built form keeps serving: no rebuild); a change to what it reads makes it
-- rebuild on next use where the query still plans (a new generation); only where the query no
-- longer plans is it unusable until gpu_graph_refresh. Needs shared_preload_libraries.
\set VERBOSITY terse
CREATE TABLE mg_edges AS SELECT * FROM sample_edges;
CREATE TABLE mg_base AS SELECT * FROM sample_edges;
CREATE VIEW mg_view AS SELECT id, source, target, cost, x1 FROM mg_base;
SELECT gpu_graph_create('mg_cols', 'SELECT id, source, target, cost, reverse_cost FROM mg_edges') IS NOT NULL AS created;
SELECT gpu_graph_create('mg_star', 'SELECT * FROM mg_edges') IS NOT NULL AS created;
SELECT gpu_graph_create('mg_view', 'SELECT id, source, target, cost FROM mg_view') IS NOT NULL AS created;
-- Each graph's generation and why it is unusable.
CREATE FUNCTION mg_state() RETURNS TABLE (name text, generation bigint, unusable text) LANGUAGE sql AS
$$ SELECT name, generation, unusable FROM gpu_routing_graphs WHERE name LIKE 'mg_%' ORDER BY name $$;
-- Calls each usable graph: whether its kept form served (the call did not build it) and whether
-- its answer equals its query's own (read privately), 6 -> 10 and 1 -> 17.
CREATE FUNCTION mg_serve() RETURNS TABLE (name text, served_by_kept_form boolean, same_answer boolean)
LANGUAGE plpgsql AS $$
DECLARE g record; kept float8[]; plain float8[];
BEGIN
  FOR g IN SELECT r.name, r.edges_sql FROM gpu_routing_graphs r WHERE r.name LIKE 'mg_%' AND r.unusable IS NULL ORDER BY r.name LOOP
    SELECT array_agg(agg_cost ORDER BY start_vid) INTO kept FROM gpu_path('graph:' || g.name, ARRAY[6, 1], ARRAY[10, 17]) WHERE edge = -1;
    name := g.name;
    served_by_kept_form := (SELECT coalesce(notes, '') NOT LIKE 'kept graph built by this call%' FROM gpu_routing_last_run());
    SELECT array_agg(agg_cost ORDER BY start_vid) INTO plain FROM gpu_path(g.edges_sql || ' WHERE true AND true', ARRAY[6, 1], ARRAY[10, 17]) WHERE edge = -1;
    same_answer := kept IS NOT DISTINCT FROM plain;
    RETURN NEXT;
  END LOOP;
END $$;
SELECT * FROM mg_serve();
SELECT * FROM mg_serve();

-- Nothing the queries read: an index, a comment, statistics, a constraint, a default, a column
-- added, a column nobody names renamed, retyped or dropped.
CREATE INDEX mg_edges_source ON mg_edges (source);
COMMENT ON TABLE mg_edges IS 'the sample network';
CREATE STATISTICS mg_edges_stats ON source, target FROM mg_edges;
ALTER TABLE mg_edges ADD CONSTRAINT mg_cost_known CHECK (cost IS NOT NULL), ALTER COLUMN cost SET DEFAULT 1;
SELECT * FROM mg_state();
ALTER TABLE mg_edges ADD COLUMN note text;
ALTER TABLE mg_edges RENAME COLUMN y2 TO y_end;
ALTER TABLE mg_edges ALTER COLUMN y1 TYPE numeric;
-- Only mg_star reads the table whole (SELECT *): it alone rebuilds, once each.
SELECT * FROM mg_state();
SELECT * FROM mg_serve();
ALTER TABLE mg_edges DROP COLUMN note;
SELECT * FROM mg_state();
SELECT * FROM mg_serve();
-- A column the view reads renamed: the view reads the same values under its own names.
ALTER TABLE mg_base RENAME COLUMN x1 TO x_start;
SELECT * FROM mg_state();
SELECT * FROM mg_serve();

-- What the queries read: cost retyped with new values. Both graphs rebuild on next use, with the
-- new values.
ALTER TABLE mg_edges ALTER COLUMN cost TYPE numeric USING cost * 3;
SELECT * FROM mg_state();
SELECT * FROM mg_serve();
SELECT agg_cost FROM gpu_path('graph:mg_cols', 6, 10) WHERE edge = -1;
-- Rolled back, a change leaves every graph as it was.
BEGIN;
ALTER TABLE mg_edges ALTER COLUMN cost TYPE float8 USING cost * 10;
ROLLBACK;
SELECT * FROM mg_state();
SELECT * FROM mg_serve();
-- A column a query names renamed: that query no longer plans, and its graph is unusable (with
-- the planner's reason) until refreshed.
ALTER TABLE mg_edges RENAME COLUMN reverse_cost TO rcost;
SELECT * FROM mg_state();
SELECT count(*) FROM gpu_path('graph:mg_cols', 6, 10);
ALTER TABLE mg_edges RENAME COLUMN rcost TO reverse_cost;
SELECT gpu_graph_refresh('mg_cols') IS NOT NULL AS refreshed;
SELECT * FROM mg_serve();

-- A table renamed: the view follows it (the same rows: no rebuild); the queries naming it do not
-- plan any more.
ALTER TABLE mg_base RENAME TO mg_base_2;
ALTER TABLE mg_edges RENAME TO mg_edges_2;
SELECT * FROM mg_state();
SELECT * FROM mg_serve();
-- The view redefined over another table: rebuilt from it, whose changes are tracked from now on.
CREATE TABLE mg_other AS SELECT id, source, target, cost * 5 AS cost, x1 FROM sample_edges;
CREATE OR REPLACE VIEW mg_view AS SELECT id, source, target, cost, x1 FROM mg_other;
SELECT name, tables FROM gpu_graphs() WHERE name = 'mg_view';
SELECT * FROM mg_state();
SELECT * FROM mg_serve();
SELECT agg_cost FROM gpu_path('graph:mg_view', 1, 17) WHERE edge = -1;
UPDATE mg_other SET cost = 1;
SELECT agg_cost FROM gpu_path('graph:mg_view', 1, 17) WHERE edge = -1;
SELECT tgrelid::regclass FROM pg_trigger WHERE tgname = 'gpu_routing_track_changes' AND tgrelid = 'mg_other'::regclass;

-- A partitioned table: a partition attached adds rows no statement trigger saw; the graph is
-- rebuilt with them, and changes made to the new partition directly are tracked.
CREATE TABLE mg_parts (id bigint, source bigint, target bigint, cost float8) PARTITION BY RANGE (id);
CREATE TABLE mg_parts_1 PARTITION OF mg_parts FOR VALUES FROM (1) TO (10);
INSERT INTO mg_parts SELECT id, source, target, cost FROM sample_edges WHERE id < 10;
SELECT gpu_graph_create('mg_parts', 'SELECT id, source, target, cost FROM mg_parts') IS NOT NULL AS created;
SELECT count(*) FROM gpu_sssp('graph:mg_parts', 5);
CREATE TABLE mg_parts_2 (id bigint, source bigint, target bigint, cost float8);
INSERT INTO mg_parts_2 SELECT id, source, target, cost FROM sample_edges WHERE id >= 10;
ALTER TABLE mg_parts ATTACH PARTITION mg_parts_2 FOR VALUES FROM (10) TO (100);
SELECT * FROM mg_state();
SELECT count(*) FROM gpu_sssp('graph:mg_parts', 5);
SELECT agg_cost FROM gpu_path('graph:mg_parts', 5, 9) WHERE edge = -1;
UPDATE mg_parts_2 SET cost = 7 WHERE id = 14;
SELECT agg_cost FROM gpu_path('graph:mg_parts', 5, 9) WHERE edge = -1;
SELECT * FROM mg_serve();

-- Turning off the trigger that tracks changes, or dropping what the query reads, makes the
-- graphs unusable.
ALTER TABLE mg_parts_2 DISABLE TRIGGER gpu_routing_track_changes;
DROP VIEW mg_view;
SELECT * FROM mg_state();

SELECT count(gpu_graph_drop(name)) FROM gpu_routing_graphs WHERE name LIKE 'mg_%';
DROP TABLE mg_parts, mg_other, mg_edges_2, mg_base_2;
DROP FUNCTION mg_state();
DROP FUNCTION mg_serve();

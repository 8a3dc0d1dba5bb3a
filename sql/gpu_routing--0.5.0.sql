-- gpu_routing 0.5.0: shortest paths on the GPU with an OpenMP CPU engine, on kept graphs or edges_sql,
-- with one GPU service process for the whole server; kept graphs on hot standbys.
\echo Use "CREATE EXTENSION gpu_routing" to load this file. \quit

-- Every function takes edges_sql: a query returning, by name, id (ANY-INTEGER; optional for
-- gpu_apsp), source, target (ANY-INTEGER), cost (ANY-NUMERICAL) and optionally reverse_cost
-- (ANY-NUMERICAL). A negative or infinite cost means "no edge in that direction".

CREATE FUNCTION gpu_sssp(edges_sql text, source bigint, directed boolean DEFAULT true)
RETURNS TABLE (node bigint, distance double precision, predecessor bigint, edge bigint)
AS 'MODULE_PATHNAME', 'gpu_sssp_one'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_sssp(text, bigint, boolean) IS
'Distances from one source to every reachable vertex, with the predecessor and the edge of each shortest path tree arc; ordered by node.';

CREATE FUNCTION gpu_sssp(edges_sql text, sources bigint[], directed boolean DEFAULT true)
RETURNS TABLE (source bigint, node bigint, distance double precision, predecessor bigint, edge bigint)
AS 'MODULE_PATHNAME', 'gpu_sssp_many'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_sssp(text, bigint[], boolean) IS
'Distances from each source to every reachable vertex; ordered by source, node.';

-- gpu_path: pgr_dijkstra of pgRouting 3.4, all five shapes, same columns, rows and conventions.
CREATE FUNCTION gpu_path(edges_sql text, start_vid bigint, end_vid bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_one_to_one'
LANGUAGE C VOLATILE STRICT;

CREATE FUNCTION gpu_path(edges_sql text, start_vid bigint, end_vids bigint[], directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT end_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_one_to_many'
LANGUAGE C VOLATILE STRICT;

CREATE FUNCTION gpu_path(edges_sql text, start_vids bigint[], end_vid bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_many_to_one'
LANGUAGE C VOLATILE STRICT;

CREATE FUNCTION gpu_path(edges_sql text, start_vids bigint[], end_vids bigint[], directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_many_to_many'
LANGUAGE C VOLATILE STRICT;

CREATE FUNCTION gpu_path(edges_sql text, combinations_sql text, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_combinations'
LANGUAGE C VOLATILE STRICT;

COMMENT ON FUNCTION gpu_path(text, bigint, bigint, boolean) IS 'Shortest path from start_vid to end_vid (pgr_dijkstra one-to-one).';
COMMENT ON FUNCTION gpu_path(text, bigint, bigint[], boolean) IS 'Shortest paths from start_vid to each end_vid (pgr_dijkstra one-to-many).';
COMMENT ON FUNCTION gpu_path(text, bigint[], bigint, boolean) IS 'Shortest paths from each start_vid to end_vid (pgr_dijkstra many-to-one).';
COMMENT ON FUNCTION gpu_path(text, bigint[], bigint[], boolean) IS 'Shortest paths from each start_vid to each end_vid (pgr_dijkstra many-to-many).';
COMMENT ON FUNCTION gpu_path(text, text, boolean) IS 'Shortest paths for the (source, target) pairs of combinations_sql (pgr_dijkstra combinations).';

CREATE FUNCTION gpu_apsp(edges_sql text, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, end_vid bigint, agg_cost double precision)
AS 'MODULE_PATHNAME', 'gpu_apsp_all'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_apsp(text, boolean) IS
'All pairs shortest path costs (pgr_floydWarshall / pgr_johnson): every finite pair with start_vid <> end_vid.';

CREATE FUNCTION gpu_apsp(edges_sql text, sources bigint[], targets bigint[] DEFAULT NULL, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, end_vid bigint, agg_cost double precision)
AS 'MODULE_PATHNAME', 'gpu_apsp_matrix'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_apsp(text, bigint[], bigint[], boolean) IS
'Cost matrix from sources to targets (every vertex when targets is NULL), as pgr_dijkstraCost many-to-many.';

CREATE FUNCTION gpu_routing_info()
RETURNS TABLE (name text, value text)
AS 'MODULE_PATHNAME', 'gpu_routing_info'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_routing_info() IS 'Version, build, GPUs found, OpenMP threads and the engines available.';

-- Kept graphs.

-- The registrations: one row per kept graph of this database. Only the extension's functions read
-- and write it (they check the caller's rights, then act as the table's owner): a query's text may
-- hold names and literals its owner keeps private, so gpu_graphs() shows it only to those who may
-- read the graph's tables. pg_dump (as a superuser or this table's owner) keeps its rows. The
-- built graphs are not here: they live in shared memory and are rebuilt on first use.
CREATE TABLE gpu_routing_graphs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE
        CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]*$' AND length(name) <= 63),
    owner regrole NOT NULL,
    edges_sql text NOT NULL,
    normalized_sql text NOT NULL,   -- edges_sql with whitespace folded: calls with the same text use the graph
    search_path text NOT NULL,      -- the creator's: the graph's query always reads the same tables
    tables regclass[] NOT NULL,     -- every table and view the query reads (views expanded)
    refresh text NOT NULL DEFAULT 'auto' CHECK (refresh IN ('auto', 'manual')),
    generation bigint NOT NULL DEFAULT 1,  -- raised by gpu_graph_refresh: built forms of older ones are dropped
    unusable text,                  -- why calls are refused until gpu_graph_refresh (a table altered or dropped)
    created_at timestamptz NOT NULL DEFAULT now(),
    road_index boolean NOT NULL DEFAULT false  -- gpu_graph_index: its forms carry a road index
);
CREATE INDEX gpu_routing_graphs_normalized_sql ON gpu_routing_graphs (md5(normalized_sql));
REVOKE ALL ON gpu_routing_graphs FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('gpu_routing_graphs', '');
SELECT pg_catalog.pg_extension_config_dump('gpu_routing_graphs_id_seq', '');
COMMENT ON TABLE gpu_routing_graphs IS
'Kept graphs of this database (gpu_graph_create); read gpu_graphs() for their state.';

-- The change log (0.5.0): per table a kept graph reads, rows whose `changes` add up to the committed
-- transactions that changed it. The statement trigger adds one in the changing transaction, to the
-- row of the table and the writing backend's slot (one transaction at a time writes a row: writers
-- never wait for each other), so WAL carries it to hot standbys, whose kept graphs judge their
-- freshness by it (the primary's sessions learn of commits through shared memory). Only the
-- extension's functions read or write it, as its owner. Not dumped: it names tables by oid, and a
-- restored database starts afresh. fillfactor 50: the increments are HOT updates.
CREATE TABLE gpu_routing_table_changes (
    relid oid NOT NULL,
    writer integer NOT NULL,
    changes bigint NOT NULL,
    PRIMARY KEY (relid, writer)
) WITH (fillfactor = 50);
REVOKE ALL ON gpu_routing_table_changes FROM PUBLIC;
COMMENT ON TABLE gpu_routing_table_changes IS
'Committed changes to the tables of kept graphs, counted for hot standbys (internal).';

CREATE FUNCTION gpu_routing_track_changes() RETURNS trigger
AS 'MODULE_PATHNAME', 'gpu_routing_track_changes'
LANGUAGE C;
COMMENT ON FUNCTION gpu_routing_track_changes() IS
'Statement trigger on the tables of kept graphs: a committed change makes their built graphs stale, on the primary and on its hot standbys.';

CREATE FUNCTION gpu_routing_watch_ddl() RETURNS event_trigger
AS 'MODULE_PATHNAME', 'gpu_routing_watch_ddl'
LANGUAGE C;
COMMENT ON FUNCTION gpu_routing_watch_ddl() IS
'Event trigger: ALTER or DROP of a table a kept graph reads makes the graph unusable until gpu_graph_refresh.';

CREATE FUNCTION gpu_graph_create(name text, edges_sql text, refresh text DEFAULT 'auto')
RETURNS text AS 'MODULE_PATHNAME', 'gpu_graph_create' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_graph_create(text, text, text) IS
'Registers a kept graph and builds it; calls then name it as ''graph:NAME'' in place of edges_sql. refresh => ''manual'' for queries whose reads cannot be tracked.';

CREATE FUNCTION gpu_graph_refresh(name text)
RETURNS text AS 'MODULE_PATHNAME', 'gpu_graph_refresh' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_graph_refresh(text) IS
'Reads the kept graph''s tables again and rebuilds it (owner or superuser); clears "unusable".';

CREATE FUNCTION gpu_graph_index(name text, enabled boolean DEFAULT true)
RETURNS text AS 'MODULE_PATHNAME', 'gpu_graph_index' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_graph_index(text, boolean) IS
'Gives a kept graph a road index (a customizable contraction hierarchy: routes in microseconds), made now when it can be, kept current after every committed change and after restarts; enabled => false removes it (owner or superuser).';

CREATE FUNCTION gpu_graph_drop(name text)
RETURNS void AS 'MODULE_PATHNAME', 'gpu_graph_drop' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_graph_drop(text) IS 'Drops a kept graph (owner or superuser).';

CREATE FUNCTION gpu_graphs()
RETURNS TABLE (name text, owner regrole, edges_sql text, tables regclass[], refresh text,
               state text, forms text, vertices bigint, edges bigint, host_bytes bigint,
               device_bytes bigint, built_at timestamptz, build_ms double precision,
               calls bigint, last_used timestamptz, note text)
AS 'MODULE_PATHNAME', 'gpu_graphs'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_graphs() IS
'The kept graphs of this database: registration, state (fresh, stale, building, not built, unusable), size and use.';

CREATE FUNCTION gpu_routing_last_run()
RETURNS TABLE (function text, device text, algorithm text, reason text, vertices bigint, edges bigint,
               sources bigint, rows bigint, rounds bigint, load_ms double precision,
               build_ms double precision, compute_ms double precision, transfer_ms double precision,
               emit_ms double precision, total_ms double precision, notes text, graph text,
               batch_size integer, wait_ms double precision)
AS 'MODULE_PATHNAME', 'gpu_routing_last_run'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_routing_last_run() IS
'The last gpu_routing call of this session: device, engine, size, where the milliseconds went, the kept graph that served it, and through the GPU service the requests that shared its launch and how long it waited.';

CREATE FUNCTION gpu_apsp(edges_sql text, combinations_sql text, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, end_vid bigint, agg_cost double precision)
AS 'MODULE_PATHNAME', 'gpu_apsp_combinations'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_apsp(text, text, boolean) IS
'Costs of the (source, target) pairs combinations_sql returns (pgr_dijkstraCost combinations): one row per distinct pair with a path, start_vid <> end_vid.';

-- Service areas (0.5.0): pgr_drivingDistance of pgRouting 3.4, same columns, rows and conventions:
-- every vertex whose cost from a start is at most `distance`, with the edge of its shortest path
-- tree arc (-1 and cost 0 for the start); rows by start (in the order given), then agg_cost, then
-- node. With several starts and equicost, a vertex goes to its nearest start only (ties: the start
-- given first). Where shortest paths tie, the edge follows gpu_routing's predecessor rule.
CREATE FUNCTION gpu_driving_distance(edges_sql text, start_vid bigint, distance double precision,
    directed boolean DEFAULT true,
    OUT seq integer, OUT node bigint, OUT edge bigint, OUT cost double precision,
    OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_driving_distance_one'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_driving_distance(text, bigint, double precision, boolean) IS
'The service area of one start: every vertex within distance, with the edge that reaches it and its cost (pgr_drivingDistance).';

CREATE FUNCTION gpu_driving_distance(edges_sql text, start_vids bigint[], distance double precision,
    directed boolean DEFAULT true, equicost boolean DEFAULT false,
    OUT seq integer, OUT from_v bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_driving_distance_many'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_driving_distance(text, bigint[], double precision, boolean, boolean) IS
'The service areas of several starts (pgr_drivingDistance); with equicost, each vertex in the area of its nearest start only.';
-- Start ids of every integer type and NUMERIC, as the other functions' id arrays (below).
CREATE FUNCTION gpu_driving_distance(edges_sql text, start_vids integer[], distance double precision,
    directed boolean DEFAULT true, equicost boolean DEFAULT false,
    OUT seq integer, OUT from_v bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_driving_distance_many'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_driving_distance(text, integer[], double precision, boolean, boolean) IS
'gpu_driving_distance(text, bigint[], double precision, boolean, boolean) with integer[] vertex ids.';
CREATE FUNCTION gpu_driving_distance(edges_sql text, start_vids smallint[], distance double precision,
    directed boolean DEFAULT true, equicost boolean DEFAULT false,
    OUT seq integer, OUT from_v bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_driving_distance_many'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_driving_distance(text, smallint[], double precision, boolean, boolean) IS
'gpu_driving_distance(text, bigint[], double precision, boolean, boolean) with smallint[] vertex ids.';
CREATE FUNCTION gpu_driving_distance(edges_sql text, start_vids numeric[], distance double precision,
    directed boolean DEFAULT true, equicost boolean DEFAULT false,
    OUT seq integer, OUT from_v bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_driving_distance_many'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_driving_distance(text, numeric[], double precision, boolean, boolean) IS
'gpu_driving_distance(text, bigint[], double precision, boolean, boolean) with numeric[] vertex ids.';

-- Cost matrices as arrays.

CREATE FUNCTION gpu_apsp_array(edges_sql text, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, agg_costs double precision[])
AS 'MODULE_PATHNAME', 'gpu_apsp_array_all'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpu_apsp_array(text, boolean) IS
'All pairs as arrays: one row per vertex (ascending id) with its costs to every vertex in ascending id order; Infinity where unreachable, 0 to itself.';

CREATE FUNCTION gpu_apsp_array(edges_sql text, sources bigint[], targets bigint[] DEFAULT NULL, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, agg_costs double precision[])
AS 'MODULE_PATHNAME', 'gpu_apsp_array_matrix'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_apsp_array(text, bigint[], bigint[], boolean) IS
'Cost matrix as arrays: one row per source in the graph (ascending id) with its costs to the targets in the order given (every vertex by ascending id when NULL); Infinity where unreachable or not in the graph.';

-- Vertex id arrays of every integer type and NUMERIC, as pgRouting's ANY-INTEGER arrays: the same
-- C functions read each width (numeric: whole numbers only). One overload per element type keeps
-- every mix of array types resolvable (an anyarray overload beside bigint[] would be ambiguous).

CREATE FUNCTION gpu_sssp(edges_sql text, sources integer[], directed boolean DEFAULT true)
RETURNS TABLE (source bigint, node bigint, distance double precision, predecessor bigint, edge bigint)
AS 'MODULE_PATHNAME', 'gpu_sssp_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vid bigint, end_vids integer[], directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT end_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_one_to_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vids integer[], end_vid bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_many_to_one'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vids integer[], end_vids integer[], directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_many_to_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_apsp(edges_sql text, sources integer[], targets integer[] DEFAULT NULL, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, end_vid bigint, agg_cost double precision)
AS 'MODULE_PATHNAME', 'gpu_apsp_matrix'
LANGUAGE C VOLATILE;
CREATE FUNCTION gpu_apsp_array(edges_sql text, sources integer[], targets integer[] DEFAULT NULL, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, agg_costs double precision[])
AS 'MODULE_PATHNAME', 'gpu_apsp_array_matrix'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_sssp(text, integer[], boolean) IS 'gpu_sssp(text, bigint[], boolean) with integer[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, bigint, integer[], boolean) IS 'gpu_path(text, bigint, bigint[], boolean) with integer[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, integer[], bigint, boolean) IS 'gpu_path(text, bigint[], bigint, boolean) with integer[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, integer[], integer[], boolean) IS 'gpu_path(text, bigint[], bigint[], boolean) with integer[] vertex ids.';
COMMENT ON FUNCTION gpu_apsp(text, integer[], integer[], boolean) IS 'gpu_apsp(text, bigint[], bigint[], boolean) with integer[] vertex ids.';
COMMENT ON FUNCTION gpu_apsp_array(text, integer[], integer[], boolean) IS 'gpu_apsp_array(text, bigint[], bigint[], boolean) with integer[] vertex ids.';

CREATE FUNCTION gpu_sssp(edges_sql text, sources smallint[], directed boolean DEFAULT true)
RETURNS TABLE (source bigint, node bigint, distance double precision, predecessor bigint, edge bigint)
AS 'MODULE_PATHNAME', 'gpu_sssp_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vid bigint, end_vids smallint[], directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT end_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_one_to_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vids smallint[], end_vid bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_many_to_one'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vids smallint[], end_vids smallint[], directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_many_to_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_apsp(edges_sql text, sources smallint[], targets smallint[] DEFAULT NULL, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, end_vid bigint, agg_cost double precision)
AS 'MODULE_PATHNAME', 'gpu_apsp_matrix'
LANGUAGE C VOLATILE;
CREATE FUNCTION gpu_apsp_array(edges_sql text, sources smallint[], targets smallint[] DEFAULT NULL, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, agg_costs double precision[])
AS 'MODULE_PATHNAME', 'gpu_apsp_array_matrix'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_sssp(text, smallint[], boolean) IS 'gpu_sssp(text, bigint[], boolean) with smallint[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, bigint, smallint[], boolean) IS 'gpu_path(text, bigint, bigint[], boolean) with smallint[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, smallint[], bigint, boolean) IS 'gpu_path(text, bigint[], bigint, boolean) with smallint[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, smallint[], smallint[], boolean) IS 'gpu_path(text, bigint[], bigint[], boolean) with smallint[] vertex ids.';
COMMENT ON FUNCTION gpu_apsp(text, smallint[], smallint[], boolean) IS 'gpu_apsp(text, bigint[], bigint[], boolean) with smallint[] vertex ids.';
COMMENT ON FUNCTION gpu_apsp_array(text, smallint[], smallint[], boolean) IS 'gpu_apsp_array(text, bigint[], bigint[], boolean) with smallint[] vertex ids.';

CREATE FUNCTION gpu_sssp(edges_sql text, sources numeric[], directed boolean DEFAULT true)
RETURNS TABLE (source bigint, node bigint, distance double precision, predecessor bigint, edge bigint)
AS 'MODULE_PATHNAME', 'gpu_sssp_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vid bigint, end_vids numeric[], directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT end_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_one_to_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vids numeric[], end_vid bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_many_to_one'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_path(edges_sql text, start_vids numeric[], end_vids numeric[], directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_path_many_to_many'
LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION gpu_apsp(edges_sql text, sources numeric[], targets numeric[] DEFAULT NULL, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, end_vid bigint, agg_cost double precision)
AS 'MODULE_PATHNAME', 'gpu_apsp_matrix'
LANGUAGE C VOLATILE;
CREATE FUNCTION gpu_apsp_array(edges_sql text, sources numeric[], targets numeric[] DEFAULT NULL, directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, agg_costs double precision[])
AS 'MODULE_PATHNAME', 'gpu_apsp_array_matrix'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_sssp(text, numeric[], boolean) IS 'gpu_sssp(text, bigint[], boolean) with numeric[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, bigint, numeric[], boolean) IS 'gpu_path(text, bigint, bigint[], boolean) with numeric[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, numeric[], bigint, boolean) IS 'gpu_path(text, bigint[], bigint, boolean) with numeric[] vertex ids.';
COMMENT ON FUNCTION gpu_path(text, numeric[], numeric[], boolean) IS 'gpu_path(text, bigint[], bigint[], boolean) with numeric[] vertex ids.';
COMMENT ON FUNCTION gpu_apsp(text, numeric[], numeric[], boolean) IS 'gpu_apsp(text, bigint[], bigint[], boolean) with numeric[] vertex ids.';
COMMENT ON FUNCTION gpu_apsp_array(text, numeric[], numeric[], boolean) IS 'gpu_apsp_array(text, bigint[], bigint[], boolean) with numeric[] vertex ids.';

-- Progress of running calls.

CREATE FUNCTION gpu_routing_get_progress()
RETURNS TABLE (pid integer, datname text, usename text, function text, graph text, phase text,
               sources_done bigint, sources_total bigint, rows_written bigint, device text,
               started timestamptz, elapsed interval)
AS 'MODULE_PATHNAME', 'gpu_routing_get_progress'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_routing_get_progress() IS
'The rows of the view gpu_routing_progress.';

-- One row per running gpu_routing call of the server that the caller may see: its own role's
-- (and those of roles it has the privileges of), every call with pg_read_all_stats, as
-- pg_stat_activity. Needs shared_preload_libraries = 'gpu_routing' (empty otherwise).
CREATE VIEW gpu_routing_progress AS SELECT * FROM gpu_routing_get_progress();
GRANT SELECT ON gpu_routing_progress TO PUBLIC;
COMMENT ON VIEW gpu_routing_progress IS
'Running gpu_routing calls: function, kept graph or edges_sql, phase (reading, building, computing, tracing, writing), sources done of total, rows written, device, elapsed.';

-- Last, so that nothing above fires them.
CREATE EVENT TRIGGER gpu_routing_ddl_end ON ddl_command_end EXECUTE FUNCTION gpu_routing_watch_ddl();
CREATE EVENT TRIGGER gpu_routing_sql_drop ON sql_drop EXECUTE FUNCTION gpu_routing_watch_ddl();

-- auto's speeds: measured on this machine, stored per server (the data directory), read by every
-- database's calls.
CREATE FUNCTION gpu_routing_calibrate()
RETURNS TABLE (speed text, value double precision, source text)
AS 'MODULE_PATHNAME', 'gpu_routing_calibrate'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_routing_calibrate() IS
'Measures the speeds auto estimates with (the CPU engines, and the GPU where one is usable: in this session, or through the GPU service) and stores them for the whole server; run it again when the hardware changes (superuser). Returns each speed and whether it was measured or is built-in.';
REVOKE ALL ON FUNCTION gpu_routing_calibrate() FROM PUBLIC;

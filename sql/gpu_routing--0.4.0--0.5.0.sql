-- gpu_routing 0.4.0 -> 0.5.0: kept graphs on hot standbys (the change log); the registry private to
-- the extension's functions (gpu_graphs() shows a query's text to those who may read its tables).
\echo Use "ALTER EXTENSION gpu_routing UPDATE TO '0.5.0'" to load this file. \quit

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

COMMENT ON FUNCTION gpu_routing_track_changes() IS
'Statement trigger on the tables of kept graphs: a committed change makes their built graphs stale, on the primary and on its hot standbys.';

REVOKE SELECT ON gpu_routing_graphs FROM PUBLIC;

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

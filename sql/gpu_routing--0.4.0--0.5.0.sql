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

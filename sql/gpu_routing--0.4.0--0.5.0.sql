-- gpu_routing 0.4.0 -> 0.5.0: kept graphs on hot standbys (the change log).
\echo Use "ALTER EXTENSION gpu_routing UPDATE TO '0.5.0'" to load this file. \quit

-- The change log (0.5.0): per table a kept graph reads, rows whose `changes` add up to the committed
-- transactions that changed it. The statement trigger writes it in the changing transaction, so
-- WAL carries it to hot standbys, whose kept graphs judge their freshness by it (the primary's
-- sessions learn of commits through shared memory). Only the extension's functions read or write
-- it, as its owner. Not dumped: it names tables by oid, and a restored database starts afresh.
CREATE TABLE gpu_routing_table_changes (
    relid oid NOT NULL,
    changes bigint NOT NULL CHECK (changes > 0)
);
CREATE INDEX gpu_routing_table_changes_relid ON gpu_routing_table_changes (relid);
REVOKE ALL ON gpu_routing_table_changes FROM PUBLIC;
COMMENT ON TABLE gpu_routing_table_changes IS
'Committed changes to the tables of kept graphs, counted for hot standbys (internal).';

COMMENT ON FUNCTION gpu_routing_track_changes() IS
'Statement trigger on the tables of kept graphs: a committed change makes their built graphs stale, on the primary and on its hot standbys.';

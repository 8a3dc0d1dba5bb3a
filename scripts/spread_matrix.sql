-- A cost matrix spread over several servers and gathered by one SQL call (docs/deployment.md).
-- A recipe, not part of the extension: it needs dblink (PostgreSQL's own contrib module) on the
-- server that runs it, and gpu_routing with the graph on every server it names.
--
-- gpu_apsp_array_spread(servers, edges_sql, sources, targets, directed) returns the rows of
-- gpu_apsp_array(edges_sql, sources, targets, directed), one per source in the order given: the
-- sources are cut into one contiguous share per server, every server computes its share at the
-- same time (dblink's asynchronous queries), and the shares come back in order. `servers` are
-- libpq connection strings; a hot standby of this server has the same tables and kept graphs
-- (through WAL), so a primary and its standbys make a pool, and 'graph:NAME' works on each.
--
-- A cancel or statement_timeout stops the call within milliseconds and cancels the remote
-- queries: the wait polls dblink_is_busy between pg_sleep(0.001), which a cancel interrupts,
-- where dblink_get_result alone (PostgreSQL 15) would wait out the remote query.
CREATE OR REPLACE FUNCTION gpu_apsp_array_spread(
    servers text[], edges_sql text, sources bigint[], targets bigint[] DEFAULT NULL,
    directed boolean DEFAULT true)
RETURNS TABLE (start_vid bigint, agg_costs double precision[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  parts int;
  links text[] := '{}';
  link text;
  share bigint[];
BEGIN
  IF coalesce(cardinality(servers), 0) = 0 THEN
    RAISE EXCEPTION 'gpu_apsp_array_spread: servers must name at least one server';
  END IF;
  IF coalesce(cardinality(sources), 0) = 0 THEN
    RETURN;
  END IF;
  parts := least(cardinality(servers), cardinality(sources));
  BEGIN
    FOR part IN 1..parts LOOP
      share := sources[(part - 1) * cardinality(sources) / parts + 1 : part * cardinality(sources) / parts];
      link := format('gpu_apsp_array_spread_%s_%s', pg_backend_pid(), part);
      PERFORM dblink_connect(link, servers[part]);
      links := links || link;
      IF dblink_send_query(link, format(
           'SELECT start_vid, agg_costs FROM gpu_apsp_array(%L, %L::bigint[], %L::bigint[], %L)',
           edges_sql, share, targets, directed)) <> 1 THEN
        RAISE EXCEPTION 'gpu_apsp_array_spread: server % refused the query: %', part,
          dblink_error_message(link);
      END IF;
    END LOOP;
    FOREACH link IN ARRAY links LOOP
      WHILE dblink_is_busy(link) = 1 LOOP
        PERFORM pg_sleep(0.001);
      END LOOP;
      RETURN QUERY SELECT r.start_vid, r.agg_costs
        FROM dblink_get_result(link) AS r(start_vid bigint, agg_costs double precision[]);
    END LOOP;
    FOREACH link IN ARRAY links LOOP
      PERFORM dblink_disconnect(link);
    END LOOP;
  EXCEPTION WHEN query_canceled OR OTHERS THEN
    -- Whatever stopped us (a remote error, a cancel, a timeout): the other servers stop too.
    FOREACH link IN ARRAY links LOOP
      PERFORM dblink_cancel_query(link);
      PERFORM dblink_disconnect(link);
    END LOOP;
    RAISE;
  END;
END $$;
COMMENT ON FUNCTION gpu_apsp_array_spread(text[], text, bigint[], bigint[], boolean) IS
'gpu_apsp_array over several servers (libpq connection strings): one contiguous share of the sources each, at the same time, gathered in order (scripts/spread_matrix.sql).';

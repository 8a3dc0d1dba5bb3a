-- gpu_routing 0.4.0 -> 0.5.0: kept graphs on hot standbys (the change log); the registry private to
-- the extension's functions (gpu_graphs() shows a query's text to those who may read its tables);
-- service areas (gpu_driving_distance); the schema gpu_pgr with pgRouting 3.4's names.
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

-- The schema gpu_pgr (0.5.0): pgRouting 3.4's function names, signatures and result columns, answered by gpu_routing.
-- `SET search_path = gpu_pgr, public` runs code written for pgRouting on gpu_routing unchanged;
-- where pgRouting is installed beside it, public.pgr_* stay pgRouting's (a function of gpu_pgr
-- hides the one of public with the same argument types only while gpu_pgr comes first in the path).
-- Nothing here refers to pgRouting: gpu_pgr works without it.
--
-- Each pgr_* function has pgRouting's arguments exactly (unnamed where pgRouting's are, anyarray
-- where pgRouting takes anyarray, the same defaults), is LANGUAGE sql VOLATILE STRICT as
-- pgRouting's are (a NULL argument gives no rows), and passes edges_sql through unchanged, so a
-- kept graph whose query has the same text serves the call, and the name of a prepared statement
-- works as with pgRouting. The bodies name the extension's schema (@extschema@), so that they
-- work whatever the caller's search_path.

CREATE SCHEMA gpu_pgr;
COMMENT ON SCHEMA gpu_pgr IS
'pgRouting 3.4''s names over gpu_routing: SET search_path = gpu_pgr, public runs pgRouting code on gpu_routing.';
GRANT USAGE ON SCHEMA gpu_pgr TO PUBLIC;

-- Internal helpers (pgRouting's own internals are named _pgr_*; these are _gpu_pgr_*).

-- A vertex id array argument, as pgRouting reads it: cast to bigint[] (integer_only = false, the
-- functions whose SQL casts $n::BIGINT[], so numeric ids are rounded and text ids parsed, as
-- there), or of smallint, integer or bigint only (integer_only = true: pgr_dijkstraCostMatrix and
-- pgr_drivingDistance hand the array to C as it is, which refuses other element types). Empty,
-- multi-dimensional and NULL-holding arrays are errors there ("One dimension expected", "NULL
-- value found in Array!"); here they say which argument of which function.
CREATE FUNCTION gpu_pgr._gpu_pgr_vertex_ids(vertex_ids anyarray, argument text, caller text,
                                             integer_only boolean DEFAULT false)
RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE STRICT
AS $$
BEGIN
  IF pg_catalog.cardinality(vertex_ids) = 0 THEN
    RAISE EXCEPTION '% of % is an empty array', argument, caller
      USING ERRCODE = 'invalid_parameter_value', HINT = 'Give at least one vertex id.';
  END IF;
  IF pg_catalog.array_ndims(vertex_ids) > 1 THEN
    RAISE EXCEPTION '% of % must be a one-dimensional array, not %-dimensional',
      argument, caller, pg_catalog.array_ndims(vertex_ids)
      USING ERRCODE = 'array_subscript_error';
  END IF;
  IF integer_only AND pg_catalog.pg_typeof(vertex_ids)
       NOT IN ('smallint[]'::regtype, 'integer[]'::regtype, 'bigint[]'::regtype) THEN
    RAISE EXCEPTION '% of % must be an array of ANY-INTEGER (smallint, integer or bigint), not %',
      argument, caller, pg_catalog.pg_typeof(vertex_ids)
      USING ERRCODE = 'datatype_mismatch';
  END IF;
  IF pg_catalog.array_position(vertex_ids, NULL) IS NOT NULL THEN
    RAISE EXCEPTION '% of % contains NULL at position %',
      argument, caller, pg_catalog.array_position(vertex_ids, NULL)
      USING ERRCODE = 'null_value_not_allowed';
  END IF;
  RETURN vertex_ids::bigint[];
END
$$;
COMMENT ON FUNCTION gpu_pgr._gpu_pgr_vertex_ids(anyarray, text, text, boolean) IS
'Internal: a pgr_* function''s vertex id array as bigint[], refused where pgRouting refuses it (empty, several dimensions, NULL inside, and where pgRouting takes ANY-INTEGER only, another element type).';

-- The text of a query given as the name of a prepared statement, as pgRouting's own functions
-- take it (everything up to the first " AS " of the PREPARE cut, a final ";" dropped, as
-- pgRouting cuts it); any other text is returned as it is. The pgr_* functions pass edges_sql to
-- gpu_routing unchanged (it reads prepared statements itself): only the helpers below, which run
-- a query themselves, need the text.
CREATE FUNCTION gpu_pgr._gpu_pgr_query_text(query text)
RETURNS text
LANGUAGE sql STABLE STRICT
AS $$
  SELECT coalesce(
    (SELECT pg_catalog.regexp_replace(
              pg_catalog.regexp_replace(p.statement, '^.*?\s(as)\s', '', 'is'), '\s*;\s*$', '')
     FROM pg_catalog.pg_prepared_statements p WHERE p.name = pg_catalog.btrim($1) LIMIT 1),
    $1)
$$;
COMMENT ON FUNCTION gpu_pgr._gpu_pgr_query_text(text) IS
'Internal: the query of a prepared statement named by the argument (pgRouting accepts such names), or the argument itself.';

-- Whether an edges query returns a column of this name (planned, never run: LIMIT 0).
CREATE FUNCTION gpu_pgr._gpu_pgr_has_column(query text, column_name text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT
AS $$
BEGIN
  EXECUTE pg_catalog.format('SELECT %I FROM (%s) AS edges_sql LIMIT 0', column_name, query);
  RETURN true;
EXCEPTION WHEN undefined_column THEN
  RETURN false;
END
$$;
COMMENT ON FUNCTION gpu_pgr._gpu_pgr_has_column(text, text) IS
'Internal: whether a query returns a column of the given name (the query is planned, not run).';

-- pgr_johnson and pgr_floydWarshall list their rows in the order of pgRouting's graph: its
-- vertices numbered as they first appear in edges_sql's rows (source, then target), rows whose
-- cost and reverse_cost are both negative skipped, as pgRouting adds no edge for them. This reads
-- the query once (the all-pairs call then reads it again, or takes a kept graph): the order of
-- V * (V - 1) rows is worth one more pass over the edges. A kept graph named 'graph:NAME' has no
-- row order: NULL, and the caller lists vertices by ascending id.
CREATE FUNCTION gpu_pgr._gpu_pgr_vertex_order(edges_sql text)
RETURNS bigint[]
LANGUAGE plpgsql VOLATILE STRICT
AS $$
DECLARE
  query text := gpu_pgr._gpu_pgr_query_text(edges_sql);
  reverse_cost text := 'reverse_cost';
  vertex_order bigint[];
BEGIN
  IF query ~ '^\s*graph:' THEN
    RETURN NULL;
  END IF;
  IF NOT gpu_pgr._gpu_pgr_has_column(query, 'reverse_cost') THEN
    reverse_cost := '-1';
  END IF;
  EXECUTE pg_catalog.format($q$
    SELECT pg_catalog.array_agg(vertex ORDER BY first_seen)
    FROM (SELECT vertex, pg_catalog.min(place) AS first_seen
          FROM (SELECT e.row_number * 2 + end_point.side AS place, end_point.vertex
                FROM (SELECT pg_catalog.row_number() OVER () AS row_number, source, target,
                             cost, %s AS reverse_cost
                      FROM (%s) AS edges_sql) AS e,
                     LATERAL (VALUES (0, e.source::bigint), (1, e.target::bigint)) AS end_point(side, vertex)
                WHERE e.cost >= 0 OR e.reverse_cost >= 0) AS end_points
          GROUP BY vertex) AS vertices$q$, reverse_cost, query)
  INTO vertex_order;
  RETURN coalesce(vertex_order, '{}');
END
$$;
COMMENT ON FUNCTION gpu_pgr._gpu_pgr_vertex_order(text) IS
'Internal: the vertices of edges_sql in the order pgRouting''s graph numbers them (first appearance, source before target, rows with no usable cost skipped): the row order of pgr_johnson and pgr_floydWarshall.';

-- pgr_aStar and pgr_aStarCost are answered only where their heuristic cannot change the answer,
-- which is then Dijkstra's. pgRouting's A* (Boost's astar_search, stopped once every target is
-- reached) returns a shortest path only where its heuristic never overestimates, and with several
-- targets per start not even then: its heuristic is the least over the targets not yet reached,
-- and forgets a target once the search first touches it, before that target's distance is final,
-- so a longer path can come back (start 1, targets 2 and 4: 1 -> 2 costs 10, 1 -> 3 -> 2 costs 1,
-- and pgRouting 3.4 answers 10). So, with a heuristic (heuristic 1 to 5):
--   * every search has one target: one start and one end vertex for pgr_aStar's one-to-one; per
--     start, one end vertex other than the start itself (one-to-many, many-to-many, combinations);
--     many-to-one searches from the end vertex towards the starts, so one start other than it;
--   * every vertex the search can reach has one position in edges_sql (pgRouting takes a vertex's
--     x, y from one of its rows; where they disagree the heuristic is not known);
--   * the heuristic is consistent: no edge the search can reach (an edge of a connected part of the
--     graph that holds one of the call's vertices) costs less than factor * epsilon
--     (pgRouting scales by their product) times the length of its segment in the heuristic's own
--     measure: max(|dx|, |dy|) for 1 and 2 (|max(dx, dy)| and |min(dx, dy)| change by no more
--     than that from one end to the other), sqrt(dx^2 + dy^2) for 4, |dx| + |dy| for 5. Then the
--     heuristic never overestimates and A* returns a shortest path, of Dijkstra's cost;
--   * heuristic 3 (dx^2 + dy^2, a squared length) has no such bound: refused.
-- Heuristic 0 is Dijkstra's search itself: always answered. pgRouting's checks of the arguments
-- (heuristic 0 to 5, factor > 0, epsilon >= 1, the columns x1, y1, x2, y2 present and numeric)
-- are made first, whatever the heuristic. Returns edges_sql unchanged, for the call.
CREATE FUNCTION gpu_pgr._gpu_pgr_astar_edges(edges_sql text, caller text, start_vids bigint[],
    end_vids bigint[], combinations_sql text, from_end boolean, heuristic integer,
    factor double precision, epsilon double precision)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  query text;
  coordinate text;
  measure text;
  measure_name text;
  reverse_cost text := 'reverse_cost';
  scale double precision := factor * epsilon;
  several_targets bigint;
  bad_edge record;
  bad_vertex record;
  involved bigint[];
  excluded bigint[] := '{}';
  component bigint[];
  culprit bigint;
  checks integer := 0;
BEGIN
  IF heuristic NOT BETWEEN 0 AND 5 THEN
    RAISE EXCEPTION 'heuristic of % must be 0 to 5, not %', caller, heuristic
      USING ERRCODE = 'invalid_parameter_value',
            HINT = '0: none (Dijkstra), 1: |max(dx, dy)|, 2: |min(dx, dy)|, 3: dx^2 + dy^2, 4: sqrt(dx^2 + dy^2), 5: |dx| + |dy|.';
  END IF;
  IF NOT factor > 0 THEN
    RAISE EXCEPTION 'factor of % must be greater than 0, not %', caller, factor
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF epsilon < 1 THEN
    RAISE EXCEPTION 'epsilon of % must be 1 or more, not %', caller, epsilon
      USING ERRCODE = 'invalid_parameter_value';
  END IF;

  query := gpu_pgr._gpu_pgr_query_text(edges_sql);
  IF query ~ '^\s*graph:' THEN
    -- A kept graph named by 'graph:NAME' keeps no coordinates.
    IF heuristic <> 0 THEN
      RAISE EXCEPTION '% with heuristic % cannot check its heuristic on a kept graph named by ''%''',
        caller, heuristic, pg_catalog.btrim(query)
        USING ERRCODE = 'feature_not_supported',
              HINT = 'Give the graph''s edges_sql with x1, y1, x2, y2 instead, or heuristic => 0 (the same answer as pgr_dijkstra).';
    END IF;
    RETURN edges_sql;
  END IF;

  -- The coordinates, as pgRouting reads them: present, and numbers (planned, not run).
  FOREACH coordinate IN ARRAY ARRAY['x1', 'y1', 'x2', 'y2'] LOOP
    BEGIN
      EXECUTE pg_catalog.format('SELECT %I + 0 FROM (%s) AS edges_sql LIMIT 0', coordinate, query);
    EXCEPTION
      WHEN undefined_column THEN
        RAISE EXCEPTION 'edges_sql of % has no column named "%"', caller, coordinate
          USING ERRCODE = 'undefined_column',
                HINT = caller || ' reads id, source, target, cost, reverse_cost (optional) and the coordinates of each edge''s ends, x1, y1 (source) and x2, y2 (target), by name.';
      WHEN undefined_function THEN
        RAISE EXCEPTION 'column "%" of edges_sql of % must be ANY-NUMERICAL', coordinate, caller
          USING ERRCODE = 'datatype_mismatch',
                HINT = 'smallint, integer, bigint, real, double precision or numeric.';
    END;
  END LOOP;

  IF heuristic = 0 THEN
    RETURN edges_sql;
  END IF;
  IF heuristic = 3 THEN
    RAISE EXCEPTION '% with heuristic 3 could return a longer path than the shortest', caller
      USING ERRCODE = 'feature_not_supported',
            DETAIL = 'Heuristic 3 is a squared length, (dx^2 + dy^2) * factor^2: it overestimates the remaining cost unless the factor is tiny, and pgRouting''s A* then returns whatever path it reaches first; gpu_pgr answers with shortest paths only.',
            HINT = 'Use heuristic => 4 (the length itself) or heuristic => 0 (the same answer as pgr_dijkstra).';
  END IF;

  -- One target per search.
  IF combinations_sql IS NOT NULL THEN
    EXECUTE pg_catalog.format($q$
      SELECT source FROM (SELECT source::bigint AS source, target::bigint AS target
                          FROM (%s) AS combinations_sql) AS c
      GROUP BY source HAVING pg_catalog.count(DISTINCT target) FILTER (WHERE target <> source) > 1
      ORDER BY source LIMIT 1$q$, gpu_pgr._gpu_pgr_query_text(combinations_sql))
    INTO several_targets;
  ELSIF from_end THEN
    SELECT t INTO several_targets FROM pg_catalog.unnest(end_vids) AS t
    WHERE (SELECT pg_catalog.count(DISTINCT s) FROM pg_catalog.unnest(start_vids) AS s WHERE s <> t) > 1
    LIMIT 1;
  ELSE
    SELECT s INTO several_targets FROM pg_catalog.unnest(start_vids) AS s
    WHERE (SELECT pg_catalog.count(DISTINCT t) FROM pg_catalog.unnest(end_vids) AS t WHERE t <> s) > 1
    LIMIT 1;
  END IF;
  IF several_targets IS NOT NULL THEN
    RAISE EXCEPTION '% with heuristic % could return a longer path than the shortest: %',
      caller, heuristic,
      CASE WHEN from_end THEN 'the search from end vertex ' || several_targets || ' has several start vertices to reach'
           ELSE 'the search from start vertex ' || several_targets || ' has several end vertices to reach' END
      USING ERRCODE = 'feature_not_supported',
            DETAIL = 'pgRouting''s A* with several targets per search forgets a target''s heuristic once the search first reaches it, before its distance is final, so it can return a longer path than the shortest, even with a heuristic that never overestimates; gpu_pgr answers with shortest paths only.',
            HINT = 'Give one target per start (one start per end vertex for many-to-one), or heuristic => 0 (the same answer as pgr_dijkstra).';
  END IF;

  -- The call's vertices.
  IF combinations_sql IS NOT NULL THEN
    EXECUTE pg_catalog.format($q$
      SELECT pg_catalog.array_agg(DISTINCT v) FROM (SELECT source::bigint, target::bigint
                                                    FROM (%s) AS combinations_sql) AS c,
             LATERAL (VALUES (c.source), (c.target)) AS p(v)$q$,
      gpu_pgr._gpu_pgr_query_text(combinations_sql))
    INTO involved;
  ELSE
    involved := start_vids || end_vids;
  END IF;
  involved := coalesce(involved, '{}');

  measure := CASE heuristic
    WHEN 1 THEN 'GREATEST(abs(x2 - x1), abs(y2 - y1))'
    WHEN 2 THEN 'GREATEST(abs(x2 - x1), abs(y2 - y1))'
    WHEN 4 THEN 'sqrt((x2 - x1) * (x2 - x1) + (y2 - y1) * (y2 - y1))'
    WHEN 5 THEN 'abs(x2 - x1) + abs(y2 - y1)' END;
  measure_name := CASE heuristic WHEN 4 THEN 'sqrt(dx^2 + dy^2)' WHEN 5 THEN '|dx| + |dy|'
                                 ELSE 'max(|dx|, |dy|)' END;
  IF NOT gpu_pgr._gpu_pgr_has_column(query, 'reverse_cost') THEN
    reverse_cost := '-1';
  END IF;

  -- NULL coordinates: pgRouting's error too.
  EXECUTE pg_catalog.format($q$
    SELECT id FROM (%s) AS edges_sql
    WHERE x1 IS NULL OR y1 IS NULL OR x2 IS NULL OR y2 IS NULL LIMIT 1$q$, query)
  INTO bad_edge;
  IF bad_edge IS NOT NULL THEN
    RAISE EXCEPTION 'edges_sql of % has a NULL coordinate (x1, y1, x2 or y2) in the row of edge %',
      caller, bad_edge.id
      USING ERRCODE = 'null_value_not_allowed';
  END IF;

  -- Each vertex at one position, and consistency: every usable cost at least scale * the
  -- segment's measure. Only the parts of the graph a search can reach matter: where a check fails,
  -- the failing vertex's component (gpu_sssp undirected from it) is left out of both checks if it
  -- holds none of the call's vertices, and the checks run again (pgRouting's sample network has
  -- two such parts, edges 17 and 18, longer than their cost), up to 8 times and 10,000 vertices.
  LOOP
    EXECUTE pg_catalog.format($q$
      SELECT vertex, pg_catalog.string_agg(pg_catalog.format('(%%s, %%s)', x, y), ' and ' ORDER BY x, y) AS positions
      FROM (SELECT source::bigint, x1::float8, y1::float8 FROM (%1$s) AS edges_sql
            UNION
            SELECT target::bigint, x2::float8, y2::float8 FROM (%1$s) AS edges_sql) AS end_point(vertex, x, y)
      WHERE NOT (vertex = ANY ($1))
      GROUP BY vertex HAVING pg_catalog.count(*) > 1
      ORDER BY vertex LIMIT 1$q$, query)
    INTO bad_vertex USING excluded;
    bad_edge := NULL;
    IF bad_vertex IS NULL THEN
      EXECUTE pg_catalog.format($q$
        SELECT id, source, cost, measure FROM (
          SELECT id, source, x1::float8, y1::float8, x2::float8, y2::float8, c.cost
          FROM (SELECT id, source::bigint AS source, cost::float8 AS cost, %1$s::float8 AS reverse_cost, x1, y1, x2, y2
                FROM (%2$s) AS edges_sql) AS e,
               LATERAL (VALUES (e.cost), (e.reverse_cost)) AS c(cost)
          WHERE c.cost >= 0 AND c.cost < 'Infinity') AS arc(id, source, x1, y1, x2, y2, cost),
          LATERAL (SELECT %3$s AS measure) AS m
        WHERE (%4$L::float8 * measure <= cost) IS NOT TRUE AND NOT (source = ANY ($1))
        ORDER BY id LIMIT 1$q$, reverse_cost, query, measure, scale)
      INTO bad_edge USING excluded;
    END IF;
    EXIT WHEN bad_vertex IS NULL AND bad_edge IS NULL;
    checks := checks + 1;
    EXIT WHEN checks > 8;
    culprit := coalesce(bad_vertex.vertex, bad_edge.source);
    SELECT pg_catalog.array_agg(s.node) INTO component
    FROM @extschema@.gpu_sssp(edges_sql, culprit, false) AS s;
    component := coalesce(component, ARRAY[culprit]);
    EXIT WHEN component && involved OR culprit = ANY (involved)
           OR pg_catalog.cardinality(excluded) + pg_catalog.cardinality(component) > 10000;
    excluded := excluded || component;
  END LOOP;
  IF bad_vertex IS NOT NULL THEN
    RAISE EXCEPTION '% with heuristic % cannot know its heuristic: vertex % has several positions in edges_sql, %',
      caller, heuristic, bad_vertex.vertex, bad_vertex.positions
      USING ERRCODE = 'feature_not_supported',
            DETAIL = 'pgRouting takes each vertex''s x, y from one of its rows; where they disagree, its heuristic, and so its answer, depends on which.',
            HINT = 'Give each vertex one position, or use heuristic => 0 (the same answer as pgr_dijkstra).';
  END IF;
  IF bad_edge IS NOT NULL THEN
    RAISE EXCEPTION '% with heuristic % and factor * epsilon = % could return a longer path than the shortest: edge % costs %, less than % times its length %',
      caller, heuristic, scale, bad_edge.id, bad_edge.cost, scale, bad_edge.measure
      USING ERRCODE = 'feature_not_supported',
            DETAIL = 'Where an edge costs less than factor * epsilon times its length in the heuristic''s measure (' || measure_name || ' for heuristic ' || heuristic || '), the heuristic can overestimate the remaining cost, and pgRouting''s A* then returns whatever path it reaches first; gpu_pgr answers with shortest paths only.',
            HINT = 'Lower factor (at most the least cost per unit of length in edges_sql), or use heuristic => 0 (the same answer as pgr_dijkstra).';
  END IF;
  RETURN edges_sql;
END
$$;
COMMENT ON FUNCTION gpu_pgr._gpu_pgr_astar_edges(text, text, bigint[], bigint[], text, boolean, integer, double precision, double precision) IS
'Internal: checks a pgr_aStar/pgr_aStarCost call as pgRouting does (heuristic, factor, epsilon, coordinates) and refuses it where pgRouting''s heuristic could change the answer; returns edges_sql unchanged.';

------------------------------------------------------------------------------------------------
-- pgr_dijkstra: gpu_path, which follows pgr_dijkstra 3.4's conventions in all five shapes.
------------------------------------------------------------------------------------------------

CREATE FUNCTION gpu_pgr.pgr_dijkstra(text, bigint, bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_path($1, $2, $3, $4) $$;

CREATE FUNCTION gpu_pgr.pgr_dijkstra(text, bigint, anyarray, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT end_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path($1, $2, gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_dijkstra'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_dijkstra(text, anyarray, bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_dijkstra'), $3, $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_dijkstra(text, anyarray, anyarray, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_dijkstra'),
                                     gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_dijkstra'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_dijkstra(text, text, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_path($1, $2, $3) $$;

COMMENT ON FUNCTION gpu_pgr.pgr_dijkstra(text, bigint, bigint, boolean) IS
'pgRouting''s pgr_dijkstra (one to one) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstra(text, bigint, anyarray, boolean) IS
'pgRouting''s pgr_dijkstra (one to many) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstra(text, anyarray, bigint, boolean) IS
'pgRouting''s pgr_dijkstra (many to one) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstra(text, anyarray, anyarray, boolean) IS
'pgRouting''s pgr_dijkstra (many to many) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstra(text, text, boolean) IS
'pgRouting''s pgr_dijkstra (combinations) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';

------------------------------------------------------------------------------------------------
-- pgr_dijkstraCost and pgr_dijkstraCostMatrix: gpu_apsp's cost matrix, which has their rows: one
-- per distinct pair with a path and start_vid <> end_vid, ordered by start_vid, end_vid. The
-- matrix is asked for between the given vertices only: gpu_apsp(edges, vids) alone (targets
-- NULL) would mean every vertex.
------------------------------------------------------------------------------------------------

CREATE FUNCTION gpu_pgr.pgr_dijkstraCost(text, bigint, bigint, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_apsp($1, ARRAY[$2], ARRAY[$3], $4) $$;

CREATE FUNCTION gpu_pgr.pgr_dijkstraCost(text, bigint, anyarray, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp($1, ARRAY[$2], gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_dijkstraCost'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_dijkstraCost(text, anyarray, bigint, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_dijkstraCost'), ARRAY[$3], $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_dijkstraCost(text, anyarray, anyarray, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_dijkstraCost'),
                                     gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_dijkstraCost'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_dijkstraCost(text, text, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_apsp($1, $2, $3) $$;

COMMENT ON FUNCTION gpu_pgr.pgr_dijkstraCost(text, bigint, bigint, boolean) IS
'pgRouting''s pgr_dijkstraCost (one to one) on gpu_routing (gpu_apsp): its columns and rows.';
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstraCost(text, bigint, anyarray, boolean) IS
'pgRouting''s pgr_dijkstraCost (one to many) on gpu_routing (gpu_apsp): its columns and rows.';
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstraCost(text, anyarray, bigint, boolean) IS
'pgRouting''s pgr_dijkstraCost (many to one) on gpu_routing (gpu_apsp): its columns and rows.';
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstraCost(text, anyarray, anyarray, boolean) IS
'pgRouting''s pgr_dijkstraCost (many to many) on gpu_routing (gpu_apsp): its columns and rows.';
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstraCost(text, text, boolean) IS
'pgRouting''s pgr_dijkstraCost (combinations) on gpu_routing (gpu_apsp): its columns and rows.';

CREATE FUNCTION gpu_pgr.pgr_dijkstraCostMatrix(text, anyarray, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'vids', 'pgr_dijkstraCostMatrix', true),
                                     gpu_pgr._gpu_pgr_vertex_ids($2, 'vids', 'pgr_dijkstraCostMatrix', true), $3)
$$;
COMMENT ON FUNCTION gpu_pgr.pgr_dijkstraCostMatrix(text, anyarray, boolean) IS
'pgRouting''s pgr_dijkstraCostMatrix on gpu_routing (gpu_apsp from vids to vids, never to every vertex): its columns and rows.';

------------------------------------------------------------------------------------------------
-- pgr_drivingDistance: gpu_driving_distance, which follows pgr_drivingDistance 3.4's rows.
------------------------------------------------------------------------------------------------

CREATE FUNCTION gpu_pgr.pgr_drivingDistance(text, bigint, double precision, directed boolean DEFAULT true,
    OUT seq integer, OUT node bigint, OUT edge bigint, OUT cost double precision,
    OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_driving_distance($1, $2, $3, $4) $$;

CREATE FUNCTION gpu_pgr.pgr_drivingDistance(text, anyarray, double precision,
    directed boolean DEFAULT true, equicost boolean DEFAULT false,
    OUT seq integer, OUT from_v bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_driving_distance(
    $1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_drivingDistance', true), $3, $4, $5)
$$;

COMMENT ON FUNCTION gpu_pgr.pgr_drivingDistance(text, bigint, double precision, boolean) IS
'pgRouting''s pgr_drivingDistance (one start) on gpu_routing (gpu_driving_distance): its columns and rows; where shortest paths tie, gpu_routing''s edge (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_drivingDistance(text, anyarray, double precision, boolean, boolean) IS
'pgRouting''s pgr_drivingDistance (several starts, equicost) on gpu_routing (gpu_driving_distance): its columns and rows; where shortest paths tie, gpu_routing''s edge (the smallest edge id rule).';

------------------------------------------------------------------------------------------------
-- pgr_johnson and pgr_floydWarshall: every finite pair with start_vid <> end_vid, in pgRouting's
-- order (see _gpu_pgr_vertex_order); the engine is auto's choice, not the algorithm named.
------------------------------------------------------------------------------------------------

-- Written in PL/pgSQL, not SQL: a PL/pgSQL set-returning function hands its one store of rows to
-- the caller, where a SQL function over another would copy all V * (V - 1) of them once more. The
-- matrix of gpu_apsp_array has its columns in pgRouting's order; its rows (V of them, not
-- V * (V - 1)) are put in that order and unnested. A kept graph named 'graph:NAME' has no row
-- order: gpu_apsp's, by start_vid, end_vid.
CREATE FUNCTION gpu_pgr.pgr_johnson(text, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE STRICT
AS $$
#variable_conflict use_column
DECLARE
  vertices bigint[] := gpu_pgr._gpu_pgr_vertex_order($1);
BEGIN
  IF vertices IS NULL THEN
    RETURN QUERY SELECT a.start_vid, a.end_vid, a.agg_cost FROM @extschema@.gpu_apsp($1, directed) AS a;
  ELSIF pg_catalog.cardinality(vertices) > 0 THEN
    RETURN QUERY
      SELECT matrix_row.start_vid, cell.end_vid, cell.agg_cost
      FROM (SELECT m.start_vid, m.agg_costs
            FROM @extschema@.gpu_apsp_array($1, vertices, vertices, directed) AS m
            ORDER BY pg_catalog.array_position(vertices, m.start_vid)) AS matrix_row,
           ROWS FROM (pg_catalog.unnest(vertices), pg_catalog.unnest(matrix_row.agg_costs)) AS cell(end_vid, agg_cost)
      WHERE cell.agg_cost < 'Infinity' AND cell.end_vid <> matrix_row.start_vid;
  END IF;
END
$$;
COMMENT ON FUNCTION gpu_pgr.pgr_johnson(text, boolean) IS
'pgRouting''s pgr_johnson on gpu_routing (all pairs, the engine auto chooses): its columns, rows and row order.';

CREATE FUNCTION gpu_pgr.pgr_floydWarshall(text, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE STRICT
AS $$
#variable_conflict use_column
DECLARE
  vertices bigint[] := gpu_pgr._gpu_pgr_vertex_order($1);
BEGIN
  IF vertices IS NULL THEN
    RETURN QUERY SELECT a.start_vid, a.end_vid, a.agg_cost FROM @extschema@.gpu_apsp($1, directed) AS a;
  ELSIF pg_catalog.cardinality(vertices) > 0 THEN
    RETURN QUERY
      SELECT matrix_row.start_vid, cell.end_vid, cell.agg_cost
      FROM (SELECT m.start_vid, m.agg_costs
            FROM @extschema@.gpu_apsp_array($1, vertices, vertices, directed) AS m
            ORDER BY pg_catalog.array_position(vertices, m.start_vid)) AS matrix_row,
           ROWS FROM (pg_catalog.unnest(vertices), pg_catalog.unnest(matrix_row.agg_costs)) AS cell(end_vid, agg_cost)
      WHERE cell.agg_cost < 'Infinity' AND cell.end_vid <> matrix_row.start_vid;
  END IF;
END
$$;
COMMENT ON FUNCTION gpu_pgr.pgr_floydWarshall(text, boolean) IS
'pgRouting''s pgr_floydWarshall on gpu_routing (all pairs, the engine auto chooses): its columns, rows and row order.';

------------------------------------------------------------------------------------------------
-- pgr_bdDijkstra and pgr_bdDijkstraCost: a bidirectional search finds Dijkstra's shortest paths;
-- their rows are pgr_dijkstra's and pgr_dijkstraCost's.
------------------------------------------------------------------------------------------------

CREATE FUNCTION gpu_pgr.pgr_bdDijkstra(text, bigint, bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_path($1, $2, $3, $4) $$;

CREATE FUNCTION gpu_pgr.pgr_bdDijkstra(text, bigint, anyarray, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT end_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path($1, $2, gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_bdDijkstra'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_bdDijkstra(text, anyarray, bigint, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_bdDijkstra'), $3, $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_bdDijkstra(text, anyarray, anyarray, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_bdDijkstra'),
                                     gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_bdDijkstra'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_bdDijkstra(text, text, directed boolean DEFAULT true,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_path($1, $2, $3) $$;

COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstra(text, bigint, bigint, boolean) IS
'pgRouting''s pgr_bdDijkstra (one to one) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstra(text, bigint, anyarray, boolean) IS
'pgRouting''s pgr_bdDijkstra (one to many) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstra(text, anyarray, bigint, boolean) IS
'pgRouting''s pgr_bdDijkstra (many to one) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstra(text, anyarray, anyarray, boolean) IS
'pgRouting''s pgr_bdDijkstra (many to many) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';
COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstra(text, text, boolean) IS
'pgRouting''s pgr_bdDijkstra (combinations) on gpu_routing (gpu_path): its columns and rows; where shortest paths tie, gpu_routing''s path (the smallest edge id rule).';

CREATE FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, bigint, bigint, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_apsp($1, ARRAY[$2], ARRAY[$3], $4) $$;

CREATE FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, bigint, anyarray, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp($1, ARRAY[$2], gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_bdDijkstraCost'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, anyarray, bigint, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_bdDijkstraCost'), ARRAY[$3], $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, anyarray, anyarray, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp($1, gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_bdDijkstraCost'),
                                     gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_bdDijkstraCost'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, text, directed boolean DEFAULT true,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$ SELECT * FROM @extschema@.gpu_apsp($1, $2, $3) $$;

COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, bigint, bigint, boolean) IS
'pgRouting''s pgr_bdDijkstraCost (one to one) on gpu_routing (gpu_apsp): its columns and rows.';
COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, bigint, anyarray, boolean) IS
'pgRouting''s pgr_bdDijkstraCost (one to many) on gpu_routing (gpu_apsp): its columns and rows.';
COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, anyarray, bigint, boolean) IS
'pgRouting''s pgr_bdDijkstraCost (many to one) on gpu_routing (gpu_apsp): its columns and rows.';
COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, anyarray, anyarray, boolean) IS
'pgRouting''s pgr_bdDijkstraCost (many to many) on gpu_routing (gpu_apsp): its columns and rows.';
COMMENT ON FUNCTION gpu_pgr.pgr_bdDijkstraCost(text, text, boolean) IS
'pgRouting''s pgr_bdDijkstraCost (combinations) on gpu_routing (gpu_apsp): its columns and rows.';

------------------------------------------------------------------------------------------------
-- pgr_aStar and pgr_aStarCost: Dijkstra's answers, given only where pgRouting's heuristic cannot
-- change them (see _gpu_pgr_astar_edges); refused otherwise, saying why.
------------------------------------------------------------------------------------------------

CREATE FUNCTION gpu_pgr.pgr_aStar(text, bigint, bigint, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT seq integer, OUT path_seq integer, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStar', ARRAY[$2], ARRAY[$3], NULL, false, $5, $6, $7), $2, $3, $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_aStar(text, bigint, anyarray, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT seq integer, OUT path_seq integer, OUT end_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStar', ARRAY[$2],
      gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_aStar'), NULL, false, $5, $6, $7),
    $2, gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_aStar'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_aStar(text, anyarray, bigint, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT node bigint, OUT edge bigint,
    OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStar', gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_aStar'),
      ARRAY[$3], NULL, true, $5, $6, $7),
    gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_aStar'), $3, $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_aStar(text, anyarray, anyarray, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStar', gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_aStar'),
      gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_aStar'), NULL, false, $5, $6, $7),
    gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_aStar'),
    gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_aStar'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_aStar(text, text, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT seq integer, OUT path_seq integer, OUT start_vid bigint, OUT end_vid bigint, OUT node bigint,
    OUT edge bigint, OUT cost double precision, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_path(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStar', NULL, NULL, $2, false, $4, $5, $6), $2, $3)
$$;

COMMENT ON FUNCTION gpu_pgr.pgr_aStar(text, bigint, bigint, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStar (one to one) on gpu_routing (gpu_path) where its heuristic cannot change the answer (heuristic 0, or a consistent heuristic); refused otherwise, saying why.';
COMMENT ON FUNCTION gpu_pgr.pgr_aStar(text, bigint, anyarray, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStar (one to many) on gpu_routing (gpu_path) where its heuristic cannot change the answer (heuristic 0, or one end vertex and a consistent heuristic); refused otherwise, saying why.';
COMMENT ON FUNCTION gpu_pgr.pgr_aStar(text, anyarray, bigint, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStar (many to one) on gpu_routing (gpu_path) where its heuristic cannot change the answer (heuristic 0, or one start vertex and a consistent heuristic); refused otherwise, saying why.';
COMMENT ON FUNCTION gpu_pgr.pgr_aStar(text, anyarray, anyarray, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStar (many to many) on gpu_routing (gpu_path) where its heuristic cannot change the answer (heuristic 0, or one end vertex per start and a consistent heuristic); refused otherwise, saying why.';
COMMENT ON FUNCTION gpu_pgr.pgr_aStar(text, text, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStar (combinations) on gpu_routing (gpu_path) where its heuristic cannot change the answer (heuristic 0, or one target per source and a consistent heuristic); refused otherwise, saying why.';

CREATE FUNCTION gpu_pgr.pgr_aStarCost(text, bigint, bigint, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStarCost', ARRAY[$2], ARRAY[$3], NULL, false, $5, $6, $7),
    ARRAY[$2], ARRAY[$3], $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_aStarCost(text, bigint, anyarray, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStarCost', ARRAY[$2],
      gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_aStarCost'), NULL, false, $5, $6, $7),
    ARRAY[$2], gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_aStarCost'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_aStarCost(text, anyarray, bigint, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStarCost', gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_aStarCost'),
      ARRAY[$3], NULL, true, $5, $6, $7),
    gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_aStarCost'), ARRAY[$3], $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_aStarCost(text, anyarray, anyarray, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStarCost', gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_aStarCost'),
      gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_aStarCost'), NULL, false, $5, $6, $7),
    gpu_pgr._gpu_pgr_vertex_ids($2, 'start_vids', 'pgr_aStarCost'),
    gpu_pgr._gpu_pgr_vertex_ids($3, 'end_vids', 'pgr_aStarCost'), $4)
$$;

CREATE FUNCTION gpu_pgr.pgr_aStarCost(text, text, directed boolean DEFAULT true,
    heuristic integer DEFAULT 5, factor double precision DEFAULT 1.0, epsilon double precision DEFAULT 1.0,
    OUT start_vid bigint, OUT end_vid bigint, OUT agg_cost double precision)
RETURNS SETOF record
LANGUAGE sql VOLATILE STRICT
AS $$
  SELECT * FROM @extschema@.gpu_apsp(
    gpu_pgr._gpu_pgr_astar_edges($1, 'pgr_aStarCost', NULL, NULL, $2, false, $4, $5, $6), $2, $3)
$$;

COMMENT ON FUNCTION gpu_pgr.pgr_aStarCost(text, bigint, bigint, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStarCost (one to one) on gpu_routing (gpu_apsp) where its heuristic cannot change the answer (heuristic 0, or a consistent heuristic); refused otherwise, saying why.';
COMMENT ON FUNCTION gpu_pgr.pgr_aStarCost(text, bigint, anyarray, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStarCost (one to many) on gpu_routing (gpu_apsp) where its heuristic cannot change the answer (heuristic 0, or one end vertex and a consistent heuristic); refused otherwise, saying why.';
COMMENT ON FUNCTION gpu_pgr.pgr_aStarCost(text, anyarray, bigint, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStarCost (many to one) on gpu_routing (gpu_apsp) where its heuristic cannot change the answer (heuristic 0, or one start vertex and a consistent heuristic); refused otherwise, saying why.';
COMMENT ON FUNCTION gpu_pgr.pgr_aStarCost(text, anyarray, anyarray, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStarCost (many to many) on gpu_routing (gpu_apsp) where its heuristic cannot change the answer (heuristic 0, or one end vertex per start and a consistent heuristic); refused otherwise, saying why.';
COMMENT ON FUNCTION gpu_pgr.pgr_aStarCost(text, text, boolean, integer, double precision, double precision) IS
'pgRouting''s pgr_aStarCost (combinations) on gpu_routing (gpu_apsp) where its heuristic cannot change the answer (heuristic 0, or one target per source and a consistent heuristic); refused otherwise, saying why.';

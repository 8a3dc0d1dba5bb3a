-- gpu_routing 0.1.0: shortest paths on the GPU with an OpenMP CPU engine.
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

CREATE FUNCTION gpu_routing_last_run()
RETURNS TABLE (function text, device text, algorithm text, reason text, vertices bigint, edges bigint,
               sources bigint, rows bigint, rounds bigint, load_ms double precision,
               build_ms double precision, compute_ms double precision, transfer_ms double precision,
               emit_ms double precision, total_ms double precision, notes text)
AS 'MODULE_PATHNAME', 'gpu_routing_last_run'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpu_routing_last_run() IS
'The last gpu_routing call of this session: device, engine, size and where the milliseconds went.';

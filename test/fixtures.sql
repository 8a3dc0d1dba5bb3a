-- The test database of the pgTAP suite (scripts/test.sh loads it once): the extensions and the
-- graphs every test file reads. Data comes from ../shared/data (GPU_ROUTING_DATA overrides).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;
CREATE EXTENSION IF NOT EXISTS gpu_routing;

\set data_dir `echo "${GPU_ROUTING_DATA:-../shared/data}"`
\set sample_file :data_dir '/sample_network.sql'
\i :sample_file

-- Rome (DIMACS), one row per arc, directed, integer metres.
\set rome_arcs `awk '$1 == "a" { printf "%s %s %s;", $2, $3, $4 }' "${GPU_ROUTING_DATA:-../shared/data}/rome99.gr"`
CREATE TABLE rome_edges (id bigint PRIMARY KEY, source bigint, target bigint, cost float8);
INSERT INTO rome_edges
SELECT n, split_part(arc, ' ', 1)::bigint, split_part(arc, ' ', 2)::bigint, split_part(arc, ' ', 3)::float8
FROM unnest(string_to_array(rtrim(:'rome_arcs', ';'), ';')) WITH ORDINALITY AS a(arc, n);

-- Random graphs, the same on every run (setseed): integer weights with ties, parallel edges,
-- one-way edges and self loops; and real weights, where shortest paths are unique.
SELECT setseed(0.42) \gset
CREATE TABLE random_int_edges AS
SELECT g AS id, (random() * 299)::bigint + 1 AS source, (random() * 299)::bigint + 1 AS target,
       CASE WHEN random() < 0.2 THEN -1 ELSE (random() * 9)::int + 1 END::float8 AS cost,
       CASE WHEN random() < 0.3 THEN -1 ELSE (random() * 9)::int + 1 END::float8 AS reverse_cost
FROM generate_series(1, 1200) g;
CREATE TABLE random_real_edges AS
SELECT g AS id, (random() * 399)::bigint + 1 AS source, (random() * 399)::bigint + 1 AS target,
       CASE WHEN random() < 0.2 THEN -1 ELSE random() * 100 + 0.001 END AS cost,
       CASE WHEN random() < 0.3 THEN -1 ELSE random() * 100 + 0.001 END AS reverse_cost
FROM generate_series(1, 1600) g;
-- Two disconnected parts, sparse and negative vertex ids.
CREATE TABLE random_sparse_id_edges AS
SELECT id, source * 1000003 - 50000000 AS source, target * 1000003 - 50000000 AS target, cost, reverse_cost
FROM random_real_edges WHERE (source <= 200) = (target <= 200);
-- A rows x cols grid with unit costs both ways (vertex r * cols + c + 1, edge ids 1..): the big,
-- sparse graphs of the cancel and memory tests, generated on demand instead of stored.
CREATE FUNCTION grid_edges(rows integer, cols integer)
RETURNS TABLE (id bigint, source bigint, target bigint, cost float8, reverse_cost float8)
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT row_number() OVER (ORDER BY e.tail, e.head), e.tail, e.head, 1.0::float8, 1.0::float8
  FROM (SELECT r::bigint * cols + c + 1 AS tail, r::bigint * cols + c + 2 AS head
        FROM generate_series(0, rows - 1) r, generate_series(0, cols - 2) c
        UNION ALL
        SELECT r::bigint * cols + c + 1, (r + 1)::bigint * cols + c + 1
        FROM generate_series(0, rows - 2) r, generate_series(0, cols - 1) c) AS e
$$;
ANALYZE;

-- The kept graphs of kept_graphs.sql: Rome, its vertices 1..400 (for the dense all-pairs engines)
-- and the sample network with reverse_cost. Registered here, each in a transaction of its own, so
-- that they are built at once and shared; a graph registered inside a test's transaction after it
-- wrote is read privately until commit. The queries name their table with an alias, as no other
-- test writes its edges_sql, so that no other test's call is served by them. Kept graphs need
-- gpu_routing in shared_preload_libraries (scripts/cluster.sh preloads it); without it there are
-- none, and kept_graphs.sql fails saying so.
SELECT value NOT LIKE 'off%' AS kept_graphs_on FROM gpu_routing_info() WHERE name = 'kept graphs' \gset
\if :kept_graphs_on
SELECT gpu_graph_create('pgtap_rome', 'SELECT e.id, e.source, e.target, e.cost FROM rome_edges AS e ORDER BY e.id') AS created \gset
SELECT gpu_graph_create('pgtap_rome_part', 'SELECT e.id, e.source, e.target, e.cost FROM rome_edges AS e WHERE e.source <= 400 AND e.target <= 400 ORDER BY e.id') AS created \gset
SELECT gpu_graph_create('pgtap_sample', 'SELECT e.id, e.source, e.target, e.cost, e.reverse_cost FROM sample_edges AS e ORDER BY e.id') AS created \gset
\endif

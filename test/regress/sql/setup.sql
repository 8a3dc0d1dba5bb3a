-- Loads the extensions and the test graphs every later regression test uses: pgRouting's
-- documentation network and the Rome road network, read from ../shared/data.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;
CREATE EXTENSION gpu_routing;
\set data_dir `echo "${GPU_ROUTING_DATA:-../shared/data}"`
\set sample_file :data_dir '/sample_network.sql'
\i :sample_file
\set rome_arcs `awk '$1 == "a" { printf "%s %s %s;", $2, $3, $4 }' "${GPU_ROUTING_DATA:-../shared/data}/rome99.gr"`
CREATE TABLE rome_edges (id bigint PRIMARY KEY, source bigint, target bigint, cost float8);
INSERT INTO rome_edges
SELECT n, split_part(arc, ' ', 1)::bigint, split_part(arc, ' ', 2)::bigint, split_part(arc, ' ', 3)::float8
FROM unnest(string_to_array(rtrim(:'rome_arcs', ';'), ';')) WITH ORDINALITY AS a(arc, n);
RESET client_min_messages;
SELECT count(*) AS sample_edges FROM sample_edges;
SELECT count(*) AS rome_arcs, count(DISTINCT source) AS rome_sources FROM rome_edges;

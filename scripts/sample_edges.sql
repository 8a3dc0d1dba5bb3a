-- pgRouting's documentation network as a table named "edges", as pgRouting's documentation
-- (3.4 and later) names it: the 18-edge, 17-vertex sample road network that every example of the
-- README runs on. Plain columns, no PostGIS: each segment runs from (x1, y1) to (x2, y2).
-- cost is source -> target, reverse_cost target -> source; a negative cost means the edge cannot
-- be travelled in that direction. The same rows as ../shared/data/sample_network.sql.
-- pgRouting's documented answer: pgr_dijkstra(edges, 6, 10) (directed) visits 6, 7, 11, 16, 15, 10
-- over edges 4, 8, 9, 16, 3 with agg_cost 5.
-- Usage: psql -d DATABASE -f scripts/sample_edges.sql  (scripts/playground.sh runs it)
CREATE TABLE edges (
    id bigint PRIMARY KEY, source bigint NOT NULL, target bigint NOT NULL,
    cost float8 NOT NULL, reverse_cost float8 NOT NULL,
    x1 float8, y1 float8, x2 float8, y2 float8);
INSERT INTO edges (id, source, target, cost, reverse_cost, x1, y1, x2, y2) VALUES
( 1,  5,  6,  1,  1, 2,   0,   2,              1),
( 2,  6, 10, -1,  1, 2,   1,   3,              1),
( 3, 10, 15, -1,  1, 3,   1,   4,              1),
( 4,  6,  7,  1,  1, 2,   1,   2,              2),
( 5, 10, 11,  1, -1, 3,   1,   3,              2),
( 6,  1,  3,  1,  1, 0,   2,   1,              2),
( 7,  3,  7,  1,  1, 1,   2,   2,              2),
( 8,  7, 11,  1,  1, 2,   2,   3,              2),
( 9, 11, 16,  1,  1, 3,   2,   4,              2),
(10,  7,  8,  1,  1, 2,   2,   2,              3),
(11, 11, 12,  1, -1, 3,   2,   3,              3),
(12,  8, 12,  1, -1, 2,   3,   3,              3),
(13, 12, 17,  1, -1, 3,   3,   4,              3),
(14,  8,  9,  1,  1, 2,   3,   2,              4),
(15, 16, 17,  1,  1, 4,   2,   4,              3),
(16, 15, 16,  1,  1, 4,   1,   4,              2),
(17,  2,  4,  1,  1, 0.5, 3.5, 1.999999999999, 3.5),
(18, 13, 14,  1,  1, 3.5, 2.3, 3.5,            4);
ANALYZE edges;

-- edge_cases: small graphs whose answers were worked out by hand. Parallel edges (the cheapest;
-- ties to the smallest id), self loops, zero-cost edges and zero-cost cycles, one vertex,
-- disconnected parts, vertex and edge ids at the ends of bigint, one-way edges through negative
-- cost / reverse_cost, Infinity (absent) and NaN (error), start = end, unreachable targets,
-- duplicate ids in arrays, directed against undirected.
BEGIN;
SET LOCAL client_min_messages = warning;

SELECT plan(60);

-- Parallel edges. ------------------------------------------------------------------------------
\set parallel 'SELECT * FROM (VALUES (7, 1, 2, 3.0), (5, 1, 2, 2.0), (6, 1, 2, 2.0), (4, 1, 2, 9.0)) AS e(id, source, target, cost)'
SELECT results_eq(format('SELECT seq, path_seq, node, edge, cost, agg_cost FROM gpu_path(%L, 1, 2)', :'parallel'),
                  $$VALUES (1, 1, 1::bigint, 5::bigint, 2::float8, 0::float8), (2, 2, 2, -1, 0, 2)$$,
                  'parallel edges: the cheapest, equal costs to the smallest id (5, not 6)');
SELECT results_eq(format('SELECT node, distance, predecessor, edge FROM gpu_sssp(%L, 1)', :'parallel'),
                  $$VALUES (1::bigint, 0::float8, NULL::bigint, NULL::bigint), (2, 2, 1, 5)$$,
                  'parallel edges: gpu_sssp names edge 5 too');
SELECT results_eq(format('SELECT node, distance, predecessor, edge FROM gpu_sssp(%L, 2, false)', :'parallel'),
                  $$VALUES (1::bigint, 2::float8, 2::bigint, 5::bigint), (2, 0, NULL, NULL)$$,
                  'parallel edges undirected, travelled backwards: edge 5');
-- A reverse_cost is an arc like any other: edge 3 (2->1 at 4, 1->2 at 2) ties with edge 8.
SELECT results_eq($$SELECT node, edge, cost, agg_cost FROM gpu_path(
                      'SELECT * FROM (VALUES (8, 1, 2, 2.0, -1.0), (3, 2, 1, 4.0, 2.0)) AS e(id, source, target, cost, reverse_cost)', 1, 2)$$,
                  $$VALUES (1::bigint, 3::bigint, 2::float8, 0::float8), (2, -1, 0, 2)$$,
                  'a reverse_cost ties with a forward cost: the smaller id, 3');
SELECT results_eq($$SELECT node, edge, cost, agg_cost FROM gpu_path(
                      'SELECT * FROM (VALUES (9, 1, 2, 1.0), (2, 2, 1, 1.0)) AS e(id, source, target, cost)', 1, 2, false)$$,
                  $$VALUES (1::bigint, 2::bigint, 1::float8, 0::float8), (2, -1, 0, 1)$$,
                  'undirected: an edge written the other way round ties; the smaller id, 2');
SELECT results_eq($$SELECT node, edge, cost, agg_cost FROM gpu_path(
                      'SELECT * FROM (VALUES (9, 1, 2, 1.0), (2, 2, 1, 1.0)) AS e(id, source, target, cost)', 1, 2, true)$$,
                  $$VALUES (1::bigint, 9::bigint, 1::float8, 0::float8), (2, -1, 0, 1)$$,
                  'directed: only edge 9 leads from 1 to 2');
-- Two equally short routes 1-2-4 (edges 10, 30) and 1-3-4 (edges 20, 25): into 4 the smallest
-- tight edge id is 25, so the path runs through 3.
SELECT results_eq($$SELECT node, edge, agg_cost FROM gpu_path(
                      'SELECT * FROM (VALUES (10, 1, 2, 1.0), (30, 2, 4, 1.0), (20, 1, 3, 1.0), (25, 3, 4, 1.0)) AS e(id, source, target, cost)', 1, 4)$$,
                  $$VALUES (1::bigint, 20::bigint, 0::float8), (3, 25, 1), (4, -1, 2)$$,
                  'equal routes: the smallest tight edge id into each vertex (25 into 4)');

-- Self loops. ---------------------------------------------------------------------------------
\set loops 'SELECT * FROM (VALUES (1, 1, 1, 0.5), (2, 1, 2, 3.0), (3, 2, 2, 0.0)) AS e(id, source, target, cost)'
SELECT results_eq(format('SELECT node, edge, cost, agg_cost FROM gpu_path(%L, 1, 2)', :'loops'),
                  $$VALUES (1::bigint, 2::bigint, 3::float8, 0::float8), (2, -1, 0, 3)$$,
                  'self loops are never part of a path');
SELECT results_eq(format('SELECT node, distance, predecessor, edge FROM gpu_sssp(%L, 1, false)', :'loops'),
                  $$VALUES (1::bigint, 0::float8, NULL::bigint, NULL::bigint), (2, 3, 1, 2)$$,
                  'self loops (even of cost 0) are never a predecessor');
SELECT results_eq(format('SELECT * FROM gpu_apsp(%L)', :'loops'),
                  $$VALUES (1::bigint, 2::bigint, 3::float8)$$,
                  'self loops add no pair to gpu_apsp');

-- One vertex. ---------------------------------------------------------------------------------
\set one 'SELECT 1 AS id, 7 AS source, 7 AS target, 1.0 AS cost'
SELECT results_eq(format('SELECT node, distance, predecessor, edge FROM gpu_sssp(%L, 7)', :'one'),
                  $$VALUES (7::bigint, 0::float8, NULL::bigint, NULL::bigint)$$,
                  'one vertex: gpu_sssp gives the source alone');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 7, 7)', :'one'), 'one vertex: no path from it to itself');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L)', :'one'), 'one vertex: gpu_apsp is empty');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[7], NULL, false)', :'one'), 'one vertex: the cost matrix is empty');

-- Zero-cost edges and a zero-cost cycle 2 -> 3 -> 2. --------------------------------------------
-- From 1 every vertex but 4 is at distance 0. Into 2 the smallest edge id is 2 (from 3), but 3
-- is itself reached through 2: the predecessors must stay a tree rooted at 1, so 2 comes from 1
-- (edge 5), 3 from 2 (edge 1), 4 from 3 (edge 3).
\set zero 'SELECT * FROM (VALUES (5, 1, 2, 0.0), (1, 2, 3, 0.0), (2, 3, 2, 0.0), (3, 3, 4, 1.0), (4, 4, 1, 0.0)) AS e(id, source, target, cost)'
SELECT results_eq(format('SELECT seq, path_seq, node, edge, cost, agg_cost FROM gpu_path(%L, 1, 4)', :'zero'),
                  $$VALUES (1, 1, 1::bigint, 5::bigint, 0::float8, 0::float8), (2, 2, 2, 1, 0, 0), (3, 3, 3, 3, 1, 0), (4, 4, 4, -1, 0, 1)$$,
                  'zero-cost cycle: the path 1,2,3,4 over edges 5,1,3');
SELECT results_eq(format('SELECT node, distance, predecessor, edge FROM gpu_sssp(%L, 1)', :'zero'),
                  $$VALUES (1::bigint, 0::float8, NULL::bigint, NULL::bigint), (2, 0, 1, 5), (3, 0, 2, 1), (4, 1, 3, 3)$$,
                  'zero-cost cycle: the predecessors are a tree rooted at the source');
SELECT results_eq(format('SELECT node, distance, predecessor, edge FROM gpu_sssp(%L, 1, false)', :'zero'),
                  $$VALUES (1::bigint, 0::float8, NULL::bigint, NULL::bigint), (2, 0, 1, 5), (3, 0, 2, 1), (4, 0, 1, 4)$$,
                  'zero-cost cycle, undirected: 4 is 0 away through edge 4');
SELECT results_eq(format('SELECT * FROM gpu_apsp(%L, ARRAY[2])', :'zero'),
                  $$VALUES (2::bigint, 1::bigint, 1::float8), (2, 3, 0), (2, 4, 1)$$,
                  'zero-cost cycle: costs from 2');
-- A strict arc beats a zero-cost tie: into 2, edge 9 from 1 (2 + 0 < ...) and edge 1 from 3
-- (also 2 away) both reach 2 at cost 2; the one from the nearer vertex wins despite its id.
\set strict 'SELECT * FROM (VALUES (9, 1, 2, 2.0), (1, 3, 2, 0.0), (4, 1, 3, 2.0)) AS e(id, source, target, cost)'
SELECT results_eq(format('SELECT node, edge, agg_cost FROM gpu_path(%L, 1, 2)', :'strict'),
                  $$VALUES (1::bigint, 9::bigint, 0::float8), (2, -1, 2)$$,
                  'zero-cost tie: the arc from a strictly nearer vertex (edge 9), not the smaller id (1)');
SELECT results_eq(format('SELECT node, edge, agg_cost FROM gpu_path(%L, 1, 3, false)', :'strict'),
                  $$VALUES (1::bigint, 4::bigint, 0::float8), (3, -1, 2)$$,
                  'zero-cost tie, undirected: edge 4 into 3');

-- Disconnected parts: {1, 2, 3} and {10, 11}. ---------------------------------------------------
\set parts 'SELECT * FROM (VALUES (1, 1, 2, 1.0, 1.0), (2, 2, 3, 1.0, 1.0), (3, 10, 11, 1.0, 1.0)) AS e(id, source, target, cost, reverse_cost)'
SELECT results_eq(format('SELECT node, distance FROM gpu_sssp(%L, 1)', :'parts'),
                  $$VALUES (1::bigint, 0::float8), (2, 1), (3, 2)$$, 'disconnected: gpu_sssp stays in its part');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[1, 2, 3], ARRAY[10, 11])', :'parts'), 'disconnected: no path between parts');
SELECT results_eq(format('SELECT * FROM gpu_apsp(%L)', :'parts'),
                  $$VALUES (1::bigint, 2::bigint, 1::float8), (1, 3, 2), (2, 1, 1), (2, 3, 1), (3, 1, 2), (3, 2, 1), (10, 11, 1), (11, 10, 1)$$,
                  'disconnected: gpu_apsp pairs only within each part');
SELECT is(
  (SELECT count(*)::int FROM gpu_apsp('SELECT id, source, target, cost, reverse_cost FROM random_sparse_id_edges') a
   WHERE (a.start_vid < 151000000) <> (a.end_vid < 151000000)), 0,
  'disconnected random graph with negative ids: no pair across its two parts');

-- Ids at the ends of bigint: vertices -2^63, 2^63-1 and 0; edge ids 2^63-1 and -2^63. ------------
\set huge 'SELECT * FROM (VALUES (9223372036854775807, -9223372036854775808, 9223372036854775807, 1.5, 2.5), (-9223372036854775808, 9223372036854775807, 0, 1, -1)) AS e(id, source, target, cost, reverse_cost)'
SELECT results_eq(format('SELECT seq, path_seq, node, edge, cost, agg_cost FROM gpu_path(%L, -9223372036854775808, 0)', :'huge'),
                  $$VALUES (1, 1, (-9223372036854775808)::bigint, 9223372036854775807::bigint, 1.5::float8, 0::float8),
                           (2, 2, 9223372036854775807, -9223372036854775808, 1, 1.5), (3, 3, 0, -1, 0, 2.5)$$,
                  'extreme ids: path -2^63 -> 2^63-1 -> 0');
SELECT results_eq(format('SELECT * FROM gpu_sssp(%L, ARRAY[9223372036854775807, -9223372036854775808])', :'huge'),
                  $$VALUES ((-9223372036854775808)::bigint, (-9223372036854775808)::bigint, 0::float8, NULL::bigint, NULL::bigint),
                           (-9223372036854775808, 0, 2.5, 9223372036854775807, -9223372036854775808),
                           (-9223372036854775808, 9223372036854775807, 1.5, -9223372036854775808, 9223372036854775807),
                           (9223372036854775807, -9223372036854775808, 2.5, 9223372036854775807, 9223372036854775807),
                           (9223372036854775807, 0, 1, 9223372036854775807, -9223372036854775808),
                           (9223372036854775807, 9223372036854775807, 0, NULL, NULL)$$,
                  'extreme ids: gpu_sssp from both ends, ordered by source, node');
SELECT results_eq(format('SELECT * FROM gpu_apsp(%L)', :'huge'),
                  $$VALUES ((-9223372036854775808)::bigint, 0::bigint, 2.5::float8), (-9223372036854775808, 9223372036854775807, 1.5),
                           (9223372036854775807, -9223372036854775808, 2.5), (9223372036854775807, 0, 1)$$,
                  'extreme ids: gpu_apsp');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 0, -9223372036854775808)', :'huge'), 'extreme ids: 0 has no way out (one-way edge)');

-- One-way edges: a negative cost or reverse_cost is no edge in that direction. -----------------
-- Edge 1: 2 -> 1 only (cost 3); edge 2: 2 -> 3 only (cost 4).
\set oneway 'SELECT * FROM (VALUES (1, 1, 2, -1.0, 3.0), (2, 2, 3, 4.0, -1.0)) AS e(id, source, target, cost, reverse_cost)'
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 1, 3)', :'oneway'), 'directed: negative cost, no way 1 -> 2');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 3, 2)', :'oneway'), 'directed: negative reverse_cost, no way 3 -> 2');
SELECT results_eq(format('SELECT node, distance FROM gpu_sssp(%L, 2)', :'oneway'),
                  $$VALUES (1::bigint, 3::float8), (2, 0), (3, 4)$$, 'directed: from 2 both one-way edges are usable');
SELECT results_eq(format('SELECT node, edge, cost, agg_cost FROM gpu_path(%L, 1, 3, false)', :'oneway'),
                  $$VALUES (1::bigint, 1::bigint, 3::float8, 0::float8), (2, 2, 4, 3), (3, -1, 0, 7)$$,
                  'undirected: the one usable cost of each edge serves both ways (as pgRouting)');
SELECT results_eq(format('SELECT * FROM gpu_apsp(%L, false)', :'oneway'),
                  $$VALUES (1::bigint, 2::bigint, 3::float8), (1, 3, 7), (2, 1, 3), (2, 3, 4), (3, 1, 7), (3, 2, 4)$$,
                  'undirected: gpu_apsp over one-way edges');

-- Infinity is no edge, NaN an error. ------------------------------------------------------------
SELECT is_empty($$SELECT * FROM gpu_path('SELECT 1 AS id, 1 AS source, 2 AS target, ''Infinity''::float8 AS cost, 5.0 AS reverse_cost', 1, 2)$$,
                'cost Infinity: no edge forwards');
SELECT results_eq($$SELECT node, edge, cost, agg_cost FROM gpu_path('SELECT 1 AS id, 1 AS source, 2 AS target, ''Infinity''::float8 AS cost, 5.0 AS reverse_cost', 2, 1)$$,
                  $$VALUES (2::bigint, 1::bigint, 5::float8, 0::float8), (1, -1, 0, 5)$$, 'cost Infinity: the reverse_cost still serves');
SELECT is_empty($$SELECT * FROM gpu_sssp('SELECT 1 AS id, 1 AS source, 2 AS target, ''Infinity''::numeric AS cost, ''-Infinity''::real AS reverse_cost', 1, false)$$,
                'numeric Infinity and real -Infinity: no edge at all, no vertex');
SELECT throws_ok($$SELECT * FROM gpu_path('SELECT id, source, target, CASE WHEN id = 7 THEN ''NaN'' ELSE cost END::float8 AS cost FROM sample_edges ORDER BY id', 6, 10)$$,
                 '22023', 'column "cost" of edges_sql is NaN in row 7', 'cost NaN: an error naming the column and row');
SELECT throws_ok($$SELECT * FROM gpu_apsp('SELECT source, target, cost, ''NaN''::numeric AS reverse_cost FROM sample_edges')$$,
                 '22023', 'column "reverse_cost" of edges_sql is NaN in row 1', 'reverse_cost NaN (numeric): an error');
SELECT throws_ok($$SELECT * FROM gpu_sssp('SELECT 1 AS id, 1 AS source, 2 AS target, -1 AS cost, ''NaN''::real AS reverse_cost', 1)$$,
                 '22023', 'column "reverse_cost" of edges_sql is NaN in row 1', 'reverse_cost NaN (real), even beside a negative cost: an error');
-- Distances past the largest double are unreachable, never Infinity in a row.
SELECT results_eq($$SELECT node, distance FROM gpu_sssp('SELECT * FROM (VALUES (1, 1, 2, 1e308), (2, 2, 3, 1e308)) AS e(id, source, target, cost)', 1)$$,
                  $$VALUES (1::bigint, 0::float8), (2, 1e308)$$, 'a distance that overflows double is unreachable');

-- start = end, unreachable. -----------------------------------------------------------------------
\set e 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, 6)', :'e'), 'start = end: no rows (one to one)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, ARRAY[6, 10], ARRAY[6, 10], true) WHERE start_vid = end_vid', :'e'), 'start = end: no rows (many to many)');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, %L)', :'e', 'SELECT 6 AS source, 6 AS target'), 'start = end: no rows (combinations)');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[6], ARRAY[6])', :'e'), 'start = end: no row in the cost matrix');
SELECT results_eq(format('SELECT * FROM gpu_path(%L, 6, ARRAY[6, 10])', :'e'), format('SELECT * FROM gpu_path(%L, 6, ARRAY[10])', :'e'),
                  'start among the ends: only the other ends get paths');
SELECT results_eq(format('SELECT node, distance, predecessor, edge FROM gpu_sssp(%L, 6) WHERE node = 6', :'e'),
                  $$VALUES (6::bigint, 0::float8, NULL::bigint, NULL::bigint)$$, 'gpu_sssp: the source row, distance 0, no predecessor');
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 6, 2)', :'e'), 'unreachable (another part): no rows');
-- Without reverse_cost nothing leaves 17 (edges 13 and 15 only enter it).
\set forward 'SELECT id, source, target, cost FROM sample_edges'
SELECT is_empty(format('SELECT * FROM gpu_path(%L, 17, 12)', :'forward'), 'unreachable (edges 13, 15 point into 17): no rows');
SELECT is_empty(format('SELECT * FROM gpu_apsp(%L, ARRAY[17, 2], ARRAY[12, 6])', :'forward'), 'unreachable: no cost matrix rows');
SELECT results_eq(format('SELECT node FROM gpu_sssp(%L, 17)', :'forward'), $$VALUES (17::bigint)$$,
                  'unreachable vertices are not gpu_sssp rows');

-- Duplicate ids in arrays and combinations: merged. ------------------------------------------------
SELECT results_eq(format('SELECT * FROM gpu_path(%L, ARRAY[6, 1, 6], ARRAY[10, 17, 10])', :'e'),
                  format('SELECT * FROM gpu_path(%L, ARRAY[1, 6], ARRAY[10, 17])', :'e'), 'duplicates merged: gpu_path many to many');
SELECT results_eq(format('SELECT * FROM gpu_path(%L, 6, ARRAY[17, 10, 17])', :'e'),
                  format('SELECT * FROM gpu_path(%L, 6, ARRAY[10, 17])', :'e'), 'duplicates merged: gpu_path one to many');
SELECT results_eq(format('SELECT * FROM gpu_path(%L, %L)', :'e', 'SELECT * FROM (VALUES (6, 10), (1, 17), (6, 10)) AS c(source, target)'),
                  format('SELECT * FROM gpu_path(%L, %L)', :'e', 'SELECT * FROM (VALUES (1, 17), (6, 10)) AS c(source, target)'),
                  'duplicates merged: gpu_path combinations, ordered by start, end');
SELECT results_eq(format('SELECT * FROM gpu_sssp(%L, ARRAY[6, 6, 1])', :'e'),
                  format('SELECT * FROM gpu_sssp(%L, ARRAY[1, 6])', :'e'), 'duplicates merged: gpu_sssp');
SELECT results_eq(format('SELECT * FROM gpu_apsp(%L, ARRAY[6, 6], ARRAY[10, 10, 17])', :'e'),
                  $$VALUES (6::bigint, 10::bigint, 5::float8), (6, 17, 4)$$, 'duplicates merged: gpu_apsp cost matrix');

-- Directed against undirected on pgRouting's sample network (its documented 6 -> 10). --------------
SELECT results_eq(format('SELECT node, edge, cost, agg_cost FROM gpu_path(%L, 6, 10)', :'e'),
                  $$VALUES (6::bigint, 4::bigint, 1::float8, 0::float8), (7, 8, 1, 1), (11, 9, 1, 2), (16, 16, 1, 3), (15, 3, 1, 4), (10, -1, 0, 5)$$,
                  'directed 6 -> 10: 6,7,11,16,15,10 over edges 4,8,9,16,3, agg_cost 5');
SELECT results_eq(format('SELECT node, edge, cost, agg_cost FROM gpu_path(%L, 6, 10, false)', :'e'),
                  $$VALUES (6::bigint, 2::bigint, 1::float8, 0::float8), (10, -1, 0, 1)$$,
                  'undirected 6 -> 10: edge 2 (reverse_cost 1, cost -1) serves both ways');
SELECT results_eq(format('SELECT start_vid, end_vid, agg_cost FROM gpu_apsp(%L, ARRAY[10], ARRAY[6, 12])', :'e'),
                  $$VALUES (10::bigint, 6::bigint, 1::float8), (10, 12, 2)$$, 'directed 10 -> 6 (edge 2 backwards) and 10 -> 12');
SELECT results_eq(format('SELECT start_vid, end_vid, agg_cost FROM gpu_apsp(%L, ARRAY[12], ARRAY[8, 11], false)', :'e'),
                  $$VALUES (12::bigint, 8::bigint, 1::float8), (12, 11, 1)$$, 'undirected 12 -> 8 and 12 -> 11 against one-way edges 11, 12');
SELECT results_eq(format('SELECT start_vid, end_vid, agg_cost FROM gpu_apsp(%L, ARRAY[12], ARRAY[8, 11])', :'e'),
                  $$VALUES (12::bigint, 8::bigint, 5::float8), (12, 11, 3)$$, 'directed 12 -> 8 and 12 -> 11: the long way round through 17, 16');

SELECT * FROM finish();
ROLLBACK;

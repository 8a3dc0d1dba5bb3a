-- The schema gpu_pgr: pgRouting 3.4's names answered by gpu_routing, checked against pgRouting
-- 3.4 itself (public.pgr_*, installed on the same server). Every call below is written once,
-- unqualified, and run twice with only the search_path changed: `gpu_pgr, public` (gpu_routing)
-- and `public` (pgRouting), as a user switching would. Nothing here holds an answer: each line
-- counts the rows of one side missing from the other.
--   rows          pgRouting's row count
--   same_rows     every row equal, its position too (EXCEPT ALL over (position, row) both ways)
--   same_costs    the costs equal, in order: for paths, each path's final row (start_vid,
--                 end_vid, agg_cost) in order of the paths; for service areas, every row but the
--                 edge that reaches the node and its cost; otherwise the rows themselves
--   loose_edges   path rows of gpu_pgr whose edge does not join the row's node to the next
--                 row's node at the row's cost (in an allowed direction), or whose agg_cost does
--                 not add up: 0 means every path is a real path, and with same_costs a shortest one
-- Where shortest paths tie (the sample network's unit costs), the path may differ from
-- pgRouting's (same_rows false) while its cost equals it: the documented tie rule. On the graphs
-- with unique shortest paths (costs made unique by a distinct binary fraction per edge and
-- direction, added exactly) every row is equal.
SET client_min_messages = warning;
-- pgr_drivingDistance runs on the CPU whatever the session's device (gpu_driving_distance refuses
-- device = gpu, which the GPU suite sets): every call here runs under auto, the GPU where auto
-- takes it.
SET gpu_routing.device = auto;
-- The schema is there (without it, `gpu_pgr, public` would quietly mean pgRouting on both sides:
-- compare() refuses to run then).
SELECT count(*) AS gpu_pgr_functions FROM pg_proc WHERE pronamespace = to_regnamespace('gpu_pgr');

-- A call run under a search_path: its rows as jsonb, each with its position n.
CREATE FUNCTION pg_temp.answer(query text, path text) RETURNS SETOF jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('search_path', path, true);
  RETURN QUERY EXECUTE format(
    'SELECT to_jsonb(q) || jsonb_build_object(''n'', row_number() OVER ()) FROM (%s) AS q', query);
END
$$;

-- Runs `query` through gpu_pgr and through pgRouting and compares the answers (see above).
-- arcs: a query returning id, source, target, cost, reverse_cost of the graph, for loose_edges
-- (NULL: not checked); directed: the call's direction; reference: the call pgRouting answers
-- (NULL: the same call). pgr_bdDijkstra and pgr_bdDijkstraCost are compared with pgRouting's
-- pgr_dijkstra and pgr_dijkstraCost: pgRouting 3.4's bidirectional search sometimes returns a
-- longer path than the shortest (pgRouting issue 3145; counted below), gpu_pgr the shortest.
CREATE FUNCTION pg_temp.compare(query text, arcs text DEFAULT NULL, directed boolean DEFAULT true,
    reference text DEFAULT NULL, OUT rows bigint, OUT same_rows boolean, OUT same_costs boolean, OUT loose_edges bigint)
LANGUAGE plpgsql AS $$
DECLARE
  is_path boolean;
  is_area boolean;
BEGIN
  IF to_regnamespace('gpu_pgr') IS NULL THEN
    RAISE EXCEPTION 'the schema gpu_pgr is missing: is the gpu_routing installed the one of this tree?';
  END IF;
  DROP TABLE IF EXISTS pg_temp.gpu_answer, pg_temp.pgr_answer;
  CREATE TEMP TABLE gpu_answer AS SELECT a AS r FROM pg_temp.answer(query, 'gpu_pgr, public') a;
  CREATE TEMP TABLE pgr_answer AS SELECT a AS r FROM pg_temp.answer(coalesce(reference, query), 'public') a;
  PERFORM set_config('search_path', 'public', true);
  SELECT count(*) INTO rows FROM pgr_answer;
  SELECT NOT EXISTS (SELECT r FROM gpu_answer EXCEPT ALL SELECT r FROM pgr_answer)
     AND NOT EXISTS (SELECT r FROM pgr_answer EXCEPT ALL SELECT r FROM gpu_answer) INTO same_rows;
  SELECT bool_or(r ? 'path_seq'), bool_or(r ? 'edge' AND NOT r ? 'path_seq') INTO is_path, is_area
  FROM (SELECT r FROM pgr_answer UNION ALL SELECT r FROM gpu_answer) a;
  IF is_path THEN
    -- Each path's last row, numbered in order.
    CREATE TEMP VIEW gpu_costs AS SELECT (r - '{seq,path_seq,node,edge,cost,n}'::text[])
      || jsonb_build_object('k', row_number() OVER (ORDER BY (r->>'n')::bigint)) AS c FROM gpu_answer WHERE (r->>'edge')::bigint = -1;
    CREATE TEMP VIEW pgr_costs AS SELECT (r - '{seq,path_seq,node,edge,cost,n}'::text[])
      || jsonb_build_object('k', row_number() OVER (ORDER BY (r->>'n')::bigint)) AS c FROM pgr_answer WHERE (r->>'edge')::bigint = -1;
  ELSIF is_area THEN
    CREATE TEMP VIEW gpu_costs AS SELECT r - '{edge,cost}'::text[] AS c FROM gpu_answer;
    CREATE TEMP VIEW pgr_costs AS SELECT r - '{edge,cost}'::text[] AS c FROM pgr_answer;
  ELSE
    CREATE TEMP VIEW gpu_costs AS SELECT r AS c FROM gpu_answer;
    CREATE TEMP VIEW pgr_costs AS SELECT r AS c FROM pgr_answer;
  END IF;
  SELECT NOT EXISTS (SELECT c FROM gpu_costs EXCEPT ALL SELECT c FROM pgr_costs)
     AND NOT EXISTS (SELECT c FROM pgr_costs EXCEPT ALL SELECT c FROM gpu_costs) INTO same_costs;
  DROP VIEW gpu_costs, pgr_costs;
  IF is_path AND arcs IS NOT NULL THEN
    EXECUTE format($q$
      WITH step AS (
        SELECT (r->>'node')::bigint AS node, (r->>'edge')::bigint AS edge, (r->>'cost')::float8 AS cost,
               (r->>'agg_cost')::float8 AS agg_cost,
               (lead(r) OVER (ORDER BY (r->>'n')::bigint)->>'node')::bigint AS next_node,
               (lead(r) OVER (ORDER BY (r->>'n')::bigint)->>'agg_cost')::float8 AS next_agg_cost
        FROM gpu_answer)
      SELECT count(*) FROM step s
      WHERE s.edge <> -1 AND (s.next_agg_cost IS DISTINCT FROM s.agg_cost + s.cost OR NOT EXISTS (
        SELECT 1 FROM (%s) AS a
        WHERE a.id = s.edge AND (
             (a.source = s.node AND a.target = s.next_node AND a.cost >= 0 AND s.cost = a.cost)
          OR (a.target = s.node AND a.source = s.next_node AND a.reverse_cost >= 0 AND s.cost = a.reverse_cost)
          OR (NOT %L AND a.target = s.node AND a.source = s.next_node AND a.cost >= 0 AND s.cost = a.cost)
          OR (NOT %L AND a.source = s.node AND a.target = s.next_node AND a.reverse_cost >= 0 AND s.cost = a.reverse_cost))))
      $q$, arcs, directed, directed) INTO loose_edges;
  END IF;
END
$$;

-- The graphs: the sample network (ties everywhere: unit costs), with and without reverse_cost;
-- the same with unique shortest paths; Rome (3353 vertices, whole metres) and Rome with unique
-- shortest paths; Rome's vertices 1 to 300 for the all-pairs functions.
CREATE TEMP VIEW sample_unique AS
SELECT id, source, target,
       CASE WHEN cost < 0 THEN cost ELSE cost + 2 ^ (-2 * id) END AS cost,
       CASE WHEN reverse_cost < 0 THEN reverse_cost ELSE reverse_cost + 2 ^ (-2 * id - 1) END AS reverse_cost
FROM sample_edges;
CREATE TEMP VIEW rome_unique AS
SELECT id, source, target, cost + ((id * 7919) % 1021 + 1) / 2048.0 AS cost FROM rome_edges;

CREATE TEMP TABLE graphs (name text, edges text, arcs text, start text, starts text, end_ text,
                          ends text, pairs text, distance text, vids text);
INSERT INTO graphs VALUES
  ('sample', 'SELECT id, source, target, cost, reverse_cost FROM sample_edges',
   'SELECT id, source, target, cost, reverse_cost FROM sample_edges',
   '6', 'ARRAY[6, 1, 12, 6]', '10', 'ARRAY[10, 17, 7, 6, 99]',
   'SELECT * FROM (VALUES (6, 10), (6, 10), (7, 12), (12, 7), (3, 3), (6, 99), (1, 2), (10, 6)) AS p(source, target)',
   '2.5', 'ARRAY[5, 6, 10, 15, 1, 99]'),
  ('sample, cost only', 'SELECT id, source, target, cost FROM sample_edges',
   'SELECT id, source, target, cost, -1 AS reverse_cost FROM sample_edges',
   '12', 'ARRAY[12, 7, 1]', '7', 'ARRAY[7, 17, 10]',
   'SELECT * FROM (VALUES (6, 10), (6, 7), (12, 10), (12, 7)) AS c(source, target)',
   '3.0', 'ARRAY[5, 6, 7, 12, 17]'),
  ('sample, unique paths', 'SELECT id, source, target, cost, reverse_cost FROM sample_unique',
   'SELECT id, source, target, cost, reverse_cost FROM sample_unique',
   '6', 'ARRAY[6, 1, 12, 6, 7, 10, 15]', '17', 'ARRAY[10, 17, 7, 6, 15, 99]',
   'SELECT * FROM (VALUES (6, 10), (6, 17), (7, 12), (12, 7), (3, 3), (6, 99), (1, 2), (10, 6), (15, 7)) AS p(source, target)',
   '2.5', 'ARRAY[5, 6, 10, 15, 1, 17]'),
  ('Rome', 'SELECT id, source, target, cost FROM rome_edges',
   'SELECT id, source, target, cost, -1 AS reverse_cost FROM rome_edges',
   '1', 'ARRAY[1, 1000, 3000]', '2500', 'ARRAY[2500, 17, 3353]',
   'SELECT 1 + (i * 7919) % 3353 AS source, 1 + (i * 104729) % 3353 AS target FROM generate_series(1, 20) i',
   '3000', 'ARRAY[1, 17, 1000, 2500, 3000, 3353]'),
  ('Rome, unique paths', 'SELECT id, source, target, cost FROM rome_unique',
   'SELECT id, source, target, cost, -1 AS reverse_cost FROM rome_unique',
   '1', 'ARRAY[1, 1000, 3000]', '2500', 'ARRAY[2500, 17, 3353]',
   'SELECT 1 + (i * 7919) % 3353 AS source, 1 + (i * 104729) % 3353 AS target FROM generate_series(1, 20) i',
   '3000.5', 'ARRAY[1, 17, 1000, 2500, 3000, 3353]');

-- Every shape of every function: %1$s edges, %2$s directed, %3$s start, %4$s starts, %5$s end,
-- %6$s ends, %7$s pairs, %8$s distance, %9$s vids.
CREATE TEMP TABLE shapes (fn text, shape text, call text);
INSERT INTO shapes
SELECT f, s.shape, replace(s.call, 'FN', f)
FROM unnest(ARRAY['pgr_dijkstra', 'pgr_bdDijkstra', 'pgr_dijkstraCost', 'pgr_bdDijkstraCost']) AS f,
     (VALUES ('one to one', 'SELECT * FROM FN(%1$L, %3$s, %5$s, %2$s)'),
             ('one to many', 'SELECT * FROM FN(%1$L, %3$s, %6$s, %2$s)'),
             ('many to one', 'SELECT * FROM FN(%1$L, %4$s, %5$s, %2$s)'),
             ('many to many', 'SELECT * FROM FN(%1$L, %4$s, %6$s, %2$s)'),
             ('combinations', 'SELECT * FROM FN(%1$L, %7$L, %2$s)')) AS s(shape, call);
INSERT INTO shapes VALUES
  ('pgr_dijkstraCostMatrix', 'vids', 'SELECT * FROM pgr_dijkstraCostMatrix(%1$L, %9$s, %2$s)'),
  ('pgr_dijkstraCostMatrix', 'vids, named directed', 'SELECT * FROM pgr_dijkstraCostMatrix(%1$L, %9$s, directed => %2$s)'),
  ('pgr_drivingDistance', 'one start', 'SELECT * FROM pgr_drivingDistance(%1$L, %3$s, %8$s, %2$s)'),
  ('pgr_drivingDistance', 'many starts', 'SELECT * FROM pgr_drivingDistance(%1$L, %4$s, %8$s, %2$s)'),
  ('pgr_drivingDistance', 'many starts, equicost', 'SELECT * FROM pgr_drivingDistance(%1$L, %4$s, %8$s, %2$s, equicost => true)');

CREATE TEMP TABLE results AS
SELECT g.name AS graph, s.fn, s.shape, d.directed, c.*
FROM graphs g, shapes s, (VALUES (true), (false)) AS d(directed),
     LATERAL pg_temp.compare(format(s.call, g.edges, d.directed::text, g.start, g.starts, g.end_, g.ends, g.pairs,
                                    g.distance, g.vids), g.arcs, d.directed,
                             CASE WHEN s.fn LIKE 'pgr_bd%' THEN
                               format(replace(s.call, 'pgr_bdDijkstra', 'pgr_dijkstra'), g.edges, d.directed::text, g.start,
                                      g.starts, g.end_, g.ends, g.pairs, g.distance, g.vids) END) AS c;
SET search_path = public;
SELECT graph, fn, shape, directed, rows, same_rows, same_costs, loose_edges
FROM results ORDER BY graph, fn, shape, directed DESC;
-- Summary: every call's costs are pgRouting's; every row is where paths cannot tie.
SELECT count(*) AS calls, count(*) FILTER (WHERE NOT same_costs) AS different_costs,
       count(*) FILTER (WHERE NOT same_rows AND graph LIKE '%unique%') AS different_rows_unique_paths,
       sum(loose_edges) AS loose_edges, count(*) FILTER (WHERE rows = 0) AS empty_answers
FROM results;

-- pgRouting's own pgr_bdDijkstraCost against its pgr_dijkstraCost on the same calls: never
-- shorter; longer where its bidirectional search stops early (pgRouting issue 3145), where
-- gpu_pgr's answer is the shortest, as pgr_dijkstraCost's.
SELECT g.name AS graph, d.directed, count(*) AS pairs,
       count(*) FILTER (WHERE bd.agg_cost < dj.agg_cost) AS shorter,
       count(*) FILTER (WHERE bd.agg_cost > dj.agg_cost) AS longer
FROM graphs g, (VALUES (true), (false)) AS d(directed),
     LATERAL pgr_dijkstraCost(g.edges, g.pairs, d.directed) AS dj
     JOIN LATERAL pgr_bdDijkstraCost(g.edges, g.pairs, d.directed) AS bd USING (start_vid, end_vid)
GROUP BY 1, 2 ORDER BY 1, 2 DESC;

-- All pairs: pgr_johnson and pgr_floydWarshall, rows and their order, on the sample network
-- (with and without reverse_cost, an edge both of whose costs are negative, vertices in no usable
-- edge) and on Rome's vertices 1 to 300.
CREATE TEMP TABLE apsp_results AS
SELECT e.name AS graph, f.fn, d.directed,
       (pg_temp.compare(format('SELECT * FROM %s(%L, %s)', f.fn, e.edges, d.directed::text))).*
FROM (VALUES ('sample', 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'),
             ('sample, cost only', 'SELECT id, source, target, cost FROM sample_edges'),
             ('sample, edge 2 with no cost', 'SELECT id, source, target, CASE WHEN id = 2 THEN -1 ELSE cost END AS cost, reverse_cost * CASE WHEN id = 2 THEN -1 ELSE 1 END AS reverse_cost FROM sample_edges ORDER BY id DESC'),
             ('Rome 1 to 300', 'SELECT id, source, target, cost FROM rome_edges WHERE source <= 300 AND target <= 300')) AS e(name, edges),
     (VALUES ('pgr_johnson'), ('pgr_floydWarshall')) AS f(fn), (VALUES (true), (false)) AS d(directed);
SET search_path = public;
SELECT graph, fn, directed, rows, same_rows FROM apsp_results ORDER BY graph, fn, directed DESC;

-- pgr_aStar and pgr_aStarCost. heuristic 0 is Dijkstra's search: every shape answered. With a
-- heuristic, answered where it cannot change the answer: one target per search, every edge the
-- search can reach at least factor * epsilon times its length in the heuristic's measure (edges 17
-- and 18 cost 1 for a length of 1.5 and 1.7, each in a part of the sample network of its own; all
-- others cost 1 for a length of 1): the sample network without them, and with them (refused only
-- for a call in their part).
\set xy 'SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM sample_edges'
\set xy_short 'SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM sample_edges WHERE id < 17'
\set xy_unique 'SELECT u.*, x1, y1, x2, y2 FROM sample_unique u JOIN sample_edges USING (id)'
CREATE TEMP TABLE astar_calls (label text, call text, arcs text, directed boolean, reference text);
INSERT INTO astar_calls
SELECT f || ', ' || s.label || CASE WHEN e = :'xy_unique' THEN ', unique paths' ELSE '' END || ', heuristic 0'
         || CASE WHEN d THEN '' ELSE ', undirected' END,
       format(s.call, f, quote_literal(e), d::text, ', heuristic => 0'), e, d,
       format(s.call, replace(f, 'aStar', 'dijkstra'), quote_literal(e), d::text, '')
FROM unnest(ARRAY['pgr_aStar', 'pgr_aStarCost']) AS f, (VALUES (:'xy'), (:'xy_unique')) AS g(e),
     (VALUES (true), (false)) AS dd(d),
     LATERAL (VALUES ('one to one', 'SELECT * FROM %s(%s, 6, 17, %s%s)'),
                     ('one to many', 'SELECT * FROM %s(%s, 6, ARRAY[10, 17, 6], %s%s)'),
                     ('many to one', 'SELECT * FROM %s(%s, ARRAY[6, 1, 12], 17, %s%s)'),
                     ('many to many', 'SELECT * FROM %s(%s, ARRAY[6, 1, 12], ARRAY[10, 17, 7], %s%s)'),
                     ('combinations', 'SELECT * FROM %s(%s, ''SELECT * FROM (VALUES (6, 10), (6, 7), (12, 10)) AS c(source, target)'', %s%s)')) AS s(label, call)
WHERE e = :'xy_unique' OR f = 'pgr_aStar';
INSERT INTO astar_calls
SELECT format('%s, %s to %s, heuristic %s, factor %s', f, s, t, h, fa) || CASE WHEN d THEN '' ELSE ', undirected' END,
       format('SELECT * FROM %s(%L, %s, %s, %s, heuristic => %s, factor => %s)', f, :'xy_short', s, t, d::text, h, fa),
       :'xy_short', d,
       format('SELECT * FROM %s(%L, %s, %s, %s)', replace(f, 'aStar', 'dijkstra'), :'xy_short', s, t, d::text)
FROM unnest(ARRAY['pgr_aStar', 'pgr_aStarCost']) AS f, unnest(ARRAY[1, 2, 4, 5]) AS h,
     (VALUES (6, 17), (12, 1), (1, 15)) AS p(s, t), unnest(ARRAY[1.0, 0.5]) AS fa, (VALUES (true), (false)) AS dd(d)
WHERE fa = 1.0 OR (h = 4 AND s = 6);
INSERT INTO astar_calls
SELECT format('%s, whole network, %s to %s, heuristic %s', f, s, t, h) || CASE WHEN d THEN '' ELSE ', undirected' END,
       format('SELECT * FROM %s(%L, %s, %s, %s, heuristic => %s)', f, :'xy', s, t, d::text, h), :'xy', d,
       format('SELECT * FROM %s(%L, %s, %s, %s)', replace(f, 'aStar', 'dijkstra'), :'xy', s, t, d::text)
FROM unnest(ARRAY['pgr_aStar', 'pgr_aStarCost']) AS f, unnest(ARRAY[2, 5]) AS h,
     (VALUES (6, 12), (1, 17)) AS p(s, t), (VALUES (true), (false)) AS dd(d);
INSERT INTO astar_calls VALUES
  ('pgr_aStar, many to many, one end per start, heuristic 5',
   format('SELECT * FROM pgr_aStar(%L, ARRAY[6, 1], ARRAY[17], true)', :'xy_short'), :'xy_short', true,
   format('SELECT * FROM pgr_dijkstra(%L, ARRAY[6, 1], ARRAY[17], true)', :'xy_short')),
  ('pgr_aStar, combinations, one target per source, heuristic 5',
   format('SELECT * FROM pgr_aStar(%L, %L, false)', :'xy_short', 'SELECT * FROM (VALUES (6, 17), (12, 1), (6, 6)) AS c(source, target)'), :'xy_short', false,
   format('SELECT * FROM pgr_dijkstra(%L, %L, false)', :'xy_short', 'SELECT * FROM (VALUES (6, 17), (12, 1), (6, 6)) AS c(source, target)')),
  ('pgr_aStarCost, many to one, one start, heuristic 5',
   format('SELECT * FROM pgr_aStarCost(%L, ARRAY[6, 6], 17)', :'xy_short'), :'xy_short', true,
   format('SELECT * FROM pgr_dijkstraCost(%L, ARRAY[6, 6], 17)', :'xy_short'));
-- Against pgRouting's pgr_aStar / pgr_aStarCost, then its pgr_dijkstra / pgr_dijkstraCost
-- (costs): on an undirected graph whose edges cost differently each way, pgRouting 3.4's A*
-- returns walks longer than the shortest path (from 6 to 17: 6 -> 6 over edge 4 twice, then on);
-- gpu_pgr's costs are Dijkstra's there too.
CREATE TEMP TABLE astar_results AS
SELECT a.label, c.*, (pg_temp.compare(a.call, NULL, a.directed, a.reference)).same_costs AS dijkstra_costs
FROM astar_calls a, LATERAL pg_temp.compare(a.call, a.arcs, a.directed) AS c;
SET search_path = public;
SELECT label, rows, same_rows, same_costs, loose_edges, dijkstra_costs FROM astar_results ORDER BY label COLLATE "C";

-- Refused, saying why: where pgRouting's heuristic could change the answer.
SET search_path = gpu_pgr, public;
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT * FROM pgr_aStar(:'xy', 2, 4, directed => true, heuristic => 2);
SELECT * FROM pgr_aStar(:'xy_short', 6, 12, heuristic => 3);
SELECT * FROM pgr_aStarCost(:'xy_short', 6, ARRAY[10, 12]);
SELECT * FROM pgr_aStar(:'xy_short', ARRAY[6, 8], 10, false, heuristic => 4);
SELECT * FROM pgr_aStar(:'xy_short', 6, 12, factor => 1.5);
SELECT * FROM pgr_aStar(:'xy_short', 6, 12, epsilon => 2);
SELECT * FROM pgr_aStarCost(:'xy_short', 'SELECT * FROM (VALUES (6, 10), (6, 12)) AS c(source, target)');
SELECT * FROM pgr_aStar('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM sample_edges WHERE id < 17
                         UNION ALL SELECT 99, 6, 7, 1, 1, 2, 1, 2.5, 2', 6, 12, heuristic => 1);
SELECT * FROM pgr_aStar('graph:no_such_graph', 6, 12);

-- Bad input: the conditions pgRouting refuses, refused, naming the argument. pgRouting's own
-- message first (public), then gpu_pgr's.
\set VERBOSITY terse
SET search_path = public;
SELECT * FROM pgr_dijkstra(:'xy', ARRAY[]::bigint[], 10);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_dijkstra(:'xy', ARRAY[]::bigint[], 10);
SET search_path = public;
SELECT * FROM pgr_dijkstraCost(:'xy', ARRAY[6, NULL], ARRAY[10]);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_dijkstraCost(:'xy', ARRAY[6, NULL], ARRAY[10]);
SET search_path = public;
SELECT * FROM pgr_dijkstra(:'xy', 6, ARRAY[[10, 11], [12, 7]]);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_dijkstra(:'xy', 6, ARRAY[[10, 11], [12, 7]]);
SET search_path = public;
SELECT * FROM pgr_dijkstraCostMatrix(:'xy', ARRAY[6, 10]::numeric[]);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_dijkstraCostMatrix(:'xy', ARRAY[6, 10]::numeric[]);
SET search_path = public;
SELECT * FROM pgr_drivingDistance(:'xy', ARRAY[6.5], 3.0);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_drivingDistance(:'xy', ARRAY[6.5], 3.0);
SET search_path = public;
SELECT * FROM pgr_aStar(:'xy', 6, 12, heuristic => 6);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_aStar(:'xy', 6, 12, heuristic => 6);
SET search_path = public;
SELECT * FROM pgr_aStar(:'xy', 6, 12, factor => 0);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_aStar(:'xy', 6, 12, factor => 0);
SET search_path = public;
SELECT * FROM pgr_aStarCost(:'xy', 6, 12, epsilon => 0.5);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_aStarCost(:'xy', 6, 12, epsilon => 0.5);
SET search_path = public;
SELECT * FROM pgr_aStar('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6, 12);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_aStar('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6, 12);
SET search_path = public;
SELECT * FROM pgr_dijkstra('SELECT id, source, target FROM sample_edges', 6, 12);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_dijkstra('SELECT id, source, target FROM sample_edges', 6, 12);
SET search_path = public;
SELECT * FROM pgr_dijkstra('SELECT id, source, target, cost::text AS cost FROM sample_edges', 6, 12);
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_dijkstra('SELECT id, source, target, cost::text AS cost FROM sample_edges', 6, 12);
SET search_path = public;
SELECT * FROM pgr_dijkstra(:'xy', 'SELECT 6 AS source');
SET search_path = gpu_pgr, public;
SELECT * FROM pgr_dijkstra(:'xy', 'SELECT 6 AS source');
-- NULL arguments: no rows, as pgRouting's STRICT functions.
SELECT count(*) FROM pgr_dijkstra(:'xy', 6, NULL::bigint);
SELECT count(*) FROM pgr_drivingDistance(:'xy', 6, NULL);
SELECT count(*) FROM pgr_johnson(NULL);
-- Text ids, cast as pgRouting casts them ($2::BIGINT[]).
SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstraCost(:'xy', ARRAY['6', '7'], ARRAY['10']);
RESET search_path;

-- Names resolve to gpu_pgr under SET search_path = gpu_pgr, public, and to pgRouting without it.
SET search_path = gpu_pgr, public;
SELECT 'pgr_dijkstra(text,bigint,anyarray,boolean)'::regprocedure::oid::regproc::text AS resolved,
       (SELECT pronamespace::regnamespace FROM pg_proc
        WHERE oid = 'pgr_drivingDistance(text,bigint,double precision,boolean)'::regprocedure) AS resolved_dd;
SET search_path = public;
SELECT 'pgr_dijkstra(text,bigint,anyarray,boolean)'::regprocedure::oid::regproc::text AS resolved,
       (SELECT pronamespace::regnamespace FROM pg_proc
        WHERE oid = 'pgr_drivingDistance(text,bigint,double precision,boolean)'::regprocedure) AS resolved_dd;
RESET search_path;

-- Queries given as the names of prepared statements, as pgRouting takes them (pgr_johnson and
-- pgr_aStar read the statement's text themselves, for the row order and the heuristic's checks).
PREPARE pgr_edges AS SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM sample_edges;
PREPARE pgr_pairs AS SELECT * FROM (VALUES (6, 10), (12, 7)) AS c(source, target);
SELECT label, (pg_temp.compare(call)).* FROM (VALUES
  ('pgr_dijkstra, combinations', $$SELECT * FROM pgr_dijkstra('pgr_edges', 'pgr_pairs')$$),
  ('pgr_johnson', $$SELECT * FROM pgr_johnson('pgr_edges')$$),
  ('pgr_floydWarshall', $$SELECT * FROM pgr_floydWarshall('pgr_edges', false)$$),
  ('pgr_aStarCost, heuristic 5', $$SELECT * FROM pgr_aStarCost('pgr_edges', 6, 12)$$),
  ('pgr_drivingDistance', $$SELECT * FROM pgr_drivingDistance('pgr_edges', ARRAY[11, 16], 3.0)$$)) AS c(label, call);
SET search_path = public;
DEALLOCATE ALL;

-- Kept graphs served by text match: a graph registered with the very text pgRouting code sends
-- serves the gpu_pgr call (the last run names it); 'graph:NAME' works as edges_sql too.
SELECT gpu_graph_create('pgr_sample', 'SELECT id, source, target, cost, reverse_cost FROM sample_edges') IS NOT NULL AS created;
SET search_path = gpu_pgr, public;
SELECT count(*) FROM pgr_dijkstra('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 6, 10);
SELECT function, graph FROM gpu_routing_last_run();
SELECT count(*) FROM pgr_drivingDistance('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 11, 3.0);
SELECT function, graph FROM gpu_routing_last_run();
SELECT * FROM pgr_dijkstraCostMatrix('SELECT id, source, target, cost, reverse_cost FROM sample_edges', ARRAY[5, 6, 10]);
SELECT function, graph FROM gpu_routing_last_run();
SELECT count(*) FROM pgr_johnson('graph:pgr_sample');
SELECT (SELECT count(*) FROM pgr_johnson('graph:pgr_sample')) = (SELECT count(*) FROM public.pgr_johnson('SELECT id, source, target, cost, reverse_cost FROM sample_edges')) AS same_count;
RESET search_path;
SELECT gpu_graph_drop('pgr_sample');

-- pgRouting's documentation queries (docs.pgrouting.org/3.4, the sample network), written as
-- the documentation writes them (its tables `edges`, `vertices` and `combinations` are views and
-- a table here), run through gpu_pgr and through pgRouting. Ties are shown as in the calls
-- above (same_rows false, same_costs true, no loose edge).
CREATE TEMP VIEW edges AS SELECT * FROM sample_edges;
CREATE TEMP VIEW vertices AS SELECT DISTINCT source AS id FROM sample_edges UNION SELECT target FROM sample_edges;
CREATE TEMP TABLE combinations (source bigint, target bigint);
INSERT INTO combinations VALUES (5, 6), (5, 10), (6, 5), (6, 15), (6, 14);
CREATE TEMP TABLE doc_queries (label text, query text, directed boolean DEFAULT true);
-- pgr_dijkstra, pgr_bdDijkstra, pgr_dijkstraCost, pgr_bdDijkstraCost: q2 to q8, the same calls.
INSERT INTO doc_queries
SELECT f || ' ' || q.label, format(q.query, f), q.directed
FROM unnest(ARRAY['pgr_dijkstra', 'pgr_bdDijkstra', 'pgr_dijkstraCost', 'pgr_bdDijkstraCost']) AS f,
     (VALUES ('q2', $q$SELECT * FROM %s('select id, source, target, cost, reverse_cost from edges', 6, 10, true)$q$, true),
             ('q3', $q$SELECT * FROM %s('select id, source, target, cost, reverse_cost from edges', 6, ARRAY[10, 17])$q$, true),
             ('q4', $q$SELECT * FROM %s('select id, source, target, cost, reverse_cost from edges', ARRAY[6, 1], 17)$q$, true),
             ('q5', $q$SELECT * FROM %s('select id, source, target, cost, reverse_cost from edges', ARRAY[6, 1], ARRAY[10, 17], directed => false)$q$, false),
             ('q52', $q$SELECT * FROM %s('SELECT id, source, target, cost, reverse_cost FROM edges', 'SELECT source, target FROM combinations', false)$q$, false),
             ('q6', $q$SELECT * FROM %s('select id, source, target, cost, reverse_cost from edges', ARRAY[7, 10, 15, 10, 10, 15], ARRAY[10, 7, 10, 15])$q$, true),
             ('q7', $q$SELECT * FROM %s('select id, source, target, cost, reverse_cost from edges', ARRAY[7, 10, 15], ARRAY[7, 10, 15])$q$, true),
             ('q8', $q$SELECT * FROM %s('SELECT id, source, target, cost, reverse_cost FROM edges', 'SELECT * FROM (VALUES (6, 10), (6, 7), (12, 10)) AS combinations (source, target)')$q$, true)) AS q(label, query, directed);
-- pgr_dijkstra q70 to q137: directed and undirected, with and without reverse_cost.
INSERT INTO doc_queries
SELECT 'pgr_dijkstra q' || b.base || k.suffix,
       format('SELECT * FROM pgr_dijkstra(%L, %s%s)', b.edges, k.args, CASE WHEN b.directed THEN '' ELSE ', false' END), b.directed
FROM (VALUES ('7', 'SELECT id, source, target, cost, reverse_cost FROM edges', true),
             ('9', 'SELECT id, source, target, cost, reverse_cost FROM edges', false),
             ('11', 'SELECT id, source, target, cost FROM edges', true),
             ('13', 'SELECT id, source, target, cost FROM edges', false)) AS b(base, edges, directed),
     (VALUES ('0', '6, 10'), ('1', '6, 7'), ('2', '12, 10'), ('3', '12, 7'), ('4', '6, ARRAY[10, 7]'),
             ('5', 'ARRAY[6, 12], 7'), ('6', 'ARRAY[6, 12], ARRAY[10, 7]'),
             ('7', '''SELECT * FROM (VALUES (6, 10), (6, 7), (12, 10)) AS combinations (source, target)''')) AS k(suffix, args);
UPDATE doc_queries SET label = replace(label, 'q110', 'q11') WHERE label = 'pgr_dijkstra q110';
UPDATE doc_queries SET label = replace(label, 'q130', 'q13') WHERE label = 'pgr_dijkstra q130';
INSERT INTO doc_queries VALUES
  ('pgr_dijkstra q151', $q$SELECT * FROM pgr_dijkstra('SELECT id, source, target, cost, reverse_cost FROM edges', 6, ARRAY[10])$q$, true),
  ('pgr_dijkstra q152', $q$SELECT * FROM pgr_dijkstra('SELECT id, source, target, cost, reverse_cost FROM edges', ARRAY[6], 10)$q$, true),
  ('pgr_dijkstra q153', $q$SELECT * FROM pgr_dijkstra('SELECT id, source, target, cost, reverse_cost FROM edges', ARRAY[6], ARRAY[10])$q$, true),
  ('pgr_dijkstra q154', $q$SELECT * FROM pgr_dijkstra('SELECT id, source, target, cost, reverse_cost FROM edges', 'SELECT * FROM (VALUES(6, 10)) AS combinations (source, target)')$q$, true),
  ('pgr_dijkstraCostMatrix q1', $q$SELECT * FROM pgr_dijkstraCostMatrix('SELECT id, source, target, cost, reverse_cost FROM edges', (SELECT array_agg(id) FROM vertices WHERE id IN (5, 6, 10, 15)), false)$q$, false),
  ('pgr_dijkstraCostMatrix q2 (pgRouting''s pgr_TSP over it)', $q$SELECT * FROM pgr_TSP($$SELECT * FROM pgr_dijkstraCostMatrix('SELECT id, source, target, cost, reverse_cost FROM edges', (SELECT array_agg(id) FROM vertices WHERE id IN (5, 6, 10, 15)), false)$$)$q$, false),
  ('pgr_drivingDistance q5', $q$SELECT * FROM pgr_drivingDistance('SELECT id, source, target, cost, reverse_cost FROM edges', 11, 3.0)$q$, true),
  ('pgr_drivingDistance q6', $q$SELECT * FROM pgr_drivingDistance('SELECT id, source, target, cost, reverse_cost FROM edges', array[11, 16], 3.0, equicost => true)$q$, true),
  ('pgr_drivingDistance q10', $q$SELECT * FROM pgr_drivingDistance('SELECT id, source, target, cost, reverse_cost FROM edges', array[11, 16], 3.0, directed => false)$q$, false),
  ('pgr_aStar q2', $q$SELECT * FROM pgr_aStar('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges', 6, 12, directed => true, heuristic => 2)$q$, true),
  ('pgr_aStarCost q2', $q$SELECT * FROM pgr_aStarCost('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges', 6, 12, directed => true, heuristic => 2)$q$, true),
  ('pgr_johnson q1', $q$SELECT * FROM pgr_johnson('SELECT source, target, cost FROM edges WHERE id < 5') ORDER BY start_vid, end_vid$q$, true),
  ('pgr_floydWarshall q1', $q$SELECT * FROM pgr_floydWarshall('SELECT source, target, cost FROM edges WHERE id < 5') ORDER BY start_vid, end_vid$q$, true);
CREATE TEMP TABLE doc_results AS
SELECT d.label, c.* FROM doc_queries d,
  LATERAL pg_temp.compare(d.query, 'SELECT id, source, target, cost, reverse_cost FROM sample_edges', d.directed,
                          CASE WHEN d.label LIKE 'pgr_bd%' THEN replace(d.query, 'pgr_bdDijkstra', 'pgr_dijkstra') END) AS c;
SET search_path = public;
SELECT label, rows, same_rows, same_costs, loose_edges FROM doc_results ORDER BY label COLLATE "C";
-- The doc queries of pgr_aStar and pgr_aStarCost q3 to q8: a heuristic that could change the
-- answer (3), or several targets per search: refused, each saying why.
SET search_path = gpu_pgr, public;
\set VERBOSITY terse
SELECT * FROM pgr_aStarCost('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges', 6, ARRAY[10, 12], heuristic => 3, factor => 3.5);
SELECT * FROM pgr_aStar('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges', ARRAY[6, 8], 10, false, heuristic => 4);
SELECT * FROM pgr_aStarCost('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges', ARRAY[6, 8], ARRAY[10, 12], factor => 0.5);
SELECT * FROM pgr_aStar('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges', 'SELECT * FROM combinations', factor => 0.5);
SELECT * FROM pgr_aStar('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges', ARRAY[7, 10, 15], ARRAY[7, 10, 15]);
SELECT * FROM pgr_aStarCost('SELECT id, source, target, cost, reverse_cost, x1, y1, x2, y2 FROM edges', 'SELECT * FROM (VALUES (6, 10), (6, 7), (12, 10)) AS combinations (source, target)');
RESET search_path;

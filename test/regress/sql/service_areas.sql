-- gpu_driving_distance: pgr_drivingDistance's service areas (pgRouting 3.4 as the reference, on
-- the same server). Rows, order, costs and agg_costs are compared exactly; the edge of a vertex
-- only where shortest paths do not tie (gpu_routing's predecessor rule picks among tied edges),
-- and every edge is checked to be a tight arc of the vertex's shortest path tree.
-- It runs on the CPU unless gpu_routing.device = gpu (the GPU suite sets gpu by default: the
-- queries below set auto); the GPU's areas are checked against the CPU's at the end.
SET gpu_routing.device = auto;
\set e 'SELECT id, source, target, cost, reverse_cost FROM sample_edges'
SELECT * FROM gpu_driving_distance(:'e', 11, 3.0);
SELECT * FROM gpu_driving_distance(:'e', ARRAY[16, 11, 16, 999], 1.0);
SELECT * FROM gpu_driving_distance(:'e', ARRAY[16, 7], 2.0, equicost => true);
-- A start outside the graph gives its root row; a negative distance nothing; 0 the root alone.
SELECT * FROM gpu_driving_distance(:'e', 999, 3.0);
SELECT count(*) FROM gpu_driving_distance(:'e', 11, -1.0);
SELECT * FROM gpu_driving_distance(:'e', 11, 0);

-- Every start, distance and direction of the sample network against pgRouting.
CREATE TEMP TABLE dd_cases AS
SELECT s, d, dir FROM generate_series(1, 18) s, (VALUES (0.0), (1.0), (2.5), (4.0), (100.0)) v(d),
  (VALUES (true), (false)) w(dir);
SELECT count(*) AS cases,
  sum((SELECT count(*) FROM (
    (SELECT seq, node, cost, agg_cost FROM gpu_driving_distance(:'e', s, d, dir)
     EXCEPT ALL SELECT seq, node, cost, agg_cost FROM pgr_drivingDistance(:'e', s, d, dir))
    UNION ALL
    (SELECT seq, node, cost, agg_cost FROM pgr_drivingDistance(:'e', s, d, dir)
     EXCEPT ALL SELECT seq, node, cost, agg_cost FROM gpu_driving_distance(:'e', s, d, dir))) x)) AS differing_rows
FROM dd_cases;
-- Each edge enters its node from a vertex of the same area that is exactly cost closer to the
-- start (a tight arc): the tree is a shortest path tree even where it differs from pgRouting's.
SELECT count(*) AS loose_edges
FROM dd_cases c, gpu_driving_distance(:'e', c.s, c.d, c.dir) r
WHERE r.edge <> -1 AND NOT EXISTS (
  SELECT 1 FROM sample_edges x, gpu_driving_distance(:'e', c.s, c.d, c.dir) p
  WHERE x.id = r.edge AND p.agg_cost + r.cost = r.agg_cost AND r.cost IN (x.cost, x.reverse_cost)
    AND ((x.source = p.node AND x.target = r.node) OR (x.target = p.node AND x.source = r.node)));
-- Several starts, duplicates, equicost, both directions.
SELECT d, eq, dir, (SELECT count(*) FROM (
    (SELECT seq, from_v, node, cost, agg_cost FROM gpu_driving_distance(:'e', ARRAY[3, 11, 16, 3, 7], d, dir, eq)
     EXCEPT ALL SELECT seq, from_v, node, cost, agg_cost FROM pgr_drivingDistance(:'e', ARRAY[3, 11, 16, 3, 7], d, dir, eq))
    UNION ALL
    (SELECT seq, from_v, node, cost, agg_cost FROM pgr_drivingDistance(:'e', ARRAY[3, 11, 16, 3, 7], d, dir, eq)
     EXCEPT ALL SELECT seq, from_v, node, cost, agg_cost FROM gpu_driving_distance(:'e', ARRAY[3, 11, 16, 3, 7], d, dir, eq))) x) AS differing_rows
FROM (VALUES (0.0), (2.5), (100.0)) v(d), (VALUES (true), (false)) w(eq), (VALUES (true), (false)) z(dir)
ORDER BY 1, 2, 3;

-- Rome (3353 vertices, whole-number costs): areas of growing radius from spread starts; rows and
-- agg_costs as pgRouting's, and the edges equal wherever pgRouting's edge is tight too.
\set r 'SELECT id, source, target, cost FROM rome_edges'
SELECT s, d, (SELECT count(*) FROM gpu_driving_distance(:'r', s, d)) AS area,
  (SELECT count(*) FROM (
    (SELECT seq, node, agg_cost FROM gpu_driving_distance(:'r', s, d)
     EXCEPT ALL SELECT seq, node, agg_cost FROM pgr_drivingDistance(:'r', s, d))
    UNION ALL
    (SELECT seq, node, agg_cost FROM pgr_drivingDistance(:'r', s, d)
     EXCEPT ALL SELECT seq, node, agg_cost FROM gpu_driving_distance(:'r', s, d))) x) AS differing_rows
FROM (VALUES (1), (1000), (3000)) a(s), (VALUES (500.0), (3000.0), (20000.0)) b(d)
ORDER BY 1, 2;
SELECT count(*) AS rows, count(*) FILTER (WHERE g.edge = p.edge) AS same_edge
FROM gpu_driving_distance(:'r', ARRAY[1, 1000, 3000], 5000.0) g
JOIN pgr_drivingDistance(:'r', ARRAY[1, 1000, 3000], 5000.0) p USING (seq, from_v, node);

-- Bad input: what pgRouting refuses, refused with a message naming it.
SELECT * FROM gpu_driving_distance(:'e', ARRAY[]::bigint[], 1.0);
SELECT * FROM gpu_driving_distance(:'e', 11, 'NaN');
-- What ran.
SELECT algorithm, device ~ '^CPU' AS on_cpu, reason FROM gpu_routing_last_run();
SELECT count(*) FROM gpu_driving_distance(:'e', 11, 2.0);
SELECT function, algorithm, reason, sources, rows, rounds, notes FROM gpu_routing_last_run();

-- gpu_routing.device = gpu: whole trees swept on the GPU and cut to the distance there, the rule
-- and the order in the backend. Where a GPU is usable the rows are the CPU's, row for row (one
-- start, several with a duplicate and an id not in the graph, equicost, both directions); where
-- none is, the call is refused as every function under device = gpu is. Either way one line.
CREATE FUNCTION pg_temp.areas_on_the_gpu(e text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  got_state text;
  got_message text;
  differing bigint;
  query text := format($q$
    SELECT 1 AS q, NULL::bigint AS from_v, seq, node, edge, cost, agg_cost FROM gpu_driving_distance(%1$L, 11, 3.0)
    UNION ALL SELECT 2, from_v, seq, node, edge, cost, agg_cost FROM gpu_driving_distance(%1$L, ARRAY[16, 11, 16, 999], 2.0)
    UNION ALL SELECT 3, from_v, seq, node, edge, cost, agg_cost FROM gpu_driving_distance(%1$L, ARRAY[16, 7], 2.0, equicost => true)
    UNION ALL SELECT 4, from_v, seq, node, edge, cost, agg_cost FROM gpu_driving_distance(%1$L, ARRAY[3, 11], 2.5, false)$q$, e);
BEGIN
  PERFORM set_config('gpu_routing.device', 'cpu', true);
  EXECUTE 'CREATE TEMP TABLE areas_cpu AS ' || query;
  PERFORM set_config('gpu_routing.device', 'gpu', true);
  BEGIN
    EXECUTE 'CREATE TEMP TABLE areas_gpu AS ' || query;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS got_state = RETURNED_SQLSTATE, got_message = MESSAGE_TEXT;
  END;
  PERFORM set_config('gpu_routing.device', 'auto', true);
  IF got_state IS NOT NULL THEN
    RETURN CASE WHEN got_state = '55000' AND got_message LIKE 'gpu_routing.device = gpu needs a GPU, but none is usable: %'
                THEN 'the CPU''s rows, or no usable GPU and the usual refusal'
                ELSE got_state || ': ' || got_message END;
  END IF;
  SELECT count(*) INTO differing FROM
    ((TABLE areas_cpu EXCEPT ALL TABLE areas_gpu) UNION ALL (TABLE areas_gpu EXCEPT ALL TABLE areas_cpu)) x;
  RETURN CASE WHEN differing = 0 AND (SELECT count(*) FROM areas_gpu) = (SELECT count(*) FROM areas_cpu)
              THEN 'the CPU''s rows, or no usable GPU and the usual refusal'
              ELSE differing || ' rows differ from the CPU''s' END;
END
$$;
SELECT pg_temp.areas_on_the_gpu(:'e') AS device_gpu;

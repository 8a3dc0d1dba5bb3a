-- equivalence: the same answers as pgRouting 3.4 (pgr_dijkstra in all five shapes,
-- pgr_dijkstraCost, pgr_drivingDistance, pgr_floydWarshall, pgr_johnson) on the sample network,
-- Rome and the random graphs, directed and undirected. edges_sql is ordered by id, so pgRouting
-- meets parallel edges in id order as we do.
--   Unique shortest paths (random_real_edges, random_sparse_id_edges: real weights): whole rows
--   identical, seq and path_seq included.
--   Ties (integer weights: sample, Rome, random_int_edges): the same (start, end, agg_cost); each
--   of our paths valid (consecutive rows joined by the named edge in the right direction with its
--   cost, agg_cost accumulating, the right ends); and each step following our documented tie rule
--   "among tight arcs into a vertex, the smallest edge id", with tightness judged by pgRouting's
--   own distances (pgRouting's heap order on ties differs; that is intended).
BEGIN;
SET LOCAL client_min_messages = warning;

SELECT plan(138);

CREATE TEMP TABLE graphs (name text, edges text, starts bigint[], ends bigint[], unique_paths boolean, ord int);
INSERT INTO graphs VALUES
  ('sample', 'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
   '{6,1,12,17,2}', '{10,17,5,3,4}', false, 1),
  ('rome', 'SELECT id, source, target, cost FROM rome_edges ORDER BY id',
   '{1,500,1000,3000}', '{7,700,2000,3353}', false, 2),
  ('random_int', 'SELECT id, source, target, cost, reverse_cost FROM random_int_edges ORDER BY id',
   '{2,3,50,150,299}', '{7,100,200,250,2}', false, 3),
  ('random_real', 'SELECT id, source, target, cost, reverse_cost FROM random_real_edges ORDER BY id',
   '{1,5,7,9,300}', '{2,3,100,200,399}', true, 4),
  ('random_sparse_id', 'SELECT id, source, target, cost, reverse_cost FROM random_sparse_id_edges ORDER BY id',
   '{-48999997,-45999988,18000204,166000648,277000981}', '{-40999973,55000315,129000537,203000759,314001092}', true, 5);

-- One call of a pgr_dijkstra shape, by gpu_path or pgr_dijkstra. normalized: every shape's rows
-- as (seq, path_seq, start_vid, end_vid, node, edge, cost, agg_cost).
CREATE FUNCTION pg_temp.shape_call(fn text, shape text, edges text, starts bigint[], ends bigint[],
                                   directed boolean, normalized boolean) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  s1 bigint := starts[1];
  t1 bigint := ends[1];
  combinations text := format('SELECT s AS source, t AS target FROM unnest(%L::bigint[], %L::bigint[]) AS u(s, t) '
                              'UNION ALL SELECT t, s FROM unnest(%L::bigint[], %L::bigint[]) AS u(s, t)',
                              starts, ends, starts, ends);
  call text;
  start_col text := 'start_vid';
  end_col text := 'end_vid';
BEGIN
  CASE shape
    WHEN 'one to one' THEN
      call := format('%s(%L, %s, %s, %L::boolean)', fn, edges, s1, t1, directed);
      start_col := s1 || '::bigint'; end_col := t1 || '::bigint';
    WHEN 'one to many' THEN
      call := format('%s(%L, %s, %L::bigint[], %L::boolean)', fn, edges, s1, ends, directed);
      start_col := s1 || '::bigint';
    WHEN 'many to one' THEN
      call := format('%s(%L, %L::bigint[], %s, %L::boolean)', fn, edges, starts, t1, directed);
      end_col := t1 || '::bigint';
    WHEN 'many to many' THEN
      call := format('%s(%L, %L::bigint[], %L::bigint[], %L::boolean)', fn, edges, starts, ends, directed);
    ELSE
      call := format('%s(%L, %L, %L::boolean)', fn, edges, combinations, directed);
  END CASE;
  IF NOT normalized THEN
    RETURN 'SELECT * FROM ' || call;
  END IF;
  RETURN format('SELECT seq, path_seq, %s AS start_vid, %s AS end_vid, node, edge, cost, agg_cost FROM %s',
                start_col, end_col, call);
END
$$;

-- What is wrong with the path rows of paths_sql (normalized columns) over edges_sql: an empty
-- array when nothing. tie_rule: also check each step against the smallest-tight-edge-id rule,
-- with distances from pgr_drivingDistance.
CREATE FUNCTION pg_temp.path_problems(edges_sql text, directed boolean, paths_sql text, tie_rule boolean)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  problems text[] := '{}';
  found text[];
BEGIN
  -- Every usable arc (id, tail, head, cost); reverse_cost may be missing from edges_sql.
  EXECUTE format($q$
    CREATE TEMP TABLE pp_arcs AS
    WITH e AS (
      SELECT (j->>'id')::bigint AS id, (j->>'source')::bigint AS s, (j->>'target')::bigint AS t,
             (j->>'cost')::float8 AS c, coalesce((j->>'reverse_cost')::float8, -1) AS rc
      FROM (SELECT to_jsonb(x) AS j FROM (%s) AS x) AS y)
    SELECT id, s AS tail, t AS head, c AS cost FROM e WHERE c >= 0
    UNION ALL SELECT id, t, s, rc FROM e WHERE rc >= 0
    UNION ALL SELECT id, t, s, c FROM e WHERE NOT %L::boolean AND c >= 0
    UNION ALL SELECT id, s, t, rc FROM e WHERE NOT %L::boolean AND rc >= 0$q$, edges_sql, directed, directed);
  EXECUTE format('CREATE TEMP TABLE pp_rows AS SELECT row_number() OVER () AS rn, p.* FROM (%s) AS p', paths_sql);
  CREATE TEMP TABLE pp_steps AS
    SELECT r.*, row_number() OVER w AS k, lead(node) OVER w AS next_node, lead(agg_cost) OVER w AS next_agg,
           lag(edge) OVER w AS prev_edge, count(*) OVER (PARTITION BY start_vid, end_vid) AS n,
           min(rn) OVER (PARTITION BY start_vid, end_vid) AS first_rn
    FROM pp_rows r WINDOW w AS (PARTITION BY start_vid, end_vid ORDER BY rn);
  -- Statistics, or the planner guesses nested loops over thousands of rows.
  ANALYZE pp_arcs;
  ANALYZE pp_steps;

  SELECT array_agg(x) INTO found FROM (SELECT format('row %s: seq %s', rn, seq) AS x FROM pp_rows WHERE seq <> rn LIMIT 5) q;
  problems := problems || coalesce(found, '{}');
  SELECT array_agg(x) INTO found FROM (
    SELECT format('%s->%s row %s: path_seq %s, expected %s', start_vid, end_vid, rn, path_seq, k) AS x
    FROM pp_steps WHERE path_seq <> k OR rn <> first_rn + k - 1 LIMIT 5) q;
  problems := problems || coalesce(found, '{}');
  SELECT array_agg(x) INTO found FROM (
    SELECT format('%s->%s: starts at %s with agg_cost %s', start_vid, end_vid, node, agg_cost) AS x
    FROM pp_steps WHERE k = 1 AND (node <> start_vid OR agg_cost <> 0) LIMIT 5) q;
  problems := problems || coalesce(found, '{}');
  SELECT array_agg(x) INTO found FROM (
    SELECT format('%s->%s: ends at %s, edge %s, cost %s, %s rows', start_vid, end_vid, node, edge, cost, n) AS x
    FROM pp_steps WHERE (k = n) <> (edge = -1) OR (k = n AND (node <> end_vid OR cost <> 0 OR n < 2)) LIMIT 5) q;
  problems := problems || coalesce(found, '{}');
  SELECT array_agg(x) INTO found FROM (
    SELECT format('%s->%s step %s: %s -(%s, %s)-> %s is no arc, or agg_cost %s + %s <> %s', start_vid, end_vid, k,
                  node, edge, cost, next_node, agg_cost, cost, next_agg) AS x
    FROM pp_steps s
    WHERE k < n AND (next_agg <> agg_cost + cost OR NOT EXISTS (
      SELECT 1 FROM pp_arcs a WHERE a.id = s.edge AND a.tail = s.node AND a.head = s.next_node AND a.cost = s.cost))
    LIMIT 5) q;
  problems := problems || coalesce(found, '{}');

  IF tie_rule THEN
    EXECUTE format('CREATE TEMP TABLE pp_dist AS SELECT from_v AS start_vid, node, agg_cost FROM '
                   'pgr_drivingDistance(%L, (SELECT array_agg(DISTINCT start_vid) FROM pp_rows), 1e300, %L, false)',
                   edges_sql, directed);
    ANALYZE pp_dist;
    -- best: the smallest id among tight arcs into each vertex, from each start.
    SELECT array_agg(x) INTO found FROM (
      WITH best AS (
        SELECT du.start_vid, a.head AS node, min(a.id) AS best
        FROM pp_arcs a
        JOIN pp_dist du ON du.node = a.tail
        JOIN pp_dist dv ON dv.start_vid = du.start_vid AND dv.node = a.head
        WHERE du.agg_cost + a.cost = dv.agg_cost
        GROUP BY 1, 2)
      SELECT format('%s->%s: into %s by edge %s, the rule wants %s', s.start_vid, s.end_vid, s.node, s.prev_edge, m.best) AS x
      FROM pp_steps s LEFT JOIN best m ON m.start_vid = s.start_vid AND m.node = s.node
      WHERE s.k > 1 AND m.best IS DISTINCT FROM s.prev_edge LIMIT 5) q;
    problems := problems || coalesce(found, '{}');
    DROP TABLE pp_dist;
  END IF;
  DROP TABLE pp_arcs, pp_rows, pp_steps;
  RETURN problems;
END
$$;

-- gpu_sssp rows (source, node, distance, predecessor, edge) against the tie rule: the edge into
-- each node is the smallest id among tight arcs, by pgRouting's distances; the predecessor is its
-- other end. An empty array when nothing is wrong.
CREATE FUNCTION pg_temp.tree_problems(edges_sql text, directed boolean, sssp_sql text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  found text[];
BEGIN
  EXECUTE format($q$
    CREATE TEMP TABLE tp_arcs AS
    WITH e AS (
      SELECT (j->>'id')::bigint AS id, (j->>'source')::bigint AS s, (j->>'target')::bigint AS t,
             (j->>'cost')::float8 AS c, coalesce((j->>'reverse_cost')::float8, -1) AS rc
      FROM (SELECT to_jsonb(x) AS j FROM (%s) AS x) AS y)
    SELECT id, s AS tail, t AS head, c AS cost FROM e WHERE c >= 0
    UNION ALL SELECT id, t, s, rc FROM e WHERE rc >= 0
    UNION ALL SELECT id, t, s, c FROM e WHERE NOT %L::boolean AND c >= 0
    UNION ALL SELECT id, s, t, rc FROM e WHERE NOT %L::boolean AND rc >= 0$q$, edges_sql, directed, directed);
  EXECUTE format('CREATE TEMP TABLE tp_tree AS SELECT * FROM (%s) AS t', sssp_sql);
  EXECUTE format('CREATE TEMP TABLE tp_dist AS SELECT from_v AS source, node, agg_cost FROM '
                 'pgr_drivingDistance(%L, (SELECT array_agg(DISTINCT source) FROM tp_tree), 1e300, %L, false)',
                 edges_sql, directed);
  ANALYZE tp_arcs;
  ANALYZE tp_tree;
  ANALYZE tp_dist;
  SELECT array_agg(x) INTO found FROM (
    WITH tight AS (
      SELECT du.source, a.head AS node, a.id, a.tail
      FROM tp_arcs a
      JOIN tp_dist du ON du.node = a.tail
      JOIN tp_dist dv ON dv.source = du.source AND dv.node = a.head
      WHERE du.agg_cost + a.cost = dv.agg_cost),
    best AS (SELECT source, node, min(id) AS best FROM tight GROUP BY 1, 2),
    rule AS (SELECT b.source, b.node, b.best, array_agg(DISTINCT t.tail) AS tails
             FROM best b JOIN tight t ON t.source = b.source AND t.node = b.node AND t.id = b.best
             GROUP BY 1, 2, 3)
    SELECT format('from %s: %s by edge %s from %s, the rule wants edge %s from %s', t.source, t.node, t.edge,
                  t.predecessor, m.best, m.tails) AS x
    FROM tp_tree t LEFT JOIN rule m ON m.source = t.source AND m.node = t.node
    WHERE t.node <> t.source
      AND (m.best IS DISTINCT FROM t.edge OR NOT coalesce(t.predecessor = ANY (m.tails), false))
    LIMIT 5) q;
  DROP TABLE tp_arcs, tp_tree, tp_dist;
  RETURN coalesce(found, '{}');
END
$$;

CREATE FUNCTION pg_temp.equivalence_checks(g graphs, directed boolean) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  label text := g.name || CASE WHEN directed THEN ' directed' ELSE ' undirected' END;
  shape text;
  ours text;
  theirs text;
  dd_one text;
BEGIN
  -- gpu_path against pgr_dijkstra, five shapes.
  FOREACH shape IN ARRAY ARRAY['one to one', 'one to many', 'many to one', 'many to many', 'combinations'] LOOP
    IF g.unique_paths THEN
      RETURN NEXT results_eq(pg_temp.shape_call('gpu_path', shape, g.edges, g.starts, g.ends, directed, false),
                             pg_temp.shape_call('pgr_dijkstra', shape, g.edges, g.starts, g.ends, directed, false),
                             format('%s, %s: the rows of pgr_dijkstra', label, shape));
    ELSE
      ours := pg_temp.shape_call('gpu_path', shape, g.edges, g.starts, g.ends, directed, true);
      theirs := pg_temp.shape_call('pgr_dijkstra', shape, g.edges, g.starts, g.ends, directed, true);
      RETURN NEXT set_eq(format('SELECT start_vid, end_vid, agg_cost FROM (%s) p WHERE edge = -1', ours),
                         format('SELECT start_vid, end_vid, agg_cost FROM (%s) p WHERE edge = -1', theirs),
                         format('%s, %s: the (start, end, agg_cost) of pgr_dijkstra', label, shape));
      RETURN NEXT is(pg_temp.path_problems(g.edges, directed, ours, true), '{}'::text[],
                     format('%s, %s: every path valid and by the tie rule', label, shape));
    END IF;
  END LOOP;

  -- The cost matrix against pgr_dijkstraCost many to many.
  RETURN NEXT set_eq(format('SELECT start_vid, end_vid, agg_cost FROM gpu_apsp(%L, %L::bigint[], %L::bigint[], %L::boolean)',
                            g.edges, g.starts || g.ends, g.ends || g.starts, directed),
                     format('SELECT start_vid, end_vid, agg_cost FROM pgr_dijkstraCost(%L, %L::bigint[], %L::bigint[], %L::boolean)',
                            g.edges, g.starts || g.ends, g.ends || g.starts, directed),
                     format('%s: gpu_apsp cost matrix = pgr_dijkstraCost', label));

  -- gpu_sssp against pgr_drivingDistance without a limit: one source, then many.
  IF g.unique_paths THEN
    RETURN NEXT set_eq(format('SELECT node, coalesce(edge, -1), distance FROM gpu_sssp(%L, %s, %L::boolean)', g.edges, g.starts[1], directed),
                       format('SELECT node, edge, agg_cost FROM pgr_drivingDistance(%L, %s, 1e300, %L::boolean)', g.edges, g.starts[1], directed),
                       format('%s: gpu_sssp one source = pgr_drivingDistance (node, edge, distance)', label));
    RETURN NEXT set_eq(format('SELECT source, node, coalesce(edge, -1), distance FROM gpu_sssp(%L, %L::bigint[], %L::boolean)', g.edges, g.starts, directed),
                       format('SELECT from_v, node, edge, agg_cost FROM pgr_drivingDistance(%L, %L::bigint[], 1e300, %L::boolean, false)', g.edges, g.starts, directed),
                       format('%s: gpu_sssp many sources = pgr_drivingDistance (source, node, edge, distance)', label));
  ELSE
    RETURN NEXT set_eq(format('SELECT node, distance FROM gpu_sssp(%L, %s, %L::boolean)', g.edges, g.starts[1], directed),
                       format('SELECT node, agg_cost FROM pgr_drivingDistance(%L, %s, 1e300, %L::boolean)', g.edges, g.starts[1], directed),
                       format('%s: gpu_sssp one source = pgr_drivingDistance (node, distance)', label));
    RETURN NEXT is(pg_temp.tree_problems(g.edges, directed,
                     format('SELECT %s::bigint AS source, * FROM gpu_sssp(%L, %s, %L::boolean)', g.starts[1], g.edges, g.starts[1], directed)),
                   '{}'::text[], format('%s: gpu_sssp one source, its tree by the tie rule', label));
    RETURN NEXT set_eq(format('SELECT source, node, distance FROM gpu_sssp(%L, %L::bigint[], %L::boolean)', g.edges, g.starts, directed),
                       format('SELECT from_v, node, agg_cost FROM pgr_drivingDistance(%L, %L::bigint[], 1e300, %L::boolean, false)', g.edges, g.starts, directed),
                       format('%s: gpu_sssp many sources = pgr_drivingDistance (source, node, distance)', label));
    RETURN NEXT is(pg_temp.tree_problems(g.edges, directed,
                     format('SELECT * FROM gpu_sssp(%L, %L::bigint[], %L::boolean)', g.edges, g.starts, directed)),
                   '{}'::text[], format('%s: gpu_sssp many sources, its trees by the tie rule', label));
  END IF;
END
$$;

-- 3 graphs with ties x 2 x 15 + 2 graphs with unique paths x 2 x 8 = 122.
CREATE FUNCTION pg_temp.all_equivalence_checks() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  g graphs;
BEGIN
  FOR g IN SELECT * FROM graphs ORDER BY ord LOOP
    RETURN QUERY SELECT pg_temp.equivalence_checks(g, true);
    RETURN QUERY SELECT pg_temp.equivalence_checks(g, false);
  END LOOP;
END
$$;
SELECT pg_temp.all_equivalence_checks();

-- gpu_apsp against pgr_floydWarshall and pgr_johnson (not Rome: pgRouting takes minutes there). 16.
-- Integer weights: exact. Real weights: exact against pgr_johnson (Dijkstra's sums); within 1e-12
-- relative against pgr_floydWarshall, which adds the same costs in another order.
CREATE FUNCTION pg_temp.apsp_checks(g graphs, directed boolean) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  label text := g.name || CASE WHEN directed THEN ' directed' ELSE ' undirected' END;
  ours text := format('SELECT * FROM gpu_apsp(%L, %L::boolean)', g.edges, directed);
BEGIN
  RETURN NEXT set_eq(ours, format('SELECT * FROM pgr_johnson(%L, %L::boolean)', g.edges, directed), label || ': gpu_apsp = pgr_johnson');
  IF g.unique_paths THEN
    RETURN NEXT is((SELECT count(*)::int FROM pgr_floydWarshall(g.edges, directed) f
                    FULL JOIN gpu_apsp(g.edges, directed) o USING (start_vid, end_vid)
                    WHERE o.agg_cost IS NULL OR f.agg_cost IS NULL
                       OR abs(o.agg_cost - f.agg_cost) > 1e-12 * greatest(abs(f.agg_cost), 1)), 0,
                   label || ': gpu_apsp = pgr_floydWarshall within 1e-12 relative');
  ELSE
    RETURN NEXT set_eq(ours, format('SELECT * FROM pgr_floydWarshall(%L, %L::boolean)', g.edges, directed), label || ': gpu_apsp = pgr_floydWarshall');
  END IF;
END
$$;
CREATE FUNCTION pg_temp.all_apsp_checks() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  g graphs;
BEGIN
  FOR g IN SELECT * FROM graphs WHERE name <> 'rome' ORDER BY ord LOOP
    RETURN QUERY SELECT pg_temp.apsp_checks(g, true);
    RETURN QUERY SELECT pg_temp.apsp_checks(g, false);
  END LOOP;
END
$$;
SELECT pg_temp.all_apsp_checks();

SELECT * FROM finish();
ROLLBACK;

-- road_index (38): gpu_graph_index on a kept graph (made at once, recorded, shown in gpu_graphs(),
-- auto answering from it with Dijkstra's rows, the GPU's cch answering from it where a GPU is
-- usable, turned off again, errors), then the road index
-- (engine cch) by name. With gpu_routing.index_paths = rule (the
-- default) its rows equal Dijkstra's rows (engines.sql and kept_graphs.sql check that for every
-- shape); here, gpu_routing.index_paths = hierarchy, where gpu_path returns the hierarchy's own
-- paths: on Rome (directed), the random integer graph (undirected; ties, zero-free parallel edges,
-- one-way edges, self loops) and the disconnected sparse-id graph, for one-to-one, one-to-many,
-- many-to-one, many-to-many and combinations, every path is a walk along the graph's edges (each
-- row's edge joins its node to the next row's node in an allowed direction, cost that edge's
-- cost, agg_cost the sum so far) whose total equals Dijkstra's cost, with the same (start, end)
-- pairs as Dijkstra (unreachable targets give no rows); where no tie exists (real costs) the
-- paths are Dijkstra's paths, row for row. With another engine the setting changes nothing. The
-- setting's values.
-- Off first (committed on its own): an earlier run that failed midway may have left it on.
SELECT gpu_graph_index('pgtap_rome', false) AS reset_line \gset
BEGIN;
SET LOCAL client_min_messages = warning;
-- gpu_graph_index on the fixture graph pgtap_rome, before this transaction writes anything: the
-- index is made at once (it is shared memory, not transactional: turned off again at the end).
SELECT gpu_graph_index('pgtap_rome') AS index_line \gset
-- The road index is a CPU engine (also where the suite runs with gpu_routing.device = gpu).
SET LOCAL gpu_routing.device = cpu;
SELECT plan(38);

SELECT matches(:'index_line'::text, '^kept graph pgtap_rome: road index made by this call: order \d+ ms, hierarchy \d+ ms, customization \d+ ms, ',
               'gpu_graph_index makes the index at once and says so');
SELECT ok((SELECT road_index FROM gpu_routing_graphs WHERE name = 'pgtap_rome'), 'the registry records it');
SELECT matches((SELECT forms FROM gpu_graphs() WHERE name = 'pgtap_rome'), 'directed with road index \(',
               'gpu_graphs().forms shows the index');
CREATE TEMP TABLE auto_rows AS
SELECT * FROM gpu_path('graph:pgtap_rome', ARRAY[1, 77, 2500], ARRAY[3, 3000, 1200]);
-- auto weighs the index against Dijkstra by estimated cost (on Rome both take well under a
-- millisecond): its reason names both estimates, whichever it took.
SELECT matches((SELECT algorithm || ': ' || reason FROM gpu_routing_last_run()),
               '^(cch: auto: cpu cch, estimated [0-9.]+ ms; best alternative cpu dijkstra|dijkstra: auto: cpu dijkstra, estimated [0-9.]+ ms; best alternative cpu cch), estimated [0-9.]+ ms \(.*speeds\)$',
               'auto weighs the index against Dijkstra and names both estimates');
-- A cost matrix: buckets over the index cost a fraction of 60 searches; auto takes the shared index.
CREATE TEMP TABLE matrix_rows AS
SELECT * FROM gpu_apsp('graph:pgtap_rome', (SELECT array_agg(i * 50) FROM generate_series(1, 60) i),
                       (SELECT array_agg(i * 50 + 7) FROM generate_series(1, 60) i));
SELECT is((SELECT algorithm || '; ' || notes FROM gpu_routing_last_run()),
          'cch; the kept graph''s road index (shared)',
          'auto answers a cost matrix from the shared index');
SET LOCAL gpu_routing.sssp_algorithm = dijkstra;
SET LOCAL gpu_routing.apsp_algorithm = dijkstra;
SELECT results_eq('SELECT * FROM auto_rows',
                  'SELECT * FROM gpu_path(''graph:pgtap_rome'', ARRAY[1, 77, 2500], ARRAY[3, 3000, 1200])',
                  'its rows are Dijkstra''s rows');
RESET gpu_routing.sssp_algorithm;
RESET gpu_routing.apsp_algorithm;

-- The GPU's cch answers from the same shared index (PHAST sweeps on the device): Dijkstra's rows.
SELECT EXISTS (SELECT 1 FROM gpu_routing_info() WHERE name = 'gpu 0') AS gpu_usable \gset
SET LOCAL gpu_routing.device = gpu;
SET LOCAL gpu_routing.sssp_algorithm = cch;
SET LOCAL gpu_routing.apsp_algorithm = cch;
\if :gpu_usable
SELECT results_eq('SELECT * FROM gpu_path(''graph:pgtap_rome'', ARRAY[1, 77, 2500], ARRAY[3, 3000, 1200])',
                  'SELECT * FROM auto_rows', 'cch on the GPU: Dijkstra''s rows');
SELECT matches((SELECT algorithm || ' on ' || device || ': ' || notes FROM gpu_routing_last_run()),
               '^cch on .*: the kept graph''s road index \(shared\); PHAST on the GPU: \d+ levels',
               'cch on the GPU uses the kept graph''s shared index');
SELECT is((SELECT array_agg(agg_cost ORDER BY start_vid, end_vid)
           FROM gpu_apsp('graph:pgtap_rome', ARRAY[1, 77], ARRAY[3, 3000])),
          (SELECT array_agg(agg_cost ORDER BY start_vid, end_vid) FROM auto_rows
           WHERE start_vid IN (1, 77) AND end_vid IN (3, 3000) AND node = end_vid),
          'cch on the GPU: a cost matrix from the shared index');
-- Service areas on the GPU (device = gpu): whole sweeps cut to the distance on the device, the
-- predecessor rule and pgRouting's order in the backend: the CPU's bounded Dijkstra's rows, for
-- one start, several (a duplicate and an id not in the graph among them) and equicost.
CREATE TEMP TABLE gpu_areas AS
SELECT 1 AS q, * FROM gpu_driving_distance('graph:pgtap_rome', 1, 3000.0)
UNION ALL SELECT 2, * FROM gpu_driving_distance('graph:pgtap_rome', ARRAY[77, 2500, 999999, 77], 2500.0)
UNION ALL SELECT 3, * FROM gpu_driving_distance('graph:pgtap_rome', ARRAY[1, 77, 2500], 4000.0, equicost => true);
SELECT matches((SELECT algorithm || ': ' || reason || ' / ' || notes FROM gpu_routing_last_run()),
               '^cch: service areas on the GPU: .*whole trees, cut to the distance on the GPU.* / \d+ vertices within the distance \(the areas\): the engine''s in [0-9.]+ ms, .*service areas, \d+ sweeps',
               'service areas on the GPU: the engine and where its time went');
SET LOCAL gpu_routing.device = cpu;
SELECT results_eq('SELECT * FROM gpu_areas ORDER BY q, seq',
                  $$SELECT 1 AS q, * FROM gpu_driving_distance('graph:pgtap_rome', 1, 3000.0)
                    UNION ALL SELECT 2, * FROM gpu_driving_distance('graph:pgtap_rome', ARRAY[77, 2500, 999999, 77], 2500.0)
                    UNION ALL SELECT 3, * FROM gpu_driving_distance('graph:pgtap_rome', ARRAY[1, 77, 2500], 4000.0, equicost => true)
                    ORDER BY 1, 2$$,
                  'service areas on the GPU: the CPU''s rows, row for row');
SELECT cmp_ok((SELECT count(*) FROM gpu_areas WHERE q = 2), '>', 100::bigint,
              'service areas on the GPU: the areas are not empty');
SET LOCAL gpu_routing.device = gpu;
-- Named with the device at auto: the device of the smaller estimate, both estimates given.
SET LOCAL gpu_routing.device = auto;
SELECT is((SELECT count(*) FROM gpu_path('graph:pgtap_rome', 1, 3000)),
          (SELECT count(*) FROM auto_rows WHERE start_vid = 1 AND end_vid = 3000),
          'cch named, device auto: the path');
SELECT matches((SELECT reason FROM gpu_routing_last_run()),
               '^gpu_routing.sssp_algorithm = cch, device auto: (cpu|gpu) cch, estimated [0-9.]+ ms; (cpu|gpu) cch, estimated [0-9.]+ ms',
               'cch named, device auto: the reason gives both devices'' estimates');
\else
SELECT skip('no usable GPU: cch on the GPU not checked', 8);
\endif
SET LOCAL gpu_routing.device = cpu;
RESET gpu_routing.sssp_algorithm;
RESET gpu_routing.apsp_algorithm;

\set rome 'SELECT id, source, target, cost FROM rome_edges'
\set rint 'SELECT id, source, target, cost, reverse_cost FROM random_int_edges'
\set rsparse 'SELECT id, source, target, cost, reverse_cost FROM random_sparse_id_edges'

-- The edges a path may use (id, from, to, cost), as pgRouting reads them: directed, cost from
-- source to target and reverse_cost back; undirected, each of cost and reverse_cost both ways
-- (where >= 0).
CREATE FUNCTION pg_temp.arcs(edges_sql text, directed boolean)
RETURNS TABLE (id bigint, tail bigint, head bigint, cost float8) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'WITH e AS (SELECT id::bigint, source::bigint, target::bigint, cost::float8, reverse_cost::float8 FROM (%s) AS q) '
    'SELECT id, source, target, cost FROM e WHERE cost >= 0 '
    'UNION ALL SELECT id, target, source, reverse_cost FROM e WHERE reverse_cost >= 0 '
    'UNION ALL SELECT id, target, source, cost FROM e WHERE cost >= 0 AND NOT %L '
    'UNION ALL SELECT id, source, target, reverse_cost FROM e WHERE reverse_cost >= 0 AND NOT %L',
    CASE WHEN edges_sql LIKE '%reverse_cost%' THEN edges_sql
         ELSE replace(edges_sql, 'cost FROM', 'cost, -1::float8 AS reverse_cost FROM') END,
    directed, directed);
END
$$;

-- A gpu_path call's rows with start_vid and end_vid always present (-1 where the shape omits
-- them: one-to-one has neither, one-to-many no start_vid, many-to-one no end_vid).
CREATE FUNCTION pg_temp.normalized(call text) RETURNS text LANGUAGE sql AS $$
  SELECT 'SELECT coalesce((to_jsonb(p) ->> ''start_vid'')::bigint, -1) AS start_vid, '
         'coalesce((to_jsonb(p) ->> ''end_vid'')::bigint, -1) AS end_vid, path_seq, node, edge, cost, agg_cost '
         'FROM ' || call || ' AS p'
$$;

-- Problems of the hierarchy's paths for a gpu_path call (its arguments after edges_sql given as
-- text): a row whose edge does not join its node to the next row's node at that cost, an
-- agg_cost that is not the sum so far, a (start, end) pair whose total differs from Dijkstra's or
-- that only one side has.
CREATE FUNCTION pg_temp.path_problems(edges_sql text, args text, directed boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  problems bigint;
BEGIN
  PERFORM set_config('gpu_routing.sssp_algorithm', 'cch', true);
  PERFORM set_config('gpu_routing.apsp_algorithm', 'cch', true);
  PERFORM set_config('gpu_routing.index_paths', 'hierarchy', true);
  EXECUTE format('CREATE TEMP TABLE fast ON COMMIT DROP AS ' || pg_temp.normalized('gpu_path(%L, %s, directed => %L)'),
                 edges_sql, args, directed);
  PERFORM set_config('gpu_routing.sssp_algorithm', 'dijkstra', true);
  PERFORM set_config('gpu_routing.apsp_algorithm', 'dijkstra', true);
  PERFORM set_config('gpu_routing.index_paths', 'rule', true);
  EXECUTE format('CREATE TEMP TABLE rule ON COMMIT DROP AS ' || pg_temp.normalized('gpu_path(%L, %s, directed => %L)'),
                 edges_sql, args, directed);
  PERFORM set_config('gpu_routing.sssp_algorithm', 'auto', true);
  PERFORM set_config('gpu_routing.apsp_algorithm', 'auto', true);
  CREATE TEMP TABLE allowed ON COMMIT DROP AS SELECT * FROM pg_temp.arcs(edges_sql, directed);
  SELECT
    (SELECT count(*) FROM fast f
       JOIN fast nxt ON nxt.start_vid = f.start_vid AND nxt.end_vid = f.end_vid AND nxt.path_seq = f.path_seq + 1
      WHERE NOT EXISTS (SELECT 1 FROM allowed a WHERE a.id = f.edge AND a.tail = f.node AND a.head = nxt.node AND a.cost = f.cost)
         OR nxt.agg_cost <> f.agg_cost + f.cost)
    + (SELECT count(*) FROM fast WHERE path_seq = 1 AND (agg_cost <> 0 OR (start_vid <> -1 AND node <> start_vid)))
    + (SELECT count(*) FROM fast WHERE edge = -1 AND end_vid <> -1 AND node <> end_vid)
    + (SELECT count(*) FROM (SELECT start_vid, end_vid, agg_cost FROM fast WHERE edge = -1) f
         FULL JOIN (SELECT start_vid, end_vid, agg_cost FROM rule WHERE edge = -1) r USING (start_vid, end_vid)
        WHERE f.agg_cost IS DISTINCT FROM r.agg_cost)
  INTO problems;
  DROP TABLE fast, rule, allowed;
  RETURN problems;
END
$$;

SELECT is(pg_temp.path_problems(:'rome', '1, 3000', true), 0::bigint, 'Rome one-to-one: a valid walk of Dijkstra''s cost');
SELECT is(pg_temp.path_problems(:'rome', '7, ARRAY(SELECT generate_series(1, 3353, 37))', true), 0::bigint,
          'Rome one-to-many (91 targets): valid walks of Dijkstra''s costs');
SELECT is(pg_temp.path_problems(:'rome', 'ARRAY(SELECT generate_series(5, 3353, 97)), 2222', true), 0::bigint,
          'Rome many-to-one (35 sources)');
SELECT is(pg_temp.path_problems(:'rome', 'ARRAY[1, 100, 2000, 3353], ARRAY[2, 50, 1500, 3000]', true), 0::bigint,
          'Rome many-to-many');
SELECT is(pg_temp.path_problems(:'rome', 'ARRAY[1, 100, 2000, 3353], ARRAY[2, 50, 1500, 3000]', false), 0::bigint,
          'Rome many-to-many, undirected');
SELECT is(pg_temp.path_problems(:'rint', 'ARRAY(SELECT generate_series(1, 300, 7)), ARRAY(SELECT generate_series(3, 300, 11))', true), 0::bigint,
          'random integer graph many-to-many, directed (ties, parallel and one-way edges, self loops)');
SELECT is(pg_temp.path_problems(:'rint', 'ARRAY(SELECT generate_series(1, 300, 7)), ARRAY(SELECT generate_series(3, 300, 11))', false), 0::bigint,
          'random integer graph many-to-many, undirected');
SELECT is(pg_temp.path_problems(:'rsparse',
          'ARRAY[1 * 1000003 - 50000000, 150 * 1000003 - 50000000, 300 * 1000003 - 50000000]::bigint[], '
          'ARRAY[2 * 1000003 - 50000000, 199 * 1000003 - 50000000, 250 * 1000003 - 50000000, 399 * 1000003 - 50000000]::bigint[]', true),
          0::bigint, 'disconnected graph: unreachable targets give no rows, reachable ones valid walks');

-- Combinations.
SELECT is(pg_temp.path_problems(:'rome', '$$SELECT * FROM (VALUES (1, 3000), (3000, 1), (17, 17), (250, 2500)) AS c(source, target)$$', true),
          0::bigint, 'Rome combinations (a pair from a vertex to itself included)');

-- Real costs have no ties: the hierarchy's paths are Dijkstra's, row for row.
SET LOCAL gpu_routing.sssp_algorithm = cch;
SET LOCAL gpu_routing.apsp_algorithm = cch;
SET LOCAL gpu_routing.index_paths = hierarchy;
CREATE TEMP TABLE fast_real AS
SELECT * FROM gpu_path('SELECT id, source, target, cost, reverse_cost FROM random_real_edges',
                       ARRAY[1, 50, 200], ARRAY[3, 77, 300, 399]);
SET LOCAL gpu_routing.sssp_algorithm = dijkstra;
SET LOCAL gpu_routing.apsp_algorithm = dijkstra;
SELECT is((SELECT count(*) FROM (SELECT start_vid, end_vid, path_seq, node, edge FROM fast_real
                                 EXCEPT SELECT start_vid, end_vid, path_seq, node, edge FROM gpu_path(
                                   'SELECT id, source, target, cost, reverse_cost FROM random_real_edges',
                                   ARRAY[1, 50, 200], ARRAY[3, 77, 300, 399])) AS d), 0::bigint,
          'real costs: the hierarchy''s paths are Dijkstra''s, edge for edge');
SELECT ok((SELECT count(*) FROM fast_real) > 50, 'real costs: the paths are not empty');
SELECT is((SELECT max(abs(f.agg_cost - r.agg_cost) / greatest(r.agg_cost, 1)) < 1e-12
           FROM fast_real f JOIN gpu_path('SELECT id, source, target, cost, reverse_cost FROM random_real_edges',
                                          ARRAY[1, 50, 200], ARRAY[3, 77, 300, 399]) r
             USING (start_vid, end_vid, path_seq)), true,
          'real costs: agg_cost within 1e-12 of Dijkstra''s (summed along the same edges)');

-- Another engine ignores the setting: Dijkstra's rows are the rule's rows.
SET LOCAL gpu_routing.device = cpu;
CREATE TEMP TABLE dijkstra_hierarchy AS SELECT * FROM gpu_path(:'rint', 1, ARRAY[5, 50, 250], false);
SET LOCAL gpu_routing.index_paths = rule;
SELECT set_eq('SELECT * FROM dijkstra_hierarchy',
              format('SELECT * FROM gpu_path(%L, 1, ARRAY[5, 50, 250], false)', :'rint'),
              'index_paths = hierarchy changes nothing for the dijkstra engine');

-- The rule is the default and gives the rule's paths with cch too.
SET LOCAL gpu_routing.sssp_algorithm = cch;
SET LOCAL gpu_routing.apsp_algorithm = cch;
RESET gpu_routing.index_paths;
SELECT is(current_setting('gpu_routing.index_paths'), 'rule', 'index_paths defaults to rule');
CREATE TEMP TABLE cch_rule AS SELECT * FROM gpu_path(:'rint', 1, ARRAY[5, 50, 250], false);
SELECT results_eq('SELECT * FROM cch_rule', 'SELECT * FROM dijkstra_hierarchy',
                  'cch with index_paths = rule: Dijkstra''s rows exactly');
SELECT is((SELECT algorithm FROM gpu_routing_last_run()), 'cch', 'the cch engine answered');
SELECT ok((SELECT notes LIKE '%road index built by this call: order % ms, hierarchy % ms, customization % ms, % MB%'
           FROM gpu_routing_last_run()), 'gpu_routing_last_run().notes: the call made the index, with its times and size');

-- The setting's values.
SELECT throws_ok($$SET LOCAL gpu_routing.index_paths = 'fastest'$$, '22023',
                 'invalid value for parameter "gpu_routing.index_paths": "fastest"', 'index_paths: an unknown value refused');
SELECT lives_ok($$SET LOCAL gpu_routing.index_paths = hierarchy$$, 'index_paths = hierarchy accepted');

-- Turned off: the index and its order go, auto calls search again.
SELECT is(gpu_graph_index('pgtap_rome', false), 'kept graph pgtap_rome: road index off', 'gpu_graph_index(name, false)');
SET LOCAL gpu_routing.sssp_algorithm = auto;
SELECT count(*) FROM gpu_path('graph:pgtap_rome', 1, 3000) \gset
SELECT is((SELECT algorithm FROM gpu_routing_last_run()), 'dijkstra', 'after it, auto searches (dijkstra)');
SELECT ok((SELECT forms FROM gpu_graphs() WHERE name = 'pgtap_rome') NOT LIKE '%road index%', 'gpu_graphs().forms: no index');
SELECT throws_ok($$SELECT gpu_graph_index('no_such_graph')$$, '42704',
                 'gpu_graph_index: there is no kept graph named "no_such_graph" in this database',
                 'gpu_graph_index: an unknown graph is named in the error');
SELECT is(gpu_graph_index(NULL), NULL, 'gpu_graph_index(NULL) is NULL (STRICT)');

SELECT * FROM finish();
ROLLBACK;

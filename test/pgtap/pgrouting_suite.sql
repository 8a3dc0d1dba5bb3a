-- pgrouting_suite: pgRouting's own pgTAP tests for pgr_dijkstra, pgr_dijkstraCost, pgr_johnson,
-- pgr_floydWarshall and pgr_drivingDistance, their result-checking assertions rewritten to call
-- gpu_path / gpu_apsp / gpu_sssp, with pgRouting's queries, inputs and expected values.
--
-- Source: pgRouting's pgtap/ tree (repository pgRouting/pgrouting; where its stored copy still
-- used the old `edge_table` sample data, the same file as it stands on the `edges` sample data, as
-- kept in cvvergara/pgrouting, the pgRouting maintainer's tree). Each block below names its file.
-- pgRouting's table `edges` is our fixture `sample_edges` (the same 18 edges, the same vertex
-- ids); its `combinations` table (pgRouting's tools/testers/sampledata.sql) is made here. Each
-- pgRouting file starts from fresh sample data: here `:restore` puts back the fixture's costs
-- before the file's own UPDATE.
--
-- Mapping: pgr_dijkstra -> gpu_path; pgr_dijkstraCost / pgr_dijkstraCostMatrix -> gpu_apsp with
-- arrays or combinations; pgr_johnson -> gpu_apsp(edges_sql, directed); pgr_floydWarshall ->
-- gpu_apsp(edges_sql, directed) run with gpu_routing.apsp_algorithm = floyd_warshall (through
-- pg_temp.floyd_warshall below), so that the two pgRouting functions test two engines;
-- pgr_drivingDistance(edges, s, D) -> gpu_sssp(edges, s) WHERE distance <= D (agg_cost = distance;
-- many sources: the gpu_sssp(edges, sources[]) form, start_vid = source).
--
-- Not adapted (covered by our own files or impossible):
--   * types_check.pg, inner_query.pg, no_crash_test.pg of all five functions, and
--     dijkstra/edge_cases/remaining_tests.pg and dijkstraCost/edge_cases/remaining_tests.pg
--     (result column names and types; smallint/bigint/real/float/text columns of edges_sql
--     accepted or refused; with and without reverse_cost): signature, type and inner-query checks,
--     already covered by test/pgtap/types_check.sql, inner_query.sql and no_crash.sql.
--   * dijkstra/driving_distance/edge_cases/issue_1152.pg: pgr_drivingDistance(..., equicost := true)
--     on pgRouting's tmp_net network (tools/testers/tmp_net.sql). gpu_sssp has no equicost (each
--     vertex to its nearest source only) and tmp_net is not among our fixtures.
--   * issue_3091.pg test 1 and negative_distance.pg tests 1-2 (a negative / zero distance raises
--     an error): gpu_sssp takes no distance argument (the caller filters `WHERE distance <= D`), so
--     there is no argument to refuse. Their other tests are adapted.
--   * The older flat copies of these same tests in pgRouting's tree (pgtap/dijkstra/*.test.sql,
--     pgtap/allpairs/compare-*.test.sql, pgtap/driving_distance/issue-519.sql, issue1152.sql, ...)
--     are earlier versions of the files adapted here.
-- Documented differences met on the way (each said again where it applies):
--   * +Infinity cost: pgRouting routes through the edge and reports agg_cost Infinity; for
--     gpu_routing a +Infinity cost means the edge does not exist in that direction (README,
--     "edges_sql"), so "Infinity" answers become "no path" (is_empty).
--   * Ties: every assertion here compares gpu_* calls with gpu_* calls (one tie rule on every
--     shape and engine) or compares costs, so no assertion depends on which tied path is chosen.
BEGIN;
SET LOCAL client_min_messages = warning;

SELECT plan(546);

-- Fresh sample data for each pgRouting file, and the UPDATEs those files begin with.
CREATE TEMP TABLE pgr_suite_costs AS SELECT id, cost, reverse_cost FROM sample_edges;
\set restore 'UPDATE sample_edges AS e SET cost = o.cost, reverse_cost = o.reverse_cost FROM pgr_suite_costs AS o WHERE e.id = o.id'
\set unit_costs 'UPDATE sample_edges SET cost = sign(cost), reverse_cost = sign(reverse_cost)'
\set unique_costs 'UPDATE sample_edges SET cost = sign(cost) + 0.001 * id * id, reverse_cost = sign(reverse_cost) + 0.001 * id * id'

-- pgRouting's sample `combinations` table (tools/testers/sampledata.sql).
CREATE TEMP TABLE combinations (source BIGINT, target BIGINT);
INSERT INTO combinations (source, target) VALUES (5, 6), (5, 10), (6, 5), (6, 15), (6, 14);

-- pgr_floydWarshall: gpu_apsp(edges_sql, directed) on the floyd_warshall engine (CPU or GPU, as
-- gpu_routing.device says); the engine setting is put back afterwards, so that the other side of
-- a comparison runs on the usual engine.
CREATE FUNCTION pg_temp.floyd_warshall(edges_sql TEXT, directed BOOLEAN DEFAULT true)
RETURNS TABLE (start_vid BIGINT, end_vid BIGINT, agg_cost FLOAT8) LANGUAGE plpgsql AS $BODY$
DECLARE
  before TEXT := current_setting('gpu_routing.apsp_algorithm');
BEGIN
  PERFORM set_config('gpu_routing.apsp_algorithm', 'floyd_warshall', true);
  RETURN QUERY SELECT * FROM gpu_apsp(edges_sql, directed);
  PERFORM set_config('gpu_routing.apsp_algorithm', before, true);
END
$BODY$;

-- The two assertions of this file that are not pgRouting's: they check the mapping of
-- pgr_floydWarshall itself (it runs, on the floyd_warshall engine).
SELECT lives_ok($$SELECT * FROM pg_temp.floyd_warshall('SELECT id, source, target, cost FROM sample_edges')$$,
                'setup: pg_temp.floyd_warshall runs');
SELECT is((SELECT algorithm FROM gpu_routing_last_run()), 'floyd_warshall',
          'setup: pg_temp.floyd_warshall (pgr_floydWarshall) runs the floyd_warshall engine');

-- pgRouting's tools/testers helpers, calling gpu_* instead of pgr_*. ---------------------------

-- tools/testers/dijkstra_pgtap_tests.sql: taptest (the five pgr_dijkstra shapes).
CREATE FUNCTION pg_temp.taptest(test TEXT, q TEXT, v1 INTEGER, v2 INTEGER, directed BOOLEAN)
RETURNS SETOF TEXT AS
$BODY$
BEGIN
  RETURN QUERY EXECUTE format(
    $q$ SELECT %5$s(
      $$SELECT * from gpu_path(%1$L, %2$s, %3$s, %4$L::BOOLEAN)$$,
      $$%5$s: SELECT * from gpu_path(%1$L, %2$s, %3$s, %4$L::BOOLEAN)$$)
    $q$,
    q, v1, v2, directed, test);

  RETURN QUERY EXECUTE format(
    $q$ SELECT %5$s(
      $$SELECT * from gpu_path(%1$L, array[%2$s], %3$s, %4$L::BOOLEAN)$$,
      $$%5$s: SELECT * from gpu_path(%1$L, array[%2$s], %3$s, %4$L::BOOLEAN)$$)
    $q$,
    q, v1, v2, directed, test);

  RETURN QUERY EXECUTE format(
    $q$ SELECT %5$s(
      $$SELECT * from gpu_path(%1$L, %2$s, array[%3$s], %4$L::BOOLEAN)$$,
      $$%5$s: SELECT * from gpu_path(%1$L, %2$s, array[%3$s], %4$L::BOOLEAN)$$)
    $q$,
    q, v1, v2, directed, test);

  RETURN QUERY EXECUTE format(
    $q$ SELECT %5$s(
      $$SELECT * from gpu_path(%1$L, array[%2$s], array[%3$s], %4$L::BOOLEAN)$$,
      $$%5$s: SELECT * from gpu_path(%1$L, array[%2$s], array[%3$s], %4$L::BOOLEAN)$$)
    $q$,
    q, v1, v2, directed, test);

  RETURN QUERY EXECUTE format(
    $q$ SELECT %5$s(
      $$SELECT * from gpu_path(%1$L, 'SELECT %2$s AS source, %3$s AS target', %4$L::BOOLEAN)$$,
      $$%5$s: SELECT * from gpu_path(%1$L, 'SELECT %2$s AS source, %3$s AS target', %4$L::BOOLEAN)$$)
    $q$,
    q, v1, v2, directed, test);
END;
$BODY$
LANGUAGE plpgsql;

-- tools/testers/allpairs_tests.sql: test_agg_cost, allPairs_compare_dijkstra,
-- allPairs_test_flags. fn is the function called, label the pgRouting function it stands for.
CREATE FUNCTION pg_temp.test_agg_cost(fn TEXT, label TEXT, directed BOOLEAN)
RETURNS SETOF TEXT AS
$BODY$
DECLARE
 q1 TEXT;
 q2 TEXT;
 q3 TEXT;
 q4 TEXT;
BEGIN
  q1 := format(
    $$ SELECT * FROM %1$s('SELECT id, source, target, cost, reverse_cost FROM sample_edges',
      %2$L::BOOLEAN) WHERE agg_cost < 0
    $$, fn, directed);
  RETURN QUERY
  SELECT is_empty(q1, label || ': c & rc, ' || directed || ': No cost can be negative');

  q2 := format($$ SELECT * FROM %1$s( 'SELECT id, source, target, cost FROM sample_edges',
      %2$L::BOOLEAN) WHERE agg_cost < 0
    $$, fn, directed);
  RETURN QUERY
  SELECT is_empty(q2, label || ': c, ' || directed || ': No cost can be negative');

  q3 := format($$ SELECT * FROM %1$s( 'SELECT id, source, target, cost, -1 as reverse_cost FROM sample_edges',
      %2$L::BOOLEAN) WHERE agg_cost < 0
    $$, fn, directed);
  RETURN QUERY
  SELECT is_empty(q3, label || ': c & -1, ' || directed || ': No cost can be negative');

  q4 := format($$ SELECT * FROM %1$s( 'SELECT id, source, target, -1 AS cost, reverse_cost FROM sample_edges',
      %2$L::BOOLEAN) WHERE agg_cost < 0
    $$, fn, directed);
  RETURN QUERY
  SELECT is_empty(q4, label || ' -1 & rc, ' || directed || ': No cost can be negative');
END;
$BODY$
LANGUAGE plpgsql;

-- pgr_dijkstraCostMatrix(edges, vids, directed) -> gpu_apsp(edges, vids, vids, directed).
CREATE FUNCTION pg_temp.allpairs_compare_dijkstra(fn TEXT, label TEXT, directed BOOLEAN)
RETURNS SETOF TEXT AS
$BODY$
DECLARE
 q1 TEXT;
 e1 TEXT;
BEGIN
  q1 := format($$ SELECT start_vid, end_vid, round(agg_cost::NUMERIC,2) FROM %1$s( 'SELECT id, source, target, cost, reverse_cost FROM sample_edges WHERE id = 1',
      %2$L::BOOLEAN)
    $$, fn, directed);
  e1 := format($$ SELECT start_vid, end_vid, round(agg_cost::NUMERIC,2) FROM gpu_apsp( 'SELECT id, source, target, cost, reverse_cost FROM sample_edges',
      %2$L::BIGINT[], %2$L::BIGINT[], %3$L::BOOLEAN)
    $$, fn, ARRAY[5,6], directed);
  RETURN QUERY
  SELECT set_eq(q1, e1, label || ', ' || directed || ': compare subgraph with 2 vertices');

  q1 := format($$ SELECT start_vid, end_vid, round(agg_cost::NUMERIC,2) FROM %1$s( 'SELECT id, source, target, cost, reverse_cost FROM sample_edges',
      %2$L::BOOLEAN)
    $$, fn, directed);
  e1 := format($$
    SELECT start_vid, end_vid, round(agg_cost::NUMERIC,2) FROM gpu_apsp(
      'SELECT id, source, target, cost, reverse_cost FROM sample_edges',
      %2$L::BIGINT[], %2$L::BIGINT[],
      %3$L::BOOLEAN)$$,
    fn, ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17], directed);
  RETURN QUERY
  SELECT set_eq(q1, e1, label || ', ' || directed || ': compare complete graph');
END;
$BODY$
LANGUAGE plpgsql;

-- Always on gpu_apsp itself (the flags are its signature); the caller picks the engine.
CREATE FUNCTION pg_temp.allpairs_test_flags(label TEXT)
RETURNS SETOF TEXT AS
$BODY$
DECLARE
 fn TEXT := 'gpu_apsp';
 q1 TEXT;
BEGIN
  q1 := format($$ SELECT * FROM %1$s(
      'SELECT id, source, target, cost, reverse_cost FROM sample_edges')
    $$, fn);
  RETURN QUERY
  SELECT lives_ok(q1, label || ': lives with no flags');

  q1 := format($$ SELECT * FROM %1$s(
      'SELECT id, source, target, cost, reverse_cost FROM sample_edges', FALSE)
    $$, fn);
  RETURN QUERY
  SELECT lives_ok(q1, label || ': lives with 1 flag');

  q1 := format($$ SELECT * FROM %1$s(
      'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
      directed => FALSE)$$, fn);
  RETURN QUERY
  SELECT lives_ok(q1, label || ': lives with named flag');

  q1 := format($$ SELECT * FROM %1$s(
      'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
      dir =>FALSE)$$, fn);
  RETURN QUERY
  SELECT throws_ok(q1,
    '42883','function ' || fn || '(unknown, dir => boolean) does not exist',
    label || ': throws with invalid flags name');

  q1 := format($$ SELECT * FROM %1$s(
      'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
      FALSE, TRUE)$$, fn);
  RETURN QUERY
  SELECT throws_ok(q1,
    '42883','function ' || fn || '(unknown, boolean, boolean) does not exist',
    label || ': throws with invalid flags name');
END;
$BODY$
LANGUAGE plpgsql;


-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/empty_combinations_empty_result.pg (1)
-- ==============================================================================================
:restore;
:unit_costs;
SELECT is_empty(
  'SELECT path_seq,  start_vid,  end_vid, node, edge, cost, agg_cost FROM gpu_path(
    ''SELECT id, source, target, cost, reverse_cost FROM sample_edges'',
    ''SELECT * FROM combinations WHERE source=-1'' ) ',
  'dijkstra/edge_cases/empty_combinations_empty_result.pg: empty combinations, empty result');

-- ==============================================================================================
-- pgtap/dijkstra/dijkstraCost/edge_cases/empty_combinations_empty_result.pg (1)
-- ==============================================================================================
SELECT is_empty(
  'SELECT start_vid, end_vid, agg_cost FROM gpu_apsp(
    ''SELECT id, source, target, cost, reverse_cost FROM sample_edges'',
    ''SELECT * FROM combinations WHERE source=-1'' ) ',
  'dijkstraCost/edge_cases/empty_combinations_empty_result.pg: empty combinations, empty result');

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/infinity_cost.pg (8)
-- Adapted (documented difference): pgr_dijkstra routes through the 'Infinity' edge 7 and returns
-- agg_cost Infinity (q2, q4, q5, q6); for gpu_path a +Infinity cost means no edge, and there is no
-- other way, so there is no path: those four assert is_empty instead.
-- ==============================================================================================
:restore;
:unit_costs;
PREPARE inf_q0 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    1, 11) ORDER BY seq DESC LIMIT 1;

PREPARE inf_update2infinity AS
UPDATE sample_edges SET cost = 'Infinity' WHERE id = 7;

PREPARE inf_q1 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    1, 3) ORDER BY seq DESC LIMIT 1;

PREPARE inf_q2 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    3, 7) ORDER BY seq DESC LIMIT 1;

PREPARE inf_q3 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    7, 11) ORDER BY seq DESC LIMIT 1;

PREPARE inf_q4 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    1, 7) ORDER BY seq DESC LIMIT 1;

PREPARE inf_q5 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    3, 11) ORDER BY seq DESC LIMIT 1;

PREPARE inf_q6 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    1, 11) ORDER BY seq DESC LIMIT 1;

-- test for infinity if there is no alternative
SELECT results_eq('inf_q0', 'SELECT cast(3 as double precision) as agg_cost;', 'infinity_cost.pg q0: 1 -> 11 costs 3');
SELECT lives_ok('inf_update2infinity', 'infinity_cost.pg: updating an edge to ''Infinity'' should be possible');
SELECT results_eq('inf_q1', 'SELECT cast(1 as double precision) as agg_cost;', 'infinity_cost.pg q1: 1 -> 3 costs 1');
SELECT is_empty('inf_q2', 'infinity_cost.pg q2: routing through edge 7 (''Infinity''): no path (pgRouting: agg_cost Infinity)');
SELECT results_eq('inf_q3', 'SELECT cast(1 as double precision) as agg_cost;', 'infinity_cost.pg q3: 7 -> 11 costs 1');
SELECT is_empty('inf_q4', 'infinity_cost.pg q4: routing through edge 7 (''Infinity''): no path (pgRouting: agg_cost Infinity)');
SELECT is_empty('inf_q5', 'infinity_cost.pg q5: routing through edge 7 (''Infinity''): no path (pgRouting: agg_cost Infinity)');
SELECT is_empty('inf_q6', 'infinity_cost.pg q6: routing through edge 7 (''Infinity''): no path (pgRouting: agg_cost Infinity)');

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/infinity_alt_cost.pg (4)
-- ==============================================================================================
:restore;
:unit_costs;
PREPARE alt_q0 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    1, 11) ORDER BY seq DESC LIMIT 1;

PREPARE alt_update2infinity9 AS
UPDATE sample_edges SET cost = 'Infinity' WHERE id = 9;

PREPARE alt_update2k13 AS
UPDATE sample_edges SET cost = 10 WHERE id = 13;

PREPARE alt_q1 AS
SELECT agg_cost FROM gpu_path( 'select id, source, target, cost from sample_edges',
    7, 17) ORDER BY seq DESC LIMIT 1;

-- test for infinity if alternative is available
SELECT results_eq('alt_q0', 'SELECT cast(3 as double precision) as agg_cost;', 'infinity_alt_cost.pg q0: 1 -> 11 costs 3');
SELECT lives_ok('alt_update2infinity9', 'infinity_alt_cost.pg: updating an edge to ''Infinity'' should be possible for edge 9');
SELECT lives_ok('alt_update2k13', 'infinity_alt_cost.pg: updating an edge to 1000 should be possible for edge 13');
SELECT results_eq('alt_q1', 'SELECT cast(12 as double precision) as agg_cost;', 'infinity_alt_cost.pg: Routing around edge 9 should be possible');

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/issue_353.pg (3)
-- ==============================================================================================
:restore;
:unit_costs;
PREPARE i353_q1 AS
SELECT * FROM gpu_path( 'select id, source, target, cost from sample_edges',
    array[1,6], array[7,11]);

PREPARE i353_q2 AS
SELECT * FROM gpu_path( 'select id, source, target, cost from sample_edges',
    array[1,6], array[14,18]);

PREPARE i353_q3 AS
(SELECT * FROM gpu_path( 'select id, source, target, cost from sample_edges',
        array[1,6], array[7,11]))
UNION
(SELECT * FROM gpu_path( 'select id, source, target, cost from sample_edges',
        array[1,6], array[14,18]));

PREPARE i353_q4 AS
SELECT * FROM gpu_path( 'select id, source, target, cost from sample_edges',
    array[1,6], array[7,11,14,18]);

SELECT is_empty( 'i353_q2', 'issue_353.pg 1: [1,6] -> [14,18] is empty');
SELECT set_eq( 'i353_q1', 'i353_q3', 'issue_353.pg 2: union with an empty many-to-many changes nothing');
SELECT set_eq( 'i353_q1', 'i353_q4', 'issue_353.pg 3: unreachable targets in the array change nothing');

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/manyToMany_equiv_combinations.pg (2)
-- ==============================================================================================
:restore;
:unique_costs;
CREATE FUNCTION pg_temp.m2m_equiv_combinations( sql_TestFunction TEXT, label TEXT, lim INTEGER default 18 )
RETURNS SETOF TEXT AS
$BODY$
DECLARE
sql_Combinations TEXT;
sql_Many TEXT;
BEGIN
    sql_Combinations := '';
    sql_Many := '';
    FOR i IN 1.. lim LOOP
        IF (i > 1) THEN
            sql_Many := sql_Many ||', ';
        END IF;
        sql_Many := sql_Many || i ;
    END LOOP;

    FOR i IN 1.. lim LOOP
        FOR j IN 1..lim LOOP
            IF NOT (i =  j) THEN
                sql_Combinations := sql_Combinations || '(' || i || ',' || j || '),' ;
            END IF;
        END LOOP;
    END LOOP;
    sql_Combinations := trim(trailing ',' from sql_Combinations);

    sql_Many := ( sql_TestFunction || '(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges''::text, '
        || ' ARRAY[' || sql_Many  ||'], ARRAY[' || sql_Many ||
        '] ) ');

    sql_Combinations := ( sql_TestFunction || '(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges''::text,
        ''SELECT * FROM (VALUES' || sql_Combinations  ||') AS combinations (source, target)'' ) ');

    RETURN query SELECT set_eq( sql_Many, sql_Combinations, label );
    RETURN;
END
$BODY$
language plpgsql;

-- test pgr_dijkstra
select * from pg_temp.m2m_equiv_combinations('SELECT path_seq,  start_vid,  end_vid, node, edge, cost, agg_cost FROM gpu_path',
  'manyToMany_equiv_combinations.pg: pgr_dijkstra (gpu_path) many to many = combinations');
-- test pgr_dijkstraCost
select * from pg_temp.m2m_equiv_combinations('SELECT start_vid, end_vid, agg_cost FROM gpu_apsp',
  'manyToMany_equiv_combinations.pg: pgr_dijkstraCost (gpu_apsp) many to many = combinations');

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/oneToOne_equiv_manyToMany.pg (1)
-- ==============================================================================================
CREATE FUNCTION pg_temp.o2o_equiv_m2m(lim INTEGER default 18 )
RETURNS SETOF TEXT AS
$BODY$
DECLARE
sql_OneToOne TEXT;
sql_Many TEXT;
BEGIN
    sql_OneToOne := '';
    sql_Many := '';
    FOR i IN 1.. lim LOOP
        IF (i > 1) THEN sql_Many := sql_Many ||', '; END IF;
            sql_Many := sql_Many || i ;
    END LOOP;

    FOR i IN 1.. lim LOOP
        FOR j IN 1..lim LOOP

            IF NOT (i = 1 AND j = 1) THEN
                sql_OneToOne := sql_OneToOne ||' UNION ALL';
            END IF;
            sql_OneToOne := sql_OneToOne ||
            '( SELECT seq, ' || i || ' AS start_vid, ' || j || ' AS end_vid, node, edge, cost, agg_cost  FROM gpu_path(
                    ''SELECT id, source, target, cost, reverse_cost FROM sample_edges'', '
                    || i || ', ' || j ||
                    ') )';
        END LOOP;
    END LOOP;
    sql_Many :=
    ' SELECT path_seq,  start_vid,  end_vid, node, edge, cost, agg_cost FROM gpu_path(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges'', '
        || ' ARRAY[' || sql_Many  ||'], ARRAY[' || sql_Many ||
        '] ) ';

    sql_OneToOne := 'select * from ( ' || sql_OneToOne ||') AS a';

    RETURN query SELECT set_eq( sql_OneToOne, sql_Many,
      'oneToOne_equiv_manyToMany.pg: 18 x 18 one to one = many to many');
    RETURN;
END
$BODY$
language plpgsql;

select * from pg_temp.o2o_equiv_m2m();

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/oneToOne_equiv_manyToOne.pg (18)
-- ==============================================================================================
CREATE FUNCTION pg_temp.o2o_equiv_m2o(lim INTEGER default 18 )
RETURNS SETOF TEXT AS
$BODY$
DECLARE
sql_OneToOne TEXT;
sql_Many TEXT;
BEGIN
    FOR i IN 1.. lim LOOP
        sql_OneToOne := '';
        sql_Many := '';
        FOR j IN 1..lim LOOP
            IF j > 1 THEN
                sql_OneToOne := sql_OneToOne
                ||' UNION ALL';
                sql_Many := sql_Many ||', ';
            END IF;
            sql_OneToOne := sql_OneToOne ||
            '( SELECT seq, ' || j || ' AS start_vid, ' || i || ' AS end_vid, node, edge, round(cost::numeric,8) AS cost, round(agg_cost::numeric,8) AS agg_cost   FROM gpu_path(
                    ''SELECT id, source, target, cost, reverse_cost FROM sample_edges'', '
                    || j || ', ' || i ||
                    ') )';
            sql_Many := sql_Many || j ;
        END LOOP;
        sql_Many :=
        ' SELECT path_seq, start_vid, ' || i || ' AS end_vid, node, edge, round(cost::numeric,8) AS cost, round(agg_cost::numeric,8) AS agg_cost  FROM gpu_path(
            ''SELECT id, source, target, cost, reverse_cost FROM sample_edges'', '
            ' ARRAY[' || sql_Many || '], ' || i ||
            ' ) ';

        sql_OneToOne := 'select * from ( ' || sql_OneToOne ||') AS a';

        RETURN query SELECT set_eq( sql_OneToOne, sql_Many,
          'oneToOne_equiv_manyToOne.pg: one to one = many to one, end ' || i);
    END LOOP;
    RETURN;
END
$BODY$
language plpgsql;

select * from pg_temp.o2o_equiv_m2o();

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/oneToOne_equiv_oneToMany.pg (36)
-- ==============================================================================================
CREATE FUNCTION pg_temp.o2o_equiv_o2m(lim INTEGER default 18, flag boolean default true )
RETURNS SETOF TEXT AS
$BODY$
DECLARE
sql_OneToOne TEXT;
sql_OneToMany TEXT;
BEGIN
    sql_OneToMany := '';
    FOR i IN 1.. lim LOOP
        sql_OneToOne := '';
        sql_OneToMany := '';
        FOR j IN 1..lim LOOP
            IF j > 1 THEN
                sql_OneToOne := sql_OneToOne
                ||' UNION ALL';
                sql_OneToMany := sql_OneToMany ||', ';
            END IF;
            sql_OneToOne := sql_OneToOne ||
            '( SELECT seq, ' || i || ' as start_vid, ' || j || ' as end_vid, node, edge, cost, agg_cost  FROM gpu_path(
                    ''SELECT id, source, target, cost, reverse_cost FROM sample_edges'', '
                    || i || ', ' || j ||
                    ', ' || flag || ' ) )';
            sql_OneToMany := sql_OneToMany || j ;
        END LOOP;
        sql_OneToMany :=
        ' SELECT path_seq, ' || i || ' as start_vid,  end_vid, node, edge, cost, agg_cost FROM gpu_path(
            ''SELECT id, source, target, cost, reverse_cost FROM sample_edges'', '
            || i || ', ARRAY[' || sql_OneToMany ||
            '], ' || flag || ' ) ';

        sql_OneToOne := 'select * from ( ' || sql_OneToOne ||') AS a';

        RETURN query SELECT set_eq( sql_OneToOne, sql_OneToMany,
          'oneToOne_equiv_oneToMany.pg: one to one = one to many, start ' || i || ', directed ' || flag);
    END LOOP;
    RETURN;
END
$BODY$
language plpgsql;

select * from pg_temp.o2o_equiv_o2m(18, true);
select * from pg_temp.o2o_equiv_o2m(18, false);

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/zero_one_edge_no_reverse.pg (126)
-- (results_eq on the prepared edges_sql: pgRouting's own checks that the data is what the case
-- needs; then each case in the five shapes, directed and undirected, by taptest)
-- ==============================================================================================
:restore;
:unit_costs;

-- 0 edges tests
PREPARE noreverse_edges0 AS
SELECT id, source, target, cost from sample_edges where id>18;

SELECT is_empty('noreverse_edges0','zero_one_edge_no_reverse.pg: Edges 0');

SELECT pg_temp.taptest('is_empty','noreverse_edges0', 7, 11, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges0', 11, 7, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges0', 7, 11, false);
SELECT pg_temp.taptest('is_empty','noreverse_edges0', 11, 7, false);

-- 1 edges tests

-- edge 11->16
PREPARE noreverse_edges1 AS
SELECT id, source, target, cost from sample_edges where id = 9;

SELECT results_eq('noreverse_edges1',
'SELECT 9::BIGINT, 11::BIGINT, 16::BIGINT,  1::FLOAT',
'zero_one_edge_no_reverse.pg: Edges1: 11->16');

SELECT pg_temp.taptest('is_empty','noreverse_edges1', 7, 11, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges1', 11, 7, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges1', 7, 11, false);
SELECT pg_temp.taptest('is_empty','noreverse_edges1', 11, 7, false);

-- edge 6->7
PREPARE noreverse_edges2 AS
SELECT id, source, target, cost from sample_edges where id = 4;

SELECT results_eq('noreverse_edges2',
'SELECT 4::BIGINT, 6::BIGINT, 7::BIGINT,  1::FLOAT',
'zero_one_edge_no_reverse.pg: Edges2: 6->7');

SELECT pg_temp.taptest('is_empty','noreverse_edges2', 7, 11, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges2', 11, 7, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges2', 7, 11, false);
SELECT pg_temp.taptest('is_empty','noreverse_edges2', 11, 7, false);

-- edge 7->11
PREPARE noreverse_edges3 AS
SELECT id, source, target, cost from sample_edges where id = 8;

SELECT results_eq('noreverse_edges3',
'SELECT 8::BIGINT, 7::BIGINT, 11::BIGINT,  1::FLOAT',
'zero_one_edge_no_reverse.pg: Edges3: 7->11');

SELECT pg_temp.taptest('isnt_empty','noreverse_edges3', 7, 11, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges3', 11, 7, true);
SELECT pg_temp.taptest('isnt_empty','noreverse_edges3', 7, 11, false);
SELECT pg_temp.taptest('isnt_empty','noreverse_edges3', 11, 7, false);

-- edge 10->11
PREPARE noreverse_edges4 AS
SELECT id, source, target, cost from sample_edges where id = 5;

SELECT results_eq('noreverse_edges4',
'SELECT 5::BIGINT, 10::BIGINT, 11::BIGINT, 1::FLOAT',
'zero_one_edge_no_reverse.pg: edges4: 10->11');

SELECT pg_temp.taptest('is_empty','noreverse_edges4', 7, 11, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges4', 11, 7, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges4', 7, 11, false);
SELECT pg_temp.taptest('is_empty','noreverse_edges4', 11, 7, false);

-- only 10 15
PREPARE noreverse_edges5 AS
SELECT id, source, target, cost from sample_edges where id = 3;

SELECT results_eq('noreverse_edges5',
'SELECT 3::BIGINT, 10::BIGINT, 15::BIGINT, -1::FLOAT',
'zero_one_edge_no_reverse.pg: edges5: 10 15');

SELECT pg_temp.taptest('is_empty','noreverse_edges5', 10, 15, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges5', 15, 10, true);
SELECT pg_temp.taptest('is_empty','noreverse_edges5', 10, 15, false);
SELECT pg_temp.taptest('is_empty','noreverse_edges5', 15, 10, false);

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/zero_one_edge_has_reverse.pg (126)
-- ==============================================================================================
:restore;
:unit_costs;

-- 0 edges tests
PREPARE hasreverse_edges0 AS
SELECT id, source, target, cost, reverse_cost from sample_edges where id>18;

SELECT is_empty('hasreverse_edges0','zero_one_edge_has_reverse.pg: Edges 0');

SELECT pg_temp.taptest('is_empty','hasreverse_edges0', 7, 11, true);
SELECT pg_temp.taptest('is_empty','hasreverse_edges0', 11, 7, true);
SELECT pg_temp.taptest('is_empty','hasreverse_edges0', 7, 11, false);
SELECT pg_temp.taptest('is_empty','hasreverse_edges0', 11, 7, false);

-- 1 edges tests

-- edge 11-16
PREPARE hasreverse_edges1 AS
SELECT id, source, target, cost, reverse_cost from sample_edges where id = 9;

SELECT results_eq('hasreverse_edges1',
'SELECT 9::BIGINT, 11::BIGINT, 16::BIGINT, 1::FLOAT, 1::FLOAT',
'zero_one_edge_has_reverse.pg: Edges1: 11-16');

SELECT pg_temp.taptest('is_empty','hasreverse_edges1', 7, 11, true);
SELECT pg_temp.taptest('is_empty','hasreverse_edges1', 11, 7, true);
SELECT pg_temp.taptest('is_empty','hasreverse_edges1', 7, 11, false);
SELECT pg_temp.taptest('is_empty','hasreverse_edges1', 11, 7, false);

-- edge 6-7
PREPARE hasreverse_edges2 AS
SELECT id, source, target, cost, reverse_cost from sample_edges where id = 4;

SELECT results_eq('hasreverse_edges2',
'SELECT 4::BIGINT, 6::BIGINT, 7::BIGINT, 1::FLOAT, 1::FLOAT',
'zero_one_edge_has_reverse.pg: Edges2: 6-7');

SELECT pg_temp.taptest('is_empty','hasreverse_edges2', 7, 11, true);
SELECT pg_temp.taptest('is_empty','hasreverse_edges2', 11, 7, true);
SELECT pg_temp.taptest('is_empty','hasreverse_edges2', 7, 11, false);
SELECT pg_temp.taptest('is_empty','hasreverse_edges2', 11, 7, false);

-- edge 7-11
PREPARE hasreverse_edges3 AS
SELECT id, source, target, cost, reverse_cost from sample_edges where id = 8;

SELECT results_eq('hasreverse_edges3',
'SELECT 8::BIGINT, 7::BIGINT, 11::BIGINT, 1::FLOAT, 1::FLOAT',
'zero_one_edge_has_reverse.pg: Edges3: 7-11');

SELECT pg_temp.taptest('isnt_empty','hasreverse_edges3', 7, 11, true);
SELECT pg_temp.taptest('isnt_empty','hasreverse_edges3', 11, 7, true);
SELECT pg_temp.taptest('isnt_empty','hasreverse_edges3', 7, 11, false);
SELECT pg_temp.taptest('isnt_empty','hasreverse_edges3', 11, 7, false);

-- edge 10->11
PREPARE hasreverse_edges4 AS
SELECT id, source, target, cost, reverse_cost from sample_edges where id = 5;

SELECT results_eq('hasreverse_edges4',
'SELECT 5::BIGINT, 10::BIGINT, 11::BIGINT, 1::FLOAT, -1::FLOAT',
'zero_one_edge_has_reverse.pg: edges4: 10->11');

SELECT pg_temp.taptest('is_empty','hasreverse_edges4', 7, 11, true);
SELECT pg_temp.taptest('is_empty','hasreverse_edges4', 11, 7, true);
SELECT pg_temp.taptest('is_empty','hasreverse_edges4', 7, 11, false);
SELECT pg_temp.taptest('is_empty','hasreverse_edges4', 11, 7, false);

-- only 10<-15
PREPARE hasreverse_edges5 AS
SELECT id, source, target, cost, reverse_cost from sample_edges where id = 3;

SELECT results_eq('hasreverse_edges5',
'SELECT 3::BIGINT, 10::BIGINT, 15::BIGINT, -1::FLOAT, 1::FLOAT',
'zero_one_edge_has_reverse.pg: edges5: 10<-15');

SELECT pg_temp.taptest('is_empty','hasreverse_edges5', 10, 15, true);
SELECT pg_temp.taptest('isnt_empty','hasreverse_edges5', 15, 10, true);
SELECT pg_temp.taptest('isnt_empty','hasreverse_edges5', 10, 15, false);
SELECT pg_temp.taptest('isnt_empty','hasreverse_edges5', 15, 10, false);

-- ==============================================================================================
-- pgtap/dijkstra/dijkstra/edge_cases/zero_one_edge_neg1_reverse.pg (147)
-- ==============================================================================================
:restore;
:unit_costs;

-- 0 edges tests
PREPARE neg1reverse_edges0 AS
SELECT id, source, target, cost, reverse_cost from sample_edges where id>18;

SELECT is_empty('neg1reverse_edges0','zero_one_edge_neg1_reverse.pg: Edges 0');

SELECT pg_temp.taptest('is_empty','neg1reverse_edges0', 7, 11, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges0', 11, 7, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges0', 7, 11, false);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges0', 11, 7, false);

-- 1 edges tests

-- edge 11->16
PREPARE neg1reverse_edges1 AS
SELECT id, source, target, cost, -1::FLOAT AS reverse_cost from sample_edges where id = 9;

SELECT results_eq('neg1reverse_edges1',
'SELECT 9::BIGINT, 11::BIGINT, 16::BIGINT, 1::FLOAT, -1::FLOAT',
'zero_one_edge_neg1_reverse.pg: Edges1: 11 -> 16');

SELECT pg_temp.taptest('is_empty','neg1reverse_edges1', 7, 11, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges1', 11, 7, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges1', 7, 11, false);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges1', 11, 7, false);

-- edge 6->7
PREPARE neg1reverse_edges2 AS
SELECT id, source, target, cost, -1::FLOAT AS reverse_cost from sample_edges where id = 4;

SELECT results_eq('neg1reverse_edges2',
'SELECT 4::BIGINT, 6::BIGINT, 7::BIGINT, 1::FLOAT, -1::FLOAT',
'zero_one_edge_neg1_reverse.pg: Edges2: 6 -> 7');

SELECT pg_temp.taptest('is_empty','neg1reverse_edges2', 7, 11, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges2', 11, 7, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges2', 7, 11, false);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges2', 11, 7, false);

-- edge 7->11
PREPARE neg1reverse_edges3 AS
SELECT id, source, target, cost, -1::FLOAT AS reverse_cost from sample_edges where id = 8;

SELECT results_eq('neg1reverse_edges3',
'SELECT 8::BIGINT, 7::BIGINT, 11::BIGINT, 1::FLOAT, -1::FLOAT',
'zero_one_edge_neg1_reverse.pg: Edges3: 7 -> 11');

SELECT pg_temp.taptest('isnt_empty','neg1reverse_edges3', 7, 11, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges3', 11, 7, true);
SELECT pg_temp.taptest('isnt_empty','neg1reverse_edges3', 7, 11, false);
SELECT pg_temp.taptest('isnt_empty','neg1reverse_edges3', 11, 7, false);

-- edge 10->11
PREPARE neg1reverse_edges4 AS
SELECT id, source, target, cost, -1::FLOAT AS reverse_cost from sample_edges where id = 5;

SELECT results_eq('neg1reverse_edges4',
'SELECT 5::BIGINT, 10::BIGINT, 11::BIGINT, 1::FLOAT, -1::FLOAT',
'zero_one_edge_neg1_reverse.pg: edges4: 10 -> 11');

SELECT pg_temp.taptest('is_empty','neg1reverse_edges4', 7, 11, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges4', 11, 7, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges4', 7, 11, false);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges4', 11, 7, false);

-- vertices 10 15
PREPARE neg1reverse_edges5 AS
SELECT id, source, target, cost, -1::FLOAT AS reverse_cost from sample_edges where id = 3;

SELECT results_eq('neg1reverse_edges5',
'SELECT 3::BIGINT, 10::BIGINT, 15::BIGINT, -1::FLOAT, -1::FLOAT',
'zero_one_edge_neg1_reverse.pg: edges5: only vertices 10  15');

SELECT pg_temp.taptest('is_empty','neg1reverse_edges5', 10, 15, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges5', 15, 10, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges5', 10, 15, false);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges5', 15, 10, false);

-- edge 8->12
PREPARE neg1reverse_edges6 AS
SELECT id, source, target, cost, -1::FLOAT AS reverse_cost from sample_edges where id = 12;

SELECT results_eq('neg1reverse_edges6',
'SELECT 12::BIGINT, 8::BIGINT, 12::BIGINT, 1::FLOAT, -1::FLOAT',
'zero_one_edge_neg1_reverse.pg: edges6: 8 -> 12');

SELECT pg_temp.taptest('is_empty','neg1reverse_edges6', 7, 11, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges6', 11, 7, true);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges6', 7, 11, false);
SELECT pg_temp.taptest('is_empty','neg1reverse_edges6', 11, 7, false);

-- ==============================================================================================
-- pgtap/allpairs/johnson/edge_cases.pg (15): pgr_johnson -> gpu_apsp (usual engine)
-- ==============================================================================================
:restore;
:unit_costs;

SELECT pg_temp.test_agg_cost('gpu_apsp', 'johnson/edge_cases.pg: pgr_johnson', true);
SELECT pg_temp.test_agg_cost('gpu_apsp', 'johnson/edge_cases.pg: pgr_johnson', false);
SELECT pg_temp.allpairs_test_flags('johnson/edge_cases.pg: pgr_johnson (gpu_apsp)');

PREPARE j_q2 AS
SELECT * FROM gpu_apsp(
    'SELECT source, target, cost, reverse_cost FROM sample_edges'
);

PREPARE j_q3 AS
SELECT * FROM gpu_apsp(
    'SELECT source, target, cost FROM sample_edges',
    true
);

SELECT lives_ok('j_q2', 'johnson/edge_cases.pg: SHOULD WORK: without id with flag');
SELECT lives_ok('j_q3', 'johnson/edge_cases.pg: SHOULD WORK: without id, with flag');

-- ==============================================================================================
-- pgtap/allpairs/floydWarshall/edge_cases.pg (15): pgr_floydWarshall -> gpu_apsp on the
-- floyd_warshall engine (the flags tests call gpu_apsp itself, under SET LOCAL)
-- ==============================================================================================
:restore;
:unit_costs;

SELECT pg_temp.test_agg_cost('pg_temp.floyd_warshall', 'floydWarshall/edge_cases.pg: pgr_floydWarshall', true);
SELECT pg_temp.test_agg_cost('pg_temp.floyd_warshall', 'floydWarshall/edge_cases.pg: pgr_floydWarshall', false);

SET LOCAL gpu_routing.apsp_algorithm = 'floyd_warshall';
SELECT pg_temp.allpairs_test_flags('floydWarshall/edge_cases.pg: pgr_floydwarshall (gpu_apsp, floyd_warshall engine)');

PREPARE fw_q2 AS
SELECT * FROM gpu_apsp(
    'SELECT source, target, cost, reverse_cost FROM sample_edges'
);

PREPARE fw_q3 AS
SELECT * FROM gpu_apsp(
    'SELECT source, target, cost FROM sample_edges',
    true
);

SELECT lives_ok('fw_q2', 'floydWarshall/edge_cases.pg: SHOULD WORK: without id with flag');
SELECT lives_ok('fw_q3', 'floydWarshall/edge_cases.pg: SHOULD WORK: without id, with flag');
RESET gpu_routing.apsp_algorithm;

-- ==============================================================================================
-- pgtap/allpairs/johnson/compare_dijkstra.pg (4)
-- ==============================================================================================
:restore;
:unique_costs;
SELECT pg_temp.allpairs_compare_dijkstra('gpu_apsp', 'johnson/compare_dijkstra.pg: pgr_johnson', true);
SELECT pg_temp.allpairs_compare_dijkstra('gpu_apsp', 'johnson/compare_dijkstra.pg: pgr_johnson', false);

-- ==============================================================================================
-- pgtap/allpairs/floydWarshall/compare_dijkstra.pg (4)
-- ==============================================================================================
SELECT pg_temp.allpairs_compare_dijkstra('pg_temp.floyd_warshall', 'floydWarshall/compare_dijkstra.pg: pgr_floydWarshall', true);
SELECT pg_temp.allpairs_compare_dijkstra('pg_temp.floyd_warshall', 'floydWarshall/compare_dijkstra.pg: pgr_floydWarshall', false);

-- ==============================================================================================
-- pgtap/allpairs/compare_directed.pg (15). pgRouting's copy reads the old edge_table; the vertex
-- arrays 1..17 are every vertex of either sample network, so sample_edges serves as it is.
-- pgr_floydWarshall: pg_temp.floyd_warshall; pgr_dijkstraCost: gpu_apsp with arrays;
-- pgr_johnson: gpu_apsp (usual engine). Flags 10-12 run gpu_apsp on the floyd_warshall engine,
-- 13-15 on the usual one.
-- ==============================================================================================
:restore;
:unit_costs;

-- all values must be >= 0
PREPARE cd_q1 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
    TRUE
) WHERE agg_cost < 0;

PREPARE cd_q2 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost FROM sample_edges ORDER BY id',
    TRUE
) WHERE agg_cost < 0;

PREPARE cd_q3 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost, -1::float as reverse_cost FROM sample_edges ORDER BY id',
    TRUE
) WHERE agg_cost < 0;

PREPARE cd_q4 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, -1::float as cost, reverse_cost FROM sample_edges ORDER BY id',
    TRUE
) WHERE agg_cost < 0;

SELECT is_empty('cd_q1', 'compare_directed.pg 1: No cost can be negative');
SELECT is_empty('cd_q2', 'compare_directed.pg 2: No cost can be negative');
SELECT is_empty('cd_q3', 'compare_directed.pg 3: No cost can be negative');
SELECT is_empty('cd_q4', 'compare_directed.pg 4: No cost can be negative');

PREPARE cd_q10 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost FROM sample_edges ORDER BY id',
    TRUE
);

PREPARE cd_q11 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
    TRUE
);

SELECT set_ne('cd_q10', 'cd_q11', 'compare_directed.pg 5: Results of with reverse_cost must be different of the one without it');

PREPARE cd_q20 AS
SELECT  *
FROM gpu_apsp(
    'SELECT id, source, target, cost FROM sample_edges ORDER BY id',
    ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],
    ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]
);

PREPARE cd_q21 AS
SELECT  *
FROM gpu_apsp(
    'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
    ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],
    ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]
);

SELECT set_eq('cd_q10', 'cd_q20','compare_directed.pg 6: With Out reverse_cost: Compare with (directed) pgr_dijkstraCost -> must give the same results');
SELECT set_eq('cd_q11', 'cd_q21','compare_directed.pg 7: With reverse_cost: Compare with (directed) pgr_dijkstraCost -> must give the same results');

PREPARE cd_q30 AS
SELECT  *
FROM gpu_apsp(
    'SELECT id, source, target, cost FROM sample_edges ORDER BY id',
    TRUE
);

PREPARE cd_q31 AS
SELECT  *
FROM gpu_apsp(
    'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id'
);

SELECT set_eq('cd_q10', 'cd_q30','compare_directed.pg 8: With Out reverse_cost: Compare with (directed) pgr_johnson -> must give the same results');
SELECT set_eq('cd_q11', 'cd_q31','compare_directed.pg 9: With reverse_cost: Compare with (directed) pgr_johnson -> must give the same results');

-- flags
SET LOCAL gpu_routing.apsp_algorithm = 'floyd_warshall';
SELECT lives_ok(
    'SELECT * FROM gpu_apsp(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id''
    )',
    'compare_directed.pg 10: Documentation says works with no flags (pgr_floydWarshall)');

SELECT lives_ok(
    'SELECT * FROM gpu_apsp(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id'',
        FALSE
    )',
    'compare_directed.pg 11: Documentation says works with 1 flag (pgr_floydWarshall)');

SELECT throws_ok(
    'SELECT * FROM gpu_apsp(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id'',
        FALSE, TRUE
    )','42883','function gpu_apsp(unknown, boolean, boolean) does not exist',
    'compare_directed.pg 12: Documentation says it does work with 2 flags (pgr_floydWarshall)');
RESET gpu_routing.apsp_algorithm;

SELECT lives_ok(
    'SELECT * FROM gpu_apsp(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id''
    )',
    'compare_directed.pg 13: Documentation says works with no flags (pgr_johnson)');

SELECT lives_ok(
    'SELECT * FROM gpu_apsp(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id'',
        FALSE
    )',
    'compare_directed.pg 14: Documentation says works with 1 flag (pgr_johnson)');

SELECT throws_ok(
    'SELECT * FROM gpu_apsp(
        ''SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id'',
        FALSE, TRUE
    )','42883','function gpu_apsp(unknown, boolean, boolean) does not exist',
    'compare_directed.pg 15: Documentation says it does work with 2 flags (pgr_johnson)');

-- ==============================================================================================
-- pgtap/allpairs/compare_undirected.pg (9), mapped as compare_directed.pg
-- ==============================================================================================
:restore;
:unit_costs;

PREPARE cu_q1 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
    FALSE
) WHERE agg_cost < 0;

PREPARE cu_q2 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost FROM sample_edges ORDER BY id',
    FALSE
) WHERE agg_cost < 0;

PREPARE cu_q3 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost, -1::float as reverse_cost FROM sample_edges ORDER BY id',
    FALSE
) WHERE agg_cost < 0;

PREPARE cu_q4 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, -1::float as cost, reverse_cost FROM sample_edges ORDER BY id',
    FALSE
) WHERE agg_cost < 0;

SELECT is_empty('cu_q1', 'compare_undirected.pg 1: No cost can be negative');
SELECT is_empty('cu_q2', 'compare_undirected.pg 2: No cost can be negative');
SELECT is_empty('cu_q3', 'compare_undirected.pg 3: No cost can be negative');
SELECT is_empty('cu_q4', 'compare_undirected.pg 4: No cost can be negative');

PREPARE cu_q10 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost FROM sample_edges ORDER BY id',
    FALSE
);

PREPARE cu_q11 AS
SELECT *
FROM pg_temp.floyd_warshall(
    'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
    FALSE
);

SELECT set_ne('cu_q10', 'cu_q11', 'compare_undirected.pg 5: Results of with reverse_cost must be different of the one without it');

PREPARE cu_q20 AS
SELECT  *
FROM gpu_apsp(
    'SELECT id, source, target, cost FROM sample_edges ORDER BY id',
    ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],
    ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],
    FALSE
);

PREPARE cu_q21 AS
SELECT  *
FROM gpu_apsp(
    'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
    ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],
    ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],
    FALSE
);

SELECT set_eq('cu_q10', 'cu_q20','compare_undirected.pg 6: With Out reverse_cost: Compare with (undirected) pgr_dijkstraCost -> must give the same results');
SELECT set_eq('cu_q11', 'cu_q21','compare_undirected.pg 7: With reverse_cost: Compare with (undirected) pgr_dijkstraCost -> must give the same results');

PREPARE cu_q30 AS
SELECT  *
FROM gpu_apsp(
    'SELECT id, source, target, cost FROM sample_edges ORDER BY id',
    FALSE
);

PREPARE cu_q31 AS
SELECT  *
FROM gpu_apsp(
    'SELECT id, source, target, cost, reverse_cost FROM sample_edges ORDER BY id',
    FALSE
);

SELECT set_eq('cu_q10', 'cu_q30','compare_undirected.pg 8: With Out reverse_cost: Compare with (undirected) pgr_johnson -> must give the same results');
SELECT set_eq('cu_q11', 'cu_q31','compare_undirected.pg 9: With reverse_cost: Compare with (undirected) pgr_johnson -> must give the same results');

-- ==============================================================================================
-- pgtap/dijkstra/driving_distance/edge_cases/issue_519.pg (3): many-source drivingDistance
-- holds each single-source one. pgr_drivingDistance(edges, s, 3.5) -> gpu_sssp(edges, s) with
-- distance <= 3.5; the many-source form -> gpu_sssp(edges, ARRAY[...]) (start_vid = source).
-- pgRouting's `cost` column (the last edge's cost) has no gpu_sssp counterpart: left out.
-- ==============================================================================================
:restore;
:unit_costs;
PREPARE dd519_q1 AS
SELECT 1::BIGINT AS start_vid, node, edge, distance AS agg_cost FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 1) WHERE distance <= 3.5;

PREPARE dd519_q2 AS
SELECT 5::BIGINT AS start_vid, node, edge, distance AS agg_cost FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 5) WHERE distance <= 3.5;

PREPARE dd519_q3 AS
SELECT 25::BIGINT AS start_vid, node, edge, distance AS agg_cost FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 25) WHERE distance <= 3.5;

PREPARE dd519_q4 AS
SELECT source AS start_vid, node, edge, distance AS agg_cost FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', ARRAY[1, 5, 25]) WHERE distance <= 3.5;

SELECT bag_has('dd519_q4', 'dd519_q1', 'issue_519.pg 1: DD from [1, 5, 25] should have results of DD from 1');
SELECT bag_has('dd519_q4', 'dd519_q2', 'issue_519.pg 2: DD from [1, 5, 25] should have results of DD from 5');
SELECT bag_has('dd519_q4', 'dd519_q3', 'issue_519.pg 3: DD from [1, 5, 25] should have results of DD from 25');

-- ==============================================================================================
-- pgtap/dijkstra/driving_distance/edge_cases/issue_3091.pg (1 of 2; test 1, a negative distance
-- raising an error, has no counterpart: gpu_sssp takes no distance, see the header)
-- ==============================================================================================
:restore;
-- Distance of 0 is valid (returns only the origin node).
SELECT ok(
    (SELECT count(*) = 1 FROM gpu_sssp('SELECT id, source, target, cost, reverse_cost FROM sample_edges', 1) WHERE distance <= 0.0),
    'issue_3091.pg 2: pgr_drivingDistance with distance=0 returns only origin'
);

-- ==============================================================================================
-- pgtap/dijkstra/driving_distance/edge_cases/negative_distance.pg (1 of 3; tests 1-2, a negative
-- and a zero distance raising an error, have no counterpart: gpu_sssp takes no distance)
-- ==============================================================================================
:restore;
:unit_costs;
SELECT lives_ok(
    $$SELECT * FROM gpu_sssp('SELECT id, source, target, cost FROM sample_edges', 1) WHERE distance <= 1.0$$,
    'negative_distance.pg 3: SHOULD NOT THROW because distance is positive'
);

-- ==============================================================================================
-- pgtap/dijkstra/driving_distance/edge_cases/issue_729.pg (4): after an UPDATE that uses the
-- driving distance, an ALTER TABLE on the same table must not fail. Many-source
-- pgr_drivingDistance(..., ARRAY(...), 1, false) -> gpu_sssp(..., ARRAY(...), false) with
-- distance <= 1. sample_edges has no geom column: ST_Length(geom) is computed from its end
-- points (x1, y1, x2, y2), the same segments. `network` is a temporary table here. Last in the
-- file, as it alters sample_edges (rolled back with the rest).
-- ==============================================================================================
:restore;
ALTER TABLE sample_edges
DROP COLUMN IF EXISTS node_count,
ADD COLUMN node_count INTEGER;

UPDATE sample_edges AS edge_table
SET node_count=count.sum
FROM (
    SELECT source AS start_vid, sum(node) AS sum
    FROM gpu_sssp(
        'SELECT id, source, target, ST_Length(ST_MakeLine(ST_MakePoint(x1, y1), ST_MakePoint(x2, y2))) AS cost FROM sample_edges',
        ARRAY(SELECT DISTINCT source FROM sample_edges),
        false)
    WHERE distance <= 1
    GROUP BY source) AS count
WHERE edge_table.source=count.start_vid;

ALTER TABLE sample_edges
DROP COLUMN IF EXISTS another_column,
ADD COLUMN another_column INTEGER;

CREATE TEMP TABLE network AS
SELECT *
from (
    VALUES
    (1::int, 1::int, 2::int, 100::int),
    (2::int, 2::int, 3::int, 100::int),
    (3::int, 3::int, 4::int, 100::int),
    (4::int, 5::int, 6::int, 100::int)
) as t (id, source,target,cost);

ALTER TABLE network
DROP COLUMN IF EXISTS node_count,
ADD COLUMN node_count INTEGER;

UPDATE network AS network
SET node_count=count.sum
FROM (
    SELECT source AS start_vid, sum(node) AS sum
    FROM gpu_sssp(
        'SELECT id, source, target, cost FROM network',
        ARRAY(SELECT DISTINCT source FROM network),
        false)
    WHERE distance <= 1
    GROUP BY source) AS count
WHERE network.source=count.start_vid;

ALTER TABLE network
DROP COLUMN IF EXISTS another_column,
ADD COLUMN another_column INTEGER;

SELECT is_empty(
    'SELECT * FROM sample_edges WHERE node_count IS NULL',
    'issue_729.pg 1: node_count computed on every edge');
SELECT set_eq(
    'SELECT source, node_count FROM network ORDER BY source',
    'SELECT * FROM (VALUES (1, 1), (2, 2), (3, 3), (5, 5)) AS t(source, node_count)',
    'issue_729.pg 2: node_count is the sum of reachable node ids');
SELECT has_column('network', 'another_column',
    'issue_729.pg 3: ALTER TABLE succeeds on a table updated with pgr_drivingDistance (gpu_sssp)');
SELECT has_column('sample_edges', 'another_column',
    'issue_729.pg 4: ALTER TABLE succeeds on edges updated with pgr_drivingDistance (gpu_sssp)');

SELECT * FROM finish();
ROLLBACK;

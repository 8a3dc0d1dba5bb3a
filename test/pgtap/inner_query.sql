-- inner_query: the columns of edges_sql and combinations_sql, for every function. id, source and
-- target accept every integer type (smallint, integer, bigint) and refuse the rest; cost and
-- reverse_cost accept every numeric type (also real, double precision, numeric) and refuse the
-- rest. An accepted type must give exactly the rows of the bigint / float8 query; a refused one
-- raises 42804 with a message naming the column. Missing columns: 42703, except reverse_cost
-- (optional everywhere) and id (optional for gpu_apsp).
BEGIN;
SET LOCAL client_min_messages = warning;

SELECT plan(434);

-- A small part of random_int_edges: integer costs 1..10 and -1 (one-way edges), ~100 vertices,
-- so every integer and numeric type holds every value exactly.
-- The edges query with column `col` written as `expr` ($ stands for the column), or left out.
CREATE FUNCTION pg_temp.edges(col text DEFAULT NULL, expr text DEFAULT '$', left_out text DEFAULT NULL)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'SELECT ' || string_agg(CASE WHEN c = col THEN replace(expr, '$', c) || ' AS ' || c ELSE c END,
                                 ', ' ORDER BY n)
         || ' FROM random_int_edges WHERE source <= 100 AND target <= 100 ORDER BY id'
  FROM unnest(ARRAY['id', 'source', 'target', 'cost', 'reverse_cost']) WITH ORDINALITY AS x(c, n)
  WHERE c IS DISTINCT FROM left_out
$$;

CREATE FUNCTION pg_temp.kind_text(integer_kind boolean) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN integer_kind THEN 'ANY-INTEGER (smallint, integer or bigint)'
         ELSE 'ANY-NUMERICAL (smallint, integer, bigint, real, double precision or numeric)' END
$$;

-- 46 checks of one function: `call` is a query with %1$s for the quoted edges_sql.
CREATE FUNCTION pg_temp.edge_column_checks(label text, fn text, call text, id_optional boolean)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  base text := format(call, quote_literal(pg_temp.edges()));
  col text;
  type_name text;
  integer_kind boolean;
  accepted text[];
  refused text[][];
  i int;
BEGIN
  RETURN NEXT isnt_empty(base, label || ': the reference query returns rows');
  FOREACH col IN ARRAY ARRAY['id', 'source', 'target', 'cost', 'reverse_cost'] LOOP
    integer_kind := col IN ('id', 'source', 'target');
    IF integer_kind THEN
      accepted := '{smallint,integer,bigint}';
      refused := ARRAY[['$::real', 'real'], ['$::double precision', 'double precision'],
                       ['$::numeric', 'numeric'], ['$::text', 'text'], ['($ > 0)', 'boolean']];
    ELSE
      accepted := '{smallint,integer,bigint,real,double precision,numeric}';
      refused := ARRAY[['$::text', 'text'], ['($ > 0)', 'boolean']];
    END IF;
    FOREACH type_name IN ARRAY accepted LOOP
      RETURN NEXT results_eq(format(call, quote_literal(pg_temp.edges(col, '$::' || type_name))), base,
                             format('%s: %s %s accepted, same rows', label, col, type_name));
    END LOOP;
    FOR i IN 1 .. array_length(refused, 1) LOOP
      RETURN NEXT throws_ok(format(call, quote_literal(pg_temp.edges(col, refused[i][1]))), '42804',
                            format('column "%s" of edges_sql has type %s, expected %s', col, refused[i][2],
                                   pg_temp.kind_text(integer_kind)),
                            format('%s: %s %s refused', label, col, refused[i][2]));
    END LOOP;
  END LOOP;
  -- Missing columns.
  IF id_optional THEN
    RETURN NEXT results_eq(format(call, quote_literal(pg_temp.edges(left_out => 'id'))), base,
                           label || ': id is optional');
  ELSE
    RETURN NEXT throws_ok(format(call, quote_literal(pg_temp.edges(left_out => 'id'))), '42703',
                          format('edges_sql of %s has no column named "id"', fn), label || ': id is required');
  END IF;
  FOREACH col IN ARRAY ARRAY['source', 'target', 'cost'] LOOP
    RETURN NEXT throws_ok(format(call, quote_literal(pg_temp.edges(left_out => col))), '42703',
                          format('edges_sql of %s has no column named "%s"', fn, col),
                          format('%s: %s is required', label, col));
  END LOOP;
  RETURN NEXT results_eq(format(call, quote_literal(pg_temp.edges(left_out => 'reverse_cost'))),
                         format(call, quote_literal(pg_temp.edges('reverse_cost', '-1::float8'))),
                         label || ': reverse_cost is optional (absent = no reverse direction)');
END
$$;

-- 9 x 46 = 414.
SELECT pg_temp.edge_column_checks('gpu_sssp one source', 'gpu_sssp', 'SELECT * FROM gpu_sssp(%1$s, 3)', false);
SELECT pg_temp.edge_column_checks('gpu_sssp many sources', 'gpu_sssp', 'SELECT * FROM gpu_sssp(%1$s, ARRAY[2, 3, 5])', false);
SELECT pg_temp.edge_column_checks('gpu_path one to one', 'gpu_path', 'SELECT * FROM gpu_path(%1$s, 3, 20)', false);
SELECT pg_temp.edge_column_checks('gpu_path one to many', 'gpu_path', 'SELECT * FROM gpu_path(%1$s, 3, ARRAY[20, 30, 40])', false);
SELECT pg_temp.edge_column_checks('gpu_path many to one', 'gpu_path', 'SELECT * FROM gpu_path(%1$s, ARRAY[2, 3, 5], 20)', false);
SELECT pg_temp.edge_column_checks('gpu_path many to many', 'gpu_path', 'SELECT * FROM gpu_path(%1$s, ARRAY[2, 3], ARRAY[20, 30])', false);
SELECT pg_temp.edge_column_checks('gpu_path combinations', 'gpu_path',
  'SELECT * FROM gpu_path(%1$s, ''SELECT * FROM (VALUES (2, 20), (3, 30), (5, 40)) AS c(source, target)'')', false);
SELECT pg_temp.edge_column_checks('gpu_apsp all pairs', 'gpu_apsp', 'SELECT * FROM gpu_apsp(%1$s, false)', true);
SELECT pg_temp.edge_column_checks('gpu_apsp cost matrix', 'gpu_apsp', 'SELECT * FROM gpu_apsp(%1$s, ARRAY[2, 3, 5], ARRAY[20, 30, 40])', true);

-- combinations_sql: source and target, integers only. 2 x 8 + 2 = 18.
CREATE FUNCTION pg_temp.combinations(col text DEFAULT NULL, expr text DEFAULT '$', left_out text DEFAULT NULL)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'SELECT ' || string_agg(CASE WHEN c = col THEN replace(expr, '$', c) || ' AS ' || c ELSE c END,
                                 ', ' ORDER BY n)
         || ' FROM (VALUES (2::bigint, 20::bigint), (3, 30), (5, 40), (3, 2)) AS p(source, target)'
  FROM unnest(ARRAY['source', 'target']) WITH ORDINALITY AS x(c, n)
  WHERE c IS DISTINCT FROM left_out
$$;

CREATE FUNCTION pg_temp.combination_column_checks() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  call text := 'SELECT * FROM gpu_path(' || quote_literal(pg_temp.edges()) || ', %s)';
  base text := format(call, quote_literal(pg_temp.combinations()));
  col text;
  type_name text;
  refused text[][] := ARRAY[['$::real', 'real'], ['$::double precision', 'double precision'],
                            ['$::numeric', 'numeric'], ['$::text', 'text'], ['($ > 0)', 'boolean']];
  i int;
BEGIN
  FOREACH col IN ARRAY ARRAY['source', 'target'] LOOP
    FOREACH type_name IN ARRAY ARRAY['smallint', 'integer', 'bigint'] LOOP
      RETURN NEXT results_eq(format(call, quote_literal(pg_temp.combinations(col, '$::' || type_name))), base,
                             format('combinations_sql: %s %s accepted, same rows', col, type_name));
    END LOOP;
    FOR i IN 1 .. array_length(refused, 1) LOOP
      RETURN NEXT throws_ok(format(call, quote_literal(pg_temp.combinations(col, refused[i][1]))), '42804',
                            format('column "%s" of combinations_sql has type %s, expected %s', col,
                                   refused[i][2], pg_temp.kind_text(true)),
                            format('combinations_sql: %s %s refused', col, refused[i][2]));
    END LOOP;
    RETURN NEXT throws_ok(format(call, quote_literal(pg_temp.combinations(left_out => col))), '42703',
                          format('combinations_sql of gpu_path has no column named "%s"', col),
                          format('combinations_sql: %s is required', col));
  END LOOP;
END
$$;
SELECT pg_temp.combination_column_checks();

-- Columns are found by name: any order, other columns ignored; domains count as their base type.
SELECT results_eq(
  $$SELECT * FROM gpu_path('SELECT ''x''::text AS label, reverse_cost, cost, target, source, id, now() AS t
                            FROM random_int_edges WHERE source <= 100 AND target <= 100 ORDER BY id',
                           ARRAY[2, 3], ARRAY[20, 30])$$,
  format('SELECT * FROM gpu_path(%L, ARRAY[2, 3], ARRAY[20, 30])', pg_temp.edges()),
  'edges_sql columns in any order, with extra columns: same rows');
CREATE DOMAIN pg_temp.vertex_id AS bigint CHECK (VALUE > 0);
CREATE DOMAIN pg_temp.edge_cost AS numeric(8, 2);
SELECT results_eq(
  $$SELECT * FROM gpu_path('SELECT id::pg_temp.vertex_id AS id, source::pg_temp.vertex_id AS source,
                                   target::pg_temp.vertex_id AS target, cost::pg_temp.edge_cost AS cost,
                                   reverse_cost::pg_temp.edge_cost AS reverse_cost
                            FROM random_int_edges WHERE source <= 100 AND target <= 100 ORDER BY id',
                           ARRAY[2, 3], ARRAY[20, 30])$$,
  format('SELECT * FROM gpu_path(%L, ARRAY[2, 3], ARRAY[20, 30])', pg_temp.edges()),
  'domains over bigint and numeric are accepted as their base types');

SELECT * FROM finish();
ROLLBACK;

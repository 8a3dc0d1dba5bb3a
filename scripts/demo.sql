-- The demo's story on New York's road network (ny_edges and ny_vertices, loaded by
-- scripts/load_ny.sh; 264,346 intersections, 733,846 road segments): a kept graph and its road
-- index, a route in a fraction of a millisecond that a committed UPDATE never leaves stale, a
-- service area, a cost matrix as arrays, each beside pgRouting on the same tables with the times
-- measured here and their ratio; a short look at the server at the end.
-- The DIMACS lengths are in tenths of a metre: the kept graph keeps them as they are (so a 5 km
-- service area is 50000) and the answers are shown in km.
-- psql variables: calibrate=1 also runs gpu_routing_calibrate() at the end (scripts/demo.sh sets
-- it from GPU_ROUTING_DEMO_CALIBRATE=1).
-- It makes the kept graph ny anew (dropping one of that name) and changes one row of ny_edges
-- and restores it: run it in a database of its own (scripts/demo.sh makes a throwaway cluster).
\set QUIET on
\pset footer off
\pset pager off
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpu_routing;
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;
\set edges 'SELECT id, source, target, cost FROM ny_edges'

-- timed(step, call, query, calls): runs query (whose first column is the answer shown) calls
-- times after one untimed call when calls > 1, and records the mean milliseconds of a call,
-- measured by clock_timestamp() around the calls, in the temporary table timings.
CREATE TEMP TABLE timings (step text, call text, answer text, calls int, ms float8);
CREATE PROCEDURE pg_temp.timed(step text, call text, query text, calls int DEFAULT 1)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  answer text;
BEGIN
  IF calls > 1 THEN EXECUTE query INTO answer; END IF;
  started := clock_timestamp();
  FOR i IN 1..calls LOOP
    EXECUTE query INTO answer;
  END LOOP;
  INSERT INTO timings VALUES (step, call, answer, calls,
                              extract(epoch FROM clock_timestamp() - started) * 1000 / calls);
END $$;
-- A step's calls side by side, pgRouting's last, each gpu_routing call's speed-up over it.
CREATE FUNCTION pg_temp.side_by_side(wanted text)
RETURNS TABLE (call text, answer text, ms_per_call numeric, vs_pgrouting text)
LANGUAGE sql AS $$
  SELECT t.call, t.answer,
         round(t.ms::numeric, CASE WHEN t.ms < 1 THEN 3 WHEN t.ms < 100 THEN 1 ELSE 0 END),
         CASE WHEN t.call LIKE 'pgr\_%' THEN format('(%s call)', t.calls)
              ELSE to_char(p.ms / t.ms, 'FM999,999,990') || 'x faster' END
  FROM timings t
  LEFT JOIN timings p ON p.step = t.step AND p.call LIKE 'pgr\_%'
  WHERE t.step = wanted
  ORDER BY t.call LIKE 'pgr\_%', t.call
$$;
-- Waits until the kept graph's road index is made (after gpu_graph_index, or re-made by a
-- background worker after a committed change); returns the seconds waited.
CREATE FUNCTION pg_temp.wait_for_index(graph text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
BEGIN
  WHILE NOT EXISTS (SELECT 1 FROM gpu_graphs() g
                    WHERE g.name = graph AND g.forms LIKE 'directed with road index%') LOOP
    IF clock_timestamp() - started > interval '300 s' THEN
      RAISE EXCEPTION 'the road index of kept graph % was not made within 300 s: %', graph,
        (SELECT g.forms FROM gpu_graphs() g WHERE g.name = graph);
    END IF;
    PERFORM pg_sleep(0.02);
  END LOOP;
  RETURN round(extract(epoch FROM clock_timestamp() - started)::numeric, 2);
END $$;

-- Two real intersections: the nearest to Times Square and to JFK Airport's terminals, and four
-- more places for the matrix.
CREATE TEMP TABLE places AS
SELECT p.name, v.id AS vertex
FROM (VALUES ('Times Square', -73.9855, 40.7580), ('JFK Airport', -73.7781, 40.6413),
             ('Brooklyn Bridge', -73.9969, 40.7061), ('Yankee Stadium', -73.9262, 40.8296),
             ('Staten Island Ferry', -74.0721, 40.6437), ('Flushing Meadows', -73.8448, 40.7400))
       AS p(name, lon, lat)
CROSS JOIN LATERAL (SELECT id FROM ny_vertices
                    ORDER BY point(ny_vertices.lon, ny_vertices.lat) <-> point(p.lon, p.lat)
                    LIMIT 1) AS v;
SELECT vertex AS times_square FROM places WHERE name = 'Times Square' \gset
SELECT vertex AS jfk FROM places WHERE name = 'JFK Airport' \gset

\echo '\n== 1. New York as a kept graph with its road index'
\echo 'Built once into the server''s shared memory, it serves every session; the road index (a'
\echo 'customizable contraction hierarchy) answers routes and matrices from it.'
DO $$ BEGIN PERFORM gpu_graph_drop('ny') FROM gpu_graphs() WHERE name = 'ny'; END $$;
\t on
\echo 'SELECT gpu_graph_create(''ny'', ''SELECT id, source, target, cost FROM ny_edges'');'
SELECT gpu_graph_create('ny', :'edges');
\echo 'SELECT gpu_graph_index(''ny'');'
SELECT gpu_graph_index('ny');
\t off

SELECT format('-- Times Square to JFK Airport (intersections %s and %s): gpu_path on the kept graph, '
              'the mean of 1000 calls; pgr_dijkstra on the table, one call', :times_square, :jfk)
       AS heading \gset
\echo :heading
CALL pg_temp.timed('route', 'gpu_path(''graph:ny'', ...)',
                     format($q$SELECT format('%%s road segments, %%s km', count(*) - 1,
                                             round((max(agg_cost) / 10000)::numeric, 2))
                               FROM gpu_path('graph:ny', %s, %s)$q$, :times_square, :jfk), 1000);
SELECT graph AS served_by_kept_graph, device, algorithm, notes FROM gpu_routing_last_run();
CALL pg_temp.timed('route', 'pgr_dijkstra(''SELECT ... FROM ny_edges'', ...)',
                     format($q$SELECT format('%%s road segments, %%s km', count(*) - 1,
                                             round((max(agg_cost) / 10000)::numeric, 2))
                               FROM pgr_dijkstra(%L, %s, %s)$q$, :'edges', :times_square, :jfk));
SELECT * FROM pg_temp.side_by_side('route');

\echo '\n== 2. Never stale: a road on that route closed by a committed UPDATE, then opened again'
CREATE TEMP TABLE route AS SELECT * FROM gpu_path('graph:ny', :times_square, :jfk);
SELECT edge AS closed, cost AS open_cost FROM route
WHERE path_seq = (SELECT max(path_seq) / 2 FROM route) \gset
-- route_now(moment, ...): the route as a call sees it now, and what served it (the first two
-- of its notes: a GPU engine adds its launch parameters).
CREATE TEMP TABLE moments (n serial, moment text, route text, uses_the_road boolean, ms numeric,
                           graph text, engine text, notes text);
CREATE PROCEDURE pg_temp.route_now(moment text, source bigint, target bigint, road bigint)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  answer text;
  uses boolean;
  elapsed numeric;
BEGIN
  SELECT format('%s road segments, %s km', count(*) - 1, round((max(agg_cost) / 10000)::numeric, 2)),
         bool_or(edge = road)
  INTO answer, uses FROM gpu_path('graph:ny', source, target);
  elapsed := round((extract(epoch FROM clock_timestamp() - started) * 1000)::numeric, 3);
  INSERT INTO moments (moment, route, uses_the_road, ms, graph, engine, notes)
  SELECT moment, answer, uses, elapsed, r.graph, r.algorithm,
         regexp_replace(array_to_string((string_to_array(r.notes, '; '))[1:2], '; '),
                        'background worker [0-9]+', 'a background worker')
  FROM gpu_routing_last_run() r;
END $$;
SELECT format('UPDATE ny_edges SET cost = 10000000 WHERE id = %s;', :closed) AS close_it,
       format('UPDATE ny_edges SET cost = %s WHERE id = %s;', :open_cost, :closed) AS open_it,
       format('-- road segment %s of the route (%s m) closed: 1000 km, no shortest route takes it',
              :closed, round(:open_cost / 10.0)) AS close_comment \gset
\echo 'Two UPDATEs, each committed on its own, and the same route asked of graph:ny after each:'
\echo '  ' :close_it :close_comment
\echo '  ' :open_it '     -- opened again'
CALL pg_temp.route_now('before', :times_square, :jfk, :closed);
:close_it
CALL pg_temp.route_now('1st UPDATE: the next call', :times_square, :jfk, :closed);
CALL pg_temp.route_now(format('index re-made (%s s): next call', pg_temp.wait_for_index('ny')),
                       :times_square, :jfk, :closed);
:open_it
CALL pg_temp.route_now('2nd UPDATE: the next call', :times_square, :jfk, :closed);
CALL pg_temp.route_now(format('index re-made (%s s): next call', pg_temp.wait_for_index('ny')),
                       :times_square, :jfk, :closed);
CALL pg_temp.timed('reopened', 'route',
                   format($q$SELECT format('%%s road segments, %%s km', count(*) - 1,
                                           round((max(agg_cost) / 10000)::numeric, 2))
                             FROM gpu_path('graph:ny', %s, %s)$q$, :times_square, :jfk), 1000);
INSERT INTO moments (moment, route, ms, graph, engine, notes)
SELECT '1000 calls after (mean)', t.answer, round(t.ms::numeric, 3), r.graph, r.algorithm,
       r.notes
FROM timings t, gpu_routing_last_run() r WHERE t.step = 'reopened';
SELECT moment, route, uses_the_road, ms, engine, notes FROM moments ORDER BY n;

\echo '\n== 3. A service area: every intersection within 5 km of Times Square by road'
CALL pg_temp.timed('area', 'gpu_driving_distance(''graph:ny'', ..., 50000)',
                     format($q$SELECT format('%%s intersections, the farthest %%s km', count(*),
                                             round((max(agg_cost) / 10000)::numeric, 2))
                               FROM gpu_driving_distance('graph:ny', %s, 50000)$q$, :times_square), 100);
CALL pg_temp.timed('area', 'pgr_drivingDistance(''SELECT ... FROM ny_edges'', ..., 50000)',
                     format($q$SELECT format('%%s intersections, the farthest %%s km', count(*),
                                             round((max(agg_cost) / 10000)::numeric, 2))
                               FROM pgr_drivingDistance(%L, %s, 50000)$q$, :'edges', :times_square));
SELECT * FROM pg_temp.side_by_side('area');

\echo '\n== 4. Cost matrices as arrays: one row per origin, its costs in the order of the destinations'
\echo 'The six places (km):'
SELECT array_agg(vertex ORDER BY name) AS place_vertices FROM places \gset
SELECT string_agg(name, ', ' ORDER BY name) AS columns FROM places \gset
\echo 'columns:' :columns
SELECT p.name AS "from", c.km
FROM gpu_apsp_array('graph:ny', :'place_vertices'::bigint[], :'place_vertices'::bigint[]) m
JOIN places p ON p.vertex = m.start_vid
CROSS JOIN LATERAL (SELECT array_agg(round((cost / 10000)::numeric, 1) ORDER BY k) AS km
                    FROM unnest(m.agg_costs) WITH ORDINALITY AS u(cost, k)) c
ORDER BY p.name;
\echo '\n-- 100 x 100: intersections 2643, 5286, ... 264300, both ways between every two; gpu_apsp_array'
\echo '   on the kept graph (10 calls), pgr_dijkstraCostMatrix on the table (a Dijkstra per origin: the'
\echo '   slowest step of the demo). The answer: the pairs with a route and the sum of their costs.'
SELECT array_agg(k * 2643) AS hundred FROM generate_series(1, 100) AS k \gset
CALL pg_temp.timed('matrix', 'gpu_apsp_array(''graph:ny'', ...)',
                     format($q$SELECT format('%%s pairs, %%s km in all', count(*),
                                             round((sum(cost) / 10000)::numeric))
                               FROM gpu_apsp_array('graph:ny', %L::bigint[], %L::bigint[]) m,
                                    unnest(m.agg_costs) AS cost
                               WHERE cost > 0 AND cost < 'Infinity'$q$, :'hundred', :'hundred'), 10);
CALL pg_temp.timed('matrix', 'pgr_dijkstraCostMatrix(''SELECT ... FROM ny_edges'', ...)',
                     format($q$SELECT format('%%s pairs, %%s km in all', count(*),
                                             round((sum(agg_cost) / 10000)::numeric))
                               FROM pgr_dijkstraCostMatrix(%L, %L::bigint[])$q$, :'edges', :'hundred'));
SELECT * FROM pg_temp.side_by_side('matrix');

\echo '\n== 5. The server, briefly'
SELECT name, value FROM gpu_routing_info()
WHERE name IN ('version', 'build', 'gpu', 'openmp threads', 'kept graphs') OR name ~ '^gpu [0-9]+$'
UNION ALL
SELECT 'engines', format('%s on the CPU, %s on the GPU', count(*) FILTER (WHERE name LIKE '%(cpu)'),
                         count(*) FILTER (WHERE name LIKE '%(gpu)'))
FROM gpu_routing_info() WHERE name LIKE 'engine %';
\echo '\n-- gpu_routing_last_run(): the last route, where it ran and why'
SELECT count(*) FROM gpu_path('graph:ny', :times_square, :jfk) \gset
SELECT function, graph, device, algorithm, rows, round(total_ms::numeric, 3) AS total_ms, reason
FROM gpu_routing_last_run() \gx
\if :{?calibrate}
\echo '-- gpu_routing_calibrate(): this machine''s speeds, which auto estimates every call with'
SELECT count(*) FILTER (WHERE source = 'measured') AS measured,
       count(*) FILTER (WHERE source = 'built-in') AS built_in
FROM gpu_routing_calibrate();
\else
\echo '(auto chose by the speeds named above; SELECT * FROM gpu_routing_calibrate() measures this'
\echo ' machine''s, superuser, half a minute on two cores: GPU_ROUTING_DEMO_CALIBRATE=1 scripts/demo.sh)'
\endif

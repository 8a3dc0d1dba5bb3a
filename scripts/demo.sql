-- The demo's questions on the New York road network (tables ny_edges and ny_vertices, loaded by
-- scripts/load_ny.sh). The DIMACS lengths are in tenths of a metre: edges_sql divides them by 10,
-- so every cost below is in metres.
\pset footer off
\set QUIET on
SET client_min_messages = warning;
\set edges 'SELECT id, source, target, cost / 10 AS cost FROM ny_edges'
CREATE EXTENSION IF NOT EXISTS gpu_routing;
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;

\echo '\n== What this server offers'
SELECT * FROM gpu_routing_info();

\echo '\n== gpu_routing_calibrate(): the speeds of this machine, which auto estimates every call with (a few seconds, once per server)'
SELECT speed, round(value::numeric, 4) AS value, source FROM gpu_routing_calibrate();

-- A few places, each snapped to the nearest intersection.
CREATE TEMP TABLE places AS
SELECT p.name, v.id AS vertex, round(v.lon::numeric, 5) AS lon, round(v.lat::numeric, 5) AS lat
FROM (VALUES ('Times Square', -73.9855, 40.7580), ('JFK Airport', -73.7781, 40.6413),
             ('Brooklyn Bridge', -73.9969, 40.7061), ('Yankee Stadium', -73.9262, 40.8296),
             ('Staten Island Ferry', -74.0721, 40.6437), ('Flushing Meadows', -73.8448, 40.7400)) AS p(name, lon, lat)
CROSS JOIN LATERAL (SELECT id, lon, lat FROM ny_vertices
                    ORDER BY (ny_vertices.lon - p.lon) ^ 2 + (ny_vertices.lat - p.lat) ^ 2 LIMIT 1) AS v;
\echo '\n== The places, snapped to the nearest intersection'
SELECT * FROM places;
SELECT vertex AS times_square FROM places WHERE name = 'Times Square' \gset
SELECT vertex AS jfk FROM places WHERE name = 'JFK Airport' \gset

\echo '\n== gpu_path: Times Square to JFK Airport (first and last rows of the route)'
CREATE TEMP TABLE route AS SELECT * FROM gpu_path(:'edges', :times_square, :jfk);
SELECT * FROM route WHERE path_seq <= 5 OR path_seq > (SELECT max(path_seq) - 3 FROM route) ORDER BY seq;
SELECT count(*) - 1 AS road_segments, round((max(agg_cost) / 1000)::numeric, 2) AS km FROM route;
SELECT reason AS why_this_engine FROM gpu_routing_last_run();
SELECT device, algorithm, vertices, edges, rows, round(load_ms::numeric, 1) AS load_ms,
       round(build_ms::numeric, 1) AS build_ms, round(compute_ms::numeric, 1) AS compute_ms,
       round(emit_ms::numeric, 1) AS emit_ms, round(total_ms::numeric, 1) AS total_ms
FROM gpu_routing_last_run();

\echo '\n== pgRouting answers the same question (the same length, slower)'
\timing on
SELECT count(*) - 1 AS road_segments, round((max(agg_cost) / 1000)::numeric, 2) AS km
FROM pgr_dijkstra(:'edges', :times_square, :jfk);
SELECT count(*) - 1 AS road_segments, round((max(agg_cost) / 1000)::numeric, 2) AS km
FROM gpu_path(:'edges', :times_square, :jfk);
\timing off

\echo '\n== gpu_sssp: how much of the city is within 2, 5 and 10 km of Times Square by road'
SELECT count(*) FILTER (WHERE distance <= 2000) AS within_2_km,
       count(*) FILTER (WHERE distance <= 5000) AS within_5_km,
       count(*) FILTER (WHERE distance <= 10000) AS within_10_km,
       count(*) AS reachable, round((max(distance) / 1000)::numeric, 1) AS farthest_km
FROM gpu_sssp(:'edges', :times_square);
\echo 'The farthest intersections and how the shortest-path tree reaches them:'
SELECT node, round(distance::numeric) AS metres, predecessor, edge
FROM gpu_sssp(:'edges', :times_square) ORDER BY distance DESC LIMIT 3;

\echo '\n== gpu_path one-to-many: from Times Square to every other place'
SELECT p.name, count(*) - 1 AS road_segments, round((max(r.agg_cost) / 1000)::numeric, 2) AS km
FROM gpu_path(:'edges', :times_square, (SELECT array_agg(vertex) FROM places)) AS r
JOIN places p ON p.vertex = r.end_vid GROUP BY p.name ORDER BY km;

\echo '\n== gpu_path combinations: three trips'
SELECT a.name AS from_place, b.name AS to_place, round((r.agg_cost / 1000)::numeric, 2) AS km
FROM gpu_path(:'edges', 'SELECT f.vertex AS source, t.vertex AS target FROM places f, places t
                          WHERE (f.name, t.name) IN ((''Brooklyn Bridge'', ''Yankee Stadium''),
                                                    (''Staten Island Ferry'', ''Flushing Meadows''),
                                                    (''JFK Airport'', ''Times Square''))') AS r
JOIN places a ON a.vertex = r.start_vid JOIN places b ON b.vertex = r.end_vid
WHERE r.edge = -1 ORDER BY a.name;

\echo '\n== gpu_apsp: the cost matrix between all six places (km)'
SELECT a.name AS from_place, b.name AS to_place, round((m.agg_cost / 1000)::numeric, 2) AS km
FROM gpu_apsp(:'edges', (SELECT array_agg(vertex) FROM places)) AS m
JOIN places a ON a.vertex = m.start_vid JOIN places b ON b.vertex = m.end_vid
WHERE b.vertex IN (SELECT vertex FROM places) ORDER BY a.name, b.name;

\echo '\n== gpu_apsp all pairs: the road network of lower Manhattan (every pair of its intersections)'
CREATE TEMP TABLE lower_manhattan AS
SELECT e.id, e.source, e.target, e.cost / 10 AS cost FROM ny_edges e JOIN ny_vertices s ON s.id = e.source JOIN ny_vertices t ON t.id = e.target
WHERE s.lon BETWEEN -74.02 AND -73.99 AND s.lat BETWEEN 40.70 AND 40.725
  AND t.lon BETWEEN -74.02 AND -73.99 AND t.lat BETWEEN 40.70 AND 40.725;
SELECT count(*) AS pairs, round((avg(agg_cost))::numeric) AS mean_metres, round(max(agg_cost)::numeric) AS longest_metres
FROM gpu_apsp('SELECT id, source, target, cost FROM lower_manhattan');
SELECT device, algorithm, vertices, sources, rows, round(compute_ms::numeric, 1) AS compute_ms,
       round(emit_ms::numeric, 1) AS emit_ms, round(total_ms::numeric, 1) AS total_ms
FROM gpu_routing_last_run();

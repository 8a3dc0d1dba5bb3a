#!/usr/bin/env bash
# auto against the engines it chooses between, forced, call after call in one session: all pairs
# of a random 4096-vertex graph as rows (16.8 million), gpu_apsp. Asks whether auto's calls cost
# more than its engine forced (the auto benchmark's medians of 7 rounds cannot tell that apart
# from the spread of writing the rows). Prints every call (wall time with the rows read back,
# gpu_routing_last_run()'s compute and emit) and a markdown table of medians.
# Usage (against a running cluster named by the PG* variables, as a superuser; gpu_routing
# preloaded): bench/auto_repeat.sh [--calls N (default 10)] [--device cpu|gpu (default gpu)]
#   [--calibrate] ENGINE...   (default engines: near_far multi_source on the GPU, dijkstra on the
#   CPU). --calibrate runs gpu_routing_calibrate() first (auto uses the stored speeds otherwise).
# Creates and drops the database gpu_routing_auto_repeat.
set -euo pipefail
calls=10
device=gpu
calibrate=0
engines=()
while [ $# -gt 0 ]; do
  case "$1" in
    --calls) calls=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --calibrate) calibrate=1; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "auto_repeat.sh: unknown option $1" >&2; exit 2 ;;
    *) engines+=("$1"); shift ;;
  esac
done
case "$device" in cpu | gpu) ;; *) echo "auto_repeat.sh: --device is cpu or gpu" >&2; exit 2 ;; esac
[[ "$calls" =~ ^[1-9][0-9]*$ ]] || { echo "auto_repeat.sh: --calls needs a positive number" >&2; exit 2; }
if [ ${#engines[@]} -eq 0 ]; then
  if [ "$device" = gpu ]; then engines=(near_far multi_source); else engines=(dijkstra); fi
fi
for e in "${engines[@]}"; do
  [[ "$e" =~ ^[a-z_]+$ ]] || { echo "auto_repeat.sh: bad engine name $e" >&2; exit 2; }
done
db=gpu_routing_auto_repeat
dropdb --if-exists "$db" >/dev/null
createdb "$db"
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true' EXIT
choices="'auto'$(printf ", '%s'" "${engines[@]}")"
psql -qX -v ON_ERROR_STOP=1 -d "$db" <<SQL
CREATE EXTENSION gpu_routing;
SET client_min_messages = warning;
-- A ring (every vertex reaches every other) plus three random arcs a vertex, costs 1-100.
CREATE TABLE e AS SELECT row_number() OVER () AS id, s AS source, t AS target, c AS cost FROM (
  SELECT v AS s, v % 4096 + 1 AS t, 1 + floor(random() * 100) AS c FROM generate_series(1, 4096) v
  UNION ALL SELECT v, 1 + floor(random() * 4096)::bigint, 1 + floor(random() * 100)
  FROM generate_series(1, 4096) v, generate_series(1, 3) k) x;
$([ "$calibrate" = 1 ] && echo "SELECT count(*) AS speeds_measured FROM gpu_routing_calibrate();")
SET work_mem = '4GB';
SET gpu_routing.max_memory = '64GB';
CREATE TEMP TABLE runs (round int, choice text, engine text, wall_s float8, compute_ms float8,
                        emit_ms float8);
DO \$\$
DECLARE started timestamptz; rows bigint; choice text;
BEGIN
  FOR round IN 1..$calls LOOP
    FOREACH choice IN ARRAY ARRAY[$choices] LOOP
      PERFORM set_config('gpu_routing.device', CASE WHEN choice = 'auto' THEN 'auto' ELSE '$device' END, false);
      PERFORM set_config('gpu_routing.apsp_algorithm', choice, false);
      started := clock_timestamp();
      SELECT count(*) INTO rows FROM gpu_apsp('SELECT id, source, target, cost FROM e');
      INSERT INTO runs SELECT round, choice, l.algorithm,
             extract(epoch FROM clock_timestamp() - started), l.compute_ms, l.emit_ms
        FROM gpu_routing_last_run() l;
    END LOOP;
  END LOOP;
END \$\$;
\pset footer off
SELECT round, choice, engine, round(wall_s::numeric, 3) AS wall_s,
       round(compute_ms::numeric, 1) AS compute_ms, round(emit_ms::numeric, 1) AS emit_ms
  FROM runs ORDER BY round, choice;
\pset format unaligned
\pset tuples_only on
SELECT E'\n| choice | engine | calls | wall (s) | compute (ms) | emit (ms) |\n|---|---|---:|---:|---:|---:|';
SELECT format('| %s | %s | %s | %s | %s | %s |', CASE WHEN choice = 'auto' THEN 'auto' ELSE choice || ' forced' END,
              string_agg(DISTINCT engine, ', '), count(*),
              round(percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_s)::numeric, 3),
              round(percentile_cont(0.5) WITHIN GROUP (ORDER BY compute_ms)::numeric, 1),
              round(percentile_cont(0.5) WITHIN GROUP (ORDER BY emit_ms)::numeric, 1))
  FROM runs GROUP BY choice ORDER BY choice <> 'auto', choice;
SQL

#!/usr/bin/env bash
# What reporting to gpu_routing_progress costs: the same calls with gpu_routing.track_progress on
# and off, alternating, in one run on one server; prints a markdown table of medians.
#   matrix: gpu_apsp cost matrix, 500 sources x every vertex of a 200 x 200 grid (20M rows):
#           the heaviest reporter (a report per batch and per 20 ms wait, rows counted per batch)
#   short:  500 one-to-one gpu_path calls on a kept graph of Rome in one statement: the fixed
#           cost of a call (its slot is written at start and end)
# Usage (against a running cluster named by the PG* variables, as a superuser; gpu_routing
# preloaded): bench/progress_bench.sh [--runs N (default 7)] [--device cpu|gpu (default cpu)]
# Data: GPU_ROUTING_DATA (default ../shared/data) for rome99.gr. Creates and drops the database
# gpu_routing_progress_bench.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=7
device=cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/progress_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
data=${GPU_ROUTING_DATA:-$root/../shared/data}
db=gpu_routing_progress_bench
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$db" "$@"; }
dropdb --if-exists "$db" >/dev/null 2>&1 || true
createdb "$db"
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true' EXIT
q -c "CREATE EXTENSION gpu_routing" -c "
  CREATE TABLE grid AS
  SELECT row_number() OVER () AS id, s AS source, t AS target, 1 + (s * 7919 % 9) AS cost
  FROM (SELECT i * 200 + j AS s, i * 200 + j + 1 AS t FROM generate_series(0, 199) i, generate_series(0, 198) j
        UNION ALL
        SELECT i * 200 + j, (i + 1) * 200 + j FROM generate_series(0, 198) i, generate_series(0, 199) j) e" \
  -c "CREATE TABLE rome (id bigserial, source bigint, target bigint, cost float8)"
awk '$1 == "a" { print $2 "\t" $3 "\t" $4 }' "$data/rome99.gr" | q -c "\copy rome (source, target, cost) FROM STDIN"
q -c "SELECT gpu_graph_create('rome', 'SELECT id, source, target, cost FROM rome')" >/dev/null
# Milliseconds of one statement, timed in the server.
q -c "CREATE FUNCTION timed(sql text) RETURNS float8 LANGUAGE plpgsql AS \$\$
      DECLARE t timestamptz := clock_timestamp();
      BEGIN EXECUTE sql; RETURN extract(epoch FROM clock_timestamp() - t) * 1000; END \$\$"
matrix="SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM grid', (SELECT array_agg(g) FROM generate_series(0, 39999, 80) g)::bigint[])"
short="SELECT count(*) FROM generate_series(1, 500) i, LATERAL gpu_path('graph:rome', 1 + (i * 37) % 3353, 1 + (i * 101) % 3353) p"
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
declare -A times
for workload in matrix short; do
  sql=${!workload}
  q -c "SET gpu_routing.device = $device" -c "SELECT timed(\$q\$$sql\$q\$)" >/dev/null  # warm-up
  for _ in $(seq "$runs"); do
    for setting in on off; do
      ms=$(q -c "SET gpu_routing.device = $device" -c "SET gpu_routing.track_progress = $setting" \
             -c "SELECT timed(\$q\$$sql\$q\$)")
      times[$workload.$setting]+="$ms "
    done
  done
done
echo "gpu_routing.track_progress on vs off, $runs runs each, alternating; device = $device; $(q -c "SELECT value FROM gpu_routing_info() WHERE name = 'version'") on $(q -c "SELECT version()" | cut -d, -f1)"
echo
echo "| workload | on (ms, median) | off (ms, median) | on / off | on: min-max | off: min-max |"
echo "|---|---:|---:|---:|---|---|"
for workload in matrix short; do
  on=$(echo "${times[$workload.on]}" | tr ' ' '\n' | grep . | median)
  off=$(echo "${times[$workload.off]}" | tr ' ' '\n' | grep . | median)
  label=$([ "$workload" = matrix ] && echo "gpu_apsp 500 sources x 40000 vertices (20M rows)" || echo "500 one-to-one gpu_path on kept Rome, one statement")
  spread() { echo "${times[$1]}" | tr ' ' '\n' | grep . | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.1f-%.1f", lo, hi }'; }
  printf '| %s | %.1f | %.1f | %.3f | %s | %s |\n' "$label" "$on" "$off" "$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')" \
    "$(spread "$workload.on")" "$(spread "$workload.off")"
done

#!/usr/bin/env bash
# The big road-network answers (issue 43's table): New York kept as graph 'ny' with its road
# index, every workload timed end to end from psql (`SELECT count(*) FROM f(...)`, \timing: the
# server's whole call and the round trip), one session, in one run. Each cell is the median of
# ROUNDS calls after one warming call, with gpu_routing.device set to the column's value; "refused"
# where that device does not run the function. auto decides on speeds gpu_routing_calibrate()
# measured on this machine first (about a minute), as a deployment's would. Prints one markdown
# table, then where each cell's last call spent its time and auto's estimates.
# The workloads (sources and targets: vertex ids spread over the graph by a fixed stride):
#   1000 x 1000 as arrays          gpu_apsp_array('graph:ny', 1000 ids, the same 1000 ids)
#   3000 x 3000 as arrays          the same with 3,000 ids
#   10000 x 10000 as arrays        the same with 10,000 ids (skipped with --no-big)
#   one-to-all as an array         gpu_apsp_array('graph:ny', ARRAY[1])
#   64 trees as arrays             gpu_apsp_array('graph:ny', 64 ids)
#   5 km service area, 1 start     gpu_driving_distance('graph:ny', 1, 50000) (tenths of a metre)
#   5 km service areas, 100 starts gpu_driving_distance('graph:ny', 100 ids, 50000)
#   10 km service areas, 100 starts the same at 100000 (about four times the area)
#   pgr_drivingDistance, 1 start   pgRouting's answer to the same area (the reference; cpu column)
# auto's cells name the engine it chose and where (gpu_routing_last_run()).
# Each session sets work_mem = '2GB', as an analyst asking for a 10,000 x 10,000 matrix (800 MB of
# rows) would: the rows of a set-returning function stay in memory up to work_mem and go to a
# temporary file beyond it (scripts/cluster.sh's 256 MB wrote 550 MB of that matrix to disk).
# Usage: bench/road_table.sh [--rounds N] [--devices "auto cpu gpu"] [--no-big] [--port P]
#                            [--settings "SET ...;"] (run by every session after work_mem)
# Starts its own server (scripts/cluster.sh, gpu_routing preloaded) and removes it at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 devices="auto cpu gpu" big=yes port=54482 current_name="" settings=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --devices) devices=$2; shift 2 ;;
    --no-big) big=no; shift ;;
    --port) port=$2; shift 2 ;;
    --settings) settings=$2; shift 2 ;;
    *) echo "road_table.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
. "$root/bench/ny_server.sh"
ny_bench_server road_table "$port"
psql -X -q -d bench -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;
SELECT gpu_graph_create('ny', 'SELECT id, source, target, cost FROM ny_edges');
SELECT gpu_graph_index('ny');
-- auto as a deployment runs it: on this machine's measured speeds (README: run it once).
SELECT count(*) FROM gpu_routing_calibrate();
-- Vertex ids spread over the graph: a stride coprime with the vertex count.
CREATE TABLE bench_ids AS
  SELECT n, array_agg(1 + (i * 7919::bigint) % (SELECT count(*) FROM ny_vertices) ORDER BY i) AS ids
  FROM (VALUES (64), (100), (1000), (3000), (10000)) v(n), generate_series(0, n - 1) i GROUP BY n;
SQL
ids() { echo "(SELECT ids FROM bench_ids WHERE n = $1)"; }
names=() queries=()
add() { names+=("$1"); queries+=("$2"); }
add "1000 x 1000 as arrays" "SELECT count(*) FROM gpu_apsp_array('graph:ny', $(ids 1000), $(ids 1000))"
add "3000 x 3000 as arrays" "SELECT count(*) FROM gpu_apsp_array('graph:ny', $(ids 3000), $(ids 3000))"
[ "$big" = yes ] &&
  add "10000 x 10000 as arrays" "SELECT count(*) FROM gpu_apsp_array('graph:ny', $(ids 10000), $(ids 10000))"
add "one-to-all as an array" "SELECT count(*) FROM gpu_apsp_array('graph:ny', ARRAY[1])"
add "64 trees as arrays" "SELECT count(*) FROM gpu_apsp_array('graph:ny', $(ids 64))"
add "5 km service area, 1 start" "SELECT count(*) FROM gpu_driving_distance('graph:ny', 1, 50000)"
add "5 km service areas, 100 starts" \
  "SELECT count(*) FROM gpu_driving_distance('graph:ny', $(ids 100), 50000)"
add "10 km service areas, 100 starts" \
  "SELECT count(*) FROM gpu_driving_distance('graph:ny', $(ids 100), 100000)"
pgr_area="SELECT count(*) FROM pgr_drivingDistance('SELECT id, source, target, cost FROM ny_edges', 1, 50000)"

# The median of ROUNDS timed calls after one warming call, or "refused" where the call errs.
time_query() {
  local device=$1 query=$2 script="$work/q.sql"
  {
    echo "SET gpu_routing.device = $device;"
    echo "SET work_mem = '2GB';"
    [ -n "$settings" ] && echo "$settings"
    echo "$query;"
    echo '\timing on'
    for _ in $(seq "$rounds"); do echo "$query;"; done
    echo '\timing off'
    echo "SELECT 'chosen: ' || algorithm || ', ' || device FROM gpu_routing_last_run();"
    echo "SELECT 'split: ' || algorithm || ' on ' || device || ': compute ' || round(compute_ms::numeric, 1) ||
      ' ms (transfers ' || round(transfer_ms::numeric, 1) || '), rows ' || round(emit_ms::numeric, 1) ||
      ' ms, total ' || round(total_ms::numeric, 1) || ' ms; ' || reason ||
      CASE WHEN device LIKE '%GPU service%' AND notes <> '' THEN ' [engine: ' || notes || ']' ELSE '' END
      FROM gpu_routing_last_run();"
  } >"$script"
  local out
  if ! out=$(psql -X -q -d bench -v ON_ERROR_STOP=1 -f "$script" 2>&1); then
    echo refused
    return
  fi
  grep -o 'Time: [0-9.]*' <<<"$out" | awk '{ print $2 }' | sort -n |
    awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                              printf(m < 10 ? "%.2f ms" : m < 100 ? "%.1f ms" : "%.0f ms", m) }'
  # The server's split of the last call, for the notes under the table.
  grep -o 'split: .*' <<<"$out" | sed "s/^split: /- $current_name, device = $device: /" >>"$work/notes"
  # auto's column says what it chose.
  [ "$device" = auto ] && grep -o 'chosen: .*' <<<"$out" | sed 's/^chosen: / (/; s/, CPU.*/, CPU)/; s/$/)/; s/))$/)/' | tr -d '\n'
  return 0
}

header="| workload |" rule="|---|"
for d in $devices; do header+=" device = $d |"; rule+="---:|"; done
echo "New York kept graph with its road index, $(nproc) cores, $(date -u +%F); end to end from psql, one session, median of $rounds calls after one warming call${settings:+; every session: $settings}"
echo
echo "$header"
echo "$rule"
for i in "${!names[@]}"; do
  line="| ${names[$i]} |"
  current_name=${names[$i]}
  for d in $devices; do line+=" $(time_query "$d" "${queries[$i]}") |"; done
  echo "$line"
done
line="| pgr_drivingDistance, 5 km, 1 start (pgRouting) |"
current_name="pgr_drivingDistance"
for d in $devices; do
  if [ "$d" = cpu ]; then line+=" $(time_query cpu "$pgr_area") |"; else line+=" |"; fi
done
echo "$line"
echo
echo "Where the time of each cell's last call went (gpu_routing_last_run()) and why its engine:"
echo
grep -v '^- pgr_drivingDistance' "$work/notes" || true

#!/usr/bin/env bash
# The cost of a call around the engine (issue 42): New York kept as graph 'ny' with its road index,
# pgbench with prepared statements against the yardstick `SELECT :s + 1` on the same server, in one
# run. Prints one markdown table:
#   rate, CLIENTS clients   transactions per second of each workload and its ratio to the
#                           yardstick's (medians of ROUNDS runs of SECONDS s, the workloads in turn)
#   p99, CLIENTS clients    the 99th percentile of every transaction's latency in those runs
#   one session             p50 and p99 of each workload's latency, one client (pgbench's
#                           per-transaction log: every transaction of the runs)
#   new connection          each transaction a new connection (pgbench -C): the yardstick's
#                           `SELECT 1` against a route, p50 of the transactions; the difference is
#                           what a session's first route costs (mapping the graph and its index)
# The workloads, random New York pairs:
#   distance   SELECT agg_costs FROM gpu_apsp_array('graph:ny', ARRAY[s], ARRAY[t])
#   path       SELECT ... FROM gpu_path('graph:ny', s, t) (the path's rows)
#   hierarchy  the same with gpu_routing.index_paths = hierarchy: the hierarchy's own path, one
#              query a pair, where the rule's (every engine's, pgRouting's) settles the distances
#              it reads; the same cost, other edges where shortest paths tie
#   path rows  as many rows of the path's five columns from generate_series, no route: what the
#              rows alone cost the server and pgbench (the mean row count of 200 random pairs).
#              Their costs are float8 arithmetic: until 2026-11-30 they were `(0.5 * g)::float8`,
#              numeric arithmetic and a cast a row, which doubled the rows' time (0.755 against
#              0.347 ms one session on the 2-core machine) and made this "floor" a false one.
#   line       a path of as many rows on a kept one-way line (graph 'line', its road index):
#              gpu_path's own call and rows with next to no search (each vertex one arc in), the
#              least a path of that many rows costs through gpu_path
# Usage: bench/call_rate.sh [--clients N] [--seconds S] [--rounds N] [--device cpu|gpu|auto]
#            [--port P] [--out FILE]
#   --clients N   pgbench clients for the rates [2 x the cores]
#   --seconds S   seconds a run [10]
#   --rounds N    runs per workload for the rates [3]
#   --device D    gpu_routing.device of the calls [cpu]
#   --port P      the server's port [54480]
# Starts its own server (scripts/cluster.sh, gpu_routing preloaded) and removes it at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
clients=$(( $(nproc) * 2 )) seconds=10 rounds=3 device=cpu port=54480 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "call_rate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
. "$root/bench/ny_server.sh"
ny_bench_server call_rate "$port"
psql -X -q -d bench -c "SELECT gpu_graph_create('ny', 'SELECT id, source, target, cost FROM ny_edges')" \
  -c "SELECT gpu_graph_index('ny')" >/dev/null
vertices=$(psql -X -At -d bench -c "SELECT max(id) FROM ny_vertices")
path_rows=$(psql -X -At -d bench -c "SELECT round(count(*) / 200.0) FROM generate_series(1, 200) g,
  LATERAL gpu_path('graph:ny', (g * 7919) % $vertices + 1, (g * 104729) % $vertices + 1)")
# A one-way line 1 -> 2 -> ... -> path_rows (its path from 1 has path_rows rows, the first its
# start), integer costs like New York's.
psql -X -q -d bench -c "CREATE TABLE line_edges AS SELECT g AS id, g AS source, g + 1 AS target,
  (100 + (g * 37) % 900)::float8 AS cost FROM generate_series(1, $((path_rows - 1))) g" \
  -c "SELECT gpu_graph_create('line', 'SELECT id, source, target, cost FROM line_edges')" \
  -c "SELECT gpu_graph_index('line')" >/dev/null
# chr(58): pgbench -M prepared reads a colon in the text as a variable.
cat >"$work/yardstick.sql" <<SQL
\set s random(1, $vertices)
SELECT :s::bigint + 1;
SQL
cat >"$work/distance.sql" <<SQL
\set s random(1, $vertices)
\set t random(1, $vertices)
SELECT agg_costs FROM gpu_apsp_array('graph' || chr(58) || 'ny', ARRAY[:s::bigint], ARRAY[:t::bigint]);
SQL
cat >"$work/path.sql" <<SQL
\set s random(1, $vertices)
\set t random(1, $vertices)
SELECT seq, node, edge, cost, agg_cost FROM gpu_path('graph' || chr(58) || 'ny', :s::bigint, :t::bigint);
SQL
cp "$work/path.sql" "$work/hierarchy.sql"
cat >"$work/rows.sql" <<SQL
\set s random(1, $vertices)
SELECT g::integer, (:s::bigint + g)::bigint, (:s::bigint - g)::bigint, g * 0.5::float8, g * 1.5::float8
  FROM generate_series(1, $path_rows) g;
SQL
cat >"$work/line.sql" <<SQL
SELECT seq, node, edge, cost, agg_cost FROM gpu_path('graph' || chr(58) || 'line', 1::bigint, $path_rows::bigint);
SQL
cat >"$work/select1.sql" <<SQL
SELECT 1;
SQL
chmod a+r "$work"/*.sql
options="-c gpu_routing.device=$device"
# pgbench WORKLOAD CLIENTS SEED [extra]: the run's tps; its per-transaction log in $work/log.WORKLOAD.*
run() {
  local workload=$1 n=$2 seed=$3
  shift 3
  rm -f "$work"/pgbench_log.*
  local workload_options=$options
  [ "$workload" = hierarchy ] && workload_options+=" -c gpu_routing.index_paths=hierarchy"
  PGOPTIONS="$workload_options" pgbench -n -M prepared --random-seed="$seed" -c "$n" -j "$(( n < $(nproc) ? n : $(nproc) ))" \
    -T "$seconds" -l --log-prefix="$work/pgbench_log" "$@" -f "$work/$workload.sql" bench >"$work/out" 2>&1 ||
    { echo "call_rate.sh: pgbench $workload failed:" >&2; tail -n 15 "$work/out" >&2; exit 1; }
  cat "$work"/pgbench_log.* >>"$work/latencies.$workload.$n$*"
  sed -nE 's/^tps = ([0-9.]+) .*/\1/p' "$work/out" | head -1
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Percentile P of the latencies (microseconds, the log's third field) of a log file, in ms.
percentile() { awk '{ print $3 }' "$1" | sort -n | awk -v p="$2" '{ v[NR] = $1 } END { i = int(NR * p / 100 + 0.5); if (i < 1) i = 1; printf "%.3f", v[i] / 1000 }'; }
# Every workload of the table, in its order (select1 only in the new-connection runs).
workloads="yardstick distance path hierarchy rows line"
declare -A tps
for workload in $workloads; do run "$workload" "$clients" 0 >/dev/null; done  # warm
rm -f "$work"/latencies.*
for round in $(seq "$rounds"); do
  for workload in $workloads; do
    rate=$(run "$workload" "$clients" "$round")
    tps[$workload]+="$rate "
    echo "call_rate.sh: round $round $workload: $rate tps" >&2
  done
done
for workload in $workloads; do run "$workload" 1 7 >/dev/null; done
for workload in select1 distance; do run "$workload" 1 9 -C >/dev/null; done
{
  y=$(printf '%s\n' ${tps[yardstick]} | median)
  echo "| workload (New York, gpu_routing.device = $device) | tps, $clients clients (median of $rounds) | / yardstick | p99, $clients clients (ms) | p50, one session (ms) | p99, one session (ms) |"
  echo "|---|---:|---:|---:|---:|---:|"
  for workload in $workloads; do
    t=$(printf '%s\n' ${tps[$workload]} | median)
    label=$workload
    [ "$workload" = yardstick ] && label="yardstick: SELECT :s + 1"
    [ "$workload" = distance ] && label="one distance: gpu_apsp_array('graph:ny', ARRAY[s], ARRAY[t])"
    [ "$workload" = path ] && label="one path: gpu_path('graph:ny', s, t), its rows"
    [ "$workload" = hierarchy ] && label="one path, the hierarchy's own (gpu_routing.index_paths = hierarchy)"
    [ "$workload" = rows ] && label="no route, the path's rows alone: $path_rows rows of generate_series"
    [ "$workload" = line ] && label="a path of $path_rows rows on a kept line (gpu_path's call and rows, next to no search)"
    printf '| %s | %.0f | %.3f | %s | %s | %s |\n' "$label" "$t" "$(awk -v a="$t" -v b="$y" 'BEGIN { print a / b }')" \
      "$(percentile "$work/latencies.${workload}.${clients}" 99)" \
      "$(percentile "$work/latencies.${workload}.1" 50)" "$(percentile "$work/latencies.${workload}.1" 99)"
  done
  echo
  s1=$(percentile "$work/latencies.select1.1-C" 50)
  d1=$(percentile "$work/latencies.distance.1-C" 50)
  echo "A new connection each transaction (pgbench -C, one client, p50): SELECT 1 $s1 ms, one distance $d1 ms: the first route costs $(awk -v a="$d1" -v b="$s1" 'BEGIN { printf "%.3f", a - b }') ms more."
  echo
  echo "Runs (tps): $(for w in $workloads; do printf '%s: %s; ' "$w" "${tps[$w]% }"; done)"
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(date -u '+%Y-%m-%d'), gpu_routing $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- src kernels || echo ' with local changes')."
} | tee ${out:+"$out"}

#!/usr/bin/env bash
# Throughput of random one-to-one New York routes under concurrency: a kept graph
# (gpu_path('graph:bench_ny', s, t)) against pgr_dijkstra on edges_sql, both measured with pgbench
# in one run on the same server, then a markdown table (routes per second = pgbench tps, mean
# latency, ratio to pgr_dijkstra).
#
# Usage (against a running cluster named by the PG* variables, e.g. after
# eval "$(scripts/cluster.sh start /tmp/bench_cluster 54420)"):
#   bench/kept_pgbench.sh [--duration SECONDS] [--device cpu|gpu] [--clients N] [--jobs N]
#   bench/kept_pgbench.sh                      # 30 s per side, 16 clients, 2 pgbench threads, CPU
#   bench/kept_pgbench.sh --device gpu         # on the device machine
# Each side runs `pgbench -n -c CLIENTS -j JOBS -T SECONDS --random-seed=20260101` with a script
# that picks source and target uniformly in 1..264346 (\set s random(1, 264346)): the same pairs
# in the same order on every side; a pair without a path gives 0 rows.
# Three sides, one after the other:
#   kept, threads=1   gpu_path on the kept graph, gpu_routing.threads = 1 (one OpenMP thread a call)
#   kept, threads=0   the same with gpu_routing.threads = 0 (the default: every core)
#   pgr_dijkstra      pgr_dijkstra('SELECT id, source, target, cost FROM bench_ny', :s, :t)
# pgr_dijkstra reads and builds the whole graph on every call (~0.6-1 s of CPU each on 2 cores):
# with the same duration it completes only a few dozen routes, which is enough for a rate.
#
# Data: the table bench_ny(id, source, target, cost) that `sql_bench --suite kept` (and the
# cpu/gpu-sssp/gpu-apsp suites) create: one row per arc of USA-road-d.NY, ids in file order. When
# missing it is created here from $GPU_ROUTING_DATA (default ../shared/data)/USA-road-d.NY.gr.gz,
# with the same rows. The kept graph bench_ny is dropped and re-created with the query sql_bench
# uses ('SELECT id, source, target, cost FROM public.bench_ny'), and its creation time printed.
# Needs psql and pgbench on PATH, the extensions gpu_routing (preloaded) and pgrouting.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${GPU_ROUTING_DATA:-$root/../shared/data}
duration=30
device=cpu
clients=16
jobs=2
seed=20260101  # every side draws the same pairs (each client its own sequence)
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2:?--duration needs seconds}; shift 2 ;;
    --device) device=${2:?--device needs cpu or gpu}; shift 2 ;;
    --clients) clients=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    [0-9]*) duration=$1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "kept_pgbench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$device" in cpu|gpu) ;; *) echo "kept_pgbench.sh: --device cpu or gpu" >&2; exit 2 ;; esac

psql_quiet() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

psql_quiet -c "SET client_min_messages = warning" \
  -c "CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE" \
  -c "CREATE EXTENSION IF NOT EXISTS gpu_routing"

if [ "$(psql_quiet -c "SELECT to_regclass('bench_ny') IS NOT NULL")" != t ]; then
  arcs=$data/USA-road-d.NY.gr.gz
  [ -r "$arcs" ] || { echo "kept_pgbench.sh: cannot read $arcs (set GPU_ROUTING_DATA)" >&2; exit 2; }
  echo "loading bench_ny from $arcs" >&2
  psql_quiet -c "CREATE TABLE bench_ny (id bigint, source bigint, target bigint, cost float8)"
  # The rows of sql_bench's load_table(read_dimacs(...)): id = the arc's rank in the file.
  zcat "$arcs" | awk '$1 == "a" { n++; printf "%d\t%s\t%s\t%s\n", n, $2, $3, $4 }' |
    psql_quiet -c "\copy bench_ny FROM STDIN"
  psql_quiet -c "ANALYZE bench_ny"
fi

schema=$(psql_quiet -c "SELECT quote_ident(relnamespace::regnamespace::text) FROM pg_class WHERE oid = 'bench_ny'::regclass")
psql_quiet -c "SELECT gpu_graph_drop(name) FROM gpu_graphs() WHERE name = 'bench_ny'" >/dev/null
start=$(date +%s%N)
created=$(psql_quiet -c "SELECT gpu_graph_create('bench_ny', 'SELECT id, source, target, cost FROM $schema.bench_ny')")
end=$(date +%s%N)
echo "kept graph bench_ny built in $(( (end - start) / 1000000 )) ms (psql end to end): $created"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/kept.sql" <<'EOF'
\set s random(1, 264346)
\set t random(1, 264346)
SELECT count(*) FROM gpu_path('graph:bench_ny', :s, :t);
EOF
cat >"$work/pgr.sql" <<'EOF'
\set s random(1, 264346)
\set t random(1, 264346)
SELECT count(*) FROM pgr_dijkstra('SELECT id, source, target, cost FROM bench_ny', :s, :t);
EOF

# run NAME SCRIPT PGOPTIONS: pgbench, its output kept in $work/NAME.out; prints "tps latency_ms count".
run() {
  local name=$1 script=$2 options=$3
  echo "pgbench: $name (-c $clients -j $jobs -T $duration, PGOPTIONS='$options')" >&2
  PGOPTIONS="$options" pgbench -n -c "$clients" -j "$jobs" -T "$duration" --random-seed="$seed" -f "$script" >"$work/$name.out" 2>&1 || {
    cat "$work/$name.out" >&2
    exit 1
  }
  local tps latency count failed
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/$name.out")
  latency=$(sed -n 's/^latency average = \([0-9.]*\) ms.*/\1/p' "$work/$name.out")
  count=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/$name.out")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/$name.out")
  if [ -n "$failed" ] && [ "$failed" != 0 ]; then
    echo "kept_pgbench.sh: $name: $failed failed transactions" >&2
    cat "$work/$name.out" >&2
    exit 1
  fi
  printf '%.1f %.1f %s\n' "$tps" "$latency" "$count"
}

base="-c gpu_routing.device=$device"
read -r kept1_tps kept1_lat kept1_n < <(run kept_threads1 "$work/kept.sql" "$base -c gpu_routing.threads=1")
read -r kept0_tps kept0_lat kept0_n < <(run kept_threads0 "$work/kept.sql" "$base -c gpu_routing.threads=0")
read -r pgr_tps pgr_lat pgr_n < <(run pgr_dijkstra "$work/pgr.sql" "")
engine=$(PGOPTIONS="$base -c gpu_routing.threads=1" psql_quiet -c "SELECT count(*) FROM gpu_path('graph:bench_ny', 1, 200000)" \
  -c "SELECT device || ', ' || algorithm FROM gpu_routing_last_run()" | tail -1)
calls=$(psql_quiet -c "SELECT calls FROM gpu_graphs() WHERE name = 'bench_ny'")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }
echo
echo "pgbench -n -c $clients -j $jobs -T $duration --random-seed=$seed, random source and target in 1..264346, New York (264346 V, 733846 arcs), device = $device ($engine with threads=1); kept graph bench_ny served $calls calls"
echo
echo "| side | routes/s (pgbench tps) | mean latency (ms) | routes done | vs pgr_dijkstra |"
echo "|---|---:|---:|---:|---:|"
echo "| gpu_path('graph:bench_ny'), gpu_routing.threads = 1 | $kept1_tps | $kept1_lat | $kept1_n | $(ratio "$kept1_tps" "$pgr_tps") |"
echo "| gpu_path('graph:bench_ny'), gpu_routing.threads = 0 (every core) | $kept0_tps | $kept0_lat | $kept0_n | $(ratio "$kept0_tps" "$pgr_tps") |"
echo "| pgr_dijkstra(edges_sql) | $pgr_tps | $pgr_lat | $pgr_n | 1.0x |"

#!/usr/bin/env bash
# The GPU service under load (issue 10): random one-to-one New York routes with pgbench, many
# clients, on a kept graph, in one run for
#   service   the GPU service (gpu_routing.service = auto): one process owns the GPU, every
#             session's gpu_path goes to it; gpu_routing.device = gpu
#   service-1 the same service on one GPU (gpu_routing.service_devices = 1), beside `service` on
#             every GPU: the several-GPU scaling (issue 14) in one run
#   gpu       the in-backend GPU path (gpu_routing.service = off): each session its own CUDA
#             context; gpu_routing.device = gpu
#   cpu       the CPU engine in each backend, gpu_routing.device = cpu, gpu_routing.threads = 1 per
#             call (the clients share the cores)
#   cpu-all   the same with gpu_routing.threads = 0 (every core for each call); not in the default
#             sides: a one-to-one route runs a single-source engine on one thread either way
#   pgr       pgr_dijkstra('SELECT id, source, target, cost FROM bench_ny', s, t): reads and builds
#             the whole graph on every call (~1 s each), so it gets a shorter run (--pgr-duration)
# then one markdown table, one row per side: routes per second (pgbench tps), p50 and p99 latency
# (from pgbench's per-transaction log, every transaction of the measured run), the service's mean
# batch size, GPU memory (nvidia-smi --query-gpu=memory.used summed over the GPUs, sampled every
# second during the measured run: the max, and the max less the idle GPU memory measured before
# that side's server started), the ratios to pgr_dijkstra and to the CPU engine (threads = 1),
# and the issue's goals checked below the table.
#
# Usage:
#   bench/service_pgbench.sh [--duration S] [--clients N] [--jobs N] [--pgr-duration S]
#       [--warmup S] [--sides service,service-1,gpu,cpu,cpu-all,pgr] [--port-base P] [--dir DIR]
#       [--batch-window MS] [--cpu-service] [--out FILE]
#   --duration S      measured seconds per side [60]
#   --clients N       pgbench clients [64]
#   --jobs N          pgbench threads [nproc / 2, at most 8]
#   --pgr-duration S  measured seconds of the pgr_dijkstra side [30]
#   --warmup S        an unmeasured pgbench run before each side but pgr [5]
#   --sides LIST      which sides, comma separated [service,gpu,cpu,pgr; all: the six]
#   --port-base P     the servers' ports: P (service), P+1 (service off), P+2 (service-1) [54430]
#   --dir DIR         the servers' folders and the work files, removed at the end
#                     [a new /tmp/service_pgbench.XXXXXX]
#   --batch-window MS gpu_routing.batch_window of the service's server [the default, 1 ms]
#   --cpu-service     without a GPU: run the service side with gpu_routing.service = cpu (the
#                     CPU engines inside the service, device = cpu; a smoke test, not a benchmark)
#   --index           every side but pgr routes on the kept graph's road index (after
#                     gpu_graph_index('bench_ny'), gpu_routing.sssp_algorithm = cch): the service's
#                     and the in-backend GPU's PHAST sweeps (the service's over the shared launch's
#                     sources), the CPU engine's cch; each route traced by the predecessor rule.
#                     Without it: near_far on the GPU, Dijkstra on the CPU
#   --lanes N         gpu_routing.service_lanes of the service sides' servers [the default]
#   --matrix          on each service server also the New York 1000 x 1000 cost matrix
#                     (gpu_apsp_array on the kept graph, 5 runs, median of gpu_routing_last_run's
#                     total_ms), its answer compared with the CPU engine's (device = cpu, in the
#                     backend) on the same server: a matrix splits over every GPU of the service
#   --out FILE        the table also written to FILE
# Example (on the device machine; scripts/gpu/suite.sh runs it as BENCH=service-pgbench):
#   bench/service_pgbench.sh --out /tmp/out/service_pgbench.md
# A smoke test without a GPU (the GPU sides are skipped with a note):
#   bench/service_pgbench.sh --duration 5 --pgr-duration 5 --clients 8 --cpu-service
#
# It starts its own throwaway servers with scripts/cluster.sh (gpu_routing.service is a postmaster
# setting), one after the other: the service's (port P) for the service side, then one with
# gpu_routing.service = off (port P+1) for the others. Each loads bench_ny (id, source, target,
# cost: one row per arc of USA-road-d.NY, ids in file order, as bench/kept_pgbench.sh and sql_bench
# make it) from $GPU_ROUTING_DATA (default ../shared/data)/USA-road-d.NY.gr.gz, creates the kept
# graph bench_ny, and is stopped and removed at the end (also on failure). Each side runs
# `pgbench -n -c CLIENTS -j JOBS -T S --random-seed=20260101 -l` with a script that draws source and
# target uniformly in 1..264346: the same pairs in the same order on every side (a pair without a
# path gives 0 rows). The pgbench connections stay open for the whole run: in-backend GPU sessions
# open their CUDA context in their first transaction, which counts in the percentiles.
# A side that fails is marked in the table; the others still run; the exit status is then 1.
# Needs psql, pgbench, initdb on PATH (or /usr/lib/postgresql/15/bin), gpu_routing installed
# (gpu_routing_service beside it) and pgrouting; nvidia-smi for the GPU sides.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${GPU_ROUTING_DATA:-$root/../shared/data}
duration=60
clients=64
jobs=
pgr_duration=30
warmup=5
sides=
port_base=54430
dir=
batch_window=
cpu_service=0
matrix=0
index=0
lanes=
out=
seed=20260101
all_sides="service service-1 gpu cpu cpu-all pgr"
default_sides="service gpu cpu pgr"
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=${2:?--duration needs seconds}; shift 2 ;;
    --clients) clients=${2:?--clients needs a number}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --pgr-duration) pgr_duration=${2:?--pgr-duration needs seconds}; shift 2 ;;
    --warmup) warmup=${2:?--warmup needs seconds}; shift 2 ;;
    --sides) sides=${2:?--sides needs a list}; shift 2 ;;
    --port-base) port_base=${2:?--port-base needs a port}; shift 2 ;;
    --dir) dir=${2:?--dir needs a folder}; shift 2 ;;
    --batch-window) batch_window=${2:?--batch-window needs milliseconds}; shift 2 ;;
    --cpu-service) cpu_service=1; shift ;;
    --matrix) matrix=1; shift ;;
    --index) index=1; shift ;;
    --lanes) lanes=${2:?--lanes needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "service_pgbench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$duration" "$clients" "$pgr_duration" "$warmup" "$port_base" ${jobs:+"$jobs"}; do
  case "$n" in ''|*[!0-9]*) echo "service_pgbench.sh: '$n' is not a whole number" >&2; exit 2 ;; esac
done
[ "$clients" -ge 1 ] && [ "$duration" -ge 1 ] || { echo "service_pgbench.sh: --clients and --duration must be at least 1" >&2; exit 2; }
if [ -z "$jobs" ]; then
  jobs=$(( $(nproc) / 2 ))
  [ "$jobs" -gt 8 ] && jobs=8
  [ "$jobs" -lt 1 ] && jobs=1
fi
[ "$jobs" -gt "$clients" ] && jobs=$clients
[ -z "$sides" ] && sides=$default_sides
[ "$sides" = all ] && sides=$all_sides
sides=$(echo "$sides" | tr ',' ' ')
for s in $sides; do
  case " $all_sides " in *" $s "*) ;; *) echo "service_pgbench.sh: unknown side '$s' (sides: $all_sides)" >&2; exit 2 ;; esac
done
wants() { case " $sides " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
say() { echo "service_pgbench.sh: $*" >&2; }

export PATH="$PATH:/usr/lib/postgresql/15/bin"
for tool in psql pgbench; do command -v $tool >/dev/null || { say "$tool is not on PATH"; exit 2; }; done
arcs=$data/USA-road-d.NY.gr.gz
[ -r "$arcs" ] || { say "cannot read $arcs (set GPU_ROUTING_DATA)"; exit 2; }

# --- the GPU ---------------------------------------------------------------------------------------
have_gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then have_gpu=1; fi
gpu_memory() {  # MiB used now, summed over the GPUs
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
if [ $have_gpu = 1 ]; then
  machine="$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1) x $(nvidia-smi -L | grep -c '^GPU') GPU(s), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
else
  machine="no GPU (nvidia-smi finds none)"
fi
machine="$machine; $(nproc) cores (nproc); $(uname -n)"

# --- the work folder, the servers and the cleanup -------------------------------------------------
if [ -z "$dir" ]; then
  dir=$(mktemp -d /tmp/service_pgbench.XXXXXX)
else
  [ -e "$dir" ] && { say "$dir exists: give a new folder (it is removed at the end)"; exit 2; }
  mkdir -p "$dir"
fi
chmod 755 "$dir"  # the server's OS user (postgres when run as root) must reach its folder
work=$dir/work
mkdir -p "$work"
started_clusters=()
sampler=
cleanup() {
  local status=$?
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null && wait "$sampler" 2>/dev/null
  for c in "${started_clusters[@]}"; do
    if [ $status -ne 0 ] && [ -f "$c/server.log" ]; then
      say "the end of $c/server.log:"; tail -n 30 "$c/server.log" >&2
    fi
    "$root/scripts/cluster.sh" stop "$c" >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_cluster NAME PORT SERVER-OPTIONS: a fresh server in $dir/NAME; its PG* variables exported.
start_cluster() {
  local name=$1 port=$2 options=$3 env
  [ "$clients" -gt 90 ] && options="$options -c max_connections=$((clients + 20))"
  started_clusters+=("$dir/$name")
  say "starting the server $dir/$name (port $port, $options)"
  env=$(GPU_ROUTING_SERVER_OPTIONS="$options" "$root/scripts/cluster.sh" start "$dir/$name" "$port") ||
    { say "the server $dir/$name does not start"; exit 1; }
  eval "$env"
  export PGDATABASE=postgres
  unset PGOPTIONS
}
stop_cluster() {
  "$root/scripts/cluster.sh" stop "$1" >/dev/null 2>&1 || true
  local kept=()
  for c in "${started_clusters[@]}"; do [ "$c" = "$1" ] || kept+=("$c"); done
  started_clusters=("${kept[@]+"${kept[@]}"}")
}
psql_quiet() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

# The rows of bench_ny, made once: sql_bench's load_table(read_dimacs(...)), id = the arc's rank.
say "reading $arcs"
zcat "$arcs" | awk '$1 == "a" { n++; printf "%d\t%s\t%s\t%s\n", n, $2, $3, $4 }' > "$work/bench_ny.tsv"
arc_count=$(wc -l < "$work/bench_ny.tsv")

# load: bench_ny, the extensions and the kept graph on the current server; prints the build time.
load() {
  local t0 t1
  t0=$(date +%s)
  psql_quiet -c "SET client_min_messages = warning" \
    -c "CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE" \
    -c "CREATE EXTENSION IF NOT EXISTS gpu_routing" \
    -c "CREATE TABLE bench_ny (id bigint, source bigint, target bigint, cost float8)" \
    -c "\copy bench_ny FROM '$work/bench_ny.tsv'" \
    -c "ANALYZE bench_ny"
  t1=$(date +%s%N)
  psql_quiet -c "SELECT gpu_graph_create('bench_ny', 'SELECT id, source, target, cost FROM public.bench_ny')" >/dev/null
  say "bench_ny loaded in $(( $(date +%s) - t0 )) s; kept graph built in $(( ($(date +%s%N) - t1) / 1000000 )) ms"
}

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

# service_counts: "requests batches failed" of the service so far (gpu_routing_info's 'service queue').
service_counts() {
  psql_quiet -c "SELECT value FROM gpu_routing_info() WHERE name = 'service queue'" |
    sed -n 's/.*; \([0-9]*\) requests, \([0-9]*\) batches run, .*, \([0-9]*\) failed$/\1 \2 \3/p'
}

# Results per side.
declare -A label tps p50 p99 mean_ms routes secs batch mem_max mem_over engine state
idle_mem=
# run_side SIDE LABEL SCRIPT PGOPTIONS SECONDS WARMUP: a measured pgbench run; fills the arrays.
run_side() {
  local side=$1 script=$3 options=$4 seconds=$5 warm=$6 before='' after='' s=0 r0 b0 f0 r1 b1 f1
  # shellcheck disable=SC2034  # read through get (a nameref)
  label[$side]=$2 secs[$side]=$seconds batch[$side]=- mem_max[$side]=- mem_over[$side]=- engine[$side]=-
  if [ "$warm" -gt 0 ]; then
    say "$side: warm-up, pgbench -c $clients -j $jobs -T $warm (PGOPTIONS='$options')"
    PGOPTIONS="$options" pgbench -n -c "$clients" -j "$jobs" -T "$warm" --random-seed=$((seed + 1)) \
      -f "$script" >"$work/$side.warmup.out" 2>&1 || {
      say "$side: the warm-up failed:"; tail -n 20 "$work/$side.warmup.out" >&2
      state[$side]="failed in the warm-up"; return 0
    }
  fi
  case $side in service*) before=$(service_counts) ;; esac
  if [ $have_gpu = 1 ]; then
    ( while :; do gpu_memory; sleep 1; done ) >"$work/$side.memory" 2>/dev/null &
    sampler=$!
  fi
  say "$side: pgbench -n -c $clients -j $jobs -T $seconds --random-seed=$seed -l (PGOPTIONS='$options')"
  PGOPTIONS="$options" pgbench -n -c "$clients" -j "$jobs" -T "$seconds" --random-seed=$seed \
    -l --log-prefix="$work/log_$side" -f "$script" >"$work/$side.out" 2>&1 || s=$?
  if [ -n "$sampler" ]; then
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; sampler=
    mem_max[$side]=$(awk 'BEGIN { m = -1 } $1 + 0 > m { m = $1 + 0 } END { if (m >= 0) print m; else print "-" }' "$work/$side.memory")
    [ "${mem_max[$side]}" != - ] && mem_over[$side]=$((mem_max[$side] - idle_mem))
  fi
  local failed
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/$side.out")
  if [ $s -ne 0 ] || { [ -n "$failed" ] && [ "$failed" != 0 ]; }; then
    say "$side: pgbench failed (exit $s, ${failed:-?} failed transactions):"; tail -n 20 "$work/$side.out" >&2
    state[$side]="failed (pgbench exit $s)"
  else
    state[$side]=ok
  fi
  tps[$side]=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/$side.out" | head -1 | awk '{ printf "%.1f", $1 }')
  mean_ms[$side]=$(sed -n 's/^latency average = \([0-9.]*\) ms.*/\1/p' "$work/$side.out" | awk '{ printf "%.2f", $1 }')
  routes[$side]=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/$side.out")
  # The log: client_id transaction_no time(us) script_no epoch us [lag]; every measured transaction.
  local percentiles
  percentiles=$({ cat "$work"/log_"$side".* 2>/dev/null || true; } | awk '$3 ~ /^[0-9]+$/ { print $3 }' | sort -n |
    awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "- -"; exit }
      i50 = int(NR * 0.50); if (i50 < NR * 0.50) i50++; i99 = int(NR * 0.99); if (i99 < NR * 0.99) i99++
      printf "%.2f %.2f\n", v[i50] / 1000, v[i99] / 1000 }')
  read -r "p50[$side]" "p99[$side]" <<<"$percentiles"
  rm -f "$work"/log_"$side".*
  : "${tps[$side]:=-}" "${mean_ms[$side]:=-}" "${routes[$side]:=-}"
  if [[ "$side" == service* ]]; then
    after=$(service_counts)
    if [ -n "$before" ] && [ -n "$after" ]; then
      read -r r0 b0 f0 <<<"$before"; read -r r1 b1 f1 <<<"$after"
      # shellcheck disable=SC2034
      [ $((b1 - b0)) -gt 0 ] && batch[$side]=$(awk -v r=$((r1 - r0)) -v b=$((b1 - b0)) 'BEGIN { printf "%.2f", r / b }')
      service_note="${service_note:+$service_note; }$side: $((r1 - r0)) requests in $((b1 - b0)) launches during the measured run, $((f1 - f0)) failed"
    fi
  fi
  # Where one call of this side runs (engine, device, batch size through the service).
  if [ "$side" != pgr ]; then
    engine[$side]=$(PGOPTIONS="$options" psql_quiet -c "SELECT count(*) FROM gpu_path('graph:bench_ny', 1, 200000)" \
      -c "SELECT device || ', ' || algorithm || coalesce(', batch size ' || batch_size, '') || coalesce(', ' || nullif(reason, ''), '') FROM gpu_routing_last_run()" 2>&1 | tail -1) || true
  fi
  say "$side: ${state[$side]}: ${tps[$side]} routes/s, p50 ${p50[$side]} ms, p99 ${p99[$side]} ms, GPU ${mem_max[$side]} MiB; ${engine[$side]}"
}

skipped=()
kept_build=()
service_note=
service_rows=
service_setting=
est=0
for s in $sides; do
  case $s in pgr) est=$((est + pgr_duration)) ;; *) est=$((est + duration + warmup)) ;; esac
done
say "sides: $sides; about $((est + 60)) s (plus loading New York on each server)"

# --- the service's servers ---------------------------------------------------------------------------
if wants service || wants service-1; then
  if [ $have_gpu = 1 ]; then
    service_setting=auto
  elif [ $cpu_service = 1 ]; then
    service_setting=cpu
  else
    skipped+=("service: no GPU here (--cpu-service runs it with gpu_routing.service = cpu)")
  fi
fi
# matrix_runs SIDE PGOPTIONS: the New York 1000 x 1000 matrix through the service, 5 runs; one
# line in matrix_lines (median ms, where it ran, whether the answer is the CPU engine's).
matrix_lines=()
matrix_runs() {
  local side=$1 options=$2 call want got times=() k info median
  call="SELECT md5(string_agg(start_vid || ':' || array_to_string(agg_costs, ','), ';' ORDER BY start_vid)) FROM gpu_apsp_array('graph:bench_ny', ARRAY(SELECT 1 + i * 264 FROM generate_series(0, 999) i)::bigint[], ARRAY(SELECT 7 + i * 263 FROM generate_series(0, 999) i)::bigint[])"
  want=$(PGOPTIONS="-c gpu_routing.device=cpu" psql_quiet -c "$call")
  for k in 1 2 3 4 5; do
    got=$(PGOPTIONS="$options" psql_quiet -c "$call" -c "SELECT round(total_ms::numeric, 1) || '|' || device || '|' || coalesce(notes, '') FROM gpu_routing_last_run()" | tr '\n' '#')
    times+=("$(cut -d'|' -f1 <<<"${got#*#}")")
    info=${got#*#}
    [ "${got%%#*}" = "$want" ] || { matrix_lines+=("$side: run $k's answer differs from the CPU engine's ($want vs ${got%%#*})"); return 0; }
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
  matrix_lines+=("$side: median ${median} ms of 5 (${times[*]}), identical to the CPU engine's answer; on ${info%#}")
  say "matrix $side: median $median ms"
}
# service_server SIDE PORT DEVICES: a fresh server whose GPU service serves from DEVICES GPUs (0 =
# every GPU), the side measured on it.
service_server() {
  local side=$1 port=$2 devices=$3 line='' label_text
  [ $have_gpu = 1 ] && idle_mem=$(gpu_memory)
  start_cluster "$side" "$port" "-c gpu_routing.service=$service_setting -c gpu_routing.service_devices=$devices${lanes:+ -c gpu_routing.service_lanes=$lanes}${batch_window:+ -c gpu_routing.batch_window=$batch_window}"
  load
  kept_build+=("$(psql_quiet -c "SELECT round(build_ms) FROM gpu_graphs() WHERE name = 'bench_ny'") ms ($side's server)")
  [ $index = 1 ] && say "$side: $(psql_quiet -c "SELECT gpu_graph_index('bench_ny')")"
  # The service starts with the server: wait until it is ready (or says why not).
  for _ in $(seq 120); do
    line=$(psql_quiet -c "SELECT value FROM gpu_routing_info() WHERE name = 'service'")
    case "$line" in ready*|"no GPU"*|stopped*) break ;; esac
    sleep 0.5
  done
  say "$side: $line"
  if [ "$service_setting" = cpu ]; then
    device_option="-c gpu_routing.device=cpu -c gpu_routing.threads=1"
    label_text="GPU service, gpu_routing.service = cpu (CPU engines in the service, smoke test), device = cpu, threads = 1"
  else
    device_option="-c gpu_routing.device=gpu"
    label_text="GPU service (gpu_routing.service = auto), device = gpu"
  fi
  if [ $index = 1 ]; then
    device_option="$device_option -c gpu_routing.sssp_algorithm=cch"
    label_text="$label_text, road index (sssp_algorithm = cch)"
  fi
  if [ "$side" = service-1 ]; then
    label_text="$label_text, one GPU (gpu_routing.service_devices = 1)"
  else
    label_text="$label_text, every GPU ($(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true))"
  fi
  label_text="$label_text, $(psql_quiet -c "SHOW gpu_routing.service_lanes") lanes a GPU (0: 3)"
  case "$line" in
    ready*) run_side "$side" "$label_text" "$work/kept.sql" "$device_option" "$duration" "$warmup" ;;
    *) label[$side]=$label_text state[$side]="failed: the service is not ready: $line" ;;
  esac
  [ $matrix = 1 ] && [[ "$line" == ready* ]] && matrix_runs "$side" "$device_option"
  service_rows="${service_rows:+$service_rows
}$(psql_quiet -F ': ' -c "SELECT '$side: ' || name, value FROM gpu_routing_info() WHERE name LIKE 'service%'")"
  batch_setting=$(psql_quiet -c "SHOW gpu_routing.batch_window")
  stop_cluster "$dir/$side"
}
if [ -n "$service_setting" ]; then
  wants service-1 && service_server service-1 $((port_base + 2)) 1
  wants service && service_server service "$port_base" 0
fi

# --- the server without the service: in-backend GPU, CPU engine, pgr_dijkstra ---------------------------
if wants gpu && [ $have_gpu = 0 ]; then skipped+=("gpu (in-backend): no GPU here"); fi
other=0
for s in gpu cpu cpu-all pgr; do
  wants $s || continue
  [ $s = gpu ] && [ $have_gpu = 0 ] && continue
  other=1
done
if [ $other = 1 ]; then
  [ $have_gpu = 1 ] && idle_mem=$(gpu_memory)
  start_cluster off $((port_base + 1)) "-c gpu_routing.service=off"
  load
  engine_option=
  if [ $index = 1 ]; then
    say "off: $(psql_quiet -c "SELECT gpu_graph_index('bench_ny')")"
    engine_option=" -c gpu_routing.sssp_algorithm=cch"
  fi
  kept_build+=("$(psql_quiet -c "SELECT round(build_ms) FROM gpu_graphs() WHERE name = 'bench_ny'") ms (service off)")
  if wants gpu && [ $have_gpu = 1 ]; then
    run_side gpu "in-backend GPU (gpu_routing.service = off), device = gpu${engine_option:+, road index (sssp_algorithm = cch)}" "$work/kept.sql" "-c gpu_routing.device=gpu$engine_option" "$duration" "$warmup"
  fi
  wants cpu && run_side cpu "CPU engine, device = cpu, threads = 1 per call${engine_option:+, road index (sssp_algorithm = cch)}" "$work/kept.sql" "-c gpu_routing.device=cpu -c gpu_routing.threads=1$engine_option" "$duration" "$warmup"
  wants cpu-all && run_side cpu-all "CPU engine, device = cpu, threads = 0 (every core per call)${engine_option:+, road index (sssp_algorithm = cch)}" "$work/kept.sql" "-c gpu_routing.device=cpu -c gpu_routing.threads=0$engine_option" "$duration" "$warmup"
  wants pgr && run_side pgr "pgr_dijkstra(edges_sql), ${pgr_duration} s run" "$work/pgr.sql" "" "$pgr_duration" 0
  stop_cluster "$dir/off"
fi

# --- the table ------------------------------------------------------------------------------------------
ratio() {  # ratio A B: A / B as "12.3x"
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 <= 0 || a == "") { print "-"; exit }
    r = a / b; if (r >= 100) printf "%.0fx\n", r; else if (r >= 10) printf "%.1fx\n", r; else printf "%.2fx\n", r }'
}
get() { local -n arr=$1; echo "${arr[$2]:--}"; }
failures=0
{
  echo "GPU service benchmark (issue 10): random one-to-one New York routes under pgbench"
  echo
  echo "- machine: $machine"
  warm_text="an unmeasured ${warmup} s warm-up before each side but pgr_dijkstra"
  [ "$warmup" -gt 0 ] || warm_text="no warm-up"
  echo "- pgbench -n -c $clients -j $jobs -T $duration --random-seed=$seed per side$(wants pgr && echo " (pgr_dijkstra: -T $pgr_duration)"), $warm_text; source and target uniform in 1..264346, New York (264346 vertices, $arc_count arcs); gpu_path('graph:bench_ny', s, t) on the kept graph bench_ny (built in ${kept_build[*]:-?})"
  echo "- each side on a fresh server (scripts/cluster.sh)$([ -n "$service_setting" ] && echo ": gpu_routing.service = $service_setting for the service side${batch_setting:+ (gpu_routing.batch_window = $batch_setting)}, off for the others"); latency percentiles from pgbench's per-transaction log (every transaction of the measured run, the connections' first included)"
  if [ $have_gpu = 1 ]; then
    echo "- GPU memory: nvidia-smi --query-gpu=memory.used summed over the GPUs, sampled every second during the measured run, max; 'above idle' subtracts the GPU memory used before that side's server started"
  fi
  echo
  echo "| side | routes/s | p50 ms | p99 ms | mean ms | routes | s | mean batch size | GPU MiB (max) | GPU MiB above idle | vs pgr_dijkstra | vs CPU engine (threads = 1) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for s in $all_sides; do
    [ -n "${state[$s]:-}" ] || continue
    l=${label[$s]}
    [ "${state[$s]}" = ok ] || { l="$l **${state[$s]}**"; failures=$((failures + 1)); }
    echo "| $l | $(get tps $s) | $(get p50 $s) | $(get p99 $s) | $(get mean_ms $s) | $(get routes $s) | $(get secs $s) | $(get batch $s) | $(get mem_max $s) | $(get mem_over $s) | $(ratio "$(get tps $s)" "$(get tps pgr)") | $(ratio "$(get tps $s)" "$(get tps cpu)") |"
  done
  echo
  for n in "${skipped[@]+"${skipped[@]}"}"; do echo "- skipped: $n"; done
  for s in $all_sides; do
    [ -n "${engine[$s]:-}" ] && [ "${engine[$s]}" != - ] && echo "- $s: one call runs on ${engine[$s]}"
  done
  [ -n "$service_note" ] && echo "- service: $service_note"
  if [ -n "$service_rows" ]; then
    echo "$service_rows" | sed 's/^/- gpu_routing_info(), after the run: /'
  fi
  # The issue's goals (issue 10: on one GPU), for the service side on one GPU when it ran.
  g=service
  [ "${state[service-1]:-}" = ok ] && g=service-1
  if [ "${state[$g]:-}" = ok ] && [ "$service_setting" = auto ]; then
    check() { awk -v v="$1" -v op="$2" -v g="$3" 'BEGIN { if (v == "-" || v == "") print "?"; else if ((op == "<" && v + 0 < g) || (op == ">=" && v + 0 >= g)) print "met"; else print "MISSED" }'; }
    pgr_x=$(awk -v a="${tps[$g]}" -v b="$(get tps pgr)" 'BEGIN { if (b == "-" || b + 0 <= 0) print "-"; else print a / b }')
    cpu_x=$(awk -v a="${tps[$g]}" -v b="$(get tps cpu)" 'BEGIN { if (b == "-" || b + 0 <= 0) print "-"; else print a / b }')
    echo "- goals ($g): GPU memory above idle < 2048 MiB: $(check "${mem_over[$g]}" '<' 2048) (${mem_over[$g]}); >= 3000 routes/s: $(check "${tps[$g]}" '>=' 3000); >= 2x the CPU engine: $(check "$cpu_x" '>=' 2) ($(ratio "${tps[$g]}" "$(get tps cpu)")); >= 200x pgr_dijkstra: $(check "$pgr_x" '>=' 200) ($(ratio "${tps[$g]}" "$(get tps pgr)")); p99 < 25 ms: $(check "${p99[$g]}" '<' 25) (${p99[$g]} ms)"
  fi
  for line in "${matrix_lines[@]+"${matrix_lines[@]}"}"; do
    echo "- New York 1000 x 1000 cost matrix (gpu_apsp_array on bench_ny), $line"
  done
  if [ "${state[service]:-}" = ok ] && [ "${state[service-1]:-}" = ok ]; then
    echo "- several GPUs (issue 14): the service on every GPU against one GPU: $(ratio "${tps[service]}" "${tps[service-1]}") the routes per second (goal for two GPUs: at least 1.8x)"
  fi
} > "$work/table.md"
cat "$work/table.md"
if [ -n "$out" ]; then cp "$work/table.md" "$out"; say "table written to $out"; fi
[ $failures -eq 0 ] || { say "$failures side(s) failed"; exit 1; }

#!/usr/bin/env bash
# Where the time of a short call goes (issue 42): one pgbench client runs a New York route on the
# kept graph 'ny' (its road index made) while perf samples that client's backend with DWARF call
# stacks; then a flame graph (SVG) and the folded stacks, and a table of the call's parts in
# microseconds a transaction (perf's samples a transaction at its sampling rate).
# Usage: bench/call_profile.sh [--workload distance|path|yardstick] [--seconds S] [--port P]
#            --out DIR
# Starts its own server (scripts/cluster.sh, gpu_routing preloaded), removes it at the end.
# Needs perf (Debian: linux-perf) and permission to profile the server's processes (root).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
workload=distance seconds=4 port=54481 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --workload) workload=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "call_profile.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "call_profile.sh: --out DIR is required" >&2; exit 2; }
command -v perf >/dev/null || { echo "call_profile.sh: perf is missing (apt-get install linux-perf)" >&2; exit 2; }
mkdir -p "$out"
. "$root/bench/ny_server.sh"
ny_bench_server call_profile "$port"
psql -X -q -d bench -c "SELECT gpu_graph_create('ny', 'SELECT id, source, target, cost FROM ny_edges')" \
  -c "SELECT gpu_graph_index('ny')" >/dev/null
vertices=$(psql -X -At -d bench -c "SELECT max(id) FROM ny_vertices")
case "$workload" in
  distance) call="SELECT agg_costs FROM gpu_apsp_array('graph' || chr(58) || 'ny', ARRAY[:s::bigint], ARRAY[:t::bigint]);" ;;
  path) call="SELECT seq, node, edge, cost, agg_cost FROM gpu_path('graph' || chr(58) || 'ny', :s::bigint, :t::bigint);" ;;
  yardstick) call="SELECT :s::bigint + 1;" ;;
  *) echo "call_profile.sh: unknown workload $workload" >&2; exit 2 ;;
esac
printf '\\set s random(1, %s)\n\\set t random(1, %s)\n%s\n' "$vertices" "$vertices" "$call" >"$work/call.sql"
chmod a+r "$work/call.sql"
# Warm the session's graph and index mapping in a run of its own, then profile a second client's
# backend from its second second on.
pgbench -n -M prepared -c 1 -T 2 -f "$work/call.sql" bench >/dev/null
pgbench -n -M prepared -c 1 -T $((seconds + 3)) -f "$work/call.sql" bench >"$work/pgbench.out" 2>&1 &
bench_pid=$!
sleep 1.5
backend=$(psql -X -At -d postgres -c "SELECT pid FROM pg_stat_activity WHERE datname = 'bench'
  AND backend_type = 'client backend' AND pid <> pg_backend_pid() LIMIT 1")
perf record -q -e cpu-clock -F 2000 --call-graph dwarf,16384 -p "$backend" -o "$work/perf.data" \
  -- sleep "$seconds" >/dev/null 2>&1
wait "$bench_pid"
latency=$(sed -nE 's/^latency average = ([0-9.]+) ms/\1/p' "$work/pgbench.out")
perf script -i "$work/perf.data" -F comm,ip,sym 2>/dev/null >"$work/script.txt"
python3 "$root/bench/flamegraph.py" --svg "$out/call_profile_$workload.svg" \
  --folded "$out/call_profile_$workload.folded" \
  --title "one backend, $workload on New York's kept index, $(nproc) cores, $(date -u '+%Y-%m-%d')" \
  <"$work/script.txt"
# Microseconds a transaction of each part: samples holding the frame, at 2000 Hz, over the
# transactions of the sampled seconds (the latency average).
python3 - "$out/call_profile_$workload.folded" "$latency" "$seconds" <<'PY'
import sys
folded, latency_ms, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
stacks = []
for line in open(folded):
    stack, count = line.rsplit(" ", 1)
    stacks.append((stack.split(";"), int(count)))
transactions = seconds * 1000.0 / latency_ms
us_per_sample = 1e6 / 2000.0 / transactions
parts = [("the backend, all", ""), ("the call (run_call)", "run_call"),
         ("  the engine's search (Cch::search, its walk)", ("Cch::search", "Cch::pruned_meeting_walk")),
         ("  the path's settled distances", "Cch::settled_distance"),
         ("  resolving the kept graph", "resolve_kept_graph"),
         ("  choosing the engine (prepare)", "RoutingCall::prepare"),
         ("sending to the client", "secure_write"), ("reading from the client", "pq_getbyte"),
         ("starting the portal", "PortalStart"), ("committing", "CommitTransactionCommand")]
print(f"| part | us a transaction (latency {latency_ms:.3f} ms) |")
print("|---|---:|")
for label, frame in parts:
    frames = frame if isinstance(frame, tuple) else (frame,)
    n = sum(c for s, c in stacks if frame == "" or any(x in f for f in s for x in frames))
    print(f"| {label} | {n * us_per_sample:.1f} |")
PY

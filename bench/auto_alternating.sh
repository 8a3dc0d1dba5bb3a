#!/usr/bin/env bash
# auto against the same engine forced, call after call in one session, on three rows of the auto
# benchmark that missed on the H100 host at 12e136d: New York's 100 x 100 matrix from edges_sql,
# all pairs of the sparse 4096-vertex graph as rows (16.8 million), a path on Rome's road index
# (under a millisecond). Asks whether auto's own work (estimating, the speeds, the service's
# state) costs its calls anything, apart from the spread of the calls. Prints, per row and side,
# the median wall time of the calls (rows read back) and gpu_routing_last_run()'s split; then
# pgbench's average latency on the Rome path under auto and under each setting alone.
# Usage: run against the auto benchmark's database after `sql_bench --suite auto` has loaded
# bench_ny and bench_sparse4096 and made the kept graph auto_rome_index (its rows for those):
#   bench/auto_alternating.sh [--db NAME (default bench)] [--calls N (default 10)]
#   [--ny DEVICE:ENGINE] [--sparse DEVICE:ENGINE] [--rome DEVICE:ENGINE]   (what auto chose:
#   defaults gpu near_far, gpu near_far, cpu cch). On the GPU machine: scripts/gpu/suite.sh
#   BENCH=auto-alternating, which first runs those three rows of the auto benchmark.
set -euo pipefail
db=bench
calls=10
ny=gpu:near_far
sparse=gpu:near_far
rome=cpu:cch
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --ny) ny=$2; shift 2 ;;
    --sparse) sparse=$2; shift 2 ;;
    --rome) rome=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "auto_alternating.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ "$calls" =~ ^[1-9][0-9]*$ ]] || { echo "auto_alternating.sh: --calls needs a positive number" >&2; exit 2; }
for choice in "$ny" "$sparse" "$rome"; do
  [[ "$choice" =~ ^(cpu|gpu):[a-z_]+$ ]] || { echo "auto_alternating.sh: a choice is DEVICE:ENGINE, not $choice" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The session's statements: each row warmed by three auto calls, then rounds of auto and the
# forced engine, the order swapped every round; each call followed by its gpu_routing_last_run().
python3 - "$work/calls.sql" "$calls" "$ny" "$sparse" "$rome" <<'PY'
import sys
path, calls, ny, sparse, rome = sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]
def spread(a, b, c): return [a + (b - a) * i // max(1, c - 1) for i in range(c)]
ny100 = "ARRAY[" + ",".join(map(str, spread(1, 264346, 100))) + "]::bigint[]"
rows = [("ny100", f"SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM bench_ny', {ny100}, {ny100})", "apsp", ny),
        ("sparse", "SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM bench_sparse4096')", "apsp", sparse),
        ("rome", "SELECT count(*) FROM gpu_path('graph:auto_rome_index', 1, 3000)", "sssp", rome)]
out = ["\\timing on", "SET client_min_messages = warning;"]
for name, query, family, choice in rows:
    device, engine = choice.split(":")
    auto = ["RESET ALL;", "SET gpu_routing.max_memory = '64GB';", "SET work_mem = '4GB';"]
    forced = auto + [f"SET gpu_routing.device = {device};", f"SET gpu_routing.{family}_algorithm = {engine};"]
    split = ("SELECT '%s %s', device, algorithm, load_ms, build_ms, compute_ms, emit_ms, total_ms "
             "FROM gpu_routing_last_run();")
    out += auto + [query + ";"] * 3
    n = calls * (2 if name == "rome" else 1)  # the path's calls are under a millisecond
    for r in range(n):
        order = [("auto", auto), ("forced", forced)]
        if r % 2: order.reverse()
        for side, settings in order:
            out += settings + [query + ";", split % (name, side)]
open(path, "w").write("\n".join(out) + "\n")
PY
psql -X -At -v ON_ERROR_STOP=1 -d "$db" -f "$work/calls.sql" > "$work/calls.txt"

echo "| row | side | calls | wall, median (ms) | fastest, slowest (ms) | load / build / compute / emit, medians (ms) | total in the call (ms) | device, engine |"
echo "|---|---|---:|---:|---|---|---:|---|"
python3 - "$work/calls.txt" <<'PY'
import re, statistics, sys
calls, wall, after_count = {}, None, False
for line in open(sys.argv[1]).read().splitlines():
    if re.fullmatch(r"\d+", line):  # count(*): the next Time is the call's
        after_count = True
        continue
    m = re.match(r"Time: ([\d.]+) ms", line)
    if m and after_count:
        wall, after_count = float(m.group(1)), False
        continue
    after_count = False
    if "|" in line and wall is not None:
        f = line.split("|")
        calls.setdefault(f[0], []).append([wall] + f[1:])
        wall = None
for key, v in calls.items():
    med = lambda j: statistics.median(float(x[j]) for x in v)
    walls = [x[0] for x in v]
    row, side = key.split(" ")
    print(f"| {row} | {side} | {len(v)} | {statistics.median(walls):.2f} | {min(walls):.2f}, {max(walls):.2f} | "
          f"{med(3):.1f} / {med(4):.1f} / {med(5):.1f} / {med(6):.1f} | {med(7):.2f} | {v[0][1]}, {v[0][2]} |")
PY

# The Rome path under pgbench, one session per setting, twice over.
echo "SELECT count(*) FROM gpu_path('graph:auto_rome_index', 1, 3000);" > "$work/path.sql"
echo
echo "| Rome path, pgbench 6 s | average latency (ms), first | second |"
echo "|---|---:|---:|"
rome_device=${rome%%:*} rome_engine=${rome#*:}
for setting in "auto|" "$rome_device $rome_engine|-c gpu_routing.device=$rome_device -c gpu_routing.sssp_algorithm=$rome_engine" \
  "device = cpu, engine auto|-c gpu_routing.device=cpu" "device auto, $rome_engine|-c gpu_routing.sssp_algorithm=$rome_engine"; do
  label=${setting%%|*} options=${setting#*|}
  latency=()
  for _ in 1 2; do
    latency+=("$(PGOPTIONS="$options" pgbench -n -T 6 -f "$work/path.sql" "$db" 2>&1 | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')")
  done
  echo "| $label | ${latency[0]} | ${latency[1]} |"
done

#!/usr/bin/env bash
# auto against the same engine forced, call after call in one session, on rows of the auto
# benchmark that missed on the H100 host: New York's 100 x 100 matrix from edges_sql, all pairs of
# the sparse 4096-vertex graph as rows (16.8 million), a path on Rome's road index (under a
# millisecond), one-to-all on the R-MAT graph from edges_sql (16M edges: its load is most of the
# call). Asks whether auto's own work (estimating, the speeds, the service's state) costs its
# calls anything, apart from the spread of the calls. Prints, per row and side, the median wall
# time of the calls (rows read back) and gpu_routing_last_run()'s split; then, with the Rome row,
# the Rome path's compute under each engine for a few pairs (the early exit's share differs from
# pair to pair) and pgbench's average latency on it under auto and under each setting alone.
# Usage: run against the auto benchmark's database after `sql_bench --suite auto` has loaded
# the rows' tables (bench_ny, bench_sparse4096, bench_rmat20) and made the kept graph
# auto_rome_index:
#   bench/auto_alternating.sh [--db NAME (default bench)] [--calls N (default 10)]
#   [--rows ny100,sparse,rome,rmat (default ny100,sparse,rome)]
#   [--ny DEVICE:ENGINE] [--sparse DEVICE:ENGINE] [--rome DEVICE:ENGINE] [--rmat DEVICE:ENGINE]
#   (what auto chose: defaults gpu near_far, gpu near_far, cpu cch, cpu dijkstra). On the GPU
#   machine: scripts/gpu/suite.sh BENCH=auto-alternating (ALTERNATING_ROWS picks the rows), which
#   first runs those rows of the auto benchmark.
set -euo pipefail
db=bench
calls=10
ny=gpu:near_far
sparse=gpu:near_far
rome=cpu:cch
rmat=cpu:dijkstra
rows=ny100,sparse,rome
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --ny) ny=$2; shift 2 ;;
    --sparse) sparse=$2; shift 2 ;;
    --rome) rome=$2; shift 2 ;;
    --rmat) rmat=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "auto_alternating.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ "$calls" =~ ^[1-9][0-9]*$ ]] || { echo "auto_alternating.sh: --calls needs a positive number" >&2; exit 2; }
[[ "$rows" =~ ^(ny100|sparse|rome|rmat)(,(ny100|sparse|rome|rmat))*$ ]] || { echo "auto_alternating.sh: --rows takes ny100, sparse, rome, rmat joined by commas, not $rows" >&2; exit 2; }
for choice in "$ny" "$sparse" "$rome" "$rmat"; do
  [[ "$choice" =~ ^(cpu|gpu):[a-z_]+$ ]] || { echo "auto_alternating.sh: a choice is DEVICE:ENGINE, not $choice" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The session's statements: each row warmed by three auto calls, then rounds of auto and the
# forced engine, the order swapped every round; each call followed by its gpu_routing_last_run().
python3 - "$work/calls.sql" "$calls" "$rows" "$ny" "$sparse" "$rome" "$rmat" <<'PY'
import sys
path, calls, wanted, ny, sparse, rome, rmat = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), *sys.argv[4:8]
def spread(a, b, c): return [a + (b - a) * i // max(1, c - 1) for i in range(c)]
ny100 = "ARRAY[" + ",".join(map(str, spread(1, 264346, 100))) + "]::bigint[]"
rows = [("ny100", f"SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM bench_ny', {ny100}, {ny100})", "apsp", ny),
        ("sparse", "SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM bench_sparse4096')", "apsp", sparse),
        ("rome", "SELECT count(*) FROM gpu_path('graph:auto_rome_index', 1, 3000)", "sssp", rome),
        ("rmat", "SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM bench_rmat20', 1)", "sssp", rmat)]
rows = [row for row in rows if row[0] in wanted]
out = ["\\timing on", "SET client_min_messages = warning;"]
for name, query, family, choice in rows:
    device, engine = choice.split(":")
    auto = ["RESET ALL;", "SET gpu_routing.max_memory = '64GB';", "SET work_mem = '4GB';"]
    forced = auto + [f"SET gpu_routing.device = {device};", f"SET gpu_routing.{family}_algorithm = {engine};"]
    split = ("SELECT '%s %s', device, algorithm, load_ms, build_ms, compute_ms, emit_ms, total_ms "
             "FROM gpu_routing_last_run();")
    out += auto + [query + ";"] * 3
    n = calls * (2 if name == "rome" else 1)  # the path's calls are under a millisecond
    sides = [("auto", auto), ("forced", forced)]
    # R-MAT: also the engine named under device auto (the GPU service consulted, no estimate),
    # to tell what auto's calls pay for (their load ran 4-30% slower on the H100 host).
    if name == "rmat":
        sides.append(("named", auto + [f"SET gpu_routing.{family}_algorithm = {engine};"]))
    for r in range(n):
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        if len(sides) == 2 and r % 2: order.reverse()
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
# The R-MAT row's calls one by one, in the order they ran: side, load / build ms.
order = [line for line in open(sys.argv[1]).read().splitlines() if line.startswith("rmat ")]
if order:
    print()
    print("R-MAT calls in order (side: load / build ms): " + ", ".join(
        f"{f[0].split(' ')[1]}: {float(f[3]):.0f} / {float(f[4]):.0f}" for f in (l.split("|") for l in order)))
PY

[[ ",$rows," == *",rome,"* ]] || exit 0

# The Rome path's compute under each CPU engine, pair by pair: 200 calls an engine and pair in
# one session, three passes; medians of gpu_routing_last_run()'s compute and total.
echo
echo "| Rome pair | engine | vertices settled (Dijkstra) | compute, median (ms) | total in the call, median (ms) |"
echo "|---|---|---:|---:|---:|"
psql -X -q -At -F ' | ' -v ON_ERROR_STOP=1 -d "$db" <<'SQL'
SET client_min_messages = warning;
SET gpu_routing.device = cpu;
CREATE TEMP TABLE pair_calls (pair text, engine text, rounds bigint, compute float8, total float8);
DO $$
DECLARE engine text; pair int[]; n bigint;
BEGIN
  FOR pass IN 1..3 LOOP
    FOREACH engine IN ARRAY ARRAY['dijkstra', 'cch'] LOOP
      PERFORM set_config('gpu_routing.sssp_algorithm', engine, false);
      FOREACH pair SLICE 1 IN ARRAY ARRAY[[1, 3000], [1, 3353], [100, 2000], [2000, 100]] LOOP
        FOR i IN 1..200 LOOP
          SELECT count(*) INTO n FROM gpu_path('graph:auto_rome_index', pair[1], pair[2]);
          INSERT INTO pair_calls SELECT pair[1] || ' -> ' || pair[2], engine, rounds, compute_ms, total_ms
            FROM gpu_routing_last_run();
        END LOOP;
      END LOOP;
    END LOOP;
  END LOOP;
END $$;
SELECT '| ' || pair, engine, CASE engine WHEN 'dijkstra' THEN max(rounds)::text ELSE '' END,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY compute)::numeric, 4),
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY total)::numeric, 4) || ' |'
  FROM pair_calls GROUP BY pair, engine ORDER BY pair, engine;
SQL

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

#!/usr/bin/env bash
# Re-customizing a kept graph's road index after committed cost changes, on the CPU and on the GPU
# (gpu_routing.index_customization), in SQL: New York (DIMACS) as a kept graph with its index, then
# in one session ROUNDS rounds per side of "UPDATE one edge's cost; the next cch call makes the new
# form's index" (kept order and topology: only the customization differs). Prints a table of the
# medians: the customization as the call's notes report it, and the whole call. The GPU side's
# first round makes the session's customizer (reported apart); later rounds reuse it (what auto
# does). Against a running server (PG* variables) that preloads gpu_routing, with the GPU service
# off (backends customize on their own GPU). Usage: bench/index_customization_bench.sh DATA_DIR
set -euo pipefail
data=${1:?usage: index_customization_bench.sh DATA_DIR (holding USA-road-d.NY.gr.gz)}
rounds=${ROUNDS:-7}
db=${BENCH_DB:-gpu_routing_icbench}
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$db" "$@"; }
dropdb --if-exists "$db" >/dev/null 2>&1 || true
createdb "$db"
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true' EXIT
zcat "$data/USA-road-d.NY.gr.gz" | awk '$1 == "a" { n++; print n "," $2 "," $3 "," $4 }' > /tmp/icbench_ny.csv
q <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION gpu_routing;
CREATE TABLE ny (id bigint, source bigint, target bigint, cost float8);
\copy ny FROM '/tmp/icbench_ny.csv' CSV
SELECT gpu_graph_create('ny', 'SELECT id, source, target, cost FROM ny');
SELECT gpu_graph_index('ny');
SQL
rm -f /tmp/icbench_ny.csv
script=""
for side in cpu gpu; do
  for r in $(seq 0 "$rounds"); do
    script+="SET gpu_routing.index_customization = $side;
UPDATE ny SET cost = cost + 1 WHERE id = $((r * 1000 + 7));
SET gpu_routing.sssp_algorithm = cch;
\\echo $side $r
SELECT extract(epoch FROM clock_timestamp()) AS t0 \\gset
SELECT count(*) FROM gpu_path('graph:ny', 1, 264346) WHERE edge = -1;
SELECT round(((extract(epoch FROM clock_timestamp()) - :t0) * 1000)::numeric, 1) AS call_ms, notes FROM gpu_routing_last_run();
"
  done
done
out=$(echo "$script" | q -v ON_ERROR_STOP=0 -F "|" 2>&1 || true)
machine=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
echo "index_customization_bench on ${machine:-no GPU}, $(nproc) cores: New York kept with its road index; per round one committed UPDATE of one edge, then a cch call makes the new form's index (kept order and topology). Medians of $rounds rounds per side (round 0 apart: the GPU's makes the session's customizer)."
echo
echo "| customization | round 0: customization (ms) | round 0: call (ms) | median customization (ms) | median call (ms) |"
echo "|---|---:|---:|---:|---:|"
for side in cpu gpu; do
  rows=$(echo "$out" | awk -v s="$side" '$1 == s && NF == 2 { on = 1; next } /^(cpu|gpu) [0-9]+$/ { on = 0 } on && /\|/ { print }' | grep -v '^1$' | sed -n 's/^\([0-9.]*\)|.*customization \([0-9]*\) ms.*/\2 \1/p' || true)
  first=$(echo "$rows" | head -1)
  rest=$(echo "$rows" | tail -n +2)
  med() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
  echo "| $side | ${first%% *} | ${first##* } | $(echo "$rest" | awk '{print $1}' | med) | $(echo "$rest" | awk '{print $2}' | med) |"
done
echo
echo "Notes of the last round per side:"
echo "$out" | grep "customization" | tail -1 || true
echo "rounds customized on the GPU: $(echo "$out" | grep -c "on the GPU" || true)"
echo "$out" | grep -m1 "ERROR" || true

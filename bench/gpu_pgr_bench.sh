#!/usr/bin/env bash
# pgRouting's names through gpu_pgr against pgRouting itself (issue 44), on New York (USA-road-d.NY,
# 264,346 vertices, 733,846 arcs, costs in tenths of a metre), the same calls on the same server in
# one run. The calls are written once, as pgRouting code writes them, with the edges query
#   SELECT id, source, target, cost FROM ny_edges
# and run under `SET search_path = public` (pgRouting 3.4) and `SET search_path = gpu_pgr, public`
# (gpu_routing); a kept graph registered with that very text (gpu_graph_create('ny', ...), with its
# road index: gpu_graph_index) serves the gpu_pgr calls by text match. Prints one markdown table:
#   route          pgr_dijkstra(edges, s, t): one route's rows
#   service area   pgr_drivingDistance(edges, s, 50000): everything within 5 km of s
#   cost matrix    pgr_dijkstraCostMatrix(edges, 100 vertices): 100 x 100 costs
# Each cell is the median of ROUNDS calls (the sides alternating, a different pair or start each
# round, the same for both sides), timed in the server (clock_timestamp around the call, its rows
# counted), after one warm-up call per side. The last column checks the answers are the same:
# the route's agg_cost, the area's vertices and agg_costs, the matrix's sum of costs.
# Usage: bench/gpu_pgr_bench.sh [--rounds N] [--device cpu|gpu|auto] [--port P] [--no-index] [--out FILE]
#   --rounds N    calls per workload and side [5]
#   --device D    gpu_routing.device of the calls [auto]
#   --port P      the server's port [54490]
#   --no-index    the kept graph without its road index
# Starts its own server (scripts/cluster.sh, gpu_routing preloaded) and removes it at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 device=auto port=54490 out="" index=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --no-index) index=0; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "gpu_pgr_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
. "$root/bench/ny_server.sh"
ny_bench_server gpu_pgr_bench "$port"
psql -X -q -d bench -c "SET client_min_messages = warning" -c "CREATE EXTENSION pgrouting CASCADE" >/dev/null
# Without the schema, `gpu_pgr, public` would quietly mean pgRouting on both sides.
if [ "$(psql -X -At -d bench -c "SELECT to_regnamespace('gpu_pgr') IS NOT NULL")" != t ]; then
  echo "gpu_pgr_bench.sh: the installed gpu_routing has no schema gpu_pgr (make install from this tree)" >&2
  exit 1
fi
edges='SELECT id, source, target, cost FROM ny_edges'
psql -X -q -d bench -c "SELECT gpu_graph_create('ny', '$edges')" >/dev/null
[ "$index" = 1 ] && psql -X -q -d bench -c "SELECT gpu_graph_index('ny')" >/dev/null
echo "gpu_pgr_bench.sh: New York loaded and kept$([ "$index" = 1 ] && echo ', with its road index')" >&2

export PGOPTIONS="-c gpu_routing.device=$device"
psql -X -q -v ON_ERROR_STOP=1 -d bench <<SQL
-- The workloads: each round's call, \$1 the round. Vertices spread over New York, the same for
-- both sides.
CREATE TABLE workloads (name text, call text, check_sql text);
INSERT INTO workloads VALUES
  ('route: pgr_dijkstra(edges, s, t)',
   \$\$SELECT * FROM pgr_dijkstra('$edges', 1 + (%1\$s * 7919 * 31) %% 264346, 1 + (%1\$s * 104729 * 17) %% 264346)\$\$,
   'SELECT agg_cost FROM (%s) r WHERE edge = -1'),
  ('service area, 5 km: pgr_drivingDistance(edges, s, 50000)',
   \$\$SELECT * FROM pgr_drivingDistance('$edges', 1 + (%1\$s * 7919 * 53) %% 264346, 50000)\$\$,
   'SELECT count(*)::float8 + sum(agg_cost) FROM (%s) r'),
  ('cost matrix, 100 x 100: pgr_dijkstraCostMatrix(edges, 100 vertices)',
   \$\$SELECT * FROM pgr_dijkstraCostMatrix('$edges', (SELECT array_agg(1 + (i * 7919 + %1\$s * 104729) %% 264346) FROM generate_series(1, 100) i))\$\$,
   'SELECT count(*)::float8 + sum(agg_cost) FROM (%s) r');
CREATE TABLE timings (workload text, side text, round integer, ms float8);
CREATE TABLE answers (workload text, side text, round integer, answer float8);
-- One call under a search_path: milliseconds in the server, and its answer (check_sql over its
-- rows, which reads every row).
CREATE FUNCTION time_call(check_sql text, call text, path text, OUT ms float8, OUT answer float8)
LANGUAGE plpgsql AS \$f\$
DECLARE started timestamptz;
BEGIN
  PERFORM set_config('search_path', path, true);
  started := clock_timestamp();
  EXECUTE format(check_sql, call) INTO answer;
  ms := extract(epoch FROM clock_timestamp() - started) * 1000;
END
\$f\$;
SQL
# One session for every call (a session's first call of a kept graph maps it: warmed once a side),
# each call a statement of its own; the sides alternate round by round.
sides=("pgRouting|public" "gpu_pgr|gpu_pgr, public")
psql -X -At -d bench -c "SELECT name FROM workloads ORDER BY name DESC" >"$work/names"
{
  while IFS= read -r name; do
    for side in "${sides[@]}"; do
      echo "SELECT 1 FROM workloads, time_call(check_sql, format(call, 0), '${side#*|}') WHERE name = \$\$$name\$\$;"
    done
    for round in $(seq 1 "$rounds"); do
      order=("${sides[@]}")
      [ $((round % 2)) = 0 ] && order=("${sides[1]}" "${sides[0]}")
      for side in "${order[@]}"; do
        echo "WITH t AS (SELECT t.* FROM workloads, time_call(check_sql, format(call, $round), '${side#*|}') t WHERE name = \$\$$name\$\$),"
        echo "  a AS (INSERT INTO answers SELECT \$\$$name\$\$, '${side%%|*}', $round, coalesce(answer, 'NaN') FROM t)"
        echo "INSERT INTO timings SELECT \$\$$name\$\$, '${side%%|*}', $round, ms FROM t RETURNING '$name, round $round, ${side%%|*}: ' || round(ms::numeric, 1) || ' ms';"
      done
    done
  done <"$work/names"
} >"$work/calls.sql"
chmod a+r "$work/calls.sql"
psql -X -q -At -v ON_ERROR_STOP=1 -d bench -f "$work/calls.sql" | grep ' ms$' | sed 's/^/gpu_pgr_bench.sh: /' >&2
{
  echo "| New York, gpu_routing.device = $device | pgRouting 3.4 (ms) | gpu_pgr (ms) | pgRouting / gpu_pgr | same answers |"
  echo "|---|---:|---:|---:|---|"
  psql -X -At -F '|' -d bench <<'SQL' | awk -F'|' '{ printf "| %s | %.1f | %.1f | %.1f | %s |\n", $1, $2, $3, $2 / $3, $4 }'
SELECT t.workload,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'pgRouting'),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE side = 'gpu_pgr'),
       (SELECT CASE WHEN bool_and(p.answer = g.answer) THEN 'yes' ELSE 'NO' END || ' (' || count(*) || ' calls)'
        FROM answers p JOIN answers g USING (workload, round)
        WHERE p.workload = t.workload AND p.side = 'pgRouting' AND g.side = 'gpu_pgr')
FROM timings t GROUP BY t.workload ORDER BY t.workload DESC;
SQL
  echo
  echo "Medians of $rounds calls a side (the sides alternating), timed in the server; edges_sql '$edges'; kept graph 'ny' registered with that text$([ "$index" = 1 ] && echo ', with its road index (gpu_graph_index)')."
  echo "Runs (ms): $(psql -X -At -d bench -c "SELECT string_agg(workload || ', ' || side || ': ' || ms_list, '; ' ORDER BY workload DESC, side) FROM (SELECT split_part(workload, ':', 1) AS workload, side, string_agg(round(ms::numeric, 1)::text, ' ' ORDER BY round) AS ms_list FROM timings GROUP BY 1, 2) r")"
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(date -u '+%Y-%m-%d'), gpu_routing $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet HEAD -- src kernels sql 2>/dev/null || echo ' with local changes')."
} | tee ${out:+"$out"}

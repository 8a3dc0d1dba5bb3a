#!/usr/bin/env bash
# A cost matrix on one server against the same matrix spread over two (scripts/spread_matrix.sql:
# a primary and its hot standby on this machine, dblink), in one run. New York kept as graph 'ny'
# with its road index; the CPU engines (gpu_routing.device = cpu). Two matrices:
#   index   SIZE x SIZE on the road index (engine cch: the bucket many-to-many), where gathering
#           the rows (as text, through dblink) weighs against the computing
#   trees   TREES x TREES without the index (engine dijkstra: a whole one-to-all search a source),
#           where the computing dominates
# Each side runs ROUNDS times, alternating, timed inside the coordinating server (clock_timestamp
# around the whole call, rows counted, not sent to the client); the table gives the medians:
#   one server, every core               gpu_apsp_array on the primary
#   two servers on this machine          gpu_apsp_array_spread over the primary and its standby,
#                                        each with every core (they share this machine's cores)
#   one server, half the cores           gpu_routing.threads = cores / 2
#   two servers, half the cores each     the spread, each server with cores / 2 threads: two
#                                        machines of half this one's size, bar the memory bus
#   the spread over one server           the gathering's own cost (dblink to the primary itself)
# Usage: bench/spread_matrix.sh [--size N] [--trees N] [--rounds N] [--port-base P] [--out FILE]
#   --size N    the index matrix's sources and targets [2000]
#   --trees N   the trees matrix's sources and targets [32]
#   --rounds N  runs per side [5]
#   --port-base the primary's port P, the standby's P+1 [54470]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
size=2000 trees=32 rounds=5 port=54470 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --trees) trees=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --port-base) port=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "spread_matrix.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export GPU_ROUTING_DATA=${GPU_ROUTING_DATA:-$root/../shared/data}
work=$(mktemp -d /tmp/spread_matrix.XXXXXX)
chmod 755 "$work"
primary=$work/primary standby=$work/standby
cleanup() {
  "$root/scripts/cluster.sh" stop "$standby" || true
  "$root/scripts/cluster.sh" stop "$primary" || true
  rm -rf "$work"
}
trap cleanup EXIT
cores=$(nproc)
half=$(( cores / 2 > 0 ? cores / 2 : 1 ))
"$root/scripts/cluster.sh" start "$primary" "$port" >/dev/null
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 -h "$primary" -p "$port" -U postgres -d bench "$@"; }
createdb -h "$primary" -p "$port" -U postgres bench
"$root/scripts/load_ny.sh" "host=$primary port=$port user=postgres dbname=bench" >/dev/null
q -c "CREATE EXTENSION dblink" -f "$root/scripts/spread_matrix.sql" \
  -c "SELECT gpu_graph_create('ny', 'SELECT id, source, target, cost FROM ny_edges')" \
  -c "SELECT gpu_graph_index('ny')" >/dev/null
q <<'SQL' >/dev/null
-- Milliseconds of one call of `sql` (its rows counted inside the server), and the count.
CREATE FUNCTION bench_ms(sql text, OUT ms float8, OUT row_count bigint) LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  EXECUTE format('SELECT count(*) FROM (%s) calls', sql) INTO row_count;
  ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
SQL
"$root/scripts/cluster.sh" standby "$primary" "$standby" $((port + 1)) bench_standby >/dev/null
vertices=$(q -c "SELECT count(*) FROM ny_vertices")
# Sources and targets spread over New York's vertex ids, the same on every side.
ids() { echo "(SELECT array_agg(1 + (v * 7919) % $vertices) FROM generate_series(1, $1) v)"; }
connection() {  # connection string of a server with `threads` OpenMP threads and the engine
  echo "host=$1 port=$2 user=postgres dbname=bench options=''-c gpu_routing.device=cpu -c gpu_routing.threads=$3 -c gpu_routing.apsp_algorithm=$4''"
}
declare -A times
sides="one two one_half two_half loopback"
echo "spread_matrix.sh: warming both servers (their forms of 'ny' and road indexes) ..." >&2
for h in "$primary $port" "$standby $((port + 1))"; do
  set -- $h
  PGOPTIONS="-c gpu_routing.device=cpu -c gpu_routing.apsp_algorithm=cch" psql -X -q -t -A -h "$1" -p "$2" -U postgres -d bench \
    -c "SELECT count(*) FROM gpu_apsp_array('graph:ny', ARRAY[1], ARRAY[2])" >/dev/null
done
for matrix in index trees; do
  [ $matrix = index ] && n=$size engine=cch || n=$trees engine=dijkstra
  for round in $(seq "$rounds"); do
    for side in $sides; do
      case $side in one|two|loopback) threads=0 ;; *) threads=$half ;; esac
      case $side in
        one|one_half) call="SELECT * FROM gpu_apsp_array('graph:ny', $(ids "$n"), $(ids "$n"))" ;;
        two|two_half) call="SELECT * FROM gpu_apsp_array_spread(ARRAY['$(connection "$primary" "$port" $threads $engine)', '$(connection "$standby" $((port + 1)) $threads $engine)'], 'graph:ny', $(ids "$n"), $(ids "$n"))" ;;
        loopback) call="SELECT * FROM gpu_apsp_array_spread(ARRAY['$(connection "$primary" "$port" 0 $engine)'], 'graph:ny', $(ids "$n"), $(ids "$n"))" ;;
      esac
      line=$(PGOPTIONS="-c gpu_routing.device=cpu -c gpu_routing.threads=$threads -c gpu_routing.apsp_algorithm=$engine" \
             q -c "SELECT ms || ' ' || row_count FROM bench_ms(\$q\$$call\$q\$)")
      [ "${line#* }" = "$n" ] || { echo "spread_matrix.sh: $matrix $side returned ${line#* } rows, not $n" >&2; exit 1; }
      times[$matrix.$side]+="${line% *} "
      echo "spread_matrix.sh: $matrix ($n x $n) round $round $side: ${line% *} ms" >&2
    done
  done
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m() { printf '%s\n' ${times[$1]} | median; }
{
  echo "| New York matrix, CPU ($cores cores, $rounds runs a side, medians, ms) | one server, every core | two servers on this machine (spread) | one server, $half thread(s) | two servers, $half thread(s) each | spread over one server (gathering only) |"
  echo "|---|---:|---:|---:|---:|---:|"
  for matrix in index trees; do
    [ $matrix = index ] && label="$size x $size on the road index (cch)" || label="$trees x $trees without it (dijkstra, one tree a source)"
    printf '| %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n' "$label" "$(m $matrix.one)" "$(m $matrix.two)" \
      "$(m $matrix.one_half)" "$(m $matrix.two_half)" "$(m $matrix.loopback)"
  done
  echo
  echo "Every run (ms): $(for k in "${!times[@]}"; do printf '%s: %s; ' "$k" "${times[$k]% }"; done)"
  echo "Machine: $cores cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(date -u '+%Y-%m-%d'), gpu_routing $(git -C "$root" rev-parse --short HEAD)."
} | tee ${out:+"$out"}

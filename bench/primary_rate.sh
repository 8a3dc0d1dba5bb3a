#!/usr/bin/env bash
# The primary's rates, this build against an earlier one, in one run: whether a change (issue 41's
# change log, for one) slowed the primary. Two servers run side by side, one with a build of HEAD
# (the committed tree), one with a build of BASE (a git revision), built alike, each installed
# into a copy of PostgreSQL's own files, so both run the same PostgreSQL. Each loads New York
# (scripts/load_ny.sh), keeps it as graph 'ny' with its road index, then pgbench runs, alternating
# the servers for ROUNDS rounds:
#   route   one random New York route a transaction: gpu_path('graph:ny', s, t), prepared
#           (gpu_routing.device = cpu, the road index's one-to-one path)
#   write   one UPDATE of a random row of ny_edges a transaction (the statement trigger: on this
#           build it also writes the change log standbys read); the next route call rebuilds the
#           graph, so this side runs after the route rounds
# and prints one markdown table: the median transactions per second of each side and build, and
# the ratio this build / BASE.
#
# Usage: bench/primary_rate.sh BASE [--rounds N] [--seconds S] [--clients N] [--port-base P]
#            [--out FILE]
#   BASE         the revision to compare with (e.g. dbd2721, the landed main before issue 41)
#   --rounds N   alternating rounds per side [5]
#   --seconds S  seconds per pgbench run [10]
#   --clients N  pgbench clients [2 x the cores]
#   --port-base  the servers' ports P (this build), P+1 (BASE) [54460]
#   --out FILE   the table also written to FILE
# WITH_CUDA=0 builds both without CUDA (minutes instead of a quarter of an hour each on 2 cores);
# the rates compared are the CPU engine's either way.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:?usage: bench/primary_rate.sh BASE [--rounds N] [--seconds S] [--clients N] [--out FILE]}
shift
rounds=5 seconds=10 clients=$(( $(nproc) * 2 )) port=54460 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --port-base) port=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "primary_rate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export GPU_ROUTING_DATA=${GPU_ROUTING_DATA:-$root/../shared/data}
work=$(mktemp -d /tmp/primary_rate.XXXXXX)
chmod 755 "$work"
new_dir=$work/new base_dir=$work/base
cleanup() {
  for side in new base; do
    PG_BINDIR=$work/pg_$side$(pg_config --bindir) "$root/scripts/cluster.sh" stop "$work/$side" || true
    git -C "$root" worktree remove --force "$work/src_$side" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# build SIDE REVISION: the revision's build installed into a copy of PostgreSQL's files
# (PostgreSQL finds its libraries and extensions relative to its own binaries) in $work/pg_SIDE.
pgbin=$(pg_config --bindir) pglib=$(pg_config --pkglibdir) pgshare=$(pg_config --sharedir)
build() {
  local side=$1 revision=$2 pg=$work/pg_$1
  echo "primary_rate.sh: building $revision ($side) ..." >&2
  git -C "$root" worktree add --detach "$work/src_$side" "$revision" >/dev/null 2>&1
  mkdir -p "$pg$(dirname "$pgbin")" "$pg$(dirname "$pgshare")"
  cp -a "$(dirname "$pgbin")/." "$pg$(dirname "$pgbin")/"
  cp -a "$pgshare" "$pg$(dirname "$pgshare")/"
  [ -d "$pg$pglib" ] || cp -a "$pglib" "$pg$pglib"
  rm -f "$pg$pgshare"/extension/gpu_routing* "$pg$pglib"/gpu_routing*
  (cd "$work/src_$side" && make -j"$(nproc)" WITH_CUDA="${WITH_CUDA:-auto}" >"$work/build_$side.log" 2>&1 &&
     make install DESTDIR="$pg" WITH_CUDA="${WITH_CUDA:-auto}" >>"$work/build_$side.log" 2>&1) ||
    { echo "primary_rate.sh: building $revision failed:" >&2; tail -n 30 "$work/build_$side.log" >&2; exit 1; }
  chmod -R a+rX "$pg"
}
build new HEAD
build base "$base"
new_dir=$work/new base_dir=$work/base
PG_BINDIR=$work/pg_new$pgbin "$root/scripts/cluster.sh" start "$new_dir" "$port" >/dev/null
PG_BINDIR=$work/pg_base$pgbin "$root/scripts/cluster.sh" start "$base_dir" $((port + 1)) >/dev/null
for side in new base; do
  [ $side = new ] && p=$port || p=$((port + 1))
  [ $side = new ] && h=$new_dir || h=$base_dir
  createdb -h "$h" -p "$p" -U postgres bench
  "$root/scripts/load_ny.sh" "host=$h port=$p user=postgres dbname=bench" >/dev/null
  psql -X -q -h "$h" -p "$p" -U postgres -d bench \
    -c "SELECT gpu_graph_create('ny', 'SELECT id, source, target, cost FROM ny_edges')" \
    -c "SELECT gpu_graph_index('ny')" >/dev/null
  echo "primary_rate.sh: $side: $(psql -X -At -h "$h" -p "$p" -U postgres -d bench -c "SELECT extversion FROM pg_extension WHERE extname = 'gpu_routing'")" >&2
done
vertices=$(psql -X -At -h "$new_dir" -p "$port" -U postgres -d bench -c "SELECT max(id) FROM ny_vertices")
rows=$(psql -X -At -h "$new_dir" -p "$port" -U postgres -d bench -c "SELECT max(id) FROM ny_edges")
# chr(58): pgbench -M prepared would read a colon in the text as a variable.
cat >"$work/route.sql" <<SQL
\set s random(1, $vertices)
\set t random(1, $vertices)
SELECT agg_cost FROM gpu_path('graph' || chr(58) || 'ny', :s::bigint, :t::bigint) WHERE edge = -1;
SQL
cat >"$work/write.sql" <<SQL
\set r random(1, $rows)
UPDATE ny_edges SET cost = cost WHERE id = :r;
SQL
chmod a+r "$work"/*.sql
# run SIDE SCRIPT [SEED]: tps of one pgbench run on that side's server; both sides of a round run
# with the same seed, so the same routes.
run() {
  local side=$1 script=$2 h p
  [ "$side" = new ] && h=$new_dir p=$port || h=$base_dir p=$((port + 1))
  PGOPTIONS="-c gpu_routing.device=cpu" pgbench -n -M prepared --random-seed="${3:-1}" -h "$h" -p "$p" -U postgres -c "$clients" \
    -j "$(nproc)" -T "$seconds" -f "$work/$script.sql" bench >"$work/pgbench.out" 2>&1 ||
    { echo "primary_rate.sh: pgbench failed on $side:" >&2; tail -n 15 "$work/pgbench.out" >&2; exit 1; }
  sed -nE 's/^tps = ([0-9.]+) .*/\1/p' "$work/pgbench.out" | head -1
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A results
for workload in route write; do
  run new $workload >/dev/null; run base $workload >/dev/null  # warm: mappings, plans, the index
  for round in $(seq "$rounds"); do
    for side in new base; do
      tps=$(run $side $workload "$round")
      results[$workload.$side]+="$tps "
      echo "primary_rate.sh: $workload round $round $side: $tps tps" >&2
    done
  done
done
{
  echo "| workload (pgbench, $clients clients, ${seconds} s x $rounds rounds a side, alternating) | this build ($(git -C "$root" rev-parse --short HEAD)), tps | $base, tps | this / $base |"
  echo "|---|---:|---:|---:|"
  for workload in route write; do
    n=$(printf '%s\n' ${results[$workload.new]} | median)
    b=$(printf '%s\n' ${results[$workload.base]} | median)
    label=$([ $workload = route ] && echo "one New York route on kept graph 'ny' (road index, CPU)" || echo "one UPDATE of a row of ny_edges (the tracked table)")
    printf '| %s | %.0f | %.0f | %.3f |\n' "$label" "$n" "$b" "$(echo "$n / $b" | awk -F/ '{ print $1 / $2 }')"
  done
  echo
  echo "Every run's tps: $(for k in route.new route.base write.new write.base; do printf '%s: %s; ' "$k" "${results[$k]% }"; done)"
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(date -u '+%Y-%m-%d')."
} | tee ${out:+"$out"}

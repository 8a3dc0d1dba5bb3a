#!/usr/bin/env bash
# The main job: on a fresh machine, install what is missing, build and install gpu_routing, start
# a throwaway PostgreSQL cluster, load the New York road network (DIMACS, 264,346 intersections,
# 733,846 road segments, lengths in tenths of a metre) into a table, and tell the product's story
# with scripts/demo.sql: a kept graph and its road index (a route in a fraction of a millisecond,
# never stale after a committed UPDATE), a service area, a cost matrix as arrays, each beside
# pgRouting with the ratio of their times, and a short look at the server at the end. The cluster
# is removed at the end: scripts/playground.sh starts one that stays (README, "Try it").
# It prints what it expects to take first, the build's progress as it goes, and each step's time.
# Usage: scripts/demo.sh   (as root or with sudo; GPU_ROUTING_DATA: the data folder
#        [../shared/data]; GPU_ROUTING_DEMO_PORT: the cluster's port [54328];
#        GPU_ROUTING_DEMO_CALIBRATE=1: also run gpu_routing_calibrate() at the end)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$SECONDS
clock() { printf '%d:%02d' $(( $1 / 60 )) $(( $1 % 60 )); }
steps=()
step_started=$SECONDS
step_done() {
  steps+=("$1 $(clock $(( SECONDS - step_started )))")
  step_started=$SECONDS
}

# What to expect, from the times measured on the 2-core development machine (no GPU, other work
# running beside it): a first build with CUDA 4:26 (the core 3:46, the entry points and the install
# 0:40), without CUDA about 1:50 (the core 1:06); New York loaded into a fresh cluster in 6 s; the
# SQL 18-30 s, 11-17 s of it pgRouting's 100 x 100 cost matrix.
core_build=build/extension
if [ -f "$core_build/libgpu_routing_core.a" ]; then
  build_note="built already: seconds"
elif command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  build_note="a first build with CUDA: about 5 minutes on 2 cores"
else
  build_note="a first build without CUDA (no nvcc): about 2 minutes on 2 cores"
fi
echo "== gpu_routing demo: expect the build ($build_note), then about 40 s for New York"
echo "   and the demo's SQL (its slowest step: pgRouting's 100 x 100 cost matrix, 10-20 s)"

scripts/setup.sh
export GPU_ROUTING_DATA=${GPU_ROUTING_DATA:-$(cd "$root/../shared/data" && pwd)}
step_done "packages"

# The build's own lines go to a log; what shows is its progress: the core's percent (CMake) as
# it passes each tenth, then the PostgreSQL entry points file by file, with the time so far, and
# the time again after each half minute without a new line (nvcc spends minutes on a few files).
echo "== building and installing gpu_routing (the full log: $core_build/demo_build.log)"
mkdir -p "$core_build"
log=$core_build/demo_build.log
entry_points=$(ls src/pg/*.cpp src/pg/kept/*.cpp | wc -l)
show_progress() {
  local shown=-1 compiled=0 line pending= percent last_line=no
  while [ "$last_line" = no ]; do
    if IFS= read -r -t 30 line; then
      line=$pending$line pending=
    elif [ $? -gt 128 ]; then
      # Half a minute without a whole line: the time so far (a partial line waits for its end).
      pending+=$line
      [ "$shown" -ge 0 ] && [ "$compiled" = 0 ] && printf ' . %s' "$(clock $(( SECONDS - step_started )))"
      continue
    else
      line=$pending$line pending= last_line=yes
      [ -z "$line" ] && break
    fi
    printf '%s\n' "$line" >>"$log"
    if [[ $line =~ ^\[\ *([0-9]+)%\] ]]; then
      percent=${BASH_REMATCH[1]}
      # The first percent, then one each tenth further, and 100 once.
      [ "$shown" -ge 0 ] && [ "$percent" -lt $(( shown + 10 )) ] &&
        { [ "$percent" != 100 ] || [ "$shown" = 100 ]; } && continue
      [ "$shown" -lt 0 ] && printf '   core library (CMake):'
      printf ' %s%% (%s)' "$percent" "$(clock $(( SECONDS - step_started )))"
      shown=$percent
    elif [[ $line =~ -o\ src/pg/.*\.o\  ]]; then
      if [ "$compiled" = 0 ]; then
        [ "$shown" -ge 0 ] && echo
        printf '   entry points (PGXS):'
      fi
      compiled=$(( compiled + 1 ))
      printf ' %d/%d' "$compiled" "$entry_points"
    fi
  done
  if [ "$shown" -ge 0 ] || [ "$compiled" -gt 0 ]; then echo; fi
  return 0
}
: >"$log"
if ! make -j"$(nproc)" 2>&1 | show_progress; then
  echo "demo.sh: the build failed; the end of its log ($log):" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
make install >>"$log" 2>&1 || { echo "demo.sh: make install failed (see $log)" >&2; tail -n 20 "$log" >&2; exit 1; }
step_done "build"

cluster=$(mktemp -d /tmp/gpu_routing_demo.XXXXXX)
trap 'scripts/cluster.sh stop "$cluster"' EXIT
eval "$(scripts/cluster.sh start "$cluster" "${GPU_ROUTING_DEMO_PORT:-54328}")"
createdb ny
echo "== loading the New York road network"
scripts/load_ny.sh ny
step_done "cluster and New York"
psql_options=()
[ "${GPU_ROUTING_DEMO_CALIBRATE:-0}" = 1 ] && psql_options=(-v calibrate=1)
psql -X -d ny -v ON_ERROR_STOP=1 "${psql_options[@]}" -f scripts/demo.sql
step_done "demo SQL"
echo
summary=$(IFS=,; echo "${steps[*]}")
echo "== done in $(clock $(( SECONDS - started ))) (${summary//,/, }). The demo's cluster is removed now;"
echo "   for a database that stays, to try gpu-route and the README's examples in:"
echo "   scripts/install_client.sh, then eval \"\$(scripts/playground.sh start)\""

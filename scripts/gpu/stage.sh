#!/usr/bin/env bash
# Makes HERE everything scripts/gpu/suite.sh needs on the GPU machine (which has no package
# registry, no GoogleTest and no PostgreSQL) in .device/, the folder the `device` tool carries
# (ignored by git):
#   .device/pg15-bundle.tar.xz  this machine's PostgreSQL 15 with pgTAP, pg_prove, pgRouting and
#                               PostGIS (../shared/device/pg-bundle.sh), made when missing or
#                               older than pg-bundle.sh; PG_BUNDLE=remake makes it again
#   .device/pg-install.sh       installs that bundle there and starts a server
#   .device/data/               New York, Rome and the sample network (from ../shared/data)
#   .device/stage.tar.xz        the extension (gpu_routing.so, the GPU service's program
#                               gpu_routing_service, control, SQL scripts), gpu_tests and
#                               the benchmarks, built here (a CUDA build made here runs there), and
#                               the checksums of the sources they were built from
# Then prints the device `run` call to make and the size that travels (64 MiB at most).
#   [BUILD=build/test] scripts/gpu/stage.sh
# BUILD: the CMake build to use [build/gpu-stage, configured with CUDA and without the client];
# an existing CUDA build (scripts/test.sh's build/test) is used as it is configured.
# Needs the Debian packages of scripts/setup.sh and the CUDA toolkit.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${BUILD:-build/gpu-stage}
shared=$root/../shared
dev=.device
stage=$dev/stage
limit=$((64 * 1024 * 1024))
die() { echo "stage.sh: $*" >&2; exit 1; }

git check-ignore -q "$dev/" || die "$dev/ is not ignored by git (it would travel twice and show up as untracked)"

# --- the PostgreSQL bundle and its installer ------------------------------------------------------
if [ ! -x "$shared/device/pg-bundle.sh" ] || [ ! -f "$shared/device/pg-install.sh" ]; then
  die "$shared/device/pg-bundle.sh and pg-install.sh are missing (see $shared/device/README.md)"
fi
mkdir -p "$dev"
bundle=$dev/pg15-bundle.tar.xz
if [ ! -s "$bundle" ] || [ "$shared/device/pg-bundle.sh" -nt "$bundle" ] || [ "${PG_BUNDLE:-}" = remake ]; then
  # What the suite needs from this machine's packages; a bundle without one of them would fail
  # only there, on device time.
  need=(/usr/lib/postgresql/15/bin/postgres /usr/lib/postgresql/15/bin/pg_config /usr/lib/postgresql/15/bin/pgbench
        /usr/include/postgresql/15/server/postgres.h /usr/share/postgresql/15/extension/pgtap.control
        /usr/bin/pg_prove /usr/share/postgresql/15/extension/pgrouting.control
        /usr/share/postgresql/15/extension/postgis.control)
  for f in "${need[@]}"; do
    [ -e "$f" ] || die "$f is missing: run scripts/setup.sh first (the bundle packs this machine's PostgreSQL 15)"
  done
  echo "stage.sh: making $bundle (about 40 MB, a minute or two)"
  "$shared/device/pg-bundle.sh" "$dev" >/dev/null
fi
install -m 0755 "$shared/device/pg-install.sh" "$dev/pg-install.sh"

# --- the data files ---------------------------------------------------------------------------------
mkdir -p "$dev/data"
for f in USA-road-d.NY.gr.gz USA-road-d.NY.co.gz rome99.gr sample_network.sql; do
  [ -f "$shared/data/$f" ] || die "$shared/data/$f is missing"
  install -C -m 0644 "$shared/data/$f" "$dev/data/$f"
done

# --- the build -------------------------------------------------------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPU_ROUTING_CUDA=ON -DGPU_ROUTING_CLIENT=OFF >/dev/null
fi
grep -q "^GPU_ROUTING_CUDA:BOOL=ON" "$build/CMakeCache.txt" || die "$build is not a CUDA build"
cmake --build "$build" -j"$(nproc)"
make -j"$(nproc)" CORE_BUILD="$build" CORE_CMAKE_OPTIONS= >/dev/null
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/ext"
cp gpu_routing.so gpu_routing.control sql/gpu_routing--*.sql "$stage/ext/"
# The GPU service's program, which `make install` puts beside the library (install-service).
[ -x "$build/gpu_routing_service" ] || die "$build/gpu_routing_service was not built"
cp "$build/gpu_routing_service" "$stage/ext/"
for b in test/unit/gpu_tests bench/near_far_bench bench/sssp_bench bench/apsp_bench bench/sql_bench bench/phast_bench bench/cch_bench; do
  [ -x "$build/$b" ] || die "$build/$b was not built (GoogleTest and libpq come from scripts/setup.sh)"
  cp "$build/$b" "$stage/bin/"
done
strip --strip-unneeded "$stage"/bin/* "$stage/ext/gpu_routing.so" "$stage/ext/gpu_routing_service"
# What the binaries were built from: suite.sh warns when the tree it runs with differs.
git ls-files -co --exclude-standard -z -- src kernels service sql bench test/unit CMakeLists.txt Makefile gpu_routing.control |
  xargs -0 sha256sum > "$stage/SOURCES.sha256"
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src kernels service sql bench test/unit CMakeLists.txt Makefile gpu_routing.control || echo ' with local changes'), built $(date -u '+%Y-%m-%d %H:%M UTC') from $build" \
  > "$stage/STAMP"
tar -C "$dev" -cJf "$dev/stage.tar.xz" stage
rm -rf "$stage"

# --- what travels ------------------------------------------------------------------------------------
# The device tool sends the tracked and untracked-not-ignored files, plus the carried .device.
tree_bytes=$(git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
dev_bytes=$(du -sb "$dev" | cut -f1)
total=$((tree_bytes + dev_bytes))
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo
echo "staged: $(tar -xOJf "$dev/stage.tar.xz" stage/STAMP)"
du -sh "$dev"/* | sed 's/^/  /'
echo "travels: $(mib "$total") of 64 MiB (working tree $(mib "$tree_bytes"), $dev $(mib "$dev_bytes"))"
if [ "$total" -gt "$limit" ]; then
  die "that is over the device tool's 64 MiB: remove what $dev does not need, or untracked files from the tree (git status)"
fi
cat <<EOF

On the GPU machine, one device-tool call (see docs/testing.md, "On the GPU machine"):
  run  command:   bash scripts/gpu/suite.sh
       carry:     [".device"]
       timeout_s: 600
  A part only: TESTS="regress pgtap" BENCH= bash scripts/gpu/suite.sh; benchmarks: TESTS= BENCH="sql-kept" bash scripts/gpu/suite.sh
  Results: summary.txt (failures in detail), logs.tar.gz, the benchmark tables.
EOF

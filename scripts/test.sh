#!/usr/bin/env bash
# Runs every test of gpu_routing on a fresh machine: installs what is missing, builds, runs the
# unit tests (CTest), installs the extension, starts a throwaway PostgreSQL cluster of its own
# (preloading gpu_routing), runs pg_regress, the isolation tests, pgTAP (pg_prove), pgRouting's
# own pgTAP files through gpu_pgr (where PGROUTING_SRC names a pgRouting 3.4.2 tree), the kept-graph
# stress and fault tests, the upgrade test, the client tests, the docs' examples and the reference
# check (every setting and function named in docs/reference.md) against it,
# and the deployment shapes on clusters of their own (test/deployments/run.sh: without preload,
# a primary with two hot standbys, failover, a matrix over several servers),
# removes the cluster; starts a second one with gpu_routing.service = cpu and two service
# workers (every call through the GPU service, on the CPU engines; auto with
# GPU_ROUTING_DEVICE=gpu) and runs pg_regress, the isolation tests, pgTAP and the service's load and fault tests (test/service/run.sh) against it;
# then builds the Debian packages and tests them installed.
#   GPU_ROUTING_DEVICE=gpu scripts/test.sh   the SQL suites with gpu_routing.device = gpu (GPU machine)
#   WITH_CUDA=0 scripts/test.sh              a build without CUDA
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
export GPU_ROUTING_DATA=${GPU_ROUTING_DATA:-$(cd "$root/../shared/data" && pwd)}
device=${GPU_ROUTING_DEVICE:-auto}
jobs=$(nproc)
build=build/test
step() { printf '\n== %s\n' "$*"; }
# A suite that hangs (a wait no cancel reaches, such as dblink's) fails here after this long
# instead of holding CI to its own limit; every suite takes under 3 minutes on 2 cores.
suite_limit=${GPU_ROUTING_SUITE_LIMIT:-1200}
bounded() {
  local rc=0
  timeout -k 30 "$suite_limit" "$@" || rc=$?
  [ "$rc" = 124 ] && echo "scripts/test.sh: '$*' ran past ${suite_limit} s and was stopped" >&2
  return "$rc"
}

step "build: core, unit tests, benchmarks, client (CMake)"
cuda_option=-DGPU_ROUTING_CUDA=ON
[ "${WITH_CUDA:-auto}" = 0 ] && cuda_option=-DGPU_ROUTING_CUDA=OFF
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "$cuda_option" >/dev/null
cmake --build "$build" -j"$jobs"

step "unit tests"
ctest --test-dir "$build" --output-on-failure -j"$jobs" -LE client

step "extension: make && make install"
make -j"$jobs" CORE_BUILD="$build" CORE_CMAKE_OPTIONS= WITH_CUDA="${WITH_CUDA:-auto}" >/dev/null
make install CORE_BUILD="$build" CORE_CMAKE_OPTIONS= WITH_CUDA="${WITH_CUDA:-auto}" >/dev/null

cluster=$(mktemp -d /tmp/gpu_routing_test.XXXXXX)
trap 'scripts/cluster.sh stop "$cluster"' EXIT
eval "$(scripts/cluster.sh start "$cluster" "${GPU_ROUTING_TEST_PORT:-54329}")"
export PGOPTIONS="-c gpu_routing.device=$device"

step "pg_regress and isolation tests (gpu_routing.device = $device)"
if ! make installcheck CORE_BUILD="$build" CORE_CMAKE_OPTIONS=; then
  cat test/regress/output/regression.diffs test/isolation/output/regression.diffs 2>/dev/null | head -200
  exit 1
fi

step "pgTAP (gpu_routing.device = $device)"
createdb gpu_routing_test
psql -X -q -v ON_ERROR_STOP=1 -d gpu_routing_test -f test/fixtures.sql
bounded pg_prove -d gpu_routing_test test/pgtap/*.sql

# pgRouting's own pgTAP files are GPL-2.0-or-later and not in this repository: this step runs
# them where PGROUTING_SRC names a pgRouting 3.4.2 source tree, and says it skipped otherwise.
step "pgRouting 3.4.2's pgTAP tests with search_path = gpu_pgr, public (PGROUTING_SRC=${PGROUTING_SRC:-unset})"
bounded test/pgrouting_pgtap/run.sh

step "kept graphs under load and faults (gpu_routing.device = $device)"
bounded test/kept/run.sh

step "gpu_routing_progress during long calls (gpu_routing.device = $device)"
bounded test/progress/run.sh

step "upgrade: every older version, ALTER EXTENSION UPDATE, pg_dump and pg_restore"
bounded test/upgrade/run.sh

step "deployments: without preload, hot standbys, failover, several servers (gpu_routing.device = $device)"
bounded test/deployments/run.sh

step "client tests"
export GPU_ROUTING_TEST_DSN="host=$PGHOST port=$PGPORT user=postgres dbname=gpu_routing_test"
if ctest --test-dir "$build" -N -L client | grep -q "Total Tests: [1-9]"; then
  ctest --test-dir "$build" --output-on-failure -L client
fi

step "docs: the examples of README.md and every page of docs/, their links; every setting and function in docs/reference.md"
if [ -x "$build/client/gpu-route" ]; then
  test/docs/readme_examples.sh --client-build "$build"
else
  test/docs/readme_examples.sh --sql-only
fi
test/docs/reference_check.sh --page docs/reference.md gpu_routing_test

# Last: it stores the server's speeds (then removes them), which auto's reasons name.
step "gpu_routing_calibrate() and the speeds it stores (gpu_routing.device = $device)"
bounded test/calibration/run.sh

scripts/cluster.sh stop "$cluster"
trap - EXIT

# The same suites again with every call going through the GPU service: on the CPU engines
# (gpu_routing.service = cpu) where there is no GPU, on the GPUs (auto) with GPU_ROUTING_DEVICE=gpu.
# The expected outputs are the same: that is the point.
# In CPU mode the service runs two workers (gpu_routing.service_devices = 2), as a two-GPU
# service does: every suite then runs with requests spread and many sources split over them.
service_mode=cpu
service_options="-c gpu_routing.service=cpu -c gpu_routing.service_devices=2"
[ "$device" = gpu ] && service_mode=auto && service_options="-c gpu_routing.service=auto"
step "GPU service (gpu_routing.service = $service_mode): pg_regress, isolation, pgTAP, service faults"
cluster=$(mktemp -d /tmp/gpu_routing_service_test.XXXXXX)
trap 'scripts/cluster.sh stop "$cluster"' EXIT
eval "$(GPU_ROUTING_SERVER_OPTIONS="$service_options" \
        scripts/cluster.sh start "$cluster" "$(( ${GPU_ROUTING_TEST_PORT:-54329} + 1 ))")"
if ! make installcheck CORE_BUILD="$build" CORE_CMAKE_OPTIONS=; then
  cat test/regress/output/regression.diffs test/isolation/output/regression.diffs 2>/dev/null | head -200
  exit 1
fi
createdb gpu_routing_test
psql -X -q -v ON_ERROR_STOP=1 -d gpu_routing_test -f test/fixtures.sql
bounded pg_prove -d gpu_routing_test test/pgtap/*.sql
bounded test/service/run.sh
scripts/cluster.sh stop "$cluster"
trap - EXIT

if [ "${GPU_ROUTING_SKIP_PACKAGE:-0}" != 1 ]; then
  step "Debian packages: build, install, test installed (GPU_ROUTING_SKIP_PACKAGE=1 skips)"
  scripts/package.sh
  test/package/run.sh
fi

step "all tests passed"

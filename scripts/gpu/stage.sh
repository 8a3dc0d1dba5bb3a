#!/usr/bin/env bash
# Builds everything the GPU machine needs HERE (it has no GoogleTest and no package registry) and
# stages it under .device/stage for the `device` tool to carry: the extension's files, the unit
# test and benchmark binaries. A CUDA build made here runs there. See scripts/gpu/suite.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${BUILD:-build/gpu-stage}
stage=.device/stage
# BUILD may name an existing CUDA build (scripts/test.sh's build/test): it is used as configured.
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPU_ROUTING_CUDA=ON -DGPU_ROUTING_CLIENT=OFF >/dev/null
fi
grep -q "^GPU_ROUTING_CUDA:BOOL=ON" "$build/CMakeCache.txt" || { echo "stage.sh: $build is not a CUDA build" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)"
make -j"$(nproc)" CORE_BUILD="$build" CORE_CMAKE_OPTIONS= >/dev/null
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/ext"
cp gpu_routing.so gpu_routing.control sql/gpu_routing--*.sql "$stage/ext/"
for b in "$build"/test/unit/gpu_tests "$build"/bench/near_far_bench "$build"/bench/sssp_bench "$build"/bench/apsp_bench "$build"/bench/sql_bench; do
  [ -x "$b" ] && cp "$b" "$stage/bin/"
done
strip --strip-unneeded "$stage"/bin/* "$stage/ext/gpu_routing.so"
# The carried folder must stay under the device tool's 64 MiB with the PostgreSQL bundle.
tar -C .device -cJf .device/stage.tar.xz stage
rm -rf "$stage"
mkdir -p .device/data
cp -u ../shared/data/USA-road-d.NY.gr.gz ../shared/data/USA-road-d.NY.co.gz ../shared/data/rome99.gr \
      ../shared/data/sample_network.sql .device/data/
du -sh .device .device/stage.tar.xz

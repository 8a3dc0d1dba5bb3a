#!/usr/bin/env bash
# Builds and installs the application client: the `gpu-route` command-line tool, the C++ library
# libgpu_routing_client.a and its header gpu_routing/router.hpp. Only the client is built (no
# CUDA, no core, no tests: about 15 s on two cores), in a build folder of its own.
# Usage:
#   scripts/install_client.sh                    # into /usr/local: /usr/local/bin/gpu-route, ...
#   scripts/install_client.sh --prefix ~/.local  # elsewhere (put PREFIX/bin on your PATH)
# Environment: GPU_ROUTING_CLIENT_BUILD, the build folder [build/install_client].
# Needs libpqxx-dev, CMake and g++ (scripts/setup.sh installs them); installs with sudo when not
# run as root and the prefix is not writable.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
prefix=/usr/local
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install_client.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=${GPU_ROUTING_CLIENT_BUILD:-build/install_client}

if ! pkg-config --exists libpqxx 2>/dev/null; then
  echo "install_client.sh: libpqxx is missing (Debian: libpqxx-dev; scripts/setup.sh installs it)" >&2
  exit 2
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DGPU_ROUTING_CUDA=OFF -DGPU_ROUTING_TESTS=OFF -DGPU_ROUTING_BENCH=OFF -DGPU_ROUTING_CLIENT=ON >/dev/null
cmake --build "$build" --target gpu-route gpu_routing_client -j"$(nproc)"

as_root=()
mkdir -p "$prefix" 2>/dev/null || true
if [ ! -w "$prefix" ] && [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
# Only the client's install rules: the core library of the same tree is not installed.
"${as_root[@]}" cmake --install "$build" --component client
echo "install_client.sh: installed $prefix/bin/gpu-route, $prefix/lib/libgpu_routing_client.a," \
  "$prefix/include/gpu_routing/router.hpp"
if ! command -v gpu-route >/dev/null 2>&1 || [ "$(command -v gpu-route)" != "$prefix/bin/gpu-route" ]; then
  echo "install_client.sh: $prefix/bin is not first on your PATH for gpu-route: export PATH=\"$prefix/bin:\$PATH\""
fi

#!/usr/bin/env bash
# The main job: on a fresh machine, install what is missing, build and install gpu_routing, start
# a throwaway PostgreSQL cluster, load the New York road network (DIMACS, 264,346 intersections,
# 733,846 road segments, lengths in tenths of a metre, which scripts/demo.sql divides by 10 so that
# every cost it shows is in metres) into a table, and answer real routing questions with every
# function, printing the rows. The cluster is removed at the end: scripts/playground.sh starts one
# that stays (README, "Try it").
# Usage: scripts/demo.sh   (as root or with sudo; GPU_ROUTING_DATA: the data folder
#        [../shared/data]; GPU_ROUTING_DEMO_PORT: the cluster's port [54328])
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
export GPU_ROUTING_DATA=${GPU_ROUTING_DATA:-$(cd "$root/../shared/data" && pwd)}
echo "== building and installing gpu_routing"
make -j"$(nproc)" >/dev/null
make install >/dev/null
cluster=$(mktemp -d /tmp/gpu_routing_demo.XXXXXX)
trap 'scripts/cluster.sh stop "$cluster"' EXIT
eval "$(scripts/cluster.sh start "$cluster" "${GPU_ROUTING_DEMO_PORT:-54328}")"
createdb ny
echo "== loading the New York road network"
scripts/load_ny.sh ny
psql -X -d ny -v ON_ERROR_STOP=1 -f scripts/demo.sql
echo
echo "== done. The demo's cluster is removed now; for a database that stays, to try gpu-route and"
echo "   the README's examples in: scripts/install_client.sh, then eval \"\$(scripts/playground.sh start)\""

#!/usr/bin/env bash
# Installs what gpu_routing needs to build, test and run its demo on Debian 12 (as root, or with
# sudo): PostgreSQL 15 with its server headers, pgTAP and pg_prove, pgRouting (the reference, which
# needs PostGIS), libpqxx, GoogleTest, CMake, zlib and gnuplot. Installs only what is missing.
set -euo pipefail
packages=(
  postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
  postgresql-15-pgrouting postgresql-15-postgis-3 libpqxx-dev libgtest-dev cmake g++ make
  zlib1g-dev gnuplot-nox
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${missing[*]}"
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

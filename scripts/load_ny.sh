#!/usr/bin/env bash
# Loads the New York road network of the 9th DIMACS Implementation Challenge (USA-road-d.NY, from
# the data folder) into a database, for gpu-route and the demo:
#   ny_edges(id, source, target, cost)  one row per arc (the file lists both directions of a
#                                       two-way road), cost = the DIMACS length in tenths of a
#                                       metre (with --time: the travel-time weights of
#                                       USA-road-t.NY instead)
#   ny_vertices(id, lon, lat)           lon = x / 1e6, lat = y / 1e6 from USA-road-d.NY.co.gz, with a
#                                       GiST index on point(lon, lat) for nearest-vertex lookups
# Usage:
#   scripts/load_ny.sh [--time] [psql connection arguments]
#   scripts/load_ny.sh -d roads                      # database "roads", PG* variables for the rest
#   scripts/load_ny.sh -d roads --time               # options in any order
#   scripts/load_ny.sh "host=/tmp port=5432 dbname=roads"
# The data folder is ../shared/data (relative to the project root); GPU_ROUTING_DATA overrides it.
# The tables are replaced if they exist. The gpu_routing extension is created if missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${GPU_ROUTING_DATA:-$root/../shared/data}
weights=d
psql_args=()
for arg in "$@"; do
  case "$arg" in
    --time) weights=t ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) psql_args+=("$arg") ;;
  esac
done
set -- "${psql_args[@]}"
arcs="$data/USA-road-$weights.NY.gr.gz"
coordinates="$data/USA-road-d.NY.co.gz"
for file in "$arcs" "$coordinates"; do
  if [ ! -r "$file" ]; then
    echo "load_ny.sh: cannot read $file (set GPU_ROUTING_DATA to the folder holding it)" >&2
    exit 2
  fi
done
case "$arcs$coordinates" in
  *"'"*) echo "load_ny.sh: the data path may not contain a single quote" >&2; exit 2 ;;
esac

started=$(date +%s)
# \copy ... FROM PROGRAM runs zcat and awk on this machine, so the server needs no access to the
# files. Arc ids are the arcs' line numbers among the "a" lines, from 1.
psql -X -q -v ON_ERROR_STOP=1 "$@" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpu_routing;
DROP TABLE IF EXISTS ny_edges, ny_vertices;
CREATE TABLE ny_edges (id bigint PRIMARY KEY, source bigint NOT NULL, target bigint NOT NULL,
                       cost float8 NOT NULL);
CREATE TABLE ny_vertices (id bigint PRIMARY KEY, lon float8 NOT NULL, lat float8 NOT NULL);
\copy ny_edges FROM PROGRAM 'zcat ''$arcs'' | awk ''\$1 == "a" { n++; print n "\t" \$2 "\t" \$3 "\t" \$4 }'''
\copy ny_vertices FROM PROGRAM 'zcat ''$coordinates'' | awk ''\$1 == "v" { printf "%s\t%.6f\t%.6f\n", \$2, \$3 / 1e6, \$4 / 1e6 }'''
CREATE INDEX ny_vertices_point ON ny_vertices USING gist (point(lon, lat));
ANALYZE ny_edges;
ANALYZE ny_vertices;
SQL
counts=$(psql -X -At -F ' ' "$@" -c "SELECT (SELECT count(*) FROM ny_edges), (SELECT count(*) FROM ny_vertices)")
echo "load_ny.sh: ${counts% *} arcs in ny_edges, ${counts#* } vertices in ny_vertices ($(( $(date +%s) - started )) s)"

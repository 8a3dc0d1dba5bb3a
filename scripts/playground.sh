#!/usr/bin/env bash
# A PostgreSQL cluster to try gpu_routing in, that stays running until you stop it: a database
# "playground" with the gpu_routing extension (and pgrouting, where installed, to compare), the
# table "edges" (pgRouting's documentation network, from scripts/sample_edges.sql: the README's
# examples run on it) and the New York road network (ny_edges, ny_vertices, loaded by
# scripts/load_ny.sh: gpu-route's default tables).
# Usage:
#   eval "$(scripts/playground.sh start)"   start it (or find it running); prints the PG* exports
#   eval "$(scripts/playground.sh env)"     the exports of the running playground
#   scripts/playground.sh stop              stop it and delete its folder
#   scripts/playground.sh load DATABASE     the same tables in DATABASE of the server the PG*
#                                           variables name (the database is created if missing)
# Options of start and load: --no-ny (no New York, so no data folder needed).
# Environment: GPU_ROUTING_PLAYGROUND (folder) [/tmp/gpu_routing_playground],
#   GPU_ROUTING_PLAYGROUND_PORT [54330], GPU_ROUTING_DATA (New York's files) [../shared/data].
# Needs the extension installed (make && make install) and runs the server through
# scripts/cluster.sh (as root, as the OS user postgres). Messages go to standard error, the exports
# to standard output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${GPU_ROUTING_PLAYGROUND:-/tmp/gpu_routing_playground}
port=${GPU_ROUTING_PLAYGROUND_PORT:-54330}
data=${GPU_ROUTING_DATA:-$root/../shared/data}
database=playground
say() { echo "playground.sh: $*" >&2; }
fail() { say "$*"; exit 2; }
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

action=${1:-}
[ $# -gt 0 ] && shift
ny=yes
target=
while [ $# -gt 0 ]; do
  case "$1" in
    --no-ny) ny=no; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) fail "unknown option $1 (see --help)" ;;
    *) [ -z "$target" ] || fail "one database only (see --help)"; target=$1; shift ;;
  esac
done

exports() { echo "export PGHOST='$dir' PGPORT=$port PGUSER=postgres PGDATABASE=$database"; }
running() { [ -S "$dir/.s.PGSQL.$port" ] && pg_isready -q -h "$dir" -p "$port" 2>/dev/null; }

check_installed() {
  local sharedir pkglibdir
  sharedir=$(pg_config --sharedir 2>/dev/null || echo /usr/share/postgresql/15)
  pkglibdir=$(pg_config --pkglibdir 2>/dev/null || echo /usr/lib/postgresql/15/lib)
  if [ ! -e "$sharedir/extension/gpu_routing.control" ] || [ ! -e "$pkglibdir/gpu_routing.so" ]; then
    fail "the gpu_routing extension is not installed in this PostgreSQL: run 'make && make install'" \
      "in $root first (on a fresh machine scripts/setup.sh before that)"
  fi
}

check_ny_data() {
  [ "$ny" = yes ] || return 0
  local file
  for file in USA-road-d.NY.gr.gz USA-road-d.NY.co.gz; do
    [ -r "$data/$file" ] || fail "cannot read $data/$file, New York's road network: set" \
      "GPU_ROUTING_DATA to the folder holding it, or start with --no-ny"
  done
}

# Fills a database of the server the PG* variables name: the extensions, edges, New York.
load() {
  local db=$1
  if [ "$(psql -X -At -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '${db//\'/\'\'}'")" = 0 ]; then
    createdb "$db"
  fi
  psql -X -q -v ON_ERROR_STOP=1 -d "$db" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpu_routing;
SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'pgrouting') AS has_pgrouting \gset
\if :has_pgrouting
CREATE EXTENSION IF NOT EXISTS pgrouting CASCADE;
\endif
SQL
  if [ "$(psql -X -At -d "$db" -c "SELECT to_regclass('edges') IS NULL")" = t ]; then
    psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$root/scripts/sample_edges.sql"
  else
    say "database $db already has a table edges: left as it is"
  fi
  if [ "$ny" = yes ]; then
    GPU_ROUTING_DATA=$data "$root/scripts/load_ny.sh" -d "$db" >&2
  fi
  say "database $db: $(psql -X -At -d "$db" -c "
    SELECT string_agg(relname, ', ' ORDER BY relname) FROM pg_class
    WHERE relname IN ('edges', 'ny_edges', 'ny_vertices') AND relkind = 'r'
      AND relnamespace = 'public'::regnamespace") (tables);" \
    "$(psql -X -At -d "$db" -c "SELECT string_agg(extname || ' ' || extversion, ', ' ORDER BY extname)
                                FROM pg_extension WHERE extname IN ('gpu_routing', 'pgrouting')") (extensions)"
}

case "$action" in
  start)
    [ -z "$target" ] || fail "start takes no database name (see --help)"
    if running; then
      say "already running in $dir (port $port)"
      exports
      exit 0
    fi
    check_installed
    check_ny_data
    if [ -e "$dir/data" ]; then
      say "$dir holds a playground that is not running (stopped, or the machine restarted): starting a new one"
      "$root/scripts/cluster.sh" stop "$dir"
    fi
    say "starting PostgreSQL in $dir (port $port)"
    if ! env_line=$("$root/scripts/cluster.sh" start "$dir" "$port"); then
      fail "the server did not start: see $dir/server.log (port $port taken? GPU_ROUTING_PLAYGROUND_PORT picks another)"
    fi
    eval "$env_line"
    export PGPORT PGHOST PGUSER
    load "$database"
    say "ready: eval these exports (another shell: eval \"\$(scripts/playground.sh env)\"), then psql or" \
      "gpu-route; scripts/playground.sh stop stops and deletes it"
    exports
    ;;
  env)
    running || fail "no playground is running in $dir (port $port): scripts/playground.sh start"
    exports
    ;;
  stop)
    if [ -e "$dir/data/PG_VERSION" ] || [ -e "$dir/initdb.log" ]; then
      "$root/scripts/cluster.sh" stop "$dir"
      say "stopped, and $dir deleted"
    elif [ -e "$dir" ]; then
      fail "$dir is not a PostgreSQL cluster folder: left alone"
    else
      say "no playground in $dir"
    fi
    ;;
  load)
    [ -n "$target" ] || fail "load needs a database name (see --help)"
    check_ny_data
    load "$target"
    ;;
  -h|--help)
    usage
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac

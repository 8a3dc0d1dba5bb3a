#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster of the project's own: its own folder, a unix socket in that
# folder, no TCP, trust authentication, no system service.
#   scripts/cluster.sh start DIR [PORT]   initdb (unless DIR holds a cluster) + start; prints the
#                                         environment to use it
#   scripts/cluster.sh stop DIR           stop and delete
#   scripts/cluster.sh standby PRIMARY_DIR DIR [PORT] [NAME]
#                                         a streaming hot standby of the running cluster in
#                                         PRIMARY_DIR (pg_basebackup), named NAME (its
#                                         application_name; default standby) + start; prints the
#                                         environment to use it
#   scripts/cluster.sh promote DIR        promotes the standby in DIR (pg_ctl promote, waits)
# GPU_ROUTING_SERVER_OPTIONS adds server settings ("-c gpu_routing.service=cpu", ...);
# GPU_ROUTING_PRELOAD=0 starts it without gpu_routing in shared_preload_libraries.
# PostgreSQL refuses to run as root: as root the server runs as the OS user "postgres" (created by
# Debian's postgresql package; created here if missing).
set -euo pipefail
action=${1:?usage: cluster.sh start|stop|standby|promote DIR ...}
dir=${2:?usage: cluster.sh start|stop|standby|promote DIR ...}
port=${3:-54329}
bindir=${PG_BINDIR:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
[ -x "$bindir/initdb" ] || bindir=/usr/lib/postgresql/15/bin

run_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    su postgres -s /bin/bash -c "$*"
  else
    bash -c "$*"
  fi
}

# Starts the cluster in $dir/data on $port (with the project's settings) unless it runs already.
launch() {
  # max_parallel_workers_per_gather = 0: timings and plans stay the same from run to run.
  # gpu_routing is preloaded once installed: kept graphs live in the server's shared memory.
  preload=""
  libdir=$("$bindir/pg_config" --pkglibdir 2>/dev/null || pg_config --pkglibdir 2>/dev/null || true)
  [ -n "$libdir" ] && [ -f "$libdir/gpu_routing.so" ] && [ "${GPU_ROUTING_PRELOAD:-1}" != 0 ] &&
    preload="-c shared_preload_libraries=gpu_routing"
  # A server running there already may run another build of the extension: refused, not used.
  if run_as_owner "'$bindir/pg_ctl' -D '$dir/data' status" >/dev/null 2>&1; then
    echo "cluster.sh: a server is running in $dir already; stop it first (cluster.sh stop $dir)" >&2
    exit 1
  fi
  run_as_owner "'$bindir/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 \
    -o \"-k '$dir' -p $port -c listen_addresses='' -c fsync=off -c shared_buffers=512MB \
        -c work_mem=256MB -c max_parallel_workers_per_gather=0 -c max_connections=100 $preload \
        ${GPU_ROUTING_SERVER_OPTIONS:-}\" start" >/dev/null ||
    { echo "cluster.sh: the server in $dir did not start:" >&2; tail -n 20 "$dir/server.log" >&2; exit 1; }
  echo "export PGHOST='$dir' PGPORT=$port PGUSER=postgres"
}

prepare_dir() {
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then useradd -m postgres; fi
  mkdir -p "$dir"
  chmod 755 "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
  return 0
}

case "$action" in
  start)
    prepare_dir
    # A cluster this script made before (stopped, or left by a restart of the machine) starts
    # again as it is; anything else in DIR/data is refused by initdb, with its log shown.
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      run_as_owner "'$bindir/initdb' -D '$dir/data' -A trust -U postgres --no-sync >'$dir/initdb.log' 2>&1" ||
        { echo "cluster.sh: initdb failed in $dir/data:" >&2; cat "$dir/initdb.log" >&2; exit 1; }
    fi
    launch
    ;;
  standby)
    # The primary's folder comes second here: DIR is the standby's.
    primary=$dir
    dir=${3:?usage: cluster.sh standby PRIMARY_DIR DIR [PORT] [NAME]}
    port=${4:-54339}
    name=${5:-standby}
    [ -f "$primary/data/postmaster.pid" ] ||
      { echo "cluster.sh: no server runs in $primary" >&2; exit 1; }
    primary_port=$(sed -n 4p "$primary/data/postmaster.pid")
    prepare_dir
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      # -R writes standby.signal; the connection the standby streams from, named, goes after it.
      run_as_owner "'$bindir/pg_basebackup' -h '$primary' -p $primary_port -U postgres \
        -D '$dir/data' -R -X stream -c fast >'$dir/basebackup.log' 2>&1" ||
        { echo "cluster.sh: pg_basebackup failed:" >&2; cat "$dir/basebackup.log" >&2; exit 1; }
      run_as_owner "echo \"primary_conninfo = 'host=$primary port=$primary_port user=postgres application_name=$name'\" >>'$dir/data/postgresql.auto.conf'"
    fi
    launch
    ;;
  promote)
    run_as_owner "'$bindir/pg_ctl' -D '$dir/data' -w -t 60 promote" >/dev/null
    ;;
  stop)
    if [ -d "$dir/data" ]; then
      run_as_owner "'$bindir/pg_ctl' -D '$dir/data' -m fast -w stop" >/dev/null 2>&1 || true
      # A server stopped in immediate mode (or killed) left its GPU service's segments, which
      # only the next start of this data directory would remove: the folder goes, so they go now.
      # (A postmaster just stopped may linger as a zombie until it is reaped: dead all the same.)
      pid=$(head -1 "$dir/data/gpu_routing_service.pid" 2>/dev/null || true)
      if [[ "$pid" =~ ^[0-9]+$ ]]; then
        state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || true)
        if [ -z "$state" ] || [ "$state" = Z ]; then
          rm -f "/dev/shm/gpu_routing.$pid" /dev/shm/gpu_routing."$pid".*
        fi
      fi
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: cluster.sh start|stop DIR [PORT] | standby PRIMARY_DIR DIR [PORT] [NAME] | promote DIR" >&2
    exit 2
    ;;
esac

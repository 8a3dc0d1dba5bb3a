# Sourced by the benchmarks that run on a server of their own with New York loaded
# (call_rate.sh, call_profile.sh, gpu_pgr_bench.sh, road_table.sh):
#   ny_bench_server NAME PORT
# makes $work (a scratch folder, removed at exit with the server), starts a throwaway cluster in
# $work/server on PORT (scripts/cluster.sh: gpu_routing preloaded; PGHOST and PGPORT exported) and
# loads New York into its database `bench` (ny_edges, ny_vertices). $root must be the repository.
ny_bench_server() {
  local name=$1 port=$2
  export GPU_ROUTING_DATA=${GPU_ROUTING_DATA:-$root/../shared/data}
  work=$(mktemp -d "/tmp/$name.XXXXXX")
  chmod 755 "$work"
  trap '"$root/scripts/cluster.sh" stop "$work/server" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  eval "$("$root/scripts/cluster.sh" start "$work/server" "$port")"
  createdb bench
  "$root/scripts/load_ny.sh" -d bench >/dev/null
}

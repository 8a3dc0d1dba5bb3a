#!/usr/bin/env bash
# The server shapes users run, each started here by scripts/cluster.sh (own folders, sockets and
# ports from GPU_ROUTING_DEPLOY_PORT, default 54340):
#   no preload: a server without gpu_routing in shared_preload_libraries runs the pg_regress suites
#               that need no kept graph, with the same expected output, and
#               test/regress/sql/no_preload.sql (the
#               library loads by CREATE EXTENSION, LOAD or session_preload_libraries without
#               ending the session; each preload-only feature gives its error naming the line to
#               add).
#   standbys:   a primary and two streaming hot standbys (pg_basebackup). Commits on the primary
#               wait until both standbys have applied them (synchronous_commit = remote_apply),
#               so the next call on a standby must see them: after INSERT, UPDATE, DELETE and
#               TRUNCATE, every kept graph on each standby (by name and by the registered text,
#               directed and undirected, and on its road index) answers as pgr_dijkstra does on
#               that standby, from its kept form (never by reading privately), rebuilt on the
#               standby. A column added on the primary leaves the standbys' forms serving; a
#               column it reads retyped makes them rebuild. A graph registered on the primary
#               is there at once; managing one on a standby is refused, naming the primary.
#   servers:    the primary and both standbys answer the same 400 Rome routes on the road index;
#               a 60 x 60 cost matrix spread over the two standbys (scripts/spread_matrix.sql,
#               dblink) equals the primary's own; a cancel stops the spread call and its remote
#               queries.
#   failover:   the primary stops (immediate), a standby is promoted: right after, its kept graph
#               answers from the last data it replayed (a change it had replayed but never
#               served), and after its own first commit from that. The failed primary's data
#               directory started again removes the GPU service's segments its stop left.
# Prints "ok - ..." or "FAILED - ..." per check and the counts last; exits 1 on a failure.
# Usage: test/deployments/run.sh   (needs the extension installed; GPU_ROUTING_DATA as elsewhere)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=${GPU_ROUTING_DATA:-$root/../shared/data}
export GPU_ROUTING_DATA=$data
port=${GPU_ROUTING_DEPLOY_PORT:-54340}
regress_options=${PGOPTIONS:-}  # the caller's (gpu_routing.device), for pg_regress
. "$here/../checks.sh"  # pass, fail, the counts, PGOPTIONS showing warnings and up
bindir=$(pg_config --bindir)
pg_regress=$(dirname "$(pg_config --pgxs)")/../test/regress/pg_regress

work=$(mktemp -d /tmp/gpu_routing_deploy.XXXXXX)
chmod 755 "$work"
clusters=()
cleanup() {
  for c in "${clusters[@]}"; do "$root/scripts/cluster.sh" stop "$c" || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# q HOST PORT [psql arguments]: a query on one of the servers, database "deploy".
q() {
  local host=$1 p=$2
  shift 2
  psql -X -q -t -A -v ON_ERROR_STOP=1 -h "$host" -p "$p" -U postgres -d deploy "$@"
}

# --- no preload -----------------------------------------------------------------------------------
np=$work/np
clusters+=("$np")
GPU_ROUTING_PRELOAD=0 "$root/scripts/cluster.sh" start "$np" "$port" >/dev/null
regress_tests="setup sssp path apsp compatibility pgrouting_docs limits rows inner_query errors settings"
regress_out=$work/np_regress
mkdir -p "$regress_out"
# The caller's PGOPTIONS: the expected outputs hold the notices that checks.sh's hide.
if (cd "$root" && PGOPTIONS=$regress_options PGHOST=$np PGPORT=$port PGUSER=postgres "$pg_regress" --inputdir=test/regress \
      --outputdir="$regress_out" --bindir="$bindir" --load-extension=plpgsql \
      --dbname=deploy_np $regress_tests >"$regress_out/log" 2>&1); then
  pass "without preload: pg_regress $regress_tests"
else
  fail "without preload: pg_regress $regress_tests" "$(cat "$regress_out/log" "$regress_out/regression.diffs" 2>/dev/null | head -60)"
fi
if PGOPTIONS=$regress_options PGHOST=$np PGPORT=$port PGUSER=postgres "$pg_regress" --inputdir="$root/test/regress" \
     --outputdir="$regress_out/np" --bindir="$bindir" --use-existing --dbname=deploy_np \
     no_preload >"$regress_out/np.log" 2>&1; then
  pass "without preload: no_preload.sql (every preload-only feature names shared_preload_libraries)"
else
  fail "without preload: no_preload.sql" "$(cat "$regress_out/np.log" "$regress_out/np/regression.diffs" 2>/dev/null | head -60)"
fi
# CREATE EXTENSION in a fresh session (the first load of the library) keeps the session.
out=$(psql -X -q -t -A -h "$np" -p "$port" -U postgres -d postgres \
        -c "CREATE DATABASE deploy_np2" -c "\\c deploy_np2" -c "CREATE EXTENSION gpu_routing" \
        -c "SELECT 'still here'" 2>&1) || true
[ "$out" = "still here" ] && pass "without preload: CREATE EXTENSION as a session's first load keeps the session" ||
  fail "without preload: CREATE EXTENSION" "$out"
# session_preload_libraries: every session of the database loads it at connection.
psql -X -q -h "$np" -p "$port" -U postgres -d postgres \
  -c "ALTER DATABASE deploy_np2 SET session_preload_libraries = 'gpu_routing'" >/dev/null
out=$(psql -X -q -t -A -h "$np" -p "$port" -U postgres -d deploy_np2 \
        -c "SELECT count(*) FROM pg_settings WHERE name = 'gpu_routing.device'" \
        -c "SELECT agg_cost FROM gpu_path('SELECT 1 AS id, 1 AS source, 2 AS target, 3 AS cost', 1, 2) WHERE edge = -1" 2>&1) || true
[ "$out" = $'1\n3' ] && pass "without preload: session_preload_libraries loads it at every connection" ||
  fail "without preload: session_preload_libraries" "$out"
"$root/scripts/cluster.sh" stop "$np"

# --- a primary and two standbys ---------------------------------------------------------------------
p=$work/primary s1=$work/s1 s2=$work/s2
pp=$((port + 1)) ps1=$((port + 2)) ps2=$((port + 3))
clusters+=("$p" "$s1" "$s2")
"$root/scripts/cluster.sh" start "$p" "$pp" >/dev/null
psql -X -q -h "$p" -p "$pp" -U postgres -d postgres -c "CREATE DATABASE deploy"
q "$p" "$pp" <<SQL >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION gpu_routing;
CREATE EXTENSION pgrouting CASCADE;
CREATE EXTENSION dblink;
\i $data/sample_network.sql
CREATE TABLE dp_sample AS SELECT id, source, target, cost, reverse_cost FROM sample_edges;
\set rome_arcs \`awk '\$1 == "a" { printf "%s %s %s;", \$2, \$3, \$4 }' "$data/rome99.gr"\`
CREATE TABLE dp_rome (id bigint PRIMARY KEY, source bigint, target bigint, cost float8);
INSERT INTO dp_rome
SELECT n, split_part(arc, ' ', 1)::bigint, split_part(arc, ' ', 2)::bigint, split_part(arc, ' ', 3)::float8
FROM unnest(string_to_array(rtrim(:'rome_arcs', ';'), ';')) WITH ORDINALITY AS a(arc, n);
SELECT gpu_graph_create('sample', 'SELECT id, source, target, cost, reverse_cost FROM dp_sample');
SELECT gpu_graph_create('rome', 'SELECT id, source, target, cost FROM dp_rome');
SELECT gpu_graph_index('rome');
\i $root/scripts/spread_matrix.sql
-- How a kept graph answers against pgr_dijkstra on the same server: the pairs whose costs
-- differ, and how the kept graph served the call (gpu_routing_last_run()).
CREATE FUNCTION dp_check(call_edges text, edges text, directed boolean, sources bigint[], targets bigint[],
                         OUT differing bigint, OUT graph text, OUT notes text, OUT algorithm text)
LANGUAGE plpgsql AS \$\$
DECLARE kept text[]; reference text[];
BEGIN
  SELECT coalesce(array_agg(k.start_vid || ':' || k.end_vid || ':' || k.agg_cost), '{}') INTO kept
    FROM gpu_path(call_edges, sources, targets, directed) k WHERE k.edge = -1;
  SELECT r.graph, coalesce(r.notes, ''), r.algorithm INTO graph, notes, algorithm FROM gpu_routing_last_run() r;
  SELECT coalesce(array_agg(d.start_vid || ':' || d.end_vid || ':' || d.agg_cost), '{}') INTO reference
    FROM pgr_dijkstra(edges, sources, targets, directed) d WHERE d.edge = -1;
  SELECT count(*) INTO differing FROM ((SELECT unnest(kept) EXCEPT ALL SELECT unnest(reference))
    UNION ALL (SELECT unnest(reference) EXCEPT ALL SELECT unnest(kept))) d;
END \$\$;
SQL
"$root/scripts/cluster.sh" standby "$p" "$s1" "$ps1" s1 >/dev/null
"$root/scripts/cluster.sh" standby "$p" "$s2" "$ps2" s2 >/dev/null
# The standbys' copies of the primary's gpu_routing_service.pid name the primary, alive on this
# host: their supervisors leave its GPU service's segments alone.
service_setting=$(q "$p" "$pp" -d postgres -c "SHOW gpu_routing.service")
if [ "$service_setting" != off ]; then
  primary_pid=$(head -1 "$p/data/postmaster.pid")
  # Each standby's supervisor makes its own control segment right after its sweep.
  for standby in "$s1" "$s2"; do
    standby_pid=$(head -1 "$standby/data/postmaster.pid")
    for _ in $(seq 1 100); do [ -e "/dev/shm/gpu_routing.$standby_pid" ] && break; sleep 0.1; done
  done
  [ -e "/dev/shm/gpu_routing.$primary_pid" ] &&
    pass "standbys made from the primary leave its GPU service's shared memory in place" ||
    fail "the primary's GPU service segment after the standbys started" "$(ls /dev/shm)"
fi
q "$p" "$pp" -d postgres -c "ALTER SYSTEM SET synchronous_standby_names = 'ANY 2 (s1, s2)'" \
  -c "SELECT pg_reload_conf()" >/dev/null
# Every commit on the primary returns once both standbys have applied it.
qp() { PGOPTIONS="$PGOPTIONS -c synchronous_commit=remote_apply" q "$p" "$pp" "$@"; }
qp -c "CREATE TABLE dp_ready (x int)"  # waits for both standbys
streaming=$(q "$p" "$pp" -c "SELECT string_agg(application_name || ':' || state, ',' ORDER BY application_name) FROM pg_stat_replication")
[ "$streaming" = "s1:streaming,s2:streaming" ] && pass "two standbys stream from the primary (pg_basebackup)" ||
  fail "two standbys stream" "$streaming"

sample_edges="SELECT id, source, target, cost, reverse_cost FROM dp_sample"
sample_sources="ARRAY[1, 2, 5, 6, 7, 9, 12, 15]"
sample_targets="ARRAY[3, 4, 8, 10, 11, 13, 16, 17]"
rome_edges="SELECT id, source, target, cost FROM dp_rome"
rome_sources="ARRAY[1, 17, 400, 999, 2048, 3353]"
rome_targets="ARRAY[3, 250, 1234, 2500, 3000]"
# standby_answers LABEL: on each standby, each way of calling each graph answers as pgr_dijkstra
# does there; calls twice: the first may rebuild the standby's form, the second must be served
# from it. Every call must be served by the kept graph (by name or text match).
standby_answers() {
  local label=$1 host sp
  for standby in s1 s2; do
    [ "$standby" = s1 ] && host=$s1 sp=$ps1 || host=$s2 sp=$ps2
    local bad=""
    for call in "'graph:sample'|$sample_edges|true" "'graph:sample'|$sample_edges|false" \
                "'$sample_edges'|$sample_edges|true" "'$sample_edges'|$sample_edges|false"; do
      IFS='|' read -r kept edges directed <<<"$call"
      for round in first second; do
        local line
        line=$(q "$host" "$sp" -c "SELECT differing, graph, notes FROM dp_check($kept, '$edges', $directed, $sample_sources, $sample_targets)")
        IFS='|' read -r differing graph notes <<<"$line"
        if [ "$differing" != 0 ] || [ "$graph" != sample ] || [[ "$notes" == "read privately"* ]] ||
           { [ "$round" = second ] && [[ "$notes" == "kept graph built"* ]]; }; then
          bad+="$kept directed=$directed ($round call): $line"$'\n'
        fi
      done
    done
    # The road index: made on the standby by the call that names cch, then reused.
    for round in first second; do
      local line
      line=$(PGOPTIONS="$PGOPTIONS -c gpu_routing.sssp_algorithm=cch -c gpu_routing.apsp_algorithm=cch" \
             q "$host" "$sp" -c "SELECT differing, graph, notes, algorithm FROM dp_check('graph:rome', '$rome_edges', true, $rome_sources, $rome_targets)")
      IFS='|' read -r differing graph notes algorithm <<<"$line"
      if [ "$differing" != 0 ] || [ "$graph" != rome ] || [ "$algorithm" != cch ] ||
         [[ "$notes" == "read privately"* ]]; then
        bad+="graph:rome on its road index ($round call): $line"$'\n'
      fi
    done
    [ -z "$bad" ] && pass "$label: $standby answers from its kept graphs as pgr_dijkstra does there" ||
      fail "$label: $standby" "$bad"
  done
}

standby_answers "after the standbys started"
qp -c "UPDATE dp_sample SET cost = 100 WHERE id = 4"
standby_answers "after UPDATE"
qp -c "INSERT INTO dp_sample VALUES (19, 6, 17, 1, 1), (20, 1, 10, 2, -1)"
standby_answers "after INSERT"
qp -c "DELETE FROM dp_sample WHERE id IN (8, 19)"
standby_answers "after DELETE"
qp -c "TRUNCATE dp_sample"
standby_answers "after TRUNCATE"
qp -c "BEGIN" -c "TRUNCATE dp_sample" -c "INSERT INTO dp_sample SELECT id, source, target, cost, reverse_cost FROM sample_edges" -c "COMMIT"
qp -c "UPDATE dp_rome SET cost = cost * 3 WHERE id % 5 = 0"
standby_answers "after TRUNCATE and INSERT in one transaction, and an UPDATE of Rome"
# Two changes in a row before any standby call, one of them in a savepoint rolled back.
qp -c "BEGIN" -c "SAVEPOINT a" -c "UPDATE dp_sample SET cost = 50" -c "ROLLBACK TO a" \
   -c "UPDATE dp_sample SET cost = 7 WHERE id = 9" -c "COMMIT"
qp -c "DELETE FROM dp_rome WHERE id % 97 = 0"
standby_answers "after a change in a rolled-back savepoint, another kept, and a DELETE on Rome"

# Migrations on the primary, seen on the standbys.
before=$(q "$s1" "$ps1" -c "SELECT calls FROM gpu_graphs() WHERE name = 'sample'")
qp -c "ALTER TABLE dp_sample ADD COLUMN note text" -c "COMMENT ON TABLE dp_sample IS 'roads'"
line=$(q "$s1" "$ps1" -c "SELECT differing, graph, notes FROM dp_check('graph:sample', '$sample_edges', true, $sample_sources, $sample_targets)")
after=$(q "$s1" "$ps1" -c "SELECT calls FROM gpu_graphs() WHERE name = 'sample'")
[ "$line" = "0|sample|" ] && [ "$after" -gt "$before" ] &&
  pass "a column added on the primary: the standby's kept form keeps serving (no rebuild)" ||
  fail "a column added on the primary" "$line (calls $before -> $after)"
qp -c "ALTER TABLE dp_sample ALTER COLUMN cost TYPE numeric USING cost * 2"
line=$(q "$s1" "$ps1" -c "SELECT differing, graph, notes FROM dp_check('graph:sample', '$sample_edges', true, $sample_sources, $sample_targets)")
[[ "$line" == "0|sample|kept graph built by this call"* ]] &&
  pass "a column it reads retyped on the primary (new values): the standby rebuilds on next use" ||
  fail "a column it reads retyped on the primary" "$line"
standby_answers "after the migrations"

# The registry through WAL; managing a graph on a standby is refused.
qp -c "SELECT gpu_graph_create('late', 'SELECT id, source, target, cost FROM dp_rome WHERE id < 3000')" >/dev/null
line=$(q "$s2" "$ps2" -c "SELECT differing, graph FROM dp_check('graph:late', 'SELECT id, source, target, cost FROM dp_rome WHERE id < 3000', false, $rome_sources, $rome_targets)")
[ "$line" = "0|late" ] && pass "a graph registered on the primary answers on a standby at once" ||
  fail "a graph registered on the primary, on a standby" "$line"
for call in "gpu_graph_create('x', '$rome_edges')" "gpu_graph_refresh('late')" "gpu_graph_index('late')" "gpu_graph_drop('late')"; do
  out=$(q "$s1" "$ps1" -c "SELECT $call" 2>&1) || true
  [[ "$out" == *"cannot run on a hot standby"* ]] && pass "on a standby, $call is refused, naming the primary" ||
    fail "on a standby, $call" "$out"
done
out=$(q "$s1" "$ps1" -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT count(*) FROM gpu_path('graph:sample', 6, 10)" \
        -c "SELECT notes FROM gpu_routing_last_run()" -c "COMMIT" 2>&1) || true
[[ "$out" == *"read privately: REPEATABLE READ"* ]] && pass "on a standby, a REPEATABLE READ call reads its own snapshot" ||
  fail "REPEATABLE READ on a standby" "$out"

# --- several servers ----------------------------------------------------------------------------------
routes="SELECT md5(string_agg(start_vid || ':' || array_to_string(agg_costs, ','), ';' ORDER BY start_vid))
        FROM gpu_apsp_array('graph:rome', (SELECT array_agg(v) FROM generate_series(1, 3353, 168) v),
                                         (SELECT array_agg(v) FROM generate_series(7, 3353, 167) v))"
answers=""
for server in "$p:$pp" "$s1:$ps1" "$s2:$ps2"; do
  answers+=$(PGOPTIONS="$PGOPTIONS -c gpu_routing.apsp_algorithm=cch" q "${server%:*}" "${server#*:}" -c "$routes")" "
done
set -- $answers
[ "$1" = "$2" ] && [ "$2" = "$3" ] && pass "the primary and both standbys answer the same 400 Rome routes on the road index" ||
  fail "the same routes on three servers" "$answers"
servers="ARRAY['host=$s1 port=$ps1 user=postgres dbname=deploy', 'host=$s2 port=$ps2 user=postgres dbname=deploy']"
matrix_sources="(SELECT array_agg(v) FROM generate_series(1, 3353, 56) v)"
matrix_targets="(SELECT array_agg(v) FROM generate_series(5, 3353, 57) v)"
spread=$(q "$p" "$pp" -c "SELECT md5(string_agg(start_vid || ':' || array_to_string(agg_costs, ','), ';' ORDER BY ord))
  FROM gpu_apsp_array_spread($servers, 'graph:rome', $matrix_sources, $matrix_targets) WITH ORDINALITY AS t(start_vid, agg_costs, ord)")
one=$(q "$p" "$pp" -c "SELECT md5(string_agg(start_vid || ':' || array_to_string(agg_costs, ','), ';' ORDER BY ord))
  FROM gpu_apsp_array('graph:rome', $matrix_sources, $matrix_targets) WITH ORDINALITY AS t(start_vid, agg_costs, ord)")
rows=$(q "$p" "$pp" -c "SELECT count(*) FROM gpu_apsp_array_spread($servers, 'graph:rome', $matrix_sources, $matrix_targets)")
[ "$spread" = "$one" ] && [ "$rows" = 60 ] &&
  pass "a 60 x 60 matrix spread over two standbys (dblink) equals the primary's own, rows in order" ||
  fail "the spread matrix" "spread $spread, one server $one, $rows rows"
# A cancel stops the spread call and the remote queries: all pairs of Rome, on CPU Dijkstra, on
# both standbys, cut by statement_timeout.
start=$(date +%s%N)
out=$(PGOPTIONS="$PGOPTIONS -c statement_timeout=300" q "$p" "$pp" -c "SELECT count(*) FROM gpu_apsp_array_spread(
        ARRAY['host=$s1 port=$ps1 user=postgres dbname=deploy options=''-c gpu_routing.device=cpu -c gpu_routing.apsp_algorithm=dijkstra -c gpu_routing.threads=1''',
              'host=$s2 port=$ps2 user=postgres dbname=deploy options=''-c gpu_routing.device=cpu -c gpu_routing.apsp_algorithm=dijkstra -c gpu_routing.threads=1'''],
        '$rome_edges', (SELECT array_agg(v) FROM generate_series(1, 3353) v))" 2>&1) || true
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
remote=0
for server in "$s1:$ps1" "$s2:$ps2"; do
  remote=$((remote + $(q "${server%:*}" "${server#*:}" -c "SELECT count(*) FROM pg_stat_activity
                         WHERE query LIKE '%gpu_apsp_array(%' AND state = 'active' AND pid <> pg_backend_pid()")))
done
[[ "$out" == *"statement timeout"* ]] && [ "$elapsed_ms" -lt 1500 ] && [ "$remote" = 0 ] &&
  pass "statement_timeout stops a spread call in ${elapsed_ms} ms, and its remote queries" ||
  fail "a cancel of the spread call" "$out; ${elapsed_ms} ms; $remote remote queries still running"

# --- failover -------------------------------------------------------------------------------------------
# s1 has served its kept form of "sample"; a change it replays after that, then the primary fails.
q "$s1" "$ps1" -c "SELECT count(*) FROM gpu_path('graph:sample', 6, 10)" >/dev/null
qp -c "UPDATE dp_sample SET cost = 40 WHERE id IN (4, 9)"
"$root/scripts/cluster.sh" stop "$s2"
run_as_postgres() { su postgres -s /bin/bash -c "$*"; }
[ "$(id -u)" -eq 0 ] || run_as_postgres() { bash -c "$*"; }
primary_pid=$(head -1 "$p/data/postmaster.pid")  # its server's, should it have restarted
run_as_postgres "'$bindir/pg_ctl' -D '$p/data' -m immediate -w stop" >/dev/null
"$root/scripts/cluster.sh" promote "$s1"
line=$(q "$s1" "$ps1" -c "SELECT pg_is_in_recovery()::text || '|' || d.differing || '|' || d.graph || '|' || d.notes
                         FROM dp_check('graph:sample', '$sample_edges', true, $sample_sources, $sample_targets) d")
[[ "$line" == "false|0|sample|kept graph built by this call"* ]] &&
  pass "right after promotion the kept graph answers from the data last replayed (rebuilt once)" ||
  fail "right after promotion" "$line"
line=$(q "$s1" "$ps1" -c "UPDATE dp_sample SET cost = 1 WHERE id = 4" \
         -c "SELECT differing || '|' || graph FROM dp_check('graph:sample', '$sample_edges', false, $sample_sources, $sample_targets)" \
         -c "SELECT differing || '|' || graph || '|' || (notes NOT LIKE 'read privately%') FROM dp_check('$sample_edges', '$sample_edges', true, $sample_sources, $sample_targets)")
[ "$line" = $'0|sample\n0|sample|true' ] &&
  pass "after the promoted server's own commit, its kept graph answers from it (by name and text)" ||
  fail "after the promoted server's commit" "$line"
line=$(PGOPTIONS="$PGOPTIONS -c gpu_routing.apsp_algorithm=cch -c gpu_routing.sssp_algorithm=cch" \
       q "$s1" "$ps1" -c "UPDATE dp_rome SET cost = cost + 1 WHERE id % 3 = 0" \
         -c "SELECT differing || '|' || algorithm FROM dp_check('graph:rome', '$rome_edges', true, $rome_sources, $rome_targets)" \
         -c "SELECT gpu_graph_create('after_failover', '$rome_edges') LIKE 'kept graph after_failover:%'")
[ "$line" = $'0|cch\nt' ] && pass "the promoted server keeps the road index current and manages graphs" ||
  fail "the promoted server's road index and registry" "$line"

# The failed primary's immediate stop left its GPU service's segments in /dev/shm, under a pid
# the next server of its data directory does not have: that server's supervisor removes them.
if [ "$service_setting" = off ]; then
  [ ! -e "/dev/shm/gpu_routing.$primary_pid" ] &&
    pass "with gpu_routing.service = off an immediate stop leaves no GPU service segment" ||
    fail "gpu_routing.service = off made a GPU service segment" "$(ls /dev/shm)"
elif [ -e "/dev/shm/gpu_routing.$primary_pid" ]; then
  "$root/scripts/cluster.sh" start "$p" "$pp" >/dev/null  # as it is: a primary of its own now
  new_pid=$(head -1 "$p/data/postmaster.pid")
  for _ in $(seq 1 100); do
    [ -e "/dev/shm/gpu_routing.$new_pid" ] && [ ! -e "/dev/shm/gpu_routing.$primary_pid" ] && break
    sleep 0.1
  done
  left=$(ls /dev/shm | grep -c "^gpu_routing\.$primary_pid\(\.\|$\)" || true)
  [ "$left" = 0 ] && [ -e "/dev/shm/gpu_routing.$new_pid" ] &&
    pass "a restart removes the GPU service's segments that an immediate stop left" ||
    fail "the segments an immediate stop left" "$left left of pid $primary_pid; $(ls /dev/shm)"
  run_as_postgres "'$bindir/pg_ctl' -D '$p/data' -m fast -w stop" >/dev/null
else
  fail "an immediate stop leaves the GPU service's control segment" "none for pid $primary_pid: $(ls /dev/shm)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

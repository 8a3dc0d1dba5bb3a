#!/usr/bin/env bash
# Kept graphs under load and faults, against a running server (PG* variables) that preloads
# gpu_routing. Each check prints "ok" or "FAILED: why"; the last line counts them.
#   stress:     8 sessions route while another rewrites every cost in a loop; every answer must be
#               the distance under one committed version, never older than what committed before
#               the call began.
#   many:       one session uses more kept graphs than it keeps mapped.
#   concurrent: 8 sessions ask a graph nobody has built: one build serves them all.
#   terminate:  the backend building a graph is terminated mid-build; a session waiting for that
#               build builds it itself, and the answers are right.
#   cancel:     statement_timeout stops a build within about a second and leaves the graph usable.
#   road index: the session making a graph's road index is terminated mid-way (another session
#               naming cch meanwhile gets a search engine's answer; the next call makes the index;
#               calls share it); after a committed change statement_timeout stops the making
#               of the next index, and the call after makes it with the kept order and hierarchy
#               (customization only); a new form shows its index as asked for until a call
#               that does not name cch hands its making to a background worker (and answers at
#               once); that worker terminated mid-way gives its claim back without a restart;
#               index_customization = gpu customizes on the GPU (refused without one), and the
#               session's next index after a committed change again (auto, kept customizer).
#   memory:     three indexed graphs under a lowered gpu_routing.graph_memory: forms, indexes and
#               the orders kept for them are evicted least recently used first, and every call
#               answers; an index that cannot fit is refused and not recorded as asked for.
#   schema:     one session drops the extension and makes it again in another schema: its
#               remembered schema is looked up again, and named graphs work there.
#   crash:      kill -9 of a backend mid-build: the server restarts its sessions (PostgreSQL's
#               rule), and afterwards the graph is rebuilt on first use and answers right.
# Usage: test/kept/run.sh [database]   (created if missing, dropped at the end)
set -euo pipefail
db=${1:-gpu_routing_kept_test}
. "$(dirname "$0")/../checks.sh"  # pass, fail, q, the counts, PGOPTIONS showing warnings and up

dropdb --if-exists "$db" >/dev/null 2>&1 || true
createdb "$db"
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true' EXIT
q -c "CREATE EXTENSION gpu_routing" >/dev/null

# --- stress --------------------------------------------------------------------------------------
# A 40 x 40 grid with integer base costs 1..9; version k multiplies every cost by k, so the
# distance under version k is exactly k times the distance under version 1.
q <<'SQL' >/dev/null
CREATE TABLE st_edges (id bigint, source bigint, target bigint, base float8, cost float8);
INSERT INTO st_edges
SELECT row_number() OVER (), s, t, b, b FROM (
  SELECT r * 40 + c AS s, r * 40 + c + 1 AS t, 1 + (r * 7 + c * 13) % 9 AS b FROM generate_series(0, 39) r, generate_series(0, 38) c
  UNION ALL
  SELECT r * 40 + c, (r + 1) * 40 + c, 1 + (r * 11 + c * 5) % 9 FROM generate_series(0, 38) r, generate_series(0, 39) c
  UNION ALL
  SELECT r * 40 + c + 1, r * 40 + c, 1 + (r * 3 + c * 17) % 9 FROM generate_series(0, 39) r, generate_series(0, 38) c
  UNION ALL
  SELECT (r + 1) * 40 + c, r * 40 + c, 1 + (r * 19 + c * 2) % 9 FROM generate_series(0, 38) r, generate_series(0, 39) c) e;
CREATE TABLE st_version (k int);
INSERT INTO st_version VALUES (1);
CREATE TABLE st_base AS SELECT 0 AS s, 1599 AS t, (SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost FROM st_edges', 0, 1599) WHERE edge = -1) AS d;
SELECT gpu_graph_create('stress', 'SELECT id, source, target, cost FROM st_edges');
SQL
rounds=150
calls=200
(q -c "DO \$\$ BEGIN FOR v IN 2..$rounds LOOP
         UPDATE st_edges SET cost = base * v; UPDATE st_version SET k = v; COMMIT;
       END LOOP; END \$\$" >/tmp/kept_writer.$$ 2>&1; echo $? >>/tmp/kept_writer.$$) &
writer=$!
readers=()
for r in 1 2 3 4 5 6 7 8; do
  (q -c "DO \$\$ DECLARE before int; after int; d float8; base float8; kept int := 0;
         BEGIN
           SELECT b.d INTO base FROM st_base b;
           FOR i IN 1..$calls LOOP
             SELECT k INTO before FROM st_version;
             SELECT agg_cost INTO d FROM gpu_path('graph:stress', 0, 1599) WHERE edge = -1;
             SELECT k INTO after FROM st_version;
             IF d IS NULL OR d / base <> floor(d / base) OR d / base < before OR d / base > after THEN
               RAISE EXCEPTION 'answer % is not one committed version in [%, %] (base %)', d, before, after, base;
             END IF;
             IF (SELECT graph FROM gpu_routing_last_run()) = 'stress' THEN kept := kept + 1; END IF;
           END LOOP;
           -- A warning: the PGOPTIONS of checks.sh hide notices.
           RAISE WARNING 'kept % of %', kept, $calls;
         END \$\$" >/tmp/kept_reader.$r.$$ 2>&1; echo $? >>/tmp/kept_reader.$r.$$) &
  readers+=($!)
done
wait "$writer" "${readers[@]}" || true
bad=""
for r in 1 2 3 4 5 6 7 8; do
  [ "$(tail -n 1 /tmp/kept_reader.$r.$$)" = 0 ] || bad="$bad reader $r: $(head -n 3 /tmp/kept_reader.$r.$$ | tr '\n' ' ')"
done
[ "$(tail -n 1 /tmp/kept_writer.$$)" = 0 ] || bad="$bad writer: $(head -n 3 /tmp/kept_writer.$$ | tr '\n' ' ')"
served=$(grep -ho 'kept [0-9]* of' /tmp/kept_reader.*.$$ | awk '{ s += $2 } END { print s + 0 }')
rm -f /tmp/kept_reader.*.$$ /tmp/kept_writer.$$
if [ -z "$bad" ] && [ "$(q -c "SELECT k FROM st_version")" = "$rounds" ]; then
  pass "stress: 8 x $calls routes during $((rounds - 1)) committed rewrites, each one committed version, never stale ($served served by the kept graph)"
else
  fail "stress" "$bad"
fi
final=$(q -c "SELECT agg_cost = (SELECT d * $rounds FROM st_base) FROM gpu_path('graph:stress', 0, 1599) WHERE edge = -1")
[ "$final" = t ] && pass "stress: the call after the last commit answers from it" || fail "stress: last version" "$final"

# --- one session, more kept graphs than it keeps mapped (8) --------------------------------------
# Each call maps its graph; the ninth makes room by letting go of a mapping (on a GPU, one with a
# device copy reported under the shared lock). Every answer must be its own graph's.
q <<'SQL' >/dev/null
CREATE TABLE many_edges AS SELECT id, source, target, base AS cost FROM st_edges;
DO $$ BEGIN FOR g IN 1..10 LOOP
  PERFORM gpu_graph_create('many' || g, format('SELECT id, source, target, cost * %s AS cost FROM many_edges', g));
END LOOP; END $$;
SQL
many=$(q -c "DO \$\$ DECLARE d float8; BEGIN
         FOR round IN 1..2 LOOP FOR g IN 1..10 LOOP
           SELECT agg_cost INTO d FROM gpu_path('graph:many' || g, 0, 1599) WHERE edge = -1;
           IF d IS DISTINCT FROM g * (SELECT b.d FROM st_base b) THEN
             RAISE EXCEPTION 'graph many% answered %', g, d;
           END IF;
         END LOOP; END LOOP; END \$\$" 2>&1) && many_ok=1 || many_ok=0
if [ "$many_ok" = 1 ] && [ "$(q -c "SELECT count(*) FROM gpu_graphs() WHERE name LIKE 'many%' AND calls >= 1")" = 10 ]; then
  pass "one session routes on 10 kept graphs, twice round (it keeps 8 mapped): each answers as its own"
else
  fail "many graphs" "$many"
fi

# --- a graph slow enough to build that it can be interrupted ------------------------------------
q <<'SQL' >/dev/null
CREATE TABLE big_edges AS
SELECT row_number() OVER () AS id, s AS source, t AS target, 1 + (s * 7 + t) % 13 AS cost FROM (
  SELECT r * 1000 + c AS s, r * 1000 + c + 1 AS t FROM generate_series(0, 999) r, generate_series(0, 998) c
  UNION ALL
  SELECT r * 1000 + c, (r + 1) * 1000 + c FROM generate_series(0, 998) r, generate_series(0, 999) c) e;
SELECT gpu_graph_create('big', 'SELECT id, source, target, cost FROM big_edges');
SQL
truth=$(q -c "SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost FROM big_edges', 0, 999999) WHERE edge = -1")
big_answer() { q -c "SELECT agg_cost FROM gpu_path('graph:big', 0, 999999) WHERE edge = -1"; }
[ "$(big_answer)" = "$truth" ] && pass "big graph answers as edges_sql ($truth)" || fail "big graph" "differs from edges_sql"

# A build starts on the next call after a change.
touch_big() { q -c "UPDATE big_edges SET cost = cost WHERE id = 1"; }
# Waits until a backend runs `pattern` and prints its pid.
wait_for_backend() {
  for _ in $(seq 1 200); do
    pid=$(q -c "SELECT pid FROM pg_stat_activity WHERE query LIKE '$1' AND pid <> pg_backend_pid() AND state = 'active' LIMIT 1")
    [ -n "$pid" ] && { echo "$pid"; return 0; }
    sleep 0.02
  done
  return 1
}

# --- concurrent first use: one build --------------------------------------------------------------
touch_big
for r in 1 2 3 4 5 6 7 8; do
  (q -c "SELECT agg_cost FROM gpu_path('graph:big', 0, 999999) WHERE edge = -1; SELECT build_ms > 0 FROM gpu_routing_last_run()" >/tmp/kept_first.$r.$$ 2>&1) &
done
wait
builds=$(cat /tmp/kept_first.*.$$ | grep -c '^t$' || true)
answers=$(grep -c "^$truth\$" /tmp/kept_first.*.$$ | awk -F: '{ s += $2 } END { print s }')
rm -f /tmp/kept_first.*.$$
calls=$(q -c "SELECT calls FROM gpu_graphs() WHERE name = 'big'")
[ "$builds" = 1 ] && [ "$answers" = 8 ] && [ "$calls" = 8 ] &&
  pass "concurrent first use: 8 sessions, one build, 8 right answers, 8 calls counted (the builder's too)" \
  || fail "concurrent first use" "$builds builds, $answers right answers of 8, $calls calls counted"

# --- terminate the builder mid-build; a waiting session takes over --------------------------------
touch_big
(q -c "SELECT /* builder */ agg_cost FROM gpu_path('graph:big', 0, 999999) WHERE edge = -1" >/tmp/kept_builder.$$ 2>&1 || true) &
builder_job=$!
builder=$(wait_for_backend '%/* builder */%') || true
(q -c "SELECT agg_cost FROM gpu_path('graph:big', 0, 999999) WHERE edge = -1" >/tmp/kept_waiter.$$ 2>&1 || true) &
waiter_job=$!
sleep 0.05
q -c "SELECT pg_terminate_backend($builder)" >/dev/null
wait "$builder_job" "$waiter_job" || true
if grep -q "terminating connection" /tmp/kept_builder.$$ && [ "$(cat /tmp/kept_waiter.$$)" = "$truth" ] && [ "$(big_answer)" = "$truth" ] &&
   [ "$(q -c "SELECT state FROM gpu_graphs() WHERE name = 'big'")" = fresh ]; then
  pass "builder terminated mid-build: the waiting session built it, answers right, state fresh"
else
  fail "terminate" "builder: $(head -c 200 /tmp/kept_builder.$$); waiter: $(head -c 200 /tmp/kept_waiter.$$)"
fi
rm -f /tmp/kept_builder.$$ /tmp/kept_waiter.$$

# --- cancel a build with statement_timeout ------------------------------------------------------
touch_big
start=$(date +%s%N)
out=$(q -c "SET statement_timeout = '300ms'; SELECT count(*) FROM gpu_path('graph:big', 0, 999999)" 2>&1 || true)
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
if echo "$out" | grep -q "statement timeout" && [ "$elapsed_ms" -lt 1500 ] && [ "$(big_answer)" = "$truth" ]; then
  pass "statement_timeout 300ms stops a build after ${elapsed_ms} ms; the graph is usable after"
else
  fail "cancel" "after ${elapsed_ms} ms: $out"
fi

# --- the road index: made once for every session; its maker terminated or timed out mid-way -----
# A 400 x 400 grid: ordering it takes about a second on the 2-core machine, long enough to stop.
# The truth is read with another query text (the graph's own text would be served by the graph).
q <<'SQL' >/dev/null
CREATE TABLE idx_edges AS
SELECT row_number() OVER () AS id, s AS source, t AS target, 1 + (s * 7 + t) % 13 AS cost FROM (
  SELECT r * 400 + c AS s, r * 400 + c + 1 AS t FROM generate_series(0, 399) r, generate_series(0, 398) c
  UNION ALL
  SELECT r * 400 + c, (r + 1) * 400 + c FROM generate_series(0, 398) r, generate_series(0, 399) c) e;
SELECT gpu_graph_create('idx', 'SELECT id, source, target, cost FROM idx_edges');
SQL
idx_truth=$(q -c "SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost FROM idx_edges WHERE id > 0', 0, 159999) WHERE edge = -1")
cch_answer() { q -c "SET gpu_routing.device = cpu; SET gpu_routing.sssp_algorithm = cch; SELECT agg_cost FROM gpu_path('graph:idx', 0, 159999) WHERE edge = -1; SELECT notes FROM gpu_routing_last_run()"; }
(q -c "SET gpu_routing.device = cpu; SET gpu_routing.sssp_algorithm = cch; SELECT /* index maker */ agg_cost FROM gpu_path('graph:idx', 0, 159999) WHERE edge = -1" >/tmp/kept_index.$$ 2>&1 || true) &
maker_job=$!
maker=$(wait_for_backend '%/* index maker */%') || true
sleep 0.3
# Meanwhile another session naming cch gets a search engine's answer, not a second index.
meanwhile=$(cch_answer | tr '\n' '|')
q -c "SELECT pg_terminate_backend($maker)" >/dev/null
wait "$maker_job" || true
after=$(cch_answer | tr '\n' '|')
# Calls naming cch answer from the one shared index (auto weighs it against Dijkstra by estimated
# cost: on this grid a path may go either way; pgTAP's road_index checks that auto takes it).
shared=$(q -c "SET gpu_routing.device = cpu; SET gpu_routing.sssp_algorithm = cch; SELECT agg_cost FROM gpu_path('graph:idx', 0, 159999) WHERE edge = -1; SELECT algorithm || ': ' || notes FROM gpu_routing_last_run()" | tr '\n' '|')
forms=$(q -c "SELECT forms FROM gpu_graphs() WHERE name = 'idx'")
if grep -q "terminating connection" /tmp/kept_index.$$ &&
   [ "$meanwhile" = "$idx_truth|road index being made by process $maker: a search engine meanwhile|" ] &&
   echo "$after" | grep -q "^$idx_truth|road index made by this call: order" &&
   [ "$shared" = "$idx_truth|cch: the kept graph's road index (shared)|" ] &&
   echo "$forms" | grep -q "with road index"; then
  pass "road index: its maker terminated mid-way; meanwhile a search engine answered, then the next call made it, and calls share it"
else
  fail "road index terminate" "maker: $(head -c 200 /tmp/kept_index.$$); meanwhile: $meanwhile; after: $after; shared: $shared; forms: $forms"
fi
rm -f /tmp/kept_index.$$
# A committed change: the next index reuses the order; statement_timeout stops it mid-way.
q -c "UPDATE idx_edges SET cost = cost + 1 WHERE id = 1" >/dev/null
start=$(date +%s%N)
out=$(q -c "SET gpu_routing.device = cpu; SET gpu_routing.sssp_algorithm = cch; SET statement_timeout = '150ms'; SELECT count(*) FROM gpu_path('graph:idx', 0, 159999)" 2>&1 || true)
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
idx_truth=$(q -c "SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost FROM idx_edges WHERE id > 0', 0, 159999) WHERE edge = -1")
after=$(cch_answer | tr '\n' '|')
if echo "$out" | grep -q "statement timeout" && [ "$elapsed_ms" -lt 1500 ] &&
   echo "$after" | grep -q "^$idx_truth|.*road index made by this call with the kept order: hierarchy copied from the kept one in"; then
  pass "road index: statement_timeout stops its making after ${elapsed_ms} ms; after a committed change the next one reuses the order and the hierarchy and answers the new costs"
else
  fail "road index timeout" "after ${elapsed_ms} ms: $out; then: $after"
fi

# gpu_graph_index asked for the index; a new form (gpu_graph_refresh) has none yet: gpu_graphs()
# says the next call makes it. That call (auto, not naming cch) hands the making to a background
# worker and answers with a search engine; once the worker is done, auto calls share the index,
# made from the kept order and hierarchy.
wait_for_index() {  # polls gpu_graphs() (up to 60 s) until the graph's form has its index
  for _ in $(seq 1 600); do
    q -c "SELECT forms FROM gpu_graphs() WHERE name = '$1'" | grep -q "^directed with road index" && return 0
    sleep 0.1
  done
  return 1
}
q -c "SELECT gpu_graph_index('idx')" >/dev/null
q -c "SELECT gpu_graph_refresh('idx')" >/dev/null
forms=$(q -c "SELECT forms FROM gpu_graphs() WHERE name = 'idx'")
handed=$(q -c "SET gpu_routing.device = cpu; SELECT agg_cost FROM gpu_path('graph:idx', 0, 159999) WHERE edge = -1; SELECT algorithm || ': ' || notes FROM gpu_routing_last_run()" | tr '\n' '|')
wait_for_index idx || true
forms_after=$(q -c "SELECT forms FROM gpu_graphs() WHERE name = 'idx'")
shared=$(q -c "SET gpu_routing.device = cpu; SET gpu_routing.sssp_algorithm = cch; SELECT agg_cost FROM gpu_path('graph:idx', 0, 159999) WHERE edge = -1; SELECT algorithm || ': ' || notes FROM gpu_routing_last_run()" | tr '\n' '|')
# (The order kept from the graph's earlier index is counted beside it.)
if [[ "$forms" == "directed (road index asked for: made by the next call on the graph); road index order kept, "* ]] &&
   echo "$handed" | grep -Eq "^$idx_truth\|dijkstra: road index handed to background worker [0-9]+: a search engine meanwhile\|$" &&
   echo "$forms_after" | grep -q "^directed with road index .*order kept" &&
   [ "$shared" = "$idx_truth|cch: the kept graph's road index (shared)|" ]; then
  pass "road index: a new form shows its index as asked for; the next call hands its making to a background worker and answers at once; then calls share it"
else
  fail "road index asked" "forms: $forms; call: $handed; then: $forms_after; shared: $shared"
fi

# The background worker terminated mid-way (a first index: ordering the grid takes about a
# second): its claim is given back, the server does not restart, and the next call hands the
# making to a new worker, which finishes it.
started=$(q -c "SELECT pg_postmaster_start_time()")
q -c "SELECT gpu_graph_index('idx', false)" >/dev/null
q -c "BEGIN; CREATE TEMP TABLE idx_wrote (x int); SELECT gpu_graph_index('idx'); COMMIT" >/dev/null
first=$(q -c "SET gpu_routing.device = cpu; SELECT agg_cost FROM gpu_path('graph:idx', 0, 159999) WHERE edge = -1; SELECT notes FROM gpu_routing_last_run()" | tr '\n' '|')
worker=$(echo "$first" | sed -n 's/.*handed to background worker \([0-9]*\).*/\1/p')
terminated=$(q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ${worker:-0} AND backend_type = 'gpu_routing index builder'")
for _ in $(seq 1 100); do
  [ -z "$(q -c "SELECT 1 FROM pg_stat_activity WHERE pid = ${worker:-0}")" ] && break
  sleep 0.1
done
forms=$(q -c "SELECT forms FROM gpu_graphs() WHERE name = 'idx'")
again=$(q -c "SET gpu_routing.device = cpu; SELECT agg_cost FROM gpu_path('graph:idx', 0, 159999) WHERE edge = -1; SELECT notes FROM gpu_routing_last_run()" | tr '\n' '|')
second=$(echo "$again" | sed -n 's/.*handed to background worker \([0-9]*\).*/\1/p')
wait_for_index idx || true
forms_after=$(q -c "SELECT forms FROM gpu_graphs() WHERE name = 'idx'")
shared=$(q -c "SET gpu_routing.device = cpu; SET gpu_routing.sssp_algorithm = cch; SELECT agg_cost FROM gpu_path('graph:idx', 0, 159999) WHERE edge = -1; SELECT algorithm || ': ' || notes FROM gpu_routing_last_run()" | tr '\n' '|')
if [ -n "$worker" ] && [ "$terminated" = t ] &&
   [ "$forms" = "directed (road index asked for: made by the next call on the graph)" ] &&
   [ -n "$second" ] && [ "$second" != "$worker" ] && echo "$again" | grep -q "^$idx_truth|" &&
   echo "$forms_after" | grep -Eq "^directed with road index .*order [0-9]+ ms" &&
   [ "$shared" = "$idx_truth|cch: the kept graph's road index (shared)|" ] &&
   [ "$(q -c "SELECT pg_postmaster_start_time()")" = "$started" ]; then
  pass "road index: its background worker terminated mid-way gives the claim back (no restart); the next call's worker makes it"
else
  fail "road index worker terminated" "first: $first; terminated: $terminated; forms: $forms; again: $again; then: $forms_after; shared: $shared"
fi

# Where the index is customized (gpu_routing.index_customization): test/kept/index_customization.sh.
if line=$(test/kept/index_customization.sh "${db}_ic" 2>&1); then
  pass "${line#ok - }"
else
  fail "index customization" "$line"
fi

# --- memory: every byte counted, evicted least recently used first ---------------------------------
# Three graphs over a 160 x 160 grid, each with its road index and the contraction order kept for
# re-making it (about 4 + 14 + 2.5 MB each), then gpu_routing.graph_memory lowered to 24MB and a
# committed change: each call naming cch must fit its graph, index and order by evicting the
# others' forms and orders (used longest ago first), never refuse. A road index that cannot fit
# alone is refused by gpu_graph_index, which then does not record it as asked for.
q <<'SQL' >/dev/null
CREATE TABLE km_edges AS
SELECT row_number() OVER () AS id, s AS source, t AS target, c::float8 AS cost FROM (
  SELECT r * 160 + c AS s, r * 160 + c + 1 AS t, 1 + (r * 7 + c * 13) % 9 AS c FROM generate_series(0, 159) r, generate_series(0, 158) c
  UNION ALL SELECT r * 160 + c + 1, r * 160 + c, 1 + (r * 3 + c * 5) % 9 FROM generate_series(0, 159) r, generate_series(0, 158) c
  UNION ALL SELECT r * 160 + c, (r + 1) * 160 + c, 1 + (r * 11 + c * 5) % 9 FROM generate_series(0, 158) r, generate_series(0, 159) c
  UNION ALL SELECT (r + 1) * 160 + c, r * 160 + c, 1 + (r * 19 + c * 2) % 9 FROM generate_series(0, 158) r, generate_series(0, 159) c) e;
SELECT gpu_graph_create('km1', 'SELECT id, source, target, cost FROM km_edges WHERE id > 1');
SELECT gpu_graph_index('km1');
SELECT gpu_graph_create('km2', 'SELECT id, source, target, cost FROM km_edges WHERE id > 2');
SELECT gpu_graph_index('km2');
SELECT gpu_graph_create('km3', 'SELECT id, source, target, cost FROM km_edges WHERE id > 3');
SELECT gpu_graph_index('km3');
SELECT gpu_graph_create('km4', 'SELECT id, source, target, cost FROM km_edges WHERE id > 4');
SQL
# Each call's answer against Dijkstra's on the same query read privately, and the counted bytes.
km_sum() { q -c "SELECT coalesce(sum(host_bytes), 0) FROM gpu_graphs() WHERE name LIKE 'km%'"; }
orders_before=$(q -c "SELECT count(*) FROM gpu_graphs() WHERE name LIKE 'km_' AND forms LIKE '%road index order kept%'")
q -c "ALTER SYSTEM SET gpu_routing.graph_memory = '24MB'" -c "SELECT pg_reload_conf()" >/dev/null
for _ in $(seq 1 50); do [ "$(q -c "SHOW gpu_routing.graph_memory")" = 24MB ] && break; sleep 0.1; done
q -c "UPDATE km_edges SET cost = cost WHERE id = 10" >/dev/null
bad=""
for call in $(seq 1 30); do
  g=km$(( call % 3 + 1 ))
  out=$(PGOPTIONS="$PGOPTIONS -c gpu_routing.sssp_algorithm=cch" \
        q -c "SELECT agg_cost FROM gpu_path('graph:$g', 0, 25599) WHERE edge = -1" \
          -c "SELECT algorithm FROM gpu_routing_last_run()" 2>&1) || true
  sum=$(km_sum)
  expected=$(q -c "SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost FROM km_edges WHERE id > ${g#km} AND true', 0, 25599) WHERE edge = -1")
  [ "$out" = "$expected"$'\ncch' ] && [ "$sum" -le $((24 * 1024 * 1024)) ] || bad+="call $call on $g: $out; counted $sum bytes"$'\n'
done
[ "$orders_before" = 3 ] && [ -z "$bad" ] &&
  pass "memory: 3 indexed graphs (forms, indexes, kept orders) under 24MB: 30 calls naming cch all answer, the others evicted; gpu_graphs() counts at most the limit" ||
  fail "memory: indexed graphs under a lowered limit" "orders kept before: $orders_before"$'\n'"$bad"
q -c "ALTER SYSTEM SET gpu_routing.graph_memory = '16MB'" -c "SELECT pg_reload_conf()" >/dev/null
for _ in $(seq 1 50); do [ "$(q -c "SHOW gpu_routing.graph_memory")" = 16MB ] && break; sleep 0.1; done
refused=$(q -c "SELECT gpu_graph_index('km4')" 2>&1) || true
asked=$(q -c "SELECT road_index FROM gpu_routing_graphs WHERE name = 'km4'")
bad=""
for call in $(seq 1 50); do
  out=$(q -c "SELECT agg_cost FROM gpu_path('graph:km4', 0, 25599) WHERE edge = -1" 2>&1) || true
  [ "$out" = "$(q -c "SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost FROM km_edges WHERE id > 4 AND true', 0, 25599) WHERE edge = -1")" ] || bad+="call $call: $out"$'\n'
done
[[ "$refused" == *"road index not kept"*"more than gpu_routing.graph_memory"* ]] && [ "$asked" = f ] && [ -z "$bad" ] &&
  pass "memory: a road index that cannot fit is refused by gpu_graph_index (not recorded as asked for); the graph's 50 calls answer" ||
  fail "memory: an index that cannot fit" "$refused; road_index $asked"$'\n'"$bad"
q -c "ALTER SYSTEM RESET gpu_routing.graph_memory" -c "SELECT pg_reload_conf()" >/dev/null
for _ in $(seq 1 50); do [ "$(q -c "SHOW gpu_routing.graph_memory")" = 1GB ] && break; sleep 0.1; done
q -c "SELECT count(gpu_graph_drop(name)) FROM gpu_graphs() WHERE name LIKE 'km%'" -c "DROP TABLE km_edges" >/dev/null

# --- the extension made again in another schema, in one session ---------------------------------
# A backend remembers the extension's schema (where its registry is); one session that drops the
# extension and makes it again in another schema must find the new registry.
schema_db="${db}_schema"
dropdb --if-exists "$schema_db" >/dev/null 2>&1 || true
createdb "$schema_db"
moved=$(psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$schema_db" 2>&1 <<'SQL' | tr '\n' '|'
CREATE EXTENSION gpu_routing;
CREATE TABLE sc_edges (id bigint, source bigint, target bigint, cost float8);
INSERT INTO sc_edges VALUES (1, 1, 2, 1.5), (2, 2, 3, 2.0), (3, 1, 3, 5.0);
SELECT gpu_graph_create('sc', 'SELECT id, source, target, cost FROM sc_edges') IS NOT NULL;
SELECT agg_cost FROM gpu_path('graph:sc', 1, 3) WHERE edge = -1;
DROP EXTENSION gpu_routing CASCADE;
CREATE SCHEMA routing;
CREATE EXTENSION gpu_routing SCHEMA routing;
SELECT routing.gpu_graph_create('sc2', 'SELECT id, source, target, cost FROM public.sc_edges') IS NOT NULL;
SELECT agg_cost FROM routing.gpu_path('graph:sc2', 1, 3) WHERE edge = -1;
SELECT graph FROM routing.gpu_routing_last_run();
SQL
) || true
dropdb --if-exists "$schema_db" >/dev/null 2>&1 || true
if [ "$moved" = "t|3.5|t|3.5|sc2|" ]; then
  pass "the extension dropped and made again in another schema: the same session finds its new registry"
else
  fail "extension made again in another schema" "$moved"
fi

# --- kill -9 mid-build: PostgreSQL restarts its sessions; the graph comes back ------------------
touch_big
(q -c "SELECT /* crashed */ agg_cost FROM gpu_path('graph:big', 0, 999999) WHERE edge = -1" >/dev/null 2>&1 || true) &
crash_job=$!
victim=$(wait_for_backend '%/* crashed */%') || true
kill -9 "$victim" 2>/dev/null || true
wait "$crash_job" || true
for _ in $(seq 1 100); do q -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
state=$(q -c "SELECT state FROM gpu_graphs() WHERE name = 'big'")
if [ "$state" = "not built" ] && [ "$(big_answer)" = "$truth" ] && [ "$(q -c "SELECT state FROM gpu_graphs() WHERE name = 'big'")" = fresh ]; then
  pass "backend killed (-9) mid-build: after the restart the graph is rebuilt on first use and answers right"
else
  fail "kill -9" "state after restart: $state"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

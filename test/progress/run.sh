#!/usr/bin/env bash
# gpu_routing_progress during long calls, against a running server (PG* variables) that preloads
# gpu_routing. Each check prints "ok - ..." or "FAILED - ..."; the last line counts them.
#   matrix:  a cost matrix of 2000 sources over a 200 x 200 grid, watched from another session
#            until it has delivered a few batches: the phases seen are those of the call's stages
#            (computing and writing among them), sources_done and rows_written only grow,
#            sources_total is the number of sources, the device is named once computing.
#   cancel:  pg_cancel_backend of that call: it ends within about a second and its row goes.
#   terminate: pg_terminate_backend of such a call: the backend exits and leaves no row.
#   paths:   many-to-many paths on the grid: the phases seen are call stages (tracing is reported
#            when the watcher catches it); the row goes when the call ends.
# Usage: test/progress/run.sh [database]   (created if missing, dropped at the end)
set -uo pipefail
db=${1:-gpu_routing_progress_test}
. "$(dirname "$0")/../checks.sh"  # pass, fail, q, the counts

dropdb --if-exists "$db" >/dev/null 2>&1 || true
createdb "$db"
work=$(mktemp -d /tmp/gpu_routing_progress.XXXXXX)
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
q -c "CREATE EXTENSION gpu_routing" -c "
  CREATE TABLE grid AS
  SELECT row_number() OVER () AS id, s AS source, t AS target, 1 + (s * 7919 % 9) AS cost
  FROM (SELECT i * 200 + j AS s, i * 200 + j + 1 AS t FROM generate_series(0, 199) i, generate_series(0, 198) j
        UNION ALL
        SELECT i * 200 + j, (i + 1) * 200 + j FROM generate_series(0, 198) i, generate_series(0, 199) j) e"

# watch TAG PID LIMIT_S STOP_SQL: polls the call of PID every 50 ms into $work/TAG.log (phase|
# sources_done|sources_total|rows_written|device) until the call's row, once seen, is gone,
# LIMIT_S passed, or STOP_SQL (over the view's row r) is true.
watch() {
  local tag=$1 pid=$2 limit=$3 stop=$4 start=$SECONDS
  : > "$work/$tag.log"
  while [ $((SECONDS - start)) -lt "$limit" ]; do
    row=$(q -c "SELECT phase || '|' || sources_done || '|' || sources_total || '|' || rows_written || '|' ||
                       coalesce(device, '') || '|' || ($stop)
                FROM gpu_routing_progress r WHERE pid = $pid")
    if [ -z "$row" ]; then
      # Not yet there (the statement is still being planned), or over.
      [ -s "$work/$tag.log" ] && return 0
      sleep 0.01
      continue
    fi
    echo "${row%|*}" >> "$work/$tag.log"
    [ "${row##*|}" = true ] && return 0
    sleep 0.05
  done
}
# background_call TAG SQL: runs SQL in a session of its own (application_name TAG) and prints
# its backend's pid once the call shows in pg_stat_activity.
background_call() {
  local tag=$1 sql=$2 pid=""
  # Not holding this function's output open: callers read it with $(...).
  (PGAPPNAME=$tag q -c "$sql"; date +%s%N > "$work/$tag.end") > "$work/$tag.out" 2>&1 < /dev/null &
  echo $! > "$work/$tag.job"
  for _ in $(seq 200); do
    pid=$(q -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$tag' AND state = 'active'")
    [ -n "$pid" ] && break
    sleep 0.02
  done
  echo "$pid"
}
# finish TAG: waits for the call's session to end (it is not a child of this shell).
finish() { while kill -0 "$(cat "$work/$1.job")" 2>/dev/null; do sleep 0.02; done; }
# monotonic LOG FIELD: the field never decreases.
monotonic() { awk -F'|' -v f="$2" 'NR > 1 && $f < last { bad = 1 } { last = $f } END { exit bad }' "$1"; }

# --- matrix and cancel ------------------------------------------------------------------------
pid=$(background_call matrix "SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM grid',
                                (SELECT array_agg(g) FROM generate_series(0, 1999) g)::bigint[])")
watch matrix "$pid" 60 "r.sources_done >= 3 * 32 AND r.rows_written > 0"
phases=$(cut -d'|' -f1 "$work/matrix.log" | sort -u | tr '\n' ' ')
bad_phases=$(cut -d'|' -f1 "$work/matrix.log" | grep -vxE 'reading|building|computing|writing' | sort -u)
if [ -z "$bad_phases" ] && grep -q '^computing|' "$work/matrix.log" && grep -q '^writing|' "$work/matrix.log"; then
  pass "matrix: phases seen: $phases($(wc -l < "$work/matrix.log") polls)"
else
  fail "matrix: phases seen: $phases" "$(tail -5 "$work/matrix.log")"
fi
totals=$(awk -F'|' '$1 != "reading" && $1 != "building" { print $3 }' "$work/matrix.log" | sort -u | tr '\n' ' ')
if monotonic "$work/matrix.log" 2 && monotonic "$work/matrix.log" 4 && [ "$totals" = "2000 " ] \
   && awk -F'|' '$2 > $3 { exit 1 }' "$work/matrix.log"; then
  pass "matrix: sources_done and rows_written only grow, sources_done <= sources_total = 2000 (last: $(tail -1 "$work/matrix.log" | cut -d'|' -f2-4))"
else
  fail "matrix: counters (sources_total seen: $totals)" "$(cat "$work/matrix.log" | tail -8)"
fi
if awk -F'|' '($1 == "computing" || $1 == "writing") && $5 == "" { exit 1 }' "$work/matrix.log"; then
  pass "matrix: the device is named once computing ($(tail -1 "$work/matrix.log" | cut -d'|' -f5))"
else
  fail "matrix: a computing or writing row without its device" "$(grep -E '^(computing|writing)\|[^|]*\|[^|]*\|[^|]*\|$' "$work/matrix.log" | head -3)"
fi
start_ns=$(date +%s%N)
q -c "SELECT pg_cancel_backend($pid)" >/dev/null
finish matrix
cancel_ms=$(( ($(cat "$work/matrix.end") - start_ns) / 1000000 ))
left=$(q -c "SELECT count(*) FROM gpu_routing_progress WHERE pid = $pid")
if grep -q "canceling statement due to user request" "$work/matrix.out" && [ "$left" = 0 ] && [ "$cancel_ms" -lt 1500 ]; then
  pass "cancel: the call ended $cancel_ms ms after pg_cancel_backend; its row is gone"
else
  fail "cancel: $cancel_ms ms, rows left $left" "$(tail -2 "$work/matrix.out")"
fi

# --- terminate ------------------------------------------------------------------------------------
# pg_terminate_backend mid-call: the backend exits (FATAL), its slot is cleared on the way out.
pid=$(background_call terminated "SELECT count(*) FROM gpu_apsp('SELECT id, source, target, cost FROM grid',
                                    (SELECT array_agg(g) FROM generate_series(0, 1999) g)::bigint[])")
watch terminated "$pid" 60 "r.sources_done >= 32"
q -c "SELECT pg_terminate_backend($pid, 5000)" >/dev/null
finish terminated
left=$(q -c "SELECT count(*) FROM gpu_routing_progress WHERE pid = $pid")
others=$(q -c "SELECT count(*) FROM gpu_routing_progress")
if grep -q "terminating connection due to administrator command" "$work/terminated.out" && [ "$left" = 0 ] && [ "$others" = 0 ]; then
  pass "terminate: the backend terminated mid-call left no row"
else
  fail "terminate: rows left $left (all: $others)" "$(tail -2 "$work/terminated.out")"
fi

# --- paths ------------------------------------------------------------------------------------
pid=$(background_call paths "SELECT count(*) FROM gpu_path('SELECT id, source, target, cost FROM grid',
                               (SELECT array_agg(g) FROM generate_series(0, 39999, 211) g)::bigint[],
                               (SELECT array_agg(g) FROM generate_series(5, 39999, 197) g)::bigint[])")
watch paths "$pid" 120 "false"
finish paths
phases=$(cut -d'|' -f1 "$work/paths.log" | sort -u | tr '\n' ' ')
bad_phases=$(cut -d'|' -f1 "$work/paths.log" | grep -vxE 'reading|building|computing|tracing|writing' | sort -u)
left=$(q -c "SELECT count(*) FROM gpu_routing_progress WHERE pid = $pid")
rows=$(sed -n 1p "$work/paths.out")
if [ -z "$bad_phases" ] && [ "$left" = 0 ] && [ "${rows:-0}" -gt 0 ] && monotonic "$work/paths.log" 2; then
  pass "paths: $rows path rows; phases seen: $phases($(wc -l < "$work/paths.log") polls); the row is gone after the call"
else
  fail "paths: phases $phases, rows left $left" "$(tail -3 "$work/paths.out")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

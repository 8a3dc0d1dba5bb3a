#!/usr/bin/env bash
# gpu_routing_calibrate() and the speeds it stores, against a running server (PG* variables, a
# superuser, on this machine: the script reads and rewrites the data directory's
# gpu_routing_speeds.conf as the server's files). Each check prints "ok - ..." or
# "FAILED - ..."; the last line counts them.
#   superuser:  a role allowed to EXECUTE it, but no superuser, is refused, naming why.
#   built-in:   with no stored speeds, auto's reason says it estimated with the built-in ones.
#   calibrate:  it returns a row per speed (the CPU's measured), says where it stored them and
#               for which hardware; the file holds them with that hardware.
#   sessions:   a new session of another database estimates with the stored speeds, and so does
#               one that sets gpu_routing.threads (the hardware is the machine's, not a setting).
#   hardware:   speeds stored for other hardware, or a file that cannot be read, are not used:
#               the reason says which and to run gpu_routing_calibrate().
#   cancel:     statement_timeout stops a calibration within about a second of it; the stored
#               file is left as it was.
#   write:      where the file cannot be written (a directory in the way of its temporary), the
#               call fails naming it, the stored file is left as it was, and no backend restarts.
# Runs last against a shared cluster: it removes the file at the end (built-in speeds again).
# Usage: test/calibration/run.sh [database]   (created if missing, dropped at the end)
set -uo pipefail
db=${1:-gpu_routing_calibration_test}
other_db=${db}_other
. "$(dirname "$0")/../checks.sh"  # pass, fail, q, the counts

data_dir=$(psql -X -q -t -A -d postgres -c "SHOW data_directory")
speeds=$data_dir/gpu_routing_speeds.conf
if [ ! -d "$data_dir" ] || [ ! -w "$data_dir" ]; then
  echo "FAILED - the server's data directory ($data_dir) is not on this machine or not writable here"
  exit 1
fi
for d in "$db" "$other_db"; do
  dropdb --if-exists "$d" >/dev/null 2>&1 || true
  createdb "$d"
done
work=$(mktemp -d /tmp/gpu_routing_calibration.XXXXXX)
cleanup() {
  rm -f "$speeds" "$speeds.tmp"
  for d in "$db" "$other_db"; do dropdb --if-exists "$d" >/dev/null 2>&1 || true; done
  psql -X -q -d postgres -c "DROP ROLE IF EXISTS gpu_routing_calibration_user" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
rm -f "$speeds"
network="CREATE EXTENSION gpu_routing;
  CREATE TABLE net AS SELECT i AS id, i AS source, i + 1 AS target, 1.0 + i % 3 AS cost
  FROM generate_series(1, 999) i"
q -c "$network"
psql -X -q -v ON_ERROR_STOP=1 -d "$other_db" -c "$network"
# reason_in DB [SQL before the call]: the reason of an auto call on the network, in a new session.
reason_in() {
  psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$1" -c "SET gpu_routing.sssp_algorithm = auto" \
    ${2:+-c "$2"} -c "SELECT count(*) FROM gpu_sssp('SELECT id, source, target, cost FROM net', 1)" \
    -c "SELECT reason FROM gpu_routing_last_run()" 2>&1 | tail -1
}

# --- superuser ------------------------------------------------------------------------------------
out=$(psql -X -q -t -A -d "$db" \
  -c "DROP ROLE IF EXISTS gpu_routing_calibration_user" \
  -c "CREATE ROLE gpu_routing_calibration_user" \
  -c "GRANT EXECUTE ON FUNCTION gpu_routing_calibrate() TO gpu_routing_calibration_user" \
  -c "SET ROLE gpu_routing_calibration_user" \
  -c "SELECT count(*) FROM gpu_routing_calibrate()" 2>&1)
if [[ $out == *"gpu_routing_calibrate() must be run by a superuser"* ]] && [ ! -e "$speeds" ]; then
  pass "superuser: a role with EXECUTE but no superuser is refused ($(grep -m1 -o 'gpu_routing_calibrate() must.*' <<< "$out")); nothing stored"
else
  fail "superuser: a non-superuser's call" "$out"
fi

# --- built-in -------------------------------------------------------------------------------------
reason=$(reason_in "$db")
if [[ $reason == "auto: "*"estimated"*"(built-in speeds)" ]]; then
  pass "built-in: with no stored speeds the reason says so: $reason"
else
  fail "built-in: the reason without stored speeds" "$reason"
fi

# --- calibrate ------------------------------------------------------------------------------------
q -c "SET client_min_messages = notice" \
  -c "SELECT speed || '|' || value || '|' || source FROM gpu_routing_calibrate()" \
  > "$work/rows" 2> "$work/notices"
measured_cpu=$(grep -cE '^cpu_dijkstra_(vertex|arc)_ns\|[0-9.e+-]+\|measured$' "$work/rows")
measured_emit=$(grep -cE '^emit_row_ns\|[0-9.e+-]+\|measured$' "$work/rows")
hardware=$(sed -n 's/^hardware = //p' "$speeds" 2>/dev/null)
if [ "$measured_cpu" = 2 ] && [ "$measured_emit" = 1 ] && [ -n "$hardware" ] &&
  grep -q "speeds stored in $speeds for $hardware" "$work/notices" &&
  [ "$(wc -l < "$work/rows")" -ge 20 ] && ! grep -qE '\|(0|-[0-9.e+-]+)\|' "$work/rows"; then
  pass "calibrate: $(wc -l < "$work/rows") speeds ($(grep -c '|measured$' "$work/rows") measured, all above 0), stored for \"$hardware\""
else
  fail "calibrate: rows, notice or file" "$(cat "$work/rows" "$work/notices"; ls -l "$speeds" 2>&1)"
fi
stamp=$(sed -n 's/^origin = //p' "$speeds")

# --- sessions -------------------------------------------------------------------------------------
reason=$(reason_in "$other_db")
if [[ $reason == *"($stamp speeds)" ]] && [[ $stamp == calibrated* ]]; then
  pass "sessions: a new session of another database estimates with them: $reason"
else
  fail "sessions: another database's reason (stored: $stamp)" "$reason"
fi
reason=$(reason_in "$db" "SET gpu_routing.threads = 1")
if [[ $reason == *"($stamp speeds)" ]]; then
  pass "sessions: so does one with gpu_routing.threads = 1"
else
  fail "sessions: with gpu_routing.threads = 1 (stored: $stamp)" "$reason"
fi

# --- hardware -------------------------------------------------------------------------------------
cp "$speeds" "$work/stored"
sed 's/^hardware = .*/hardware = Another CPU x 3 threads; no GPU/' "$work/stored" > "$work/other"
cat "$work/other" > "$speeds"  # in place: the server's file, its owner and mode kept
reason=$(reason_in "$db")
if [[ $reason == *"(built-in: the calibration stored is for other hardware (Another CPU x 3 threads; no GPU), run gpu_routing_calibrate() speeds)" ]]; then
  pass "hardware: speeds stored for other hardware are not used: ${reason#*(}"
else
  fail "hardware: speeds for other hardware" "$reason"
fi
echo "not a speeds file" > "$speeds"
reason=$(reason_in "$db")
if [[ $reason == *"(built-in (gpu_routing_speeds.conf unreadable) speeds)" ]]; then
  pass "hardware: an unreadable file is not used either: ${reason#*(}"
else
  fail "hardware: an unreadable file" "$reason"
fi
cat "$work/stored" > "$speeds"

# --- cancel ---------------------------------------------------------------------------------------
start=$(date +%s%N)
# 2 s: past the rows' timing (the first stage), into the engines' (a calibration takes ~10 s on
# the 2-core machine).
out=$(q -c "SET statement_timeout = '2s'" -c "SELECT count(*) FROM gpu_routing_calibrate()" 2>&1)
ms=$((($(date +%s%N) - start) / 1000000))
after=$(q -c "SELECT 1" 2>&1)
if [[ $out == *"canceling statement due to statement timeout"* ]] && [ "$ms" -lt 3500 ] &&
  cmp -s "$work/stored" "$speeds" && [ ! -e "$speeds.tmp" ] && [ "$after" = 1 ]; then
  pass "cancel: statement_timeout = 2s stopped it after $ms ms; the stored file is as it was"
else
  fail "cancel: $ms ms; file unchanged: $(cmp -s "$work/stored" "$speeds" && echo yes || echo no)" "$out"
fi

# --- write ----------------------------------------------------------------------------------------
started_at=$(q -c "SELECT pg_postmaster_start_time()")
mkdir "$speeds.tmp"
out=$(q -c "SELECT count(*) FROM gpu_routing_calibrate()" 2>&1)
after=$(q -c "SELECT pg_postmaster_start_time()" 2>&1)
rmdir "$speeds.tmp"
if [[ $out == *"could not write \"$speeds.tmp\": Is a directory"* ]] &&
  cmp -s "$work/stored" "$speeds" && [ "$after" = "$started_at" ]; then
  pass "write: a file that cannot be written fails naming it; the stored file and the server are as they were"
else
  fail "write: file unchanged: $(cmp -s "$work/stored" "$speeds" && echo yes || echo no); server started at $started_at, now $after" "$out"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

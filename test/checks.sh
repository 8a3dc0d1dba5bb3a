# Sourced by the test/*/run.sh suites that print "ok - ..." or "FAILED - ..." per check and the
# counts last (progress, service, calibration, kept, upgrade, package). Set `db` before calling q.
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
passed=0
failed=0
pass() { echo "ok - $1"; passed=$((passed + 1)); }
# fail WHAT [DETAILS]: DETAILS indented below.
fail() { echo "FAILED - $1"; [ $# -lt 2 ] || printf '%s\n' "$2" | sed 's/^/    /'; failed=$((failed + 1)); }
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$db" "$@"; }

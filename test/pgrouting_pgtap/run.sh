#!/usr/bin/env bash
# pgRouting 3.4.2's own pgTAP tests for the ten functions gpu_pgr answers, run unchanged with only
# the search path changed, against a running server (PGHOST, PGPORT, PGUSER) where pgTAP, PostGIS,
# pgRouting and gpu_routing are installed.
#
# pgRouting's test files are GPL-2.0-or-later and are not part of this repository: give a copy of
# pgRouting 3.4.2's source tree (its pgtap/ and tools/testers/ folders are all that is read), as
#   PGROUTING_SRC=/path/to/pgrouting-3.4.2 test/pgrouting_pgtap/run.sh [database]
# (the release tarball, or a checkout of tag v3.4.2). Without it the script says so and exits 0
# (scripts/test.sh then reports the step as skipped); GPU_ROUTING_REQUIRE_PGROUTING_SRC=1 makes
# that an error.
#
# It makes a fresh database (dropped at the end) with pgtap, postgis, pgrouting and gpu_routing,
# loads pgRouting's sample data and helper functions the way pgRouting's tools/testers/setup_db.sh
# does, and runs the selected files with pg_prove twice, with the settings of pgRouting's
# tools/testers/pg_prove_tests.sh:
#   pgrouting: the plain search path: pgRouting answers (the baseline);
#   gpu_pgr:   PGOPTIONS="-c search_path=gpu_pgr,public", as a user switching would: gpu_pgr answers.
# It prints each file's passed/failed counts in both runs, then compares the failures with
# expected_differences.txt (each documented there with its reason), and checks who answered (the
# call counts below). It passes exactly when the failures are the listed ones and each run was
# answered by its side: a new failure, or a listed one that passes, fails the run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
db=${1:-gpu_routing_pgrouting_pgtap}
src=${PGROUTING_SRC:-}
expected="$here/expected_differences.txt"

if [ -z "$src" ]; then
  echo "test/pgrouting_pgtap: skipped: PGROUTING_SRC (a pgRouting 3.4.2 source tree) is not set"
  [ "${GPU_ROUTING_REQUIRE_PGROUTING_SRC:-0}" = 1 ] && exit 1
  exit 0
fi
for d in "$src/pgtap" "$src/tools/testers"; do
  [ -d "$d" ] || { echo "test/pgrouting_pgtap: $d is missing (PGROUTING_SRC=$src)" >&2; exit 1; }
done
src=$(cd "$src" && pwd)
# The expected differences are those of 3.4.2's files (the release installed with Debian 12).
grep -q '"3.4.2"' "$src/tools/testers/pg_prove_tests.sh" 2>/dev/null ||
  { echo "test/pgrouting_pgtap: $src is not pgRouting 3.4.2 (tools/testers/pg_prove_tests.sh)" >&2; exit 1; }

# The files for pgr_dijkstra, pgr_dijkstraCost, pgr_dijkstraCostMatrix, pgr_drivingDistance,
# pgr_johnson, pgr_floydWarshall, pgr_bdDijkstra, pgr_bdDijkstraCost, pgr_aStar, pgr_aStarCost.
# Left out: pgr_dijkstraNear, pgr_dijkstraVia, pgr_bdDijkstraCostMatrix, pgr_aStarCostMatrix,
# pgr_bdAstar (not in gpu_pgr: they stay pgRouting's).
selected=(
  pgtap/dijkstra/dijkstra pgtap/dijkstra/dijkstraCost pgtap/dijkstra/dijkstraCostMatrix
  pgtap/dijkstra/driving_distance pgtap/allpairs
  pgtap/bdDijkstra/bdDijkstra pgtap/bdDijkstra/bdDijkstraCost pgtap/bdDijkstra/edge_cases
  pgtap/astar/astar pgtap/astar/astarCost pgtap/astar/edge_cases
)
files=()
for d in "${selected[@]}"; do
  [ -d "$src/$d" ] || { echo "test/pgrouting_pgtap: $src/$d is missing" >&2; exit 1; }
  while IFS= read -r f; do files+=("${f#"$src/"}"); done < <(find "$src/$d" -name '*.pg' | sort)
done

psql_q() { psql -X -q -v ON_ERROR_STOP=1 --set client_min_messages=WARNING --pset pager=off "$@"; }
out=$(mktemp -d /tmp/pgrouting_pgtap.XXXXXX)
dropdb --if-exists "$db" >/dev/null 2>&1 || true
createdb "$db"
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
psql_q -d "$db" -c "SET client_min_messages = WARNING;
  CREATE EXTENSION pgtap; CREATE EXTENSION pgrouting WITH VERSION '3.4.2' CASCADE;
  CREATE EXTENSION gpu_routing;"
# What pgRouting's tools/testers/setup_db.sh loads, in its order (from that folder), less
# vrppdtw_data.sql: pgr_pickDeliver's tables (v_lc101, lc101_c), which no selected file reads, and
# 15 s of the 17 the loading takes on 2 cores.
(cd "$src/tools/testers" && PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=WARNING" psql_q -d "$db" \
  -f sampledata_pgtap.sql -f solomon_100_rc101.data.sql -f innerQuery.sql \
  -f innerQuery_old.sql -f inner_styles.sql -f old_inner_styles.sql -f no_crash_test.sql \
  -f alphaShapeTester.sql -f binaryBreadthFirstSearch_pgtap_data.sql -f general_pgtap_tests.sql \
  -f no_crash_general.sql -f dijkstra_pgtap_tests.sql -f tmp_net.sql -f flow_pgtap_tests.sql \
  -f trsp_tests.sql -f tsp_pgtap_tests.sql -f astar_pgtap_tests.sql -f types_check.sql \
  -f via_compare.sql -f spanningtree.sql >/dev/null)


# One run: pg_prove, verbose, then per file: passed, failed (numbers), or why it broke.
# Which functions answered: the run counts every function call (track_functions = all, from
# zero: pg_stat_reset), read once every backend of the run has gone (each sends its counts on
# exit). Calls of public.pgr_* would not show if PostgreSQL inlined those SQL wrappers, so the
# check reads pgRouting's C functions under them (_pgr_dijkstra, ...).
calls_of_run() {
  local mode=$1 waited=0
  while [ "$(psql -X -At -d "$db" -c "SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()")" != 0 ]; do
    sleep 0.2; waited=$((waited + 1)); [ "$waited" -lt 100 ] || break
  done
  sleep 0.5
  psql -X -At -F ' ' -d "$db" -c "SELECT '$mode', schemaname, lower(funcname), sum(calls)
      FROM pg_stat_user_functions
      WHERE (schemaname = 'gpu_pgr' AND funcname LIKE 'pgr%')
         OR (schemaname = 'public' AND lower(funcname) ~ '^_?pgr_(dijkstra|dijkstracost|dijkstracostmatrix|drivingdistance|johnson|floydwarshall|bddijkstra|bddijkstracost|astar|astarcost)$')
      GROUP BY 1, 2, 3 HAVING sum(calls) > 0 ORDER BY 2, 3" >"$out/$mode.calls"
}

run_mode() {
  local mode=$1 options="${PGOPTIONS:-} -c track_functions=all"
  [ "$mode" = gpu_pgr ] && options="$options -c search_path=gpu_pgr,public"
  psql -X -q -At -d "$db" -c "SELECT pg_stat_reset()" >/dev/null
  # pgr_drivingDistance refuses gpu_routing.device = gpu (the GPU suite's setting): auto then, as
  # test/regress/sql/gpu_pgr.sql does.
  case "$options" in *gpu_routing.device=gpu*) options="$options -c gpu_routing.device=auto" ;; esac
  (cd "$src" && PGOPTIONS="$options" pg_prove --verbose --failures \
      --set client_min_messages=WARNING --set on_error_rollback=off --set on_error_stop=true \
      --pset format=unaligned --pset tuples_only=true --pset pager=off \
      -d "$db" "${files[@]}" >"$out/$mode.tap" 2>&1) || true
  perl "$here/tap_summary.pl" "$mode" "$out/$mode.tap" "${files[@]}" >"$out/$mode.summary"
  calls_of_run "$mode"
}
start=$(date +%s)
run_mode pgrouting
run_mode gpu_pgr

seconds=$(( $(date +%s) - start ))
printf '%-66s %-13s %-13s %s\n' file pgrouting gpu_pgr "gpu_pgr: tests not passed"
join -t $'\t' -j 1 <(cut -f2- "$out/pgrouting.summary" | sort) <(cut -f2- "$out/gpu_pgr.summary" | sort) |
  while IFS=$'\t' read -r file p_pass p_fail _ _ g_pass g_fail g_failures _; do
    printf '%-66s %-13s %-13s %s\n' "$file" "$p_pass/$((p_pass + p_fail))" "$g_pass/$((g_pass + g_fail))" \
      "$([ "$g_failures" = - ] || echo "$g_failures")"
  done
awk -F'\t' '{ p[$1] += $3; f[$1] += $4 }
  END { for (m in p) printf "%s run: %d of %d tests pass\n", m, p[m], p[m] + f[m] }' \
  "$out/pgrouting.summary" "$out/gpu_pgr.summary" | sort
echo "(pg_prove, both runs: ${seconds} s)"

# What failed, against what is expected to fail: "mode file tests" on both sides.
cat "$out/pgrouting.summary" "$out/gpu_pgr.summary" | awk -F'\t' '$5 != "-" { print $1, $2, $5 }' |
  sort >"$out/failed"
{ grep -v '^[[:space:]]*\(#\|$\)' "$expected" || true; } | awk '{ print $1, $2, $3 }' | sort >"$out/expected"
status=0
while read -r mode file tests; do
  echo "NEW FAILURE ($mode): $file: tests $tests did not pass"
  status=1
done < <(comm -23 "$out/failed" "$out/expected")
while read -r mode file tests; do
  echo "EXPECTED FAILURE NOT SEEN ($mode): $file: tests $tests (listed in expected_differences.txt)"
  status=1
done < <(comm -13 "$out/failed" "$out/expected")
# Who answered. The gpu_pgr run: each of the ten names answered by gpu_pgr, and pgRouting's code
# under them never reached (a call gpu_pgr has no signature for would fall through to
# public.pgr_* and pass on pgRouting's answer). The baseline: gpu_pgr never reached.
echo "functions called in each run (pg_stat_user_functions):"
sed 's/^/  /' "$out/pgrouting.calls" "$out/gpu_pgr.calls"
for name in dijkstra dijkstracost dijkstracostmatrix drivingdistance johnson floydwarshall \
            bddijkstra bddijkstracost astar astarcost; do
  grep -q "^gpu_pgr gpu_pgr pgr_$name [1-9]" "$out/gpu_pgr.calls" ||
    { echo "NOT ANSWERED BY gpu_pgr: no call of gpu_pgr.pgr_$name in the gpu_pgr run"; status=1; }
done
while read -r _ schema name calls; do
  echo "pgRouting ANSWERED IN THE gpu_pgr RUN: $schema.$name, $calls calls"; status=1
done < <(grep "^gpu_pgr public " "$out/gpu_pgr.calls" || true)
while read -r _ schema name calls; do
  echo "gpu_pgr ANSWERED IN THE pgrouting RUN: $schema.$name, $calls calls"; status=1
done < <(grep "^pgrouting gpu_pgr " "$out/pgrouting.calls" || true)

if [ "$status" = 0 ]; then
  echo "test/pgrouting_pgtap: every failure is a documented one ($(wc -l <"$out/expected") listed in expected_differences.txt), and gpu_pgr answered the ten functions in its run"
else
  [ -n "${PGROUTING_PGTAP_KEEP:-}" ] && cp "$out"/*.tap "$PGROUTING_PGTAP_KEEP"/
  echo "test/pgrouting_pgtap: FAILED (pg_prove's output: set PGROUTING_PGTAP_KEEP=DIR to keep it)"
fi
exit "$status"

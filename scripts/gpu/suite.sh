#!/usr/bin/env bash
# On the GPU machine (device tool), with .device carried (made by scripts/gpu/stage.sh here):
#   [TESTS="..."] [BENCH="..."] bash scripts/gpu/suite.sh
# Installs the PostgreSQL bundle, starts a fresh server that preloads the staged gpu_routing, runs
# the parts asked for and ends with a summary: one line per part, details for the failed ones only.
# Exits 1 when a part failed. Runs again on the same (warm) machine: the previous call's server is
# stopped and the cluster, its databases and the result folders are made anew.
# TESTS (default: all of them; TESTS= runs none)
#   gpu_tests    GoogleTest GPU unit tests
#   regress      pg_regress with gpu_routing.device = gpu
#   isolation    pg_isolation_regress (kept graphs against concurrent writers) with device = gpu
#   pgtap        pgTAP with gpu_routing.device = gpu
#   kept         kept graphs under load and faults (test/kept/run.sh) with device = gpu
#   service      the GPU service (test/service/run.sh): 64 sessions checked against pgRouting, a
#                backend terminated and the service killed mid-request, cancel, GPU memory at 1
#                and 64 sessions (the suite's server runs the service: gpu_routing.service = auto)
#   index-gpu    the road index customized on the GPU (test/kept/index_customization.sh) on a
#                server of its own with the GPU service off (backends then open CUDA contexts)
#   upgrade      test/upgrade/run.sh (ALTER EXTENSION UPDATE, pg_dump and pg_restore)
#   deployments  test/deployments/run.sh with device = gpu on clusters of its own: without preload
#                (the GPU in each backend), a primary and two hot standbys (each with the GPU
#                service), failover, a matrix spread over two servers
#   progress     gpu_routing_progress during long calls (test/progress/run.sh) with device = gpu
#   calibration  gpu_routing_calibrate() and the speeds it stores (test/calibration/run.sh) with
#                device = gpu; removes the stored speeds at its end
#   concurrency  16 concurrent sessions with pgbench, answers checked, device memory per session
#   memcheck     compute-sanitizer memcheck on a reduced filter (SANITIZER_FILTER, at most SANITIZER_SECONDS [150])
#   racecheck    compute-sanitizer racecheck on a reduced filter (RACECHECK_FILTER, at most SANITIZER_SECONDS),
#                then the single-source engines one by one (at most 60 s each)
# BENCH (default: none)
#   sql-sssp, sql-apsp  end to end against pgRouting on the same server (sql_bench)
#   sql-kept            kept graph vs edges_sql vs pgRouting, CPU and GPU (sql_bench --suite kept)
#   sql-auto            auto against every engine forced on the CPU and the GPU, on every workload
#                       of the SQL suites (sql_bench --suite auto, after gpu_routing_calibrate());
#                       AUTO_PART=K/M runs a share of the workloads (the whole takes over 10 min;
#                       several shares, "2/6 6/6", one after the other, a table each; "3,5/12"
#                       shares 3 and 5 of 12 in one table after one calibration),
#                       AUTO_ONLY=TEXT the workloads whose name holds TEXT
#   kept-pgbench        16 clients of random New York routes: kept graph on the GPU vs pgr_dijkstra
#   kept-pgbench-cpu    the same with the CPU engine (the machine's cores)
#   call-rate           a call's cost around the engine (bench/call_rate.sh, issue 42): New York
#                       routes on a kept graph with its index against `SELECT :s + 1`, CALL_RATE_CLIENTS
#                       [64] clients, gpu_routing.device = CALL_RATE_DEVICE [auto], on a server of its
#                       own (port 54480)
#   road-table          the big road-network answers (bench/road_table.sh): matrices and trees as
#                       arrays, service areas, on New York's kept graph with its index, devices auto,
#                       cpu and gpu, on a server of its own (port 54482); ROAD_TABLE_ROUNDS [5],
#                       ROAD_TABLE_SETTINGS (SET statements every session runs), ROAD_TABLE_DEVICES
#                       (the columns, default "auto cpu gpu")
#   gpu-pgr             pgRouting's names through gpu_pgr vs pgRouting itself (bench/gpu_pgr_bench.sh,
#                       issue 44): New York, one route, a 5 km service area, a 100 x 100 cost matrix,
#                       a kept graph with its index registered with pgRouting code's query text;
#                       gpu_routing.device = GPU_PGR_DEVICE [auto], GPU_PGR_ROUNDS [5] calls a side,
#                       on a server of its own (port 54490)
#   service-pgbench     the GPU service (issue 10): 64 clients of random New York routes, service vs
#                       in-backend GPU vs CPU engine vs pgr_dijkstra, each on a server of its own
#                       (bench/service_pgbench.sh; SERVICE_PGBENCH_SECONDS [60] per side, about 4 x
#                       that in all: run it alone); SERVICE_PGBENCH_SIDES (e.g. service-1,service:
#                       one GPU against every GPU, issue 14) and SERVICE_PGBENCH_MATRIX=1 (the New
#                       York 1000 x 1000 matrix on each service server) pass --sides and --matrix;
#                       SERVICE_PGBENCH_INDEX=1 passes --index (every side but pgr on the road index),
#                       SERVICE_PGBENCH_LANES=N passes --lanes N (the service's lanes a GPU)
#   sql-arrays          cost matrices as rows vs arrays vs pgRouting, GPU and CPU (sql_bench --suite arrays)
#   index-custom        re-customizing New York's kept index after committed changes, CPU vs GPU, in
#                       SQL (bench/index_customization_bench.sh) on a server without the service
#   sql-index           the road index vs Dijkstra on kept graphs vs pgRouting, New York and Rome, on
#                       the machine's CPU cores (sql_bench --suite index)
#   cch                 the road index's core on one core, its sweeps and cost matrices on the
#                       machine's cores less one (bench/cch_bench; CCH_BENCH_REPS [1],
#                       CCH_BENCH_THREADS)
#   phast               one-to-all trees on the road index: the GPU's PHAST vs one CPU core vs
#                       near_far, New York and Rome, engine only (phast_bench)
#   phast-matrices      New York cost matrices (1000, 3000 and 10,000 squared) on the GPU's
#                       PHAST, sweeps restricted to the targets' closure (RPHAST) against full
#                       ones, engine only (phast_bench --sections matrices; PHAST_MATRIX_REPS [5])
#   auto-repeat         auto against near_far and multi_source forced, ten calls each, alternating,
#                       all pairs of a random 4096-vertex graph as rows (bench/auto_repeat.sh,
#                       after gpu_routing_calibrate())
#   auto-alternating    auto against the same engine forced, alternating in one session, on rows
#                       of sql-auto (bench/auto_alternating.sh; ALTERNATING_ROWS [ny100,sparse,rome],
#                       ALTERNATING_CALLS [10] a side;
#                       or rmat); first those rows by sql_bench --suite auto --only, which load
#                       their tables (their tables in logs/)
#   progress-bench      gpu_routing.track_progress on vs off (bench/progress_bench.sh), GPU and CPU
#                       (PGBENCH_SECONDS [20] per side)
#   engines             compute only (sssp_bench, apsp_bench)
#   sssp-engines        sssp_bench alone (at most SSSP_BENCH_SECONDS [240])
#   scaling             multi_source on 1..N GPUs (apsp_bench --sections scaling, at most 150 s)
# Results in $OUT [/tmp/out] (the device tool brings back 8 files at most):
#   summary.txt    the summary, also printed last
#   logs.tar.gz    every part's log, regression diffs, the server log
#   *.md, *.csv    the benchmark tables, one file per table; bench.tar.gz instead when they are
#                  more than 6 files
set -uo pipefail
all_tests="gpu_tests regress isolation pgtap kept index-gpu service upgrade deployments progress calibration concurrency memcheck racecheck"
all_bench="sql-auto sql-sssp sql-apsp sql-kept kept-pgbench kept-pgbench-cpu call-rate road-table gpu-pgr service-pgbench sql-arrays sql-index index-custom cch phast phast-matrices progress-bench auto-repeat auto-alternating engines sssp-engines scaling"
tests=${TESTS-$all_tests}
bench=${BENCH-}
wants() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }
for t in $tests; do wants "$all_tests" "$t" || { echo "suite.sh: unknown TESTS part '$t' (parts: $all_tests)" >&2; exit 2; }; done
for b in $bench; do wants "$all_bench" "$b" || { echo "suite.sh: unknown BENCH part '$b' (parts: $all_bench)" >&2; exit 2; }; done
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
for f in .device/pg15-bundle.tar.xz .device/pg-install.sh .device/stage.tar.xz .device/data/rome99.gr; do
  [ -f "$f" ] || { echo "suite.sh: $f is missing: run scripts/gpu/stage.sh before, and carry [\".device\"]" >&2; exit 2; }
done

out=${OUT:-/tmp/out}
logs=$out/logs
summary=$out/summary.txt
bench_files=()
# A second run with the same $OUT (only when OUT is not the device tool's) starts clean too.
rm -rf "$logs" "$out/logs.tar.gz" "$out/bench.tar.gz" "$summary" "$out"/sql_*.md "$out"/kept_pgbench*.md "$out"/service_pgbench.md \
  "$out"/scaling.md "$out"/scaling.csv "$out"/sssp_bench.md "$out"/sssp_bench.csv "$out"/apsp_bench.md "$out"/apsp_bench.csv
mkdir -p "$logs"
status_lines=$logs/.status
details=$logs/.details
: > "$status_lines"
: > "$details"
failed=()
parts=0
started=$SECONDS
run_started=$SECONDS

# note TEXT: a line of the summary's head (also printed as it happens).
note() { echo "$*" | tee -a "$status_lines"; cp "$status_lines" "$summary"; }
current=
begin() { current=$1; started=$SECONDS; }
# result NAME STATUS TEXT: the part's one line, "ok" or "FAIL" with its exit status and seconds.
result() {
  local name=$1 status=$2 text=${3:-} secs=$((SECONDS - started))
  parts=$((parts + 1)) current=
  if [ "$status" -eq 0 ]; then
    note "$(printf 'ok    %-12s %4d s  %s' "$name" "$secs" "$text")"
  else
    failed+=("$name")
    note "$(printf 'FAIL  %-12s %4d s  exit %s: %s' "$name" "$secs" "$status" "$text")"
  fi
}
# detail NAME LOGS: standard input (at most 80 lines) becomes the failure's details.
detail() {
  { echo; echo "---- $1 (logs.tar.gz: $2)"; head -n 80; } >> "$details"
}
# excerpt LOG GREP-ARGS...: the matching lines of LOG, or its last 20 lines when none match.
excerpt() {
  local log=$1 lines; shift
  lines=$(grep "$@" "$log" 2>/dev/null | head -n 60)
  if [ -n "$lines" ]; then echo "$lines"; else tail -n 20 "$log"; fi
}
finish() {
  trap - TERM INT
  [ -f /tmp/pgdata/server.log ] && tail -c 20000000 /tmp/pgdata/server.log > "$logs/server.log"
  mapfile -t bench_files < <(printf '%s\n' "${bench_files[@]}" | awk 'NF && !seen[$0]++')
  if [ ${#bench_files[@]} -gt 6 ]; then
    (cd "$out" && tar -czf bench.tar.gz "${bench_files[@]}" && rm -f "${bench_files[@]}")
    note "benchmark tables: bench.tar.gz (${bench_files[*]})"
  elif [ ${#bench_files[@]} -gt 0 ]; then
    note "benchmark tables: ${bench_files[*]}"
  fi
  if [ "$stopped" = 1 ]; then
    failed+=("${current:-setup}(stopped)")
    note "$(printf 'STOP  %-12s %4d s  stopped by a signal (the time limit?): this part and the ones after it did not finish' "${current:-setup}" $((SECONDS - started)))"
  fi
  if [ ${#failed[@]} -eq 0 ]; then
    note "passed: all $parts part(s), $((SECONDS - run_started)) s"
  else
    note "FAILED: ${failed[*]} (of $parts part(s) finished, $((SECONDS - run_started)) s)$([ -s "$details" ] && echo '; details below')"
  fi
  mv "$status_lines" "$out/.status" && mv "$details" "$out/.details"
  tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
  { cat "$out/.status"; [ -s "$out/.details" ] && { echo; echo "==== failures"; cat "$out/.details"; }; } > "$summary"
  # Printed failures first, the one-line statuses last (the device tool shows the output's end).
  if [ -s "$out/.details" ]; then echo; echo "==== failures"; cat "$out/.details"; fi
  echo; echo "==== summary ($summary)"; cat "$out/.status"
  rm -f "$out/.status" "$out/.details"
  [ ${#failed[@]} -eq 0 ] && exit 0
  exit 1
}
stopped=0
trap 'stopped=1; finish' TERM INT

# --- the server ------------------------------------------------------------------------------------
# A warm machine still runs the previous call's server: stop it first (its data folder may be gone).
stop_server() {
  if [ -f /tmp/pgdata/postmaster.pid ]; then
    su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D /tmp/pgdata -m fast -w stop" >/dev/null 2>&1
  fi
  pgrep -x postgres >/dev/null || return 0
  pkill -INT -x postgres  # fast shutdown of any postmaster
  for _ in $(seq 100); do pgrep -x postgres >/dev/null || return 0; sleep 0.2; done
  pkill -KILL -x postgres
  sleep 1
  ! pgrep -x postgres >/dev/null
}
# setup_failed WHAT LOG...: the server could not be set up; the summary says why, nothing else runs.
setup_failed() {
  local what=$1; shift
  result setup 1 "$what"
  for log in "$@"; do [ -f "$log" ] && { echo "== $log"; tail -n 25 "$log"; }; done | detail setup "logs/"
  finish
}
rm -rf .device/stage
tar -C .device -xJf .device/stage.tar.xz
note "gpu_routing GPU suite, $(date -u '+%Y-%m-%d %H:%M UTC'); staged: $(cat .device/stage/STAMP 2>/dev/null || echo unknown)"
note "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1), $(nproc) cores, $(nvidia-smi -L | wc -l) GPU(s)"
# The staged binaries must come from the sources this tree holds, or the tests test something else.
if [ -f .device/stage/SOURCES.sha256 ]; then
  stale=$(sha256sum --quiet -c .device/stage/SOURCES.sha256 2>/dev/null | sed 's/: .*//' | head -n 5 | tr '\n' ' ')
  [ -n "$stale" ] && note "WARNING: the stage is older than these files of the tree: ${stale}-- run scripts/gpu/stage.sh again"
fi
begin setup
stop_server > "$logs/stop.log" 2>&1 || { pgrep -a -x postgres >> "$logs/stop.log"; setup_failed "the previous call's postgres does not stop" "$logs/stop.log"; }
# A fresh cluster in /tmp/pgdata (pg-install.sh removes the old one), started.
rm -f /tmp/pgdata/server.log
bash .device/pg-install.sh .device/pg15-bundle.tar.xz > "$logs/pg-install.log" 2>&1 ||
  setup_failed "pg-install.sh failed" "$logs/pg-install.log" /tmp/pgdata/server.log
export PATH=/usr/lib/postgresql/15/bin:$PATH PGHOST=/tmp PGPORT=5432 PGUSER=postgres
export GPU_ROUTING_DATA=$root/.device/data
# The GPU service's program (gpu_routing.service = auto) lives beside the library.
cp .device/stage/ext/gpu_routing.so .device/stage/ext/gpu_routing_service "$(pg_config --pkglibdir)/"
cp .device/stage/ext/gpu_routing.control .device/stage/ext/gpu_routing--*.sql "$(pg_config --sharedir)/extension/"
# Kept graphs live in shared memory: the server preloads the library, as scripts/cluster.sh does.
{ psql -X -q -c "ALTER SYSTEM SET shared_preload_libraries = 'gpu_routing'" &&
  su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D /tmp/pgdata -l /tmp/pgdata/server.log -w restart"; } > "$logs/restart.log" 2>&1 ||
  setup_failed "the server does not start with gpu_routing preloaded" "$logs/restart.log" /tmp/pgdata/server.log
current=
bin=.device/stage/bin

# --- tests -------------------------------------------------------------------------------------------
if wants "$tests" gpu_tests; then
  begin gpu_tests
  "$bin/gpu_tests" > "$logs/gpu_tests.log" 2>&1; s=$?
  result gpu_tests $s "$(grep -E '^\[  (PASSED|FAILED|SKIPPED)  \] [0-9]+ tests?' "$logs/gpu_tests.log" | tr -s ' \n' ' ')"
  [ $s -eq 0 ] || excerpt "$logs/gpu_tests.log" -E -A6 ': Failure$|^\[  FAILED  \]' | detail gpu_tests logs/gpu_tests.log
fi

export PGOPTIONS="-c gpu_routing.device=gpu"
if wants "$tests" regress; then
  begin regress
  rm -rf test/regress/output
  # shellcheck disable=SC2046  # the test names, one word each
  "$(pg_config --pkglibdir)/pgxs/src/test/regress/pg_regress" --inputdir=test/regress --outputdir=test/regress/output \
    --bindir="$(pg_config --bindir)" --load-extension=plpgsql --dbname=contrib_regression \
    $(make -s print-regress 2>/dev/null) > "$logs/regress.log" 2>&1; s=$?
  result regress $s "device = gpu: $(grep -E 'tests (passed|failed)|failed \(' "$logs/regress.log" | tail -1 | sed 's/^ *//; s/ *$//')"
  if [ $s -ne 0 ]; then
    [ -f test/regress/output/regression.diffs ] && cp test/regress/output/regression.diffs "$logs/regress.diffs"
    { grep -E '\.\.\. FAILED|failed \(' "$logs/regress.log"; head -n 70 test/regress/output/regression.diffs 2>/dev/null || tail -n 20 "$logs/regress.log"; } |
      detail regress "logs/regress.log, logs/regress.diffs"
  fi
fi
if wants "$tests" isolation; then
  begin isolation
  rm -rf test/isolation/output
  # shellcheck disable=SC2046
  "$(pg_config --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress" --bindir="$(pg_config --bindir)" \
    --inputdir=test/isolation --outputdir=test/isolation/output --dbname=isolation_regression \
    $(sed -nE 's/^ISOLATION = //p' Makefile) > "$logs/isolation.log" 2>&1; s=$?
  result isolation $s "device = gpu: $(grep -E 'tests (passed|failed)' "$logs/isolation.log" | tail -1 | sed 's/^ *//; s/ *$//')"
  if [ $s -ne 0 ]; then
    diffs=test/isolation/output/regression.diffs
    [ -f $diffs ] && cp $diffs "$logs/isolation.diffs"
    { grep -E '\.\.\. FAILED|failed \(' "$logs/isolation.log"; head -n 70 $diffs 2>/dev/null || tail -n 20 "$logs/isolation.log"; } |
      detail isolation "logs/isolation.log, logs/isolation.diffs"
  fi
fi
if wants "$tests" pgtap; then
  begin pgtap
  dropdb --if-exists gpu_routing_test >/dev/null 2>&1; createdb gpu_routing_test
  if psql -X -q -v ON_ERROR_STOP=1 -d gpu_routing_test -f test/fixtures.sql > "$logs/fixtures.log" 2>&1; then
    pg_prove -d gpu_routing_test test/pgtap/*.sql > "$logs/pgtap.log" 2>&1; s=$?
    result pgtap $s "device = gpu: $(grep -E '^Files=' "$logs/pgtap.log" | cut -d'(' -f1 | tr -s ' ')$(tail -1 "$logs/pgtap.log")"
    [ $s -eq 0 ] || { sed -n '/^Test Summary Report/,/^Files=/p' "$logs/pgtap.log"; excerpt "$logs/pgtap.log" -E -A3 '^#[[:space:]]+Failed test'; } |
      detail pgtap logs/pgtap.log
  else
    result pgtap 1 "test/fixtures.sql failed"
    tail -n 20 "$logs/fixtures.log" | detail pgtap logs/fixtures.log
  fi
fi
# test/*/run.sh print "ok - ..." or "FAILED - ..." per check and the counts last.
for part in kept service upgrade deployments progress calibration; do
  wants "$tests" $part || continue
  begin $part
  test/$part/run.sh > "$logs/$part.log" 2>&1; s=$?
  result $part $s "device = gpu: $(tail -1 "$logs/$part.log")"
  [ $s -eq 0 ] || excerpt "$logs/$part.log" -E -A4 '^FAILED' | detail $part logs/$part.log
done
unset PGOPTIONS
if wants "$tests" index-gpu; then
  begin index-gpu
  {
    GPU_ROUTING_SERVER_OPTIONS="-c gpu_routing.service=off" scripts/cluster.sh start /tmp/pg_noservice 54439 &&
      PGHOST=/tmp/pg_noservice PGPORT=54439 test/kept/index_customization.sh
  } > "$logs/index-gpu.log" 2>&1; s=$?
  scripts/cluster.sh stop /tmp/pg_noservice >> "$logs/index-gpu.log" 2>&1
  result index-gpu $s "service off: $(grep -E '^(ok|FAILED)' "$logs/index-gpu.log" | cut -c1-150)"
  [ $s -eq 0 ] || tail -n 20 "$logs/index-gpu.log" | detail index-gpu logs/index-gpu.log
fi
if wants "$tests" concurrency; then
  begin concurrency
  bash scripts/gpu/concurrency.sh > "$logs/concurrency.log" 2>&1; s=$?
  result concurrency $s "$(grep -E '^sessions on the GPU' "$logs/concurrency.log" | tail -1)"
  [ $s -eq 0 ] || tail -n 25 "$logs/concurrency.log" | detail concurrency logs/concurrency.log
fi
if wants "$tests" memcheck; then
  begin memcheck
  filter=${SANITIZER_FILTER:-GpuApspSanitizer.*:NearFar.EdgeCases:NearFar.SeedOneCounterexample:NearFar.GridGraph:GpuSssp.OneVertexAndNoArcs:GpuSssp.HeavyVerticesAndLongChains:GpuPredecessors.*}
  timeout "${SANITIZER_SECONDS:-150}" compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpu_tests" \
    --gtest_filter="$filter" > "$logs/memcheck.log" 2>&1; s=$?
  result memcheck $s "$(grep -E 'ERROR SUMMARY' "$logs/memcheck.log" | tail -1 | sed 's/^=* *//')"
  [ $s -eq 0 ] || { [ $s -eq 124 ] && echo "timed out after ${SANITIZER_SECONDS:-150} s"; excerpt "$logs/memcheck.log" -E '^=========|\[  FAILED  \]'; } |
    detail memcheck logs/memcheck.log
fi
if wants "$tests" racecheck; then
  begin racecheck
  race_filter=${RACECHECK_FILTER:-GpuApspSanitizer.*:NearFar.EdgeCases:GpuPredecessors.*}
  timeout "${SANITIZER_SECONDS:-150}" compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/gpu_tests" \
    --gtest_filter="$race_filter" > "$logs/racecheck.log" 2>&1; s=$?
  race_bad=()
  if [ $s -ne 0 ]; then
    race_bad+=("filter (exit $s)")
    { [ $s -eq 124 ] && echo "timed out after ${SANITIZER_SECONDS:-150} s"; excerpt "$logs/racecheck.log" -E '^=========|\[  FAILED  \]'; } |
      detail "racecheck $race_filter" logs/racecheck.log
  fi
  # The single-source engines one at a time on small graphs, rounds as plain launches (racecheck
  # stops on CUDA graphs with conditional nodes).
  engines="near_far frontier frontier_pred frontier_matrix frontier_pred_matrix crauser bellman_ford harish concurrent"
  for engine in $engines; do
    GPU_ROUTING_PLAIN_LAUNCHES=1 GPU_ROUTING_TEST_ENGINES=$engine timeout 60 compute-sanitizer --tool racecheck \
      --error-exitcode 9 "$bin/gpu_tests" --gtest_filter=GpuSssp.OneVertexAndNoArcs:GpuSssp.DenseGraphsAndTheMatrixSwitch \
      > "$logs/racecheck_$engine.log" 2>&1; e=$?
    if [ $e -ne 0 ]; then
      race_bad+=("$engine (exit $e)")
      { [ $e -eq 124 ] && echo "timed out after 60 s"; excerpt "$logs/racecheck_$engine.log" -E '^=========|\[  FAILED  \]'; } |
        detail "racecheck GpuSssp small and dense graphs [$engine, plain launches]" "logs/racecheck_$engine.log"
    fi
  done
  if [ ${#race_bad[@]} -eq 0 ]; then
    result racecheck 0 "clean: the filter, and GpuSssp small and dense graphs for $(echo "$engines" | wc -w) engines"
  else
    result racecheck 1 "races or errors in: ${race_bad[*]}"
  fi
fi

# --- benchmarks: tables in files of their own, listed at the end --------------------------------------
# bench_run NAME TABLES... -- COMMAND...: runs COMMAND, its stdout into the first table file.
bench_run() {
  local name=$1 table=$2; shift 2
  begin "$name"
  "$@" > "$out/$table" 2> "$logs/${table%.md}.err"; local s=$?
  bench_files+=("$table")
  result "$name" $s "$table"
  [ $s -eq 0 ] || { [ $s -eq 124 ] && echo "timed out"; tail -n 20 "$logs/${table%.md}.err"; } | detail "$name" "logs/${table%.md}.err"
}
for part in $bench; do
  createdb bench 2>/dev/null
  case "$part" in
    sql-sssp|sql-apsp)
      suite=gpu-${part#sql-}
      bench_run "$part" "sql_$suite.md" "$bin/sql_bench" --suite "$suite" --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 3 ;;
    sql-kept)
      bench_run "$part" sql_kept.md "$bin/sql_bench" --suite kept --device both --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 5 ;;
    kept-pgbench)
      PGDATABASE=bench bench_run "$part" kept_pgbench.md bash bench/kept_pgbench.sh --device gpu --duration "${PGBENCH_SECONDS:-20}" ;;
    kept-pgbench-cpu)
      PGDATABASE=bench bench_run "$part" kept_pgbench_cpu.md bash bench/kept_pgbench.sh --device cpu --duration "${PGBENCH_SECONDS:-20}" ;;
    call-rate)
      bench_run "$part" call_rate.md bash bench/call_rate.sh --clients "${CALL_RATE_CLIENTS:-64}" \
        --device "${CALL_RATE_DEVICE:-auto}" ;;
    road-table)
      bench_run "$part" road_table.md bash bench/road_table.sh ${ROAD_TABLE_ROUNDS:+--rounds "$ROAD_TABLE_ROUNDS"} \
        ${ROAD_TABLE_SETTINGS:+--settings "$ROAD_TABLE_SETTINGS"} \
        ${ROAD_TABLE_DEVICES:+--devices "$ROAD_TABLE_DEVICES"} ;;
    gpu-pgr)
      bench_run "$part" gpu_pgr_ny.md bash bench/gpu_pgr_bench.sh --device "${GPU_PGR_DEVICE:-auto}" \
        --rounds "${GPU_PGR_ROUNDS:-5}" ;;
    service-pgbench)
      # Servers of its own (ports 54430 and 54431): gpu_routing.service is a postmaster setting.
      seconds=${SERVICE_PGBENCH_SECONDS:-60}
      bench_run "$part" service_pgbench.md bash bench/service_pgbench.sh --duration "$seconds" \
        --pgr-duration $((seconds < 30 ? seconds : 30)) ${SERVICE_PGBENCH_SIDES:+--sides "$SERVICE_PGBENCH_SIDES"} \
        ${SERVICE_PGBENCH_MATRIX:+--matrix} ${SERVICE_PGBENCH_INDEX:+--index} \
        ${SERVICE_PGBENCH_LANES:+--lanes "$SERVICE_PGBENCH_LANES"} ;;
    sql-arrays)
      bench_run "$part" sql_arrays.md "$bin/sql_bench" --suite arrays --device both --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 5 ;;
    sql-auto)
      # AUTO_PART may name several shares ("2/6 6/6"): one table each, one after the other;
      # "3,5,6/12" runs shares 3, 5 and 6 in one table after one calibration (sql_auto_3-5-6of12.md).
      for share in ${AUTO_PART:-all}; do
        [ "$share" = all ] && share=
        name=${share//,/-}
        bench_run "$part" "sql_auto${name:+_${name/\//of}}.md" "$bin/sql_bench" --suite auto --choices all --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 3 ${share:+--part "$share"} ${AUTO_ONLY:+--only "$AUTO_ONLY"}
      done ;;
    sql-index)
      bench_run "$part" sql_index.md "$bin/sql_bench" --suite index --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 3 ;;
    index-custom)
      # A server of its own with the GPU service off: backends customize on their own GPU.
      GPU_ROUTING_SERVER_OPTIONS="-c gpu_routing.service=off" scripts/cluster.sh start /tmp/pg_icbench 54438 > "$logs/index-custom-server.log" 2>&1
      PGHOST=/tmp/pg_icbench PGPORT=54438 bench_run "$part" index_customization.md bash bench/index_customization_bench.sh "$GPU_ROUTING_DATA"
      scripts/cluster.sh stop /tmp/pg_icbench >> "$logs/index-custom-server.log" 2>&1 ;;
    phast)
      bench_run "$part" phast.md "$bin/phast_bench" --data "$GPU_ROUTING_DATA" --reps 9 ;;
    phast-matrices)
      bench_run "$part" phast_matrices.md "$bin/phast_bench" --data "$GPU_ROUTING_DATA" \
        --reps "${PHAST_MATRIX_REPS:-5}" --sections matrices ;;
    cch)
      bench_run "$part" cch.md "$bin/cch_bench" --data "$GPU_ROUTING_DATA" --reps "${CCH_BENCH_REPS:-1}" \
        --queries 200 --threads "${CCH_BENCH_THREADS:-$(($(nproc) - 1))}" ;;
    auto-repeat)
      bench_run "$part" auto_repeat.md bash bench/auto_repeat.sh --device gpu --calibrate ;;
    auto-alternating)
      # The tables of New York's and the sparse graph's rows, and Rome's kept graph with its index:
      # what sql-auto makes for those rows (its tables for them, as sql_bench --only loads them).
      # ALTERNATING_ROWS (ny100,sparse,rome,rmat; default the first three) picks the rows.
      alternating_rows=${ALTERNATING_ROWS:-ny100,sparse,rome}
      for row in ${alternating_rows//,/ }; do
        case "$row" in
          ny100) only="gpu_apsp 100x100, New York" ;;
          sparse) only="gpu_apsp all pairs, sparse 4096 V / 16k E" ;;
          rome) only="index: gpu_path Rome 1 -> 3000" ;;
          rmat) only="gpu_sssp one-to-all, R-MAT 2^20 V / 16M E" ;;
          *) only= ;;
        esac
        # ALTERNATING_TABLES_ONLY=1: the rows' tables and kept graphs alone, no row timed.
        [ -n "$only" ] && "$bin/sql_bench" --suite auto --choices all --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 3 --only "$only" ${ALTERNATING_TABLES_ONLY:+--tables-only} >> "$logs/auto_alternating_rows.md" 2>&1
      done
      bench_run "$part" auto_alternating.md bash bench/auto_alternating.sh --db bench --rows "$alternating_rows" --calls "${ALTERNATING_CALLS:-10}" ;;
    progress-bench)
      bench_run "$part:gpu" progress_gpu.md bash bench/progress_bench.sh --device gpu --runs 9
      bench_run "$part:cpu" progress_cpu.md bash bench/progress_bench.sh --device cpu --runs 9 ;;
    scaling)
      bench_run "$part" scaling.md timeout 150 "$bin/apsp_bench" --sections scaling --csv "$out/scaling.csv"
      [ -f "$out/scaling.csv" ] && bench_files+=(scaling.csv) ;;
    sssp-engines)
      bench_run "$part" sssp_bench.md timeout "${SSSP_BENCH_SECONDS:-240}" "$bin/sssp_bench" "$GPU_ROUTING_DATA" --csv="$out/sssp_bench.csv"
      [ -f "$out/sssp_bench.csv" ] && bench_files+=(sssp_bench.csv) ;;
    engines)
      bench_run "$part:sssp" sssp_bench.md "$bin/sssp_bench" "$GPU_ROUTING_DATA" --csv="$out/sssp_bench.csv"
      [ -f "$out/sssp_bench.csv" ] && bench_files+=(sssp_bench.csv)
      bench_run "$part:apsp" apsp_bench.md "$bin/apsp_bench" --csv "$out/apsp_bench.csv"
      [ -f "$out/apsp_bench.csv" ] && bench_files+=(apsp_bench.csv) ;;
  esac
done
finish

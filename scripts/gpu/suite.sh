#!/usr/bin/env bash
# On the GPU machine (device tool), from the repository root, with .device carried:
#   [BENCH="sql-sssp sql-apsp engines"] bash scripts/gpu/suite.sh tests|none
# tests: GPU unit tests, compute-sanitizer (memcheck, racecheck), pg_regress and pgTAP with
#        gpu_routing.device = gpu, 16 concurrent sessions with pgbench.
# bench: the engine benchmarks and the SQL benchmarks against pgRouting on the same server.
# Logs go to $OUT (the device tool brings them back); a summary is printed last.
set -uo pipefail
what=${1:-all}
root=$(pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

bash .device/pg-install.sh .device/pg15-bundle.tar.xz > "$out/pg-install.log" 2>&1 || { cat "$out/pg-install.log"; exit 1; }
export PATH=/usr/lib/postgresql/15/bin:$PATH PGHOST=/tmp PGPORT=5432 PGUSER=postgres
export GPU_ROUTING_DATA=$root/.device/data
tar -C .device -xJf .device/stage.tar.xz
cp .device/stage/ext/gpu_routing.so "$(pg_config --pkglibdir)/"
cp .device/stage/ext/gpu_routing.control .device/stage/ext/gpu_routing--*.sql "$(pg_config --sharedir)/extension/"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
note "machine: $(head -1 "$out/gpu.txt"), $(nproc) cores"
bin=.device/stage/bin

if [ "$what" = tests ] || [ "$what" = all ]; then
  "$bin/gpu_tests" > "$out/gpu_tests.log" 2>&1; note "gpu_tests: exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/gpu_tests.log" | tr '\n' ' '))"
  grep -E '^\[  FAILED  \]' "$out/gpu_tests.log" | head -20 | tee -a "$summary"
  for device in gpu; do
    export PGOPTIONS="-c gpu_routing.device=$device"
    rm -rf results regression.diffs
    "$(pg_config --pkglibdir)/pgxs/src/test/regress/pg_regress" --inputdir=. --bindir="$(pg_config --bindir)" \
      --load-extension=plpgsql --dbname=contrib_regression $(make -s print-regress 2>/dev/null) > "$out/regress_$device.log" 2>&1
    note "pg_regress (device=$device): exit $? $(grep -E 'tests (passed|failed)|failed \(' "$out/regress_$device.log" | tail -1)"
    [ -f regression.diffs ] && cp regression.diffs "$out/regression_$device.diffs"
    dropdb --if-exists gpu_routing_test; createdb gpu_routing_test
    psql -X -q -d gpu_routing_test -f test/fixtures.sql > "$out/fixtures.log" 2>&1
    pg_prove -d gpu_routing_test test/pgtap/*.sql > "$out/pgtap_$device.log" 2>&1
    note "pgTAP (device=$device): exit $? $(tail -1 "$out/pgtap_$device.log")"
    grep -E "^not ok|Failed|failed" "$out/pgtap_$device.log" | head -20 | tee -a "$summary"
  done
  unset PGOPTIONS
  bash scripts/gpu/concurrency.sh > "$out/concurrency.log" 2>&1
  note "concurrency: exit $? $(tail -3 "$out/concurrency.log" | tr '\n' ' ')"
  filter=${SANITIZER_FILTER:-GpuApspSanitizer.*:NearFar.EdgeCases:NearFar.SeedOneCounterexample:NearFar.GridGraph:GpuSssp.OneVertexAndNoArcs:GpuSssp.HeavyVerticesAndLongChains:GpuPredecessors.*}
  timeout ${SANITIZER_SECONDS:-150} compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpu_tests" --gtest_filter="$filter" > "$out/memcheck.log" 2>&1
  note "memcheck ($filter): exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck.log" | tail -1)"
  race_filter=${RACECHECK_FILTER:-GpuApspSanitizer.*:NearFar.EdgeCases:GpuSssp.OneVertexAndNoArcs:GpuPredecessors.*}
  timeout ${SANITIZER_SECONDS:-150} compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/gpu_tests" --gtest_filter="$race_filter" > "$out/racecheck.log" 2>&1
  note "racecheck ($race_filter): exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/racecheck.log" | tail -1)"

fi

# The benchmark parts, each selectable: sql-sssp, sql-apsp (end to end against pgRouting),
# engines (sssp_bench and apsp_bench, compute only).
for part in ${BENCH:-}; do
  createdb bench 2>/dev/null
  case "$part" in
    sql-sssp|sql-apsp)
      suite=gpu-${part#sql-}
      "$bin/sql_bench" --suite "$suite" --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 3 > "$out/sql_$suite.md" 2>"$out/sql_$suite.err"
      note "sql_bench $suite: exit $?"; cat "$out/sql_$suite.md" >> "$summary" ;;
    engines)
      "$bin/sssp_bench" --data "$GPU_ROUTING_DATA" --csv "$out/sssp_bench.csv" > "$out/sssp_bench.md" 2>"$out/sssp_bench.err"; note "sssp_bench: exit $?"
      "$bin/apsp_bench" --csv "$out/apsp_bench.csv" > "$out/apsp_bench.md" 2>"$out/apsp_bench.err"; note "apsp_bench: exit $?" ;;
  esac
done
echo "==== summary"; cat "$summary"

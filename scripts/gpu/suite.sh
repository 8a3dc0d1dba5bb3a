#!/usr/bin/env bash
# On the GPU machine (device tool), from the repository root, with .device carried (made by
# scripts/gpu/stage.sh here):
#   [TESTS="..."] [BENCH="..."] bash scripts/gpu/suite.sh
# TESTS (default: all of them)
#   gpu_tests    GoogleTest GPU unit tests
#   regress      pg_regress with gpu_routing.device = gpu
#   pgtap        pgTAP with gpu_routing.device = gpu
#   isolation    pg_isolation_regress (kept graphs against concurrent writers) with device = gpu
#   kept         kept graphs under load and faults (test/kept/run.sh) with device = gpu
#   upgrade      test/upgrade/run.sh (ALTER EXTENSION UPDATE, pg_dump and pg_restore)
#   progress     gpu_routing_progress during long calls (test/progress/run.sh) with device = gpu
#   concurrency  16 concurrent sessions with pgbench, answers checked, device memory per session
#   memcheck     compute-sanitizer memcheck on a reduced filter
#   racecheck    compute-sanitizer racecheck on a reduced filter, single-source engines one by one
# BENCH (default: none)
#   sql-sssp, sql-apsp  end to end against pgRouting on the same server (sql_bench)
#   sql-kept            kept graph vs edges_sql vs pgRouting, CPU and GPU (sql_bench --suite kept)
#   kept-pgbench        16 clients of random New York routes: kept graph on the GPU vs pgr_dijkstra
#   engines             compute only (sssp_bench, apsp_bench)
#   sssp-engines        sssp_bench alone (time-limited)
#   scaling             multi_source on 1..N GPUs (apsp_bench --sections scaling)
# Logs go into $OUT/logs.tar.gz (the device tool brings back few files); a summary is printed
# last and saved as $OUT/summary.txt.
set -uo pipefail
tests=${TESTS-gpu_tests regress isolation pgtap kept upgrade progress concurrency memcheck racecheck}
bench=${BENCH-}
root=$(pwd)
out=${OUT:-/tmp/out}
logs=$out/logs
mkdir -p "$logs"
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
wants() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }

# A warm machine still runs the previous call's server: stop it first.
if pgrep -x postgres >/dev/null; then
  pkill -INT -x postgres  # fast shutdown of any postmaster (its data folder may be gone)
  for _ in $(seq 50); do pgrep -x postgres >/dev/null || break; sleep 0.2; done
fi
bash .device/pg-install.sh .device/pg15-bundle.tar.xz > "$logs/pg-install.log" 2>&1 || { cat "$logs/pg-install.log"; exit 1; }
export PATH=/usr/lib/postgresql/15/bin:$PATH PGHOST=/tmp PGPORT=5432 PGUSER=postgres
export GPU_ROUTING_DATA=$root/.device/data
tar -C .device -xJf .device/stage.tar.xz
cp .device/stage/ext/gpu_routing.so "$(pg_config --pkglibdir)/"
cp .device/stage/ext/gpu_routing.control .device/stage/ext/gpu_routing--*.sql "$(pg_config --sharedir)/extension/"
# Kept graphs live in shared memory: the server preloads the library, as scripts/cluster.sh does.
psql -X -q -c "ALTER SYSTEM SET shared_preload_libraries = 'gpu_routing'"
su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D /tmp/pgdata -w restart" > "$logs/restart.log" 2>&1 \
  || { cat "$logs/restart.log" /tmp/pgdata/server.log; exit 1; }
note "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1), $(nproc) cores, $(nvidia-smi -L | wc -l) GPU(s)"
bin=.device/stage/bin

if wants "$tests" gpu_tests; then
  "$bin/gpu_tests" > "$logs/gpu_tests.log" 2>&1
  note "gpu_tests: exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$logs/gpu_tests.log" | tr '\n' ' '))"
  grep -E '^\[  FAILED  \]' "$logs/gpu_tests.log" | head -20 | tee -a "$summary"
fi

export PGOPTIONS="-c gpu_routing.device=gpu"
if wants "$tests" regress; then
  rm -rf results regression.diffs
  "$(pg_config --pkglibdir)/pgxs/src/test/regress/pg_regress" --inputdir=. --bindir="$(pg_config --bindir)" \
    --load-extension=plpgsql --dbname=contrib_regression $(make -s print-regress 2>/dev/null) > "$logs/regress.log" 2>&1
  note "pg_regress (device=gpu): exit $? $(grep -E 'tests (passed|failed)|failed \(' "$logs/regress.log" | tail -1)"
  if [ -f regression.diffs ]; then
    cp regression.diffs "$logs/"
    head -80 regression.diffs >> "$summary"
  fi
fi
if wants "$tests" isolation; then
  rm -rf test/isolation/output
  "$(pg_config --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress" --bindir="$(pg_config --bindir)" \
    --inputdir=test/isolation --outputdir=test/isolation/output --dbname=isolation_regression \
    $(sed -nE 's/^ISOLATION = //p' Makefile) > "$logs/isolation.log" 2>&1
  note "isolation (device=gpu): exit $? $(grep -E 'tests (passed|failed)' "$logs/isolation.log" | tail -1)"
  [ -f test/isolation/output/regression.diffs ] && head -60 test/isolation/output/regression.diffs >> "$summary"
fi
if wants "$tests" pgtap; then
  dropdb --if-exists gpu_routing_test 2>/dev/null; createdb gpu_routing_test
  psql -X -q -d gpu_routing_test -f test/fixtures.sql > "$logs/fixtures.log" 2>&1
  pg_prove -d gpu_routing_test test/pgtap/*.sql > "$logs/pgtap.log" 2>&1
  note "pgTAP (device=gpu): exit $? $(tail -1 "$logs/pgtap.log")"
  grep -E "^not ok|Failed|failed|ERROR" "$logs/pgtap.log" | head -20 | tee -a "$summary"
fi
if wants "$tests" kept; then
  test/kept/run.sh > "$logs/kept.log" 2>&1
  note "kept graphs under load and faults (device=gpu): exit $? $(tail -1 "$logs/kept.log")"
  grep -E "FAILED" "$logs/kept.log" | head -10 | tee -a "$summary"
fi
if wants "$tests" upgrade; then
  test/upgrade/run.sh > "$logs/upgrade.log" 2>&1
  note "upgrade (device=gpu): exit $? $(tail -1 "$logs/upgrade.log")"
  grep -E "FAILED" -A5 "$logs/upgrade.log" | head -20 | tee -a "$summary"
fi
if wants "$tests" progress; then
  test/progress/run.sh > "$logs/progress.log" 2>&1
  note "progress (device=gpu): exit $? $(tail -1 "$logs/progress.log")"
  grep -E "^(ok|FAILED)" "$logs/progress.log" | tee -a "$summary"
fi
unset PGOPTIONS
if wants "$tests" concurrency; then
  bash scripts/gpu/concurrency.sh > "$logs/concurrency.log" 2>&1
  note "concurrency: exit $? $(tail -3 "$logs/concurrency.log" | tr '\n' ' ')"
fi
if wants "$tests" memcheck; then
  filter=${SANITIZER_FILTER:-GpuApspSanitizer.*:NearFar.EdgeCases:NearFar.SeedOneCounterexample:NearFar.GridGraph:GpuSssp.OneVertexAndNoArcs:GpuSssp.HeavyVerticesAndLongChains:GpuPredecessors.*}
  timeout "${SANITIZER_SECONDS:-150}" compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpu_tests" \
    --gtest_filter="$filter" > "$logs/memcheck.log" 2>&1
  note "memcheck ($filter): exit $? $(grep -E 'ERROR SUMMARY' "$logs/memcheck.log" | tail -1)"
fi
if wants "$tests" racecheck; then
  race_filter=${RACECHECK_FILTER:-GpuApspSanitizer.*:NearFar.EdgeCases:GpuPredecessors.*}
  timeout "${SANITIZER_SECONDS:-150}" compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/gpu_tests" \
    --gtest_filter="$race_filter" > "$logs/racecheck.log" 2>&1
  note "racecheck ($race_filter): exit $? $(grep -E 'RACECHECK SUMMARY' "$logs/racecheck.log" | tail -1)"
  # The single-source engines one at a time on small graphs, rounds as plain launches (racecheck
  # stops on CUDA graphs with conditional nodes).
  for engine in near_far frontier frontier_pred frontier_matrix frontier_pred_matrix crauser bellman_ford harish concurrent; do
    GPU_ROUTING_PLAIN_LAUNCHES=1 GPU_ROUTING_TEST_ENGINES=$engine timeout 60 compute-sanitizer --tool racecheck \
      --error-exitcode 9 "$bin/gpu_tests" --gtest_filter=GpuSssp.OneVertexAndNoArcs:GpuSssp.DenseGraphsAndTheMatrixSwitch \
      > "$logs/racecheck_$engine.log" 2>&1
    note "racecheck GpuSssp small and dense graphs [$engine, plain launches]: exit $? $(grep -E 'RACECHECK SUMMARY' "$logs/racecheck_$engine.log" | tail -1)"
  done
fi

for part in $bench; do
  createdb bench 2>/dev/null
  case "$part" in
    sql-sssp|sql-apsp)
      suite=gpu-${part#sql-}
      "$bin/sql_bench" --suite "$suite" --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 3 \
        > "$out/sql_$suite.md" 2> "$logs/sql_$suite.err"
      note "sql_bench $suite: exit $?"
      cat "$out/sql_$suite.md" >> "$summary" ;;
    sql-kept)
      "$bin/sql_bench" --suite kept --device both --db "dbname=bench" --data "$GPU_ROUTING_DATA" --reps 5 \
        > "$out/sql_kept.md" 2> "$logs/sql_kept.err"
      note "sql_bench kept: exit $?"
      cat "$out/sql_kept.md" >> "$summary" ;;
    kept-pgbench)
      PGDATABASE=bench bash bench/kept_pgbench.sh --device gpu --duration "${PGBENCH_SECONDS:-20}" \
        > "$out/kept_pgbench.md" 2> "$logs/kept_pgbench.err"
      note "kept_pgbench (device=gpu): exit $?"
      cat "$out/kept_pgbench.md" >> "$summary" ;;
    scaling)
      timeout 150 "$bin/apsp_bench" --sections scaling --csv "$out/scaling.csv" > "$out/scaling.md" 2> "$logs/scaling.err"
      note "apsp_bench scaling: exit $?"
      cat "$out/scaling.md" >> "$summary" ;;
    sssp-engines)
      timeout "${SSSP_BENCH_SECONDS:-240}" "$bin/sssp_bench" "$GPU_ROUTING_DATA" --csv="$out/sssp_bench.csv" > "$out/sssp_bench.md" 2> "$logs/sssp_bench.err"
      note "sssp_bench: exit $?"
      cat "$out/sssp_bench.md" >> "$summary" ;;
    engines)
      "$bin/sssp_bench" "$GPU_ROUTING_DATA" --csv="$out/sssp_bench.csv" > "$out/sssp_bench.md" 2> "$logs/sssp_bench.err"
      note "sssp_bench: exit $?"
      "$bin/apsp_bench" --csv "$out/apsp_bench.csv" > "$out/apsp_bench.md" 2> "$logs/apsp_bench.err"
      note "apsp_bench: exit $?" ;;
  esac
done
tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
echo "==== summary"
cat "$summary"

#!/usr/bin/env bash
# 16 concurrent sessions calling gpu_sssp and gpu_path on the New York network with
# gpu_routing.device = gpu (pgbench, custom script). Every transaction checks its answer against
# one computed beforehand on the CPU and fails (division by zero) when they differ; pgbench exits
# non-zero if any client failed. Samples each backend's device memory (its CUDA context and
# buffers) with nvidia-smi while the sessions run.
set -euo pipefail
clients=${CLIENTS:-16}
transactions=${TRANSACTIONS:-20}
db=concurrency
dropdb --if-exists $db; createdb $db
scripts/load_ny.sh $db >/dev/null
psql -X -q -d $db -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION IF NOT EXISTS gpu_routing;
SET gpu_routing.device = cpu;
CREATE TABLE expected AS
SELECT n AS slot, s AS source, t AS target,
       (SELECT sum(distance) FROM gpu_sssp('SELECT id, source, target, cost FROM ny_edges', s)) AS sssp_sum,
       (SELECT max(agg_cost) FROM gpu_path('SELECT id, source, target, cost FROM ny_edges', s, t)) AS path_cost,
       (SELECT count(*) FROM gpu_path('SELECT id, source, target, cost FROM ny_edges', s, t)) AS path_rows
FROM (SELECT n, 1 + (n * 7919) % 264346 AS s, 1 + (n * 104729) % 264346 AS t FROM generate_series(1, 20) n) q;
SQL
cat > /tmp/concurrency.pgbench <<'PGB'
\set slot random(1, 20)
SET gpu_routing.device = gpu;
SELECT source, target, sssp_sum, coalesce(path_cost, -1) AS path_cost, path_rows FROM expected WHERE slot = :slot \gset
SELECT (SELECT sum(distance) FROM gpu_sssp('SELECT id, source, target, cost FROM ny_edges', :source)) = :sssp_sum AS sssp_ok \gset
SELECT coalesce(max(agg_cost), -1) = :path_cost AND count(*) = :path_rows AS path_ok FROM gpu_path('SELECT id, source, target, cost FROM ny_edges', :source, :target) \gset
\if :sssp_ok
\else
SELECT 1 / 0 AS wrong_sssp_answer;
\endif
\if :path_ok
\else
SELECT 1 / 0 AS wrong_path_answer;
\endif
PGB
( for i in $(seq 1 40); do nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2>/dev/null; sleep 0.5; done ) > /tmp/gpu_memory.samples &
sampler=$!
status=0
pgbench -n -c "$clients" -j "$clients" -t "$transactions" -f /tmp/concurrency.pgbench $db || status=$?
kill $sampler 2>/dev/null || true
echo "device memory per backend process (MiB, max over samples):"
awk -F', ' '{ gsub(/ MiB/, "", $2); if ($2 > max[$1]) max[$1] = $2 } END { for (p in max) print "  pid " p ": " max[p] }' /tmp/gpu_memory.samples | sort | head -20
awk -F', ' '{ gsub(/ MiB/, "", $2); if ($2 > max[$1]) max[$1] = $2 } END { n = 0; s = 0; for (p in max) { n++; s += max[p] }; if (n) printf "sessions on the GPU: %d, mean %.0f MiB each\n", n, s / n }' /tmp/gpu_memory.samples
echo "pgbench exit status: $status"
exit $status

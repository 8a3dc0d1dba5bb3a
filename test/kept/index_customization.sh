#!/usr/bin/env bash
# Where a kept graph's road index is customized (gpu_routing.index_customization), against a
# running server (PG* variables) that preloads gpu_routing. Prints "ok - ..." or "FAILED - ...".
#   With a usable GPU and the GPU service off: gpu customizes on this backend's GPU (the notes say
#   "on the GPU"), with the answers of the CPU's index; after a committed change the same session's
#   next index (kept order and topology) is customized on the GPU again under auto, by the
#   session's kept customizer.
#   With the GPU service on and a GPU: the CPU customizes (backends open no CUDA context), and the
#   notes say why.
#   Without a usable GPU: gpu is refused with the reason; calls still answer right.
# scripts/gpu/suite.sh runs it on a server of its own with the service off; test/kept/run.sh on
# its server. Usage: test/kept/index_customization.sh [database]   (created, dropped at the end)
set -euo pipefail
db=${1:-gpu_routing_index_customization}
q() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$db" "$@"; }
dropdb --if-exists "$db" >/dev/null 2>&1 || true
createdb "$db"
trap 'dropdb --if-exists "$db" >/dev/null 2>&1 || true' EXIT
# A 300 x 300 grid (ordering it takes about half a second on the 2-core machine).
q <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION gpu_routing;
CREATE TABLE ic_edges AS
SELECT row_number() OVER () AS id, s AS source, t AS target, 1 + (s * 7 + t) % 13 AS cost FROM (
  SELECT r * 300 + c AS s, r * 300 + c + 1 AS t FROM generate_series(0, 299) r, generate_series(0, 298) c
  UNION ALL
  SELECT r * 300 + c, (r + 1) * 300 + c FROM generate_series(0, 298) r, generate_series(0, 299) c) e;
SELECT gpu_graph_create('ic', 'SELECT id, source, target, cost FROM ic_edges');
SQL
gpu_usable=$(q -c "SELECT EXISTS (SELECT 1 FROM gpu_routing_info() WHERE name = 'gpu 0')")
service=$(q -c "SELECT coalesce(current_setting('gpu_routing.service', true), 'off')")
out=$(q 2>&1 <<'SQL' | tr '\n' '|'
\set ON_ERROR_STOP 0
SET gpu_routing.device = auto;
SET gpu_routing.index_customization = gpu;
SELECT gpu_graph_index('ic');
SET gpu_routing.index_customization = auto;
UPDATE ic_edges SET cost = cost + 1 WHERE id = 3;
SET gpu_routing.sssp_algorithm = cch;
SELECT agg_cost FROM gpu_path('graph:ic', 0, 89999) WHERE edge = -1;
SELECT notes FROM gpu_routing_last_run();
SQL
)
# The truth by another query text (the graph's own text would be served by the graph).
truth=$(q -c "SET gpu_routing.device = cpu; SELECT agg_cost FROM gpu_path('SELECT id, source, target, cost FROM ic_edges WHERE id > 0', 0, 89999) WHERE edge = -1")
if [ "$gpu_usable" = t ] && [ "$service" = off ]; then
  if echo "$out" | grep -Eq "^kept graph ic: road index made by this call: order [0-9]+ ms, hierarchy [0-9]+ ms, customization [0-9]+ ms on the GPU, " &&
     echo "$out" | grep -Eq "\|$truth\|.*road index made by this call with the kept order: hierarchy copied from the kept one in [0-9]+ ms, customization [0-9]+ ms on the GPU, "; then
    times=$(echo "$out" | grep -o "customization [0-9]* ms on the GPU" | sed 's/ on the GPU//' | tr '\n' ',' | sed 's/,$//; s/,/ then /')
    echo "ok - road index customized on the GPU (index_customization = gpu), and again after a committed change by the session's kept customizer (auto), answering right ($times)"
  else
    echo "FAILED - road index on the GPU: $out (truth $truth)"
    exit 1
  fi
elif [ "$gpu_usable" = t ]; then
  if echo "$out" | grep -q "customization [0-9]* ms (customized on the CPU: the GPU service owns the GPUs)" &&
     echo "$out" | grep -q "|$truth|"; then
    echo "ok - road index: index_customization = gpu with the GPU service on customizes on the CPU and says why"
  else
    echo "FAILED - road index on the GPU (service on): $out (truth $truth)"
    exit 1
  fi
else
  if echo "$out" | grep -q "ERROR:  gpu_routing.index_customization = gpu, but no GPU is usable: " &&
     echo "$out" | grep -q "|$truth|"; then
    echo "ok - road index: index_customization = gpu without a usable GPU is refused with the reason; calls still answer right"
  else
    echo "FAILED - road index customization refused: $out (truth $truth)"
    exit 1
  fi
fi

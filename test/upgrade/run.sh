#!/usr/bin/env bash
# Upgrades of the gpu_routing extension, against a running server given by the PG* variables (a
# superuser; the server preloads gpu_routing, as scripts/cluster.sh does once it is installed, so
# that kept graphs work). Creates its own databases and drops them at the end.
#
# For every older version V the installed files offer (pg_available_extension_versions; today
# 0.1.0 and 0.2.0), against the default version D (gpu_routing.control; today 0.4.0):
#   0. The update path (pg_extension_update_paths) is the chain of every version from V to D, one
#      gpu_routing--A--B.sql a step: 0.1.0 goes through 0.2.0 and 0.3.0 to 0.4.0.
#   1. database "from_V": CREATE EXTENSION gpu_routing VERSION 'V'; the sample network
#      (sample_network.sql of the data folder); user objects that use the extension: a view over
#      gpu_path, a SQL function (BEGIN ATOMIC, so it depends on gpu_apsp) and a PL/pgSQL function
#      calling gpu_apsp, and a kept graph when V has them. A view over gpu_routing_last_run()
#      stops ALTER EXTENSION gpu_routing UPDATE where D's function has other columns than V's (the
#      update drops and re-creates it), with README's message ("cannot drop function
#      gpu_routing_last_run() because other objects depend on it"), and the database stays at V;
#      with that view dropped, ALTER EXTENSION gpu_routing UPDATE goes to D with the other user
#      objects in place, and the view is created again; then a kept graph is created.
#   2. database "fresh": CREATE EXTENSION gpu_routing (version D).
#   3. The catalogs of both (test/upgrade/catalog.sql: members, functions with their signatures,
#      results, volatility, strictness, C symbols, comments and rights, types, the extension's
#      tables with their columns, defaults, constraints, indexes, rights and initial privileges,
#      sequences, event triggers, pg_extension_config_dump state, gpu_routing.* settings) must be
#      equal: any difference fails, and the diff is printed.
#   4. In "from_V", the user objects still work: the view returns the rows of a direct gpu_path
#      call, both functions return the rows of a direct gpu_apsp call, the view over
#      gpu_routing_last_run() answers, gpu_routing_last_run() has D's columns and names the kept
#      graph that served a call, and the kept graphs (made at V and after the update) answer like
#      edges_sql.
#   5. Where the path has more than one step: database "steps_V", updated one step at a time
#      (ALTER EXTENSION gpu_routing UPDATE TO each version of the path), with a kept graph made at
#      each version on the way that has them (0.2.0 on the way from 0.1.0): at D its catalog
#      equals a fresh D's, and every kept graph answers.
#   6. Version V on its own: CREATE EXTENSION gpu_routing VERSION 'V' still works, and its
#      functions run with the library of D; gpu_routing_last_run() returns V's own columns.
# gpu_routing_last_run() has 16 columns at 0.1.0, 17 at 0.2.0 (graph), 19 at 0.3.0 (batch_size,
# wait_ms): last_run_columns below; each version's function must have its count (a version not
# listed there is checked against its own catalog only).
# And: ALTER EXTENSION gpu_routing UPDATE at D is a no-op (same catalog, same version); a database
# with a kept graph survives pg_dump and pg_restore with the graph usable.
#
# Usage: test/upgrade/run.sh [database name prefix]   (default gpu_routing_upgrade)
# Environment: GPU_ROUTING_DATA, the data folder [../shared/data from the repository root].
# Prints "ok - ..." or "FAILED - ..." per check and "N passed, M failed" last; exits 1 on a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
data=${GPU_ROUTING_DATA:-$root/../shared/data}
prefix=${1:-gpu_routing_upgrade}
catalog_sql=$here/catalog.sql
edges="SELECT id, source, target, cost, reverse_cost FROM sample_edges"
# The columns of gpu_routing_last_run() at each version, and the query that counts them.
declare -A last_run_columns=([0.1.0]=16 [0.2.0]=17 [0.3.0]=19 [0.4.0]=19 [0.5.0]=19)
columns_sql="SELECT count(*) FROM pg_proc p, unnest(p.proargmodes) m
             WHERE p.proname = 'gpu_routing_last_run' AND m = 't'"
# The message README's "Upgrading from an older version" quotes, for a view over gpu_routing_last_run().
blocked_message="cannot drop function gpu_routing_last_run() because other objects depend on it"

. "$here/../checks.sh"  # pass, fail, the counts, PGOPTIONS showing warnings and up
# q DB [psql arguments]: checks.sh's q, but for the database named first (this suite uses several).
q() { local db=$1; shift; psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$db" "$@"; }
# catalog DB FILE: the extension's catalog of DB, as catalog.sql lists it.
catalog() { psql -X -q -t -A -F ' | ' -v ON_ERROR_STOP=1 -d "$1" -f "$catalog_sql" >"$2"; }

work=$(mktemp -d /tmp/gpu_routing_upgrade.XXXXXX)
databases=()
cleanup() {
  for db in "${databases[@]}"; do dropdb --if-exists "$db" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
new_db() {
  databases+=("$1")
  dropdb --if-exists "$1" >/dev/null 2>&1 || true
  createdb "$1"
}

if [ ! -f "$data/sample_network.sql" ]; then
  echo "test/upgrade/run.sh: $data/sample_network.sql is missing (set GPU_ROUTING_DATA)" >&2
  exit 2
fi
# The versions the installed files offer.
new_db "${prefix}_fresh"
default=$(q "${prefix}_fresh" -c "SELECT default_version FROM pg_available_extensions WHERE name = 'gpu_routing'")
if [ -z "$default" ]; then
  echo "test/upgrade/run.sh: gpu_routing is not installed on this server" >&2
  exit 2
fi
mapfile -t older < <(q "${prefix}_fresh" -c "SELECT version FROM pg_available_extension_versions
  WHERE name = 'gpu_routing' AND version <> '$default'" | sort -V)
preload=$(q "${prefix}_fresh" -c "SHOW shared_preload_libraries")
case ",${preload// /}," in
  *,gpu_routing,*|*,\$libdir/gpu_routing,*) ;;
  *) echo "# the server does not preload gpu_routing: kept graph checks will fail" ;;
esac
echo "# default version $default; older versions: ${older[*]:-none}"

# --- the fresh install, and UPDATE as a no-op -------------------------------------------------------
fresh=${prefix}_fresh
q "$fresh" -c "CREATE EXTENSION gpu_routing"
catalog "$fresh" "$work/fresh.txt"
if [ "$(grep -c '^member' "$work/fresh.txt")" -gt 0 ] &&
   grep -q "^extension | gpu_routing | $default |" "$work/fresh.txt"; then
  pass "fresh CREATE EXTENSION gpu_routing installs $default ($(grep -c '^member' "$work/fresh.txt") members)"
else
  fail "fresh CREATE EXTENSION gpu_routing" "$(head -n 5 "$work/fresh.txt")"
fi
notice=$(PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=notice" \
  psql -X -q -v ON_ERROR_STOP=1 -d "$fresh" -c "ALTER EXTENSION gpu_routing UPDATE" 2>&1) || true
catalog "$fresh" "$work/fresh_again.txt"
if d=$(diff -u --label "before UPDATE" --label "after UPDATE" "$work/fresh.txt" "$work/fresh_again.txt") &&
   [[ "$notice" == *"version \"$default\" of extension \"gpu_routing\" is already installed"* ]]; then
  pass "ALTER EXTENSION gpu_routing UPDATE at $default is a no-op (notice: already installed; catalog unchanged)"
else
  fail "ALTER EXTENSION gpu_routing UPDATE at $default is not a no-op: $notice" "${d:-}"
fi
default_columns=$(q "$fresh" -c "$columns_sql")
want=${last_run_columns[$default]:-$default_columns}
[ "$default_columns" = "$want" ] && pass "fresh $default: gpu_routing_last_run() has $default_columns columns" \
  || fail "fresh $default: gpu_routing_last_run() has $default_columns columns, want $want"

# --- every older version --------------------------------------------------------------------------
for from in "${older[@]}"; do
  tag=${from//./_}
  updated=${prefix}_from_${tag}

  # 0. The update path: each version ships gpu_routing--A--B.sql from the one before, and
  # ALTER EXTENSION UPDATE follows them all.
  chain=""
  for v in "${older[@]}" "$default"; do
    [ -z "$chain" ] && [ "$v" != "$from" ] && continue
    chain="${chain:+$chain--}$v"
  done
  path=$(q "$fresh" -c "SELECT path FROM pg_extension_update_paths('gpu_routing')
                        WHERE source = '$from' AND target = '$default'")
  if [ "$path" = "$chain" ]; then pass "$from: update path to $default: $path"
  elif [ -n "$path" ]; then fail "$from: the update path to $default is $path, want $chain (one script a version)"
  else fail "$from: no update path to $default (is sql/gpu_routing--A--B.sql installed?)"; fi

  # 1. Install V, fill, make user objects, update.
  new_db "$updated"
  if ! out=$(q "$updated" -c "CREATE EXTENSION gpu_routing VERSION '$from'" -f "$data/sample_network.sql" 2>&1); then
    fail "$from: CREATE EXTENSION gpu_routing VERSION '$from' and the sample network" "$out"
    continue
  fi
  # Kept graphs made before the update, where V has them.
  has_kept=$(q "$updated" -c "SELECT count(*) FROM pg_proc WHERE proname = 'gpu_graph_create'")
  if ! out=$(q "$updated" 2>&1 <<SQL
CREATE VIEW upgrade_path AS SELECT * FROM gpu_path('$edges', 6, 10);
CREATE FUNCTION upgrade_apsp_sql() RETURNS TABLE (start_vid bigint, end_vid bigint, agg_cost float8)
LANGUAGE sql BEGIN ATOMIC
  SELECT a.start_vid, a.end_vid, a.agg_cost FROM gpu_apsp('$edges', true) a;
END;
CREATE FUNCTION upgrade_apsp_plpgsql(directed boolean) RETURNS SETOF record LANGUAGE plpgsql AS \$\$
BEGIN
  RETURN QUERY SELECT a.start_vid, a.end_vid, a.agg_cost FROM gpu_apsp('$edges', directed) a;
END \$\$;
$([ "$has_kept" -gt 0 ] && echo "SELECT gpu_graph_create('before_update', '$edges ORDER BY id');")
SQL
  ); then
    fail "$from: user objects over version $from (view, functions, kept graph)" "$out"
    continue
  fi
  pass "$from: installed, with a view over gpu_path, SQL and PL/pgSQL functions calling gpu_apsp$([ "$has_kept" -gt 0 ] && echo ", a kept graph")"
  # A view over gpu_routing_last_run() stops an update that drops the function (README).
  from_columns=$(q "$updated" -c "$columns_sql")
  last_run_view="CREATE VIEW upgrade_last_run AS SELECT function, device, total_ms FROM gpu_routing_last_run()"
  q "$updated" -c "$last_run_view"
  if [ "$from_columns" != "$default_columns" ]; then
    out=$(q "$updated" -c "ALTER EXTENSION gpu_routing UPDATE" 2>&1) && blocked=no || blocked=yes
    at=$(q "$updated" -c "SELECT extversion FROM pg_extension WHERE extname = 'gpu_routing'")
    if [ "$blocked" = yes ] && [[ "$out" == *"$blocked_message"* ]] && [ "$at" = "$from" ]; then
      pass "$from: a view over gpu_routing_last_run() ($from_columns -> $default_columns columns) stops the update: \"$blocked_message\"; the database stays at $from"
    else
      fail "$from: a view over gpu_routing_last_run() and the update (want: \"$blocked_message\", version $from; got version $at)" "$out"
    fi
    q "$updated" -c "DROP VIEW IF EXISTS upgrade_last_run"
  fi
  if out=$(q "$updated" -c "ALTER EXTENSION gpu_routing UPDATE" \
             -c "SELECT extversion FROM pg_extension WHERE extname = 'gpu_routing'" 2>&1) &&
     [ "$out" = "$default" ]; then
    pass "$from: ALTER EXTENSION gpu_routing UPDATE goes to $default with the user objects in place$(
      [ "$from_columns" != "$default_columns" ] && echo " (the view over gpu_routing_last_run() dropped)")"
  else
    fail "$from: ALTER EXTENSION gpu_routing UPDATE" "$out"
    continue
  fi
  [ "$from_columns" = "$default_columns" ] || q "$updated" -c "$last_run_view"
  if out=$(q "$updated" -c "SELECT gpu_graph_create('after_update', '$edges')" 2>&1); then
    pass "$from: gpu_graph_create after the update: $out"
  else
    fail "$from: gpu_graph_create after the update" "$out"
  fi

  # 3. The catalogs.
  catalog "$updated" "$work/updated_$tag.txt"
  if d=$(diff -u --label "updated from $from" --label "fresh $default" "$work/updated_$tag.txt" "$work/fresh.txt"); then
    pass "$from: catalog after UPDATE equals a fresh $default ($(wc -l <"$work/fresh.txt") lines: members, functions, types, tables, event triggers, settings, config dump)"
  else
    fail "$from: catalog after UPDATE differs from a fresh $default (- updated, + fresh)" "$d"
  fi

  # 4. The user objects still work, and the kept graphs answer.
  view=$(q "$updated" -c "SELECT (SELECT count(*) FROM upgrade_path) || ' ' || (
      SELECT count(*) FROM ((TABLE upgrade_path EXCEPT ALL SELECT * FROM gpu_path('$edges', 6, 10))
                  UNION ALL (SELECT * FROM gpu_path('$edges', 6, 10) EXCEPT ALL TABLE upgrade_path)) d)
      || ' ' || (SELECT agg_cost FROM upgrade_path WHERE edge = -1)" 2>&1) || true
  [ "$view" = "6 0 5" ] && pass "$from: the view over gpu_path returns the rows of a direct call (6 rows, agg_cost 5)" \
    || fail "$from: the view over gpu_path (rows, differences, agg_cost: want 6 0 5)" "$view"
  funcs=$(q "$updated" -c "WITH direct AS (SELECT * FROM gpu_apsp('$edges', true)),
      s AS (SELECT * FROM upgrade_apsp_sql()),
      p AS (SELECT * FROM upgrade_apsp_plpgsql(true) AS t(start_vid bigint, end_vid bigint, agg_cost float8))
    SELECT (SELECT count(*) FROM direct) || ' ' || (SELECT count(*) FROM s) || ' ' || (SELECT count(*) FROM p)
      || ' ' || (SELECT count(*) FROM ((TABLE s EXCEPT ALL TABLE direct) UNION ALL (TABLE direct EXCEPT ALL TABLE s)
                                        UNION ALL (TABLE p EXCEPT ALL TABLE direct) UNION ALL (TABLE direct EXCEPT ALL TABLE p)) d)" 2>&1) || true
  read -r n_direct n_sql n_plpgsql n_diff <<<"$funcs" || true
  if [[ "${n_direct:-}" =~ ^[0-9]+$ ]] && [ "$n_direct" -gt 0 ] && [ "$n_sql" = "$n_direct" ] &&
     [ "$n_plpgsql" = "$n_direct" ] && [ "$n_diff" = 0 ]; then
    pass "$from: the SQL and PL/pgSQL functions calling gpu_apsp return its $n_direct rows"
  else
    fail "$from: the functions calling gpu_apsp (direct, sql, plpgsql, differences)" "$funcs"
  fi
  got=$(q "$updated" -c "SELECT count(*) FROM gpu_path('$edges', 6, 10)" \
          -c "SELECT function FROM upgrade_last_run" 2>&1) || true
  [ "$got" = $'6\ngpu_path' ] && pass "$from: the view over gpu_routing_last_run()$(
      [ "$from_columns" != "$default_columns" ] && echo ", created again after the update," || echo " kept over the update") answers" \
    || fail "$from: the view over gpu_routing_last_run() after the update (want 6, gpu_path)" "$got"
  columns=$default_columns
  kept=$(q "$updated" 2>&1 <<SQL
SELECT agg_cost FROM gpu_path('graph:after_update', 6, 10) WHERE edge = -1;
SELECT (SELECT count(*) FROM json_object_keys(row_to_json(r))) || ' ' || coalesce(r.graph, '<null>')
FROM gpu_routing_last_run() r;
SELECT agg_cost FROM gpu_path('$edges', 6, 10) WHERE edge = -1;
SELECT coalesce(graph, '<null>') FROM gpu_routing_last_run();
SELECT string_agg(name, ',' ORDER BY name) FROM gpu_graphs();
SQL
  ) || true
  names=after_update
  [ "$has_kept" -gt 0 ] && names="after_update,before_update"
  want=$(printf '%s\n' 5 "$columns after_update" 5 after_update "$names")
  if [ "$kept" = "$want" ]; then
    pass "$from: the kept graph answers (agg_cost 5); gpu_routing_last_run() has $columns columns and names it; a call with its edges_sql is served by it"
  else
    fail "$from: kept graph and gpu_routing_last_run() after the update (< want, > got)" "$(diff <(echo "$want") <(echo "$kept") || true)"
  fi
  if [ "$has_kept" -gt 0 ]; then
    before=$(q "$updated" -c "SELECT agg_cost FROM gpu_path('graph:before_update', 6, 10) WHERE edge = -1" 2>&1) || true
    [ "$before" = 5 ] && pass "$from: the kept graph made before the update answers (agg_cost 5)" \
      || fail "$from: the kept graph made before the update" "$before"
  fi

  # 5. One step at a time, with a kept graph made at each version on the way that has them.
  read -r -a steps <<<"${path//--/ }"
  if [ "${#steps[@]}" -gt 2 ]; then
    stepwise=${prefix}_steps_${tag}
    new_db "$stepwise"
    bad=""
    made=()
    q "$stepwise" -c "CREATE EXTENSION gpu_routing VERSION '$from'" -f "$data/sample_network.sql" >/dev/null 2>&1 \
      || bad="CREATE EXTENSION gpu_routing VERSION '$from' failed"
    for v in "${steps[@]}"; do
      [ -z "$bad" ] || break
      if [ "$v" != "$from" ]; then
        out=$(q "$stepwise" -c "ALTER EXTENSION gpu_routing UPDATE TO '$v'" \
                -c "SELECT extversion FROM pg_extension WHERE extname = 'gpu_routing'" 2>&1) || true
        [ "$out" = "$v" ] || { bad="UPDATE TO '$v': $out"; break; }
      fi
      [ "$v" != "$default" ] || break
      if [ "$(q "$stepwise" -c "SELECT count(*) FROM pg_proc WHERE proname = 'gpu_graph_create'")" -gt 0 ]; then
        out=$(q "$stepwise" -c "SELECT gpu_graph_create('made_at_${v//./_}', '$edges')" 2>&1) \
          || { bad="gpu_graph_create at $v: $out"; break; }
        made+=("made_at_${v//./_}")
      fi
    done
    if [ -z "$bad" ]; then
      pass "$from: updated one step at a time (${steps[*]}), kept graphs made on the way: ${made[*]:-none}"
      catalog "$stepwise" "$work/steps_$tag.txt"
      if d=$(diff -u --label "updated from $from step by step" --label "fresh $default" "$work/steps_$tag.txt" "$work/fresh.txt"); then
        pass "$from: catalog after the updates step by step equals a fresh $default"
      else
        fail "$from: catalog after the updates step by step differs from a fresh $default (- updated, + fresh)" "$d"
      fi
      want="" got=""
      for g in "${made[@]}"; do
        want+="$g 5"$'\n'
        got+="$g $(q "$stepwise" -c "SELECT agg_cost FROM gpu_path('graph:$g', 6, 10) WHERE edge = -1" 2>&1 | head -n 3)"$'\n'
      done
      listed=$(q "$stepwise" -c "SELECT string_agg(name, ',' ORDER BY name) FROM gpu_graphs()" 2>&1) || true
      want+="listed: $(IFS=,; echo "${made[*]}")"
      got+="listed: $listed"
      if [ "$got" = "$want" ]; then
        [ "${#made[@]}" -eq 0 ] || pass "$from: the kept graphs made on the way answer at $default (agg_cost 5): ${made[*]}"
      else
        fail "$from: the kept graphs made on the way, at $default (< want, > got)" "$(diff <(echo "$want") <(echo "$got") || true)"
      fi
    else
      fail "$from: updating one step at a time (${steps[*]})" "$bad"
    fi
  fi

  # 6. Version V alone, with this library.
  old=${prefix}_old_${tag}
  new_db "$old"
  out=$(q "$old" -c "CREATE EXTENSION gpu_routing VERSION '$from'" -f "$data/sample_network.sql" \
          -c "SELECT extversion FROM pg_extension WHERE extname = 'gpu_routing'" 2>&1) || true
  if [ "$out" = "$from" ]; then
    pass "$from: CREATE EXTENSION gpu_routing VERSION '$from' still works"
  else
    fail "$from: CREATE EXTENSION gpu_routing VERSION '$from'" "$out"
    continue
  fi
  old_columns=$(q "$old" -c "$columns_sql")
  want=${last_run_columns[$from]:-$old_columns}
  [ "$old_columns" = "$want" ] || bad_columns="gpu_routing_last_run() of $from declares $old_columns columns, want $want"$'\n'
  # Each function of V once, on the sample network; the expected values are pgRouting's.
  checks=(
    "gpu_path one-to-one|SELECT agg_cost FROM gpu_path('$edges', 6, 10) WHERE edge = -1|5"
    "gpu_path many-to-many|SELECT count(*) FROM gpu_path('$edges', ARRAY[6, 7], ARRAY[10, 12]) WHERE edge = -1|4"
    "gpu_path combinations|SELECT count(*) FROM gpu_path('$edges', 'SELECT 6 AS source, 10 AS target') WHERE edge = -1|1"
    "gpu_sssp|SELECT distance FROM gpu_sssp('$edges', 6) WHERE node = 10|5"
    "gpu_sssp many|SELECT count(*) FROM gpu_sssp('$edges', ARRAY[6, 7]::bigint[]) WHERE node = 10|2"
    "gpu_apsp|SELECT agg_cost FROM gpu_apsp('$edges') WHERE start_vid = 6 AND end_vid = 10|5"
    "gpu_apsp matrix|SELECT agg_cost FROM gpu_apsp('$edges', ARRAY[6]::bigint[], ARRAY[10]::bigint[])|5"
    "gpu_routing_info|SELECT value FROM gpu_routing_info() WHERE name = 'version'|$default"
  )
  bad=${bad_columns:-}
  bad_columns=""
  for check in "${checks[@]}"; do
    IFS='|' read -r name sql want <<<"$check"
    got=$(q "$old" -c "$sql" 2>&1 | head -n 3) || true
    [ "$got" = "$want" ] || bad="$bad$name: want $want, got $got"$'\n'
  done
  got=$(q "$old" -c "SELECT 1 FROM gpu_path('$edges', 6, 10) LIMIT 1" \
          -c "SELECT count(*) FROM json_object_keys((SELECT row_to_json(r) FROM gpu_routing_last_run() r))" 2>&1 | tail -n 1) || true
  [ "$got" = "$old_columns" ] || bad="${bad}gpu_routing_last_run: want $old_columns columns, got $got"$'\n'
  if [ -z "$bad" ]; then
    pass "$from: its functions run with the $default library (gpu_path, gpu_sssp, gpu_apsp, gpu_routing_info; gpu_routing_last_run returns $old_columns columns)"
  else
    fail "$from: functions of version $from with the $default library" "${bad%$'\n'}"
  fi
done

# --- pg_dump and pg_restore ------------------------------------------------------------------------
# The registry and its sequence are dumped; pg_restore's ALTER TABLE ... ADD CONSTRAINT, OWNER and
# ENABLE ALWAYS TRIGGER after the data must not make the restored graphs unusable; the change
# tracking trigger comes back with the tables.
dumped=${prefix}_dumped
restored=${prefix}_restored
new_db "$dumped"
new_db "$restored"
q "$dumped" -c "CREATE EXTENSION gpu_routing" -f "$data/sample_network.sql" \
  -c "CREATE INDEX ON sample_edges (source)" -c "COMMENT ON TABLE sample_edges IS 'kept'" \
  -c "SELECT gpu_graph_create('dumped', '$edges')" >/dev/null
pg_dump -Fc -f "$work/dump" "$dumped"
restore_log=$(pg_restore --exit-on-error -d "$restored" "$work/dump" 2>&1) || fail "pg_restore" "$restore_log"
got=$(q "$restored" -c "SELECT name || ' ' || state || ' ' || coalesce(note, 'usable') FROM gpu_graphs() WHERE state <> 'unusable'" \
        -c "SELECT agg_cost FROM gpu_path('graph:dumped', 6, 10) WHERE edge = -1" \
        -c "SELECT gpu_graph_create('after_restore', 'SELECT id, source, target, cost FROM sample_edges') IS NOT NULL" \
        -c "UPDATE sample_edges SET cost = 3 * cost, reverse_cost = 3 * reverse_cost" \
        -c "SELECT agg_cost FROM gpu_path('graph:dumped', 6, 10) WHERE edge = -1" \
        -c "SELECT name FROM gpu_graphs() ORDER BY name" 2>&1) || true
want="dumped not built built on first use (after a restart, an eviction or a refresh)
5
t
15
after_restore
dumped"
if [ "$got" = "$want" ]; then
  pass "pg_dump and pg_restore: the kept graph is restored usable, answers, sees later changes; a new one can be made"
else
  fail "pg_dump and pg_restore (< want, > got)" "$(diff <(echo "$want") <(echo "$got") || true)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The reference check: every setting and every function of gpu_routing is named in the reference
# page, so that a new one cannot ship undocumented. Against a running server with gpu_routing in
# shared_preload_libraries (so that every gpu_routing.* setting is defined in every session) and a
# database where the extension is created (PGHOST, PGPORT, PGUSER from the environment), it reads
#   - every gpu_routing.* setting of pg_settings;
#   - every function that belongs to the extension (pg_depend deptype 'e' on pg_proc), in any
#     schema, overloads counted once;
# and looks each up in the page (default docs/reference.md) as a whole word, ignoring case
# (pgr_dijkstraCost is stored as pgr_dijkstracost):
#   - a setting by its full name, gpu_routing.NAME;
#   - a function of the extension's own schema by its plain name;
#   - a function of another schema (gpu_pgr, pgRouting's names) by SCHEMA.NAME or its plain name;
#     the schema itself must then be named on the page too.
# Functions whose name starts with an underscore are internal helpers (pgRouting's convention,
# _pgr_*): not looked up, but listed ("internal, not checked: ...") and counted in the summary.
# Each one missing is printed ("missing: setting gpu_routing.x", "missing: function public.f"),
# and the exit status is 1 if any is. It cannot pass on nothing: no server, no extension in the
# database, an extension older than the installed default version, gpu_routing not preloaded, no
# gpu_routing.* setting or no function found, or a page that is missing or empty are failures too
# (exit 2, with the reason).
# Usage:
#   test/docs/reference_check.sh [--page FILE] [DATABASE]
#     --page FILE  the markdown page to check [docs/reference.md, relative to the repository root]
#     DATABASE     a database where gpu_routing is created [$PGDATABASE, else gpu_routing_test]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
page=docs/reference.md
database=${PGDATABASE:-gpu_routing_test}
while [ $# -gt 0 ]; do
  case "$1" in
    --page) page=${2:?--page needs a file}; shift 2 ;;
    --page=*) page=${1#--page=}; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "reference_check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    *) database=$1; shift ;;
  esac
done
# A relative page is the repository's; from anywhere else, give a path that exists from here.
[ -f "$page" ] || [ "${page#/}" != "$page" ] || page=$root/$page
cannot() { echo "reference_check.sh: FAIL: $*" >&2; exit 2; }
[ -f "$page" ] || cannot "the page $page does not exist"
[ -s "$page" ] || cannot "the page $page is empty"

q() { psql -X -q -t -A -v ON_ERROR_STOP=1 -d "$database" -c "$1"; }
version=$(q "SELECT extversion FROM pg_extension WHERE extname = 'gpu_routing'" 2>&1) \
  || cannot "cannot read database \"$database\": $version"
[ -n "$version" ] || cannot "gpu_routing is not created in database \"$database\" (CREATE EXTENSION gpu_routing)"
default=$(q "SELECT default_version FROM pg_available_extensions WHERE name = 'gpu_routing'")
[ "$version" = "$default" ] ||
  cannot "database \"$database\" has gpu_routing $version, the installed default is $default: its functions are not this version's (ALTER EXTENSION gpu_routing UPDATE)"
preload=$(q "SHOW shared_preload_libraries")
settings=$(q "SELECT name FROM pg_settings WHERE name LIKE 'gpu\_routing.%' ORDER BY name")
if ! grep -qwE 'gpu_routing' <<<"${preload//,/ }"; then
  cannot "gpu_routing is not in shared_preload_libraries (it is '$preload'): the gpu_routing.* settings are defined only in sessions that have loaded the library, so pg_settings may lack some ($(grep -c . <<<"$settings" || true) found here); add shared_preload_libraries = 'gpu_routing' and restart"
fi
[ -n "$settings" ] || cannot "no gpu_routing.* setting in pg_settings although gpu_routing is preloaded: the library defined none"

# schema|name|the extension's own schema (t/f), one row per name.
functions=$(q "SELECT DISTINCT n.nspname || '|' || p.proname || '|' || (n.oid = e.extnamespace)::text
  FROM pg_extension e
  JOIN pg_depend d ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid AND d.deptype = 'e'
                  AND d.classid = 'pg_proc'::regclass
  JOIN pg_proc p ON p.oid = d.objid
  JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE e.extname = 'gpu_routing'
  ORDER BY 1")
[ -n "$functions" ] || cannot "no function belongs to gpu_routing in database \"$database\" (pg_depend)"

# Whole words as grep -w sees them (letters, digits and _), case ignored, literal text.
named() { grep -qiwF -- "$1" "$page"; }
missing=0
setting_count=0
function_count=0
internal=""
while IFS= read -r setting; do
  setting_count=$((setting_count + 1))
  named "$setting" || { echo "missing: setting $setting"; missing=$((missing + 1)); }
done <<<"$settings"
other_schemas=""
while IFS='|' read -r schema name own; do
  if [ "${name#_}" != "$name" ]; then internal+=" $schema.$name"; continue; fi
  function_count=$((function_count + 1))
  if [ "$own" = true ]; then
    named "$name" || { echo "missing: function $schema.$name"; missing=$((missing + 1)); }
  else
    grep -qxF "$schema" <<<"$other_schemas" || other_schemas+="$schema"$'\n'
    { named "$schema.$name" || named "$name"; } ||
      { echo "missing: function $schema.$name (as $schema.$name or $name)"; missing=$((missing + 1)); }
  fi
done <<<"$functions"
schema_count=0
while IFS= read -r schema; do
  [ -n "$schema" ] || continue
  schema_count=$((schema_count + 1))
  named "$schema" || { echo "missing: schema $schema (it holds functions of the extension)"; missing=$((missing + 1)); }
done <<<"$other_schemas"

[ "$function_count" -gt 0 ] || cannot "every function of gpu_routing starts with an underscore: nothing to check"
[ -z "$internal" ] || echo "internal, not checked:$internal"
summary="$setting_count settings, $function_count functions"
[ "$schema_count" = 0 ] || summary+=" and $schema_count other schema(s)"
[ -z "$internal" ] || summary+=" ($(wc -w <<<"$internal") internal ones not checked)"
summary+=" of gpu_routing $version (database $database) against ${page#"$root"/}"
if [ "$missing" -gt 0 ]; then
  echo "reference_check.sh: FAIL: $missing missing; checked $summary"
  exit 1
fi
echo "reference_check.sh: ok: $summary, every one named"

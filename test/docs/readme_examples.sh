#!/usr/bin/env bash
# The docs test: runs the examples of README.md and of every page under docs/ (docs/results aside)
# as a reader would, so that the docs cannot drift from the code. Against a running cluster with
# the extension installed and preloaded (the PGHOST, PGPORT, PGUSER variables), it fills a template
# database the way the README's playground is filled (scripts/playground.sh load: gpu_routing,
# pgrouting where installed, the table edges, New York), and for each page, in turn, makes a fresh
# database from it, so that no page's examples see another's; then:
#   - every ```sql block of the page, in order, each in a psql session of its own with
#     ON_ERROR_STOP (tables persist from block to block, settings do not); a ```text block right
#     after one (blank lines between at most) is its expected output, psql's aligned output, and
#     must match it line for line (trailing blanks and blank last lines ignored);
#   - every ```console block of the page, in order: each "$ " line is a command (a trailing
#     backslash continues it), run by bash in a scratch folder where scripts/ and client/ are the
#     repository's, one shell per block. It must exit with status 0, and the lines under it, if
#     any, are its expected output (standard output and error together): a line "..." stands for
#     any number of lines, and times ("12.3 ms", "31.2 s") are not compared. These run with
#     gpu_routing.device = cpu and gpu_routing.threads = 2, the development machine the outputs
#     were taken on.
#   - every ```cpp block must be client/examples/ny_example.cpp, whole or a contiguous part of it
#     (docs/client.md has a console block that compiles and runs that file);
#   - every relative link and #anchor of those pages resolves (test/docs/check_links.py).
# Not run: indented blocks (shell lines inside the prose), ```sh blocks (installing, building,
# starting clusters: the steps that lead here, which this test takes through scripts/playground.sh
# load), ```text blocks other than expected outputs (function signatures go in ```text blocks).
# Markers, on the line right before a block (blank lines between are allowed):
#   <!-- docs-test: output not compared: REASON -->  the block runs, its output is not compared;
#   <!-- docs-test: not run: REASON -->              the block does not run here (it needs a GPU,
#                                                    a standby, another server, ...).
# The REASON is required and the log prints it for each such block; a marker without one, or of
# another kind, fails the test.
# Every failing block is printed with its file, line and text and what went wrong; every block
# runs, and the exit status is 1 if any failed.
# Usage:
#   test/docs/readme_examples.sh [--sql-only] [--client-build DIR] [--keep] [FILE.md ...]
#     --sql-only          sql blocks only: no New York, no gpu-route (the log says so)
#     --client-build DIR  gpu-route and libgpu_routing_client from this CMake build folder (e.g.
#                         build/test) instead of the installed ones (scripts/install_client.sh)
#     --keep              keep the databases (their names are printed)
#     FILE.md ...         only these pages [README.md and docs/*.md]
# Environment: GPU_ROUTING_DATA, the data folder for New York [../shared/data].
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
sql_only=no
client_build=
keep=no
pages=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sql-only) sql_only=yes; shift ;;
    --client-build) client_build=$(cd "${2:?--client-build needs a folder}" && pwd); shift 2 ;;
    --keep) keep=yes; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "readme_examples.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    *) pages+=("$1"); shift ;;
  esac
done
export GPU_ROUTING_DATA=${GPU_ROUTING_DATA:-$root/../shared/data}

if [ -n "$client_build" ]; then
  [ -x "$client_build/client/gpu-route" ] || {
    echo "readme_examples.sh: $client_build/client/gpu-route is missing (build target gpu-route)" >&2
    exit 2
  }
  export PATH="$client_build/client:$PATH"
  export CPLUS_INCLUDE_PATH="$root/client/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"
fi
if [ "$sql_only" = no ] && ! command -v gpu-route >/dev/null; then
  echo "readme_examples.sh: gpu-route is not on the PATH: install it (scripts/install_client.sh)," \
    "or give --client-build DIR, or --sql-only" >&2
  exit 2
fi

work=$(mktemp -d /tmp/gpu_routing_docs.XXXXXX)
template=gpu_routing_docs_$$
databases=("$template")
cleanup() {
  rm -rf "$work"
  if [ "$keep" = no ]; then
    for db in "${databases[@]}"; do dropdb --if-exists "$db" 2>/dev/null || true; done
  fi
}
trap cleanup EXIT

if [ ${#pages[@]} -eq 0 ]; then
  pages=(README.md)
  for page in docs/*.md; do pages+=("$page"); done
fi
for page in "${pages[@]}"; do
  [ -f "$page" ] || { echo "readme_examples.sh: no page $page" >&2; exit 2; }
done

echo "== docs test: ${#pages[@]} pages; template database $template, filled as scripts/playground.sh does"
load_options=()
[ "$sql_only" = yes ] && load_options=(--no-ny)
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $template"
if ! scripts/playground.sh load "${load_options[@]}" "$template" 2>&1 | sed 's/^/  /'; then
  echo "FAIL: the database could not be filled as scripts/playground.sh load fills it"
  exit 1
fi

# Cuts the fenced blocks of a markdown file into $work/blocks/<prefix>.<n>.<kind>, with
# <n>.where (file:line, a tab and the text of a docs-test marker) and, for a ```sql block followed
# by a ```text block, <n>.expected.
split_blocks() {
  local file=$1 prefix=$2
  awk -v prefix="$prefix" -v file="$file" '
    /^```/ && !open {
      kind = substr($0, 4); sub(/[ \t].*/, "", kind)
      open = 1; start = NR
      if (kind == "text" && pending_sql != "") { out = pending_sql ".expected"; pending_sql = ""; next }
      n++
      name = sprintf("%s.%03d", prefix, n)
      out = name "." (kind == "" ? "plain" : kind)
      printf "%s:%d\t%s\n", file, NR, note > (name ".where")
      close(name ".where")
      note = ""
      if (kind == "sql") pending_sql = name; else pending_sql = ""
      printf "" > out
      next
    }
    /^```/ && open { open = 0; close(out); next }
    open { print > out; next }
    /^<!-- docs-test: .* -->$/ { note = $0; sub(/^<!-- docs-test: /, "", note); sub(/ -->$/, "", note); next }
    /^[ \t]*$/ { next }
    { note = ""; pending_sql = "" }
  ' "$file"
}

mkdir -p "$work/blocks" "$work/run"
if [ -n "$client_build" ]; then
  # The example program links the build's library, not one a package put in /usr/lib (whose
  # structs may differ from the build's header). Debian's GCC reads a LIBRARY_PATH entry D as
  # D/../lib (multiarch), and /usr/lib before it otherwise: hence a folder named lib.
  mkdir -p "$work/lib"
  ln -s "$client_build/client/libgpu_routing_client.a" "$work/lib/libgpu_routing_client.a"
  export LIBRARY_PATH="$work/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
fi
ln -s "$root/scripts" "$work/run/scripts"
ln -s "$root/client" "$work/run/client"

failures=0
summary=()
fail_block() {  # fail_block WHERE BLOCKFILE MESSAGE DETAILFILE
  failures=$((failures + 1))
  echo "FAIL $1: $3"
  echo "  --- the block:"
  sed 's/^/  | /' "$2"
  if [ -n "${4:-}" ] && [ -s "$4" ]; then
    echo "  --- what happened:"
    sed 's/^/  > /' "$4"
  fi
}

# Lines as compared: trailing blanks and blank last lines dropped, times masked.
normalize() {
  sed -E 's/[ \t]+$//; s/[0-9]+(\.[0-9]+)? (ms|s)\b/<time> \2/g' "$1" | perl -0777 -pe 's/\n+\z/\n/'
}

# matches EXPECTED ACTUAL: the lines of ACTUAL against EXPECTED, where "..." is any lines.
matches() {
  perl -e '
    sub lines { my ($f) = @_; open(my $h, "<", $f) or die; my @l = <$h>; chomp @l; pop @l while @l && $l[-1] eq ""; return \@l }
    my ($e, $a) = (lines($ARGV[0]), lines($ARGV[1]));
    sub m_ { my ($i, $j) = @_;
      return $j == @$a if $i == @$e;
      if ($e->[$i] eq "...") { for (my $k = $j; $k <= @$a; $k++) { return 1 if m_($i + 1, $k) } return 0 }
      return $j < @$a && $e->[$i] eq $a->[$j] && m_($i + 1, $j + 1) }
    exit(m_(0, 0) ? 0 : 1)' "$1" "$2"
}

# compare_to_doc WHERE BLOCKFILE DOCUMENTED ACTUAL DIFFFILE: ACTUAL's output against the
# documented one (both normalized); a difference fails the block with the diff in DIFFFILE.
compare_to_doc() {
  normalize "$3" >"$3.n"
  normalize "$4" >"$4.n"
  if ! matches "$3.n" "$4.n"; then
    diff -u "$3.n" "$4.n" | tail -n +3 >"$5" || true
    fail_block "$1" "$2" "the output differs from the documented one (- documented, + actual)" "$5"
  fi
}

# marker BLOCKBASE: prints "compare", "no-compare" or "skip" for the block's docs-test marker,
# logging its reason; a marker of another kind, or without a reason, fails the block.
marker() {
  local base=$1 ext=$2 where note
  where=$(cut -f1 "$base.where")
  note=$(cut -f2 "$base.where")
  case "$note" in
    "") echo compare ;;
    "output not compared: "?*) echo "  $where: output not compared (${note#output not compared: })" >&2; echo no-compare ;;
    "not run: "?*) echo "  $where: not run (${note#not run: })" >&2; echo skip ;;
    *) echo "the marker <!-- docs-test: $note --> is neither 'output not compared: REASON' nor 'not run: REASON'" >"$base.why"
       fail_block "$where" "$base.$ext" "a docs-test marker without a reason, or of an unknown kind" "$base.why" >&2
       echo bad ;;
  esac
}

sql_total=0; sql_compared_total=0; sql_skipped=0
cpp_blocks=0
console_blocks=0; commands=0; compared=0; console_skipped=0
pageno=0
for page in "${pages[@]}"; do
  pageno=$((pageno + 1))
  prefix="$work/blocks/p$(printf %02d $pageno)"
  split_blocks "$page" "$prefix"
  have_sql=no; have_console=no
  ls "$prefix".*.sql >/dev/null 2>&1 && have_sql=yes
  [ "$sql_only" = no ] && ls "$prefix".*.console >/dev/null 2>&1 && have_console=yes
  database=
  if [ $have_sql = yes ] || [ $have_console = yes ]; then
    database=${template}_$pageno
    databases+=("$database")
    psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $database" \
      -c "CREATE DATABASE $database TEMPLATE $template"
  fi
  bad_before=$failures

  # --- sql blocks.
  sql_blocks=0; sql_compared=0
  for block in "$prefix".*.sql; do
    [ -e "$block" ] || continue
    base=${block%.sql}
    where=$(cut -f1 "$base.where")
    how=$(marker "$base" sql) || true
    [ "$how" = bad ] && { failures=$((failures + 1)); continue; }
    if [ "$how" = skip ]; then sql_skipped=$((sql_skipped + 1)); continue; fi
    sql_blocks=$((sql_blocks + 1))
    if ! psql -X -q -v ON_ERROR_STOP=1 -d "$database" -f "$block" >"$base.out" 2>&1; then
      fail_block "$where" "$block" "psql stopped with an error" "$base.out"
      continue
    fi
    if [ -e "$base.expected" ] && [ "$how" = compare ]; then
      sql_compared=$((sql_compared + 1))
      compare_to_doc "$where" "$block" "$base.expected" "$base.out" "$base.diff"
    fi
  done
  sql_total=$((sql_total + sql_blocks)); sql_compared_total=$((sql_compared_total + sql_compared))

  # --- cpp blocks: parts of the example program.
  for block in "$prefix".*.cpp; do
    [ -e "$block" ] || continue
    cpp_blocks=$((cpp_blocks + 1))
    base=${block%.cpp}
    if ! perl -0777 -e 'open(my $a, "<", $ARGV[0]); open(my $b, "<", $ARGV[1]); my ($x, $y) = (<$a>, <$b>);
                        exit(index($y, $x) >= 0 ? 0 : 1)' "$block" client/examples/ny_example.cpp; then
      diff -u "$block" client/examples/ny_example.cpp | tail -n +3 >"$base.diff" || true
      fail_block "$(cut -f1 "$base.where")" "$block" \
        "not a part of client/examples/ny_example.cpp (- block, + the file)" "$base.diff"
    fi
  done

  # --- console blocks.
  page_console=0
  if [ $have_console = yes ]; then
    for block in "$prefix".*.console; do
      [ -e "$block" ] || continue
      base=${block%.console}
      where=$(cut -f1 "$base.where")
      how=$(marker "$base" console) || true
      [ "$how" = bad ] && { failures=$((failures + 1)); continue; }
      if [ "$how" = skip ]; then console_skipped=$((console_skipped + 1)); continue; fi
      console_blocks=$((console_blocks + 1)); page_console=$((page_console + 1))
      # Commands and their documented outputs: $base.cmd.<i>, $base.doc.<i>.
      awk -v base="$base" '
        continued { cmd = cmd "\n" $0; continued = /\\$/; if (!continued) print cmd > (base ".cmd." n); next }
        /^\$ / { n++; cmd = substr($0, 3); printf "" > (base ".doc." n); continued = /\\$/;
                 if (!continued) print cmd > (base ".cmd." n); next }
        n { print > (base ".doc." n) }
      ' "$block"
      count=$(find "$work/blocks" -name "$(basename "$base").cmd.*" | wc -l)
      # One shell for the block: each command's output and status go to files of their own.
      script="$base.sh"
      : >"$script"
      for i in $(seq 1 "$count"); do
        { printf '{\n'; cat "$base.cmd.$i"; printf '\n} >%q 2>&1 </dev/null\necho $? >%q\n' "$base.got.$i" "$base.rc.$i"; } >>"$script"
      done
      (cd "$work/run" && PGDATABASE=$database \
        PGOPTIONS="${PGOPTIONS:-} -c gpu_routing.device=cpu -c gpu_routing.threads=2" bash "$script") >/dev/null 2>&1 || true
      for i in $(seq 1 "$count"); do
        commands=$((commands + 1))
        rc=$(cat "$base.rc.$i" 2>/dev/null || echo "not run")
        if [ "$rc" != 0 ]; then
          { echo "exit status $rc"; cat "$base.got.$i" 2>/dev/null; } >"$base.why.$i"
          fail_block "$where" "$base.cmd.$i" "the command failed" "$base.why.$i"
          continue
        fi
        if [ -s "$base.doc.$i" ] && [ "$how" = compare ]; then
          compared=$((compared + 1))
          compare_to_doc "$where" "$base.cmd.$i" "$base.doc.$i" "$base.got.$i" "$base.diff.$i"
        fi
      done
    done
  fi
  status=ok; [ $failures -gt $bad_before ] && status="$((failures - bad_before)) failed"
  echo "  $page: $sql_blocks sql blocks run ($sql_compared outputs compared), $page_console console blocks: $status"
  if [ -n "$database" ] && [ "$keep" = no ]; then dropdb --if-exists "$database" 2>/dev/null || true; fi
done
summary+=("sql blocks: $sql_total run, $sql_compared_total outputs compared, $sql_skipped not run here (marked)")
summary+=("cpp blocks: $cpp_blocks checked against client/examples/ny_example.cpp")
if [ "$sql_only" = yes ]; then
  summary+=("console blocks: not run (--sql-only)")
else
  summary+=("console blocks: $console_blocks blocks, $commands commands run, $compared outputs compared, $console_skipped not run here (marked)")
fi

# --- links.
if python3 test/docs/check_links.py "${pages[@]}" >"$work/links.out" 2>&1; then
  summary+=("$(tail -n 1 "$work/links.out")")
else
  failures=$((failures + 1))
  echo "FAIL: broken links"
  sed 's/^/  > /' "$work/links.out"
  summary+=("$(tail -n 1 "$work/links.out")")
fi

echo "== docs test"
printf '  %s\n' "${summary[@]}"
[ "$keep" = yes ] && echo "  databases ${databases[*]} kept"
if [ "$failures" -gt 0 ]; then
  echo "  $failures failed"
  exit 1
fi
echo "  all passed"

#!/usr/bin/env bash
# The docs test: runs the examples of README.md and docs/client.md as a reader would, so that the
# docs cannot drift from the code. Against a running cluster with the extension installed (the
# PGHOST, PGPORT, PGUSER variables), it creates a fresh database and fills it the way the README's
# playground is filled (scripts/playground.sh load: gpu_routing, pgrouting where installed, the
# table edges, New York), then:
#   - every ```sql block of README.md, in order, each in a psql session of its own with
#     ON_ERROR_STOP (tables persist from block to block, settings do not); a ```text block right
#     after one (blank lines between at most) is its expected output, psql's aligned output, and
#     must match it line for line (trailing blanks and blank last lines ignored);
#   - every ```console block of README.md and docs/client.md, in order: each "$ " line is a
#     command (a trailing backslash continues it), run by bash in a scratch folder where scripts/
#     and client/ are the repository's, one shell per block. It must exit with status 0, and the
#     lines under it, if any, are its expected output (standard output and error together): a line
#     "..." stands for any number of lines, and times ("12.3 ms", "31.2 s") are not compared.
#     These run with gpu_routing.device = cpu and gpu_routing.threads = 2, the development machine
#     the outputs were taken on.
#   - every ```cpp block of both files must be client/examples/ny_example.cpp, whole or a
#     contiguous part of it (docs/client.md has a console block that compiles and runs that file).
# Not run: indented blocks (function signatures, and shell lines inside the prose), ```sh blocks
# (installing, building, starting clusters: the steps that lead here, which this test takes through
# scripts/playground.sh load), ```text blocks other than expected outputs. A block right after the line
# "<!-- docs-test: output not compared: REASON -->" runs, but its output is not compared; the log
# says so for each such block.
# Every failing block is printed with its file, line and text and what went wrong; every block
# runs, and the exit status is 1 if any failed.
# Usage:
#   test/docs/readme_examples.sh [--sql-only] [--client-build DIR] [--keep]
#     --sql-only          README's sql blocks only: no New York, no gpu-route (the log says so)
#     --client-build DIR  gpu-route and libgpu_routing_client from this CMake build folder (e.g.
#                         build/test) instead of the installed ones (scripts/install_client.sh)
#     --keep              keep the database (its name is printed)
# Environment: GPU_ROUTING_DATA, the data folder for New York [../shared/data].
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
sql_only=no
client_build=
keep=no
while [ $# -gt 0 ]; do
  case "$1" in
    --sql-only) sql_only=yes; shift ;;
    --client-build) client_build=$(cd "${2:?--client-build needs a folder}" && pwd); shift 2 ;;
    --keep) keep=yes; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "readme_examples.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
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
database=gpu_routing_docs_$$
cleanup() {
  rm -rf "$work"
  if [ "$keep" = no ]; then dropdb --if-exists "$database" 2>/dev/null || true; fi
}
trap cleanup EXIT

echo "== docs test: database $database, filled as scripts/playground.sh does"
load_options=()
[ "$sql_only" = yes ] && load_options=(--no-ny)
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $database"
if ! scripts/playground.sh load "${load_options[@]}" "$database" 2>&1 | sed 's/^/  /'; then
  echo "FAIL: the database could not be filled as scripts/playground.sh load fills it"
  exit 1
fi

# Cuts the fenced blocks of a markdown file into $work/blocks/<file>.<n>.<kind>, with
# <n>.where (file:line and the note of a docs-test comment) and, for a ```sql block followed by a
# ```text block, <n>.expected.
split_blocks() {
  local file=$1 prefix=$2
  awk -v prefix="$prefix" -v file="$file" '
    function flush_pending() { pending_sql = "" }
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
    /^```/ && open { open = 0; close(out); blank_after = 1; next }
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
split_blocks README.md "$work/blocks/README"
split_blocks docs/client.md "$work/blocks/client"
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

# --- README's sql blocks.
sql_blocks=0
sql_compared=0
for block in "$work"/blocks/README.*.sql; do
  [ -e "$block" ] || continue
  sql_blocks=$((sql_blocks + 1))
  base=${block%.sql}
  where=$(cut -f1 "$base.where")
  note=$(cut -f2 "$base.where")
  if ! psql -X -q -v ON_ERROR_STOP=1 -d "$database" -f "$block" >"$base.out" 2>&1; then
    fail_block "$where" "$block" "psql stopped with an error" "$base.out"
    continue
  fi
  if [ -e "$base.expected" ]; then
    if [ -n "$note" ]; then
      echo "  $where: output not compared (${note#output not compared: })"
    else
      sql_compared=$((sql_compared + 1))
      normalize "$base.expected" >"$base.expected.n"
      normalize "$base.out" >"$base.out.n"
      if ! matches "$base.expected.n" "$base.out.n"; then
        diff -u "$base.expected.n" "$base.out.n" | tail -n +3 >"$base.diff" || true
        fail_block "$where" "$block" "the output differs from the documented one (- documented, + actual)" "$base.diff"
      fi
    fi
  fi
done
summary+=("README.md: $sql_blocks sql blocks run, $sql_compared outputs compared")

# --- cpp blocks: parts of the example program.
cpp_blocks=0
for block in "$work"/blocks/README.*.cpp "$work"/blocks/client.*.cpp; do
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
summary+=("cpp blocks of README.md and docs/client.md: $cpp_blocks checked against client/examples/ny_example.cpp")

# --- console blocks: README.md, then docs/client.md.
if [ "$sql_only" = yes ]; then
  summary+=("console blocks of README.md and docs/client.md: not run (--sql-only)")
else
  export PGDATABASE=$database
  export PGOPTIONS="${PGOPTIONS:-} -c gpu_routing.device=cpu -c gpu_routing.threads=2"
  console_blocks=0
  commands=0
  compared=0
  for block in "$work"/blocks/README.*.console "$work"/blocks/client.*.console; do
    [ -e "$block" ] || continue
    console_blocks=$((console_blocks + 1))
    base=${block%.console}
    where=$(cut -f1 "$base.where")
    note=$(cut -f2 "$base.where")
    [ -z "$note" ] || echo "  $where: output not compared (${note#output not compared: })"
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
    (cd "$work/run" && bash "$script") >/dev/null 2>&1 || true
    for i in $(seq 1 "$count"); do
      commands=$((commands + 1))
      rc=$(cat "$base.rc.$i" 2>/dev/null || echo "not run")
      if [ "$rc" != 0 ]; then
        { echo "exit status $rc"; cat "$base.got.$i" 2>/dev/null; } >"$base.why.$i"
        fail_block "$where" "$base.cmd.$i" "the command failed" "$base.why.$i"
        continue
      fi
      if [ -s "$base.doc.$i" ] && [ -z "$note" ]; then
        compared=$((compared + 1))
        normalize "$base.doc.$i" >"$base.doc.$i.n"
        normalize "$base.got.$i" >"$base.got.$i.n"
        if ! matches "$base.doc.$i.n" "$base.got.$i.n"; then
          diff -u "$base.doc.$i.n" "$base.got.$i.n" | tail -n +3 >"$base.diff.$i" || true
          fail_block "$where" "$base.cmd.$i" "the output differs from the documented one (- documented, + actual)" "$base.diff.$i"
        fi
      fi
    done
  done
  summary+=("console blocks of README.md and docs/client.md: $console_blocks blocks, $commands commands run, $compared outputs compared")
fi

echo "== docs test"
printf '  %s\n' "${summary[@]}"
[ "$keep" = yes ] && echo "  database $database kept"
if [ "$failures" -gt 0 ]; then
  echo "  $failures failed"
  exit 1
fi
echo "  all passed"

#!/usr/bin/env bash
# The Debian packages of scripts/package.sh, installed and tested as a user would have them:
#   1. installs build/packages/postgresql-15-gpu-routing_V_A.deb and gpu-routing-client_V_A.deb
#      (apt-get install ./x.deb, which fetches missing dependencies; dpkg -i where apt-get is absent);
#   2. checks the files landed where PostgreSQL 15's pg_config says (pkglibdir: gpu_routing.so and
#      the GPU service program gpu_routing_service, mode 755 in the package and runnable;
#      sharedir/extension: the control file and SQL scripts), match the packages (dpkg --verify),
#      and that gpu_routing.so and gpu_routing_service need no libcuda/libcudart; each package's
#      /usr/share/doc holds copyright (LICENSE, in Debian's copyright format) and changelog.gz
#      (CHANGELOG.md);
#   3. starts a fresh cluster (scripts/cluster.sh, which preloads the installed gpu_routing) and runs
#      the SQL suites against the installed files, with their outputs under a folder of its own (not
#      the repository's results/): pg_regress (the Makefile's REGRESS), the isolation tests
#      (ISOLATION), pgTAP (test/pgtap with test/fixtures.sql) and the upgrade test
#      (test/upgrade/run.sh);
#   4. runs gpu-route from Debian's default PATH (--help, --version, and a path on the sample
#      network) and compiles the client example against the installed header and library.
# Prints "ok - ..." or "FAILED - ..." per check and "N passed, M failed" last; exits 1 on a failure.
#
# Usage: test/package/run.sh [--purge]   as root (or with sudo), after scripts/package.sh
#   --purge   remove the packages at the end. They install to the same paths as `make install`:
#             purging removes those files too (run `make install` again afterwards).
# Environment: GPU_ROUTING_DATA, the data folder [../shared/data from the repository root];
#   GPU_ROUTING_TEST_PORT, the cluster's port [54439]; GPU_ROUTING_DEVICE, gpu_routing.device of
#   the SQL suites [auto].
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
purge=0
for arg in "$@"; do
  case "$arg" in
    --purge) purge=1 ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test/package/run.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
export GPU_ROUTING_DATA=${GPU_ROUTING_DATA:-$(cd "$root/../shared/data" 2>/dev/null && pwd || echo "$root/../shared/data")}
export LC_ALL=C
pg_config=/usr/lib/postgresql/15/bin/pg_config
version=$(sed -nE "s/^default_version *= *'([^']+)'.*/\1/p" gpu_routing.control)
arch=$(dpkg --print-architecture)
ext_pkg=postgresql-15-gpu-routing
client_pkg=gpu-routing-client
ext_deb=$root/build/packages/${ext_pkg}_${version}_${arch}.deb
client_deb=$root/build/packages/${client_pkg}_${version}_${arch}.deb
for deb in "$ext_deb" "$client_deb"; do
  [ -f "$deb" ] || { echo "test/package/run.sh: $deb is missing: run scripts/package.sh first" >&2; exit 2; }
done
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)

. "$root/test/checks.sh"  # pass, fail, the counts
work=$(mktemp -d /tmp/gpu_routing_package.XXXXXX)
chmod 755 "$work"
cluster=$work/cluster
cleanup() {
  scripts/cluster.sh stop "$cluster" >/dev/null 2>&1 || true
  if [ "$purge" = 1 ]; then
    "${as_root[@]}" dpkg --purge "$client_pkg" "$ext_pkg" >/dev/null 2>&1 || true
    echo "# purged $ext_pkg and $client_pkg (make install puts the extension back)"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
started=$SECONDS

# --- 1. install ---------------------------------------------------------------------------------
if command -v apt-get >/dev/null; then
  install=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends
           --allow-downgrades --reinstall "$ext_deb" "$client_deb")
else
  install=("${as_root[@]}" dpkg -i "$ext_deb" "$client_deb")
fi
if out=$("${install[@]}" 2>&1); then
  pass "installed $(basename "$ext_deb") and $(basename "$client_deb")"
else
  fail "installing the packages: ${install[*]}" "$(tail -n 20 <<<"$out")"
  echo "$passed passed, $failed failed"
  exit 1
fi
states=$(for p in "$ext_pkg" "$client_pkg"; do dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' "$p"; done | sed 's/ *$//')
[ "$states" = "$ext_pkg $version ii"$'\n'"$client_pkg $version ii" ] \
  && pass "dpkg: both installed at $version" || fail "dpkg states" "$states"

# --- 2. the files ---------------------------------------------------------------------------------
pkglibdir=$("$pg_config" --pkglibdir)
extdir=$("$pg_config" --sharedir)/extension
service=$pkglibdir/gpu_routing_service
want=("$pkglibdir/gpu_routing.so" "$service" "$extdir/gpu_routing.control")
for f in sql/gpu_routing--*.sql; do want+=("$extdir/$(basename "$f")"); done
listed=$(dpkg -L "$ext_pkg")
missing=""
for f in "${want[@]}"; do
  { [ -f "$f" ] && grep -qxF "$f" <<<"$listed"; } || missing="$missing $f"
done
[ -z "$missing" ] && pass "$ext_pkg put gpu_routing.so and gpu_routing_service in $pkglibdir, the control file and the $((${#want[@]} - 3)) SQL scripts of sql/ in $extdir" \
  || fail "$ext_pkg: missing or not the package's:$missing"
# The GPU service program: a program in the package (dpkg -c: mode 755), executable once installed,
# and it runs (without arguments it prints its usage and exits 64: its libraries load).
mode=$(dpkg -c "$ext_deb" | awk -v f="./${service#/}" '$NF == f { print $1 }')
usage=$("$service" 2>&1) && rc=0 || rc=$?
if [ "$mode" = -rwxr-xr-x ] && [ -x "$service" ] && [ "$rc" = 64 ] && grep -q '^usage: gpu_routing_service' <<<"$usage"; then
  pass "$ext_pkg: gpu_routing_service is a program ($mode in the package), installed executable, runs (usage, exit 64)"
else
  fail "$ext_pkg: gpu_routing_service (want -rwxr-xr-x in dpkg -c, executable, usage and exit 64; got mode ${mode:-none}, exit $rc)" "$usage"
fi
client_want=(/usr/bin/gpu-route /usr/lib/libgpu_routing_client.a /usr/include/gpu_routing/router.hpp)
missing=""
for f in "${client_want[@]}"; do
  { [ -f "$f" ] && dpkg -L "$client_pkg" | grep -qxF "$f"; } || missing="$missing $f"
done
[ -z "$missing" ] && pass "$client_pkg put ${client_want[*]}" || fail "$client_pkg: missing:$missing"
# The license and the change log, the Debian way: /usr/share/doc/PACKAGE/copyright, LICENSE in the
# machine-readable format (its copyright line and its text, indented, blank lines as " ."), and
# changelog.gz, CHANGELOG.md compressed; both listed by dpkg -L as the package's.
license_text=$(sed '1,/^Copyright /d' LICENSE | sed '/./,$!d')
license_copyright=$(grep -m 1 '^Copyright ' LICENSE | sed -E 's/^Copyright (\(c\) )?//' || true)
for p in "$ext_pkg" "$client_pkg"; do
  doc=/usr/share/doc/$p
  problems=""
  for f in "$doc/copyright" "$doc/changelog.gz"; do
    { [ -f "$f" ] && dpkg -L "$p" | grep -qxF "$f"; } || problems+=" $f is missing or not the package's;"
  done
  if [ -f "$doc/copyright" ]; then
    head -n 1 "$doc/copyright" | grep -qxF 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
      || problems+=" copyright: no copyright-format 1.0 Format line;"
    grep -qxF "Copyright: $license_copyright" "$doc/copyright" || problems+=" copyright: no 'Copyright: $license_copyright';"
    # The lines after the last "License:" line: the stand-alone License paragraph's text.
    [ "$(awk '/^License: / { text = ""; next } { text = text $0 "\n" } END { printf "%s", text }' "$doc/copyright" \
         | sed -e 's/^ //' -e 's/^\.$//')" = "$license_text" ] || problems+=" copyright: the License paragraph is not LICENSE's text;"
  fi
  if [ -f "$doc/changelog.gz" ]; then
    zcat "$doc/changelog.gz" | cmp -s - CHANGELOG.md || problems+=" changelog.gz is not CHANGELOG.md;"
  fi
  [ -z "$problems" ] && pass "$p: $doc/copyright (LICENSE, Debian's copyright format) and changelog.gz (CHANGELOG.md)" \
    || fail "$p: the license and change log in $doc:$problems"
done
if out=$(dpkg --verify "$ext_pkg" "$client_pkg" 2>&1) && [ -z "$out" ]; then
  pass "dpkg --verify: the installed files are the packages' (md5sums)"
else
  fail "dpkg --verify" "$out"
fi
for binary in "$pkglibdir/gpu_routing.so" "$service"; do
  needed=$(objdump -p "$binary" | awk '/NEEDED/ { print $2 }' | paste -sd' ' -)
  if grep -qiE 'cuda|nvidia' <<<"$needed" || ldd "$binary" | grep -qiE 'libcuda|libcudart'; then
    fail "$(basename "$binary") links CUDA dynamically" "NEEDED: $needed"
  else
    pass "$(basename "$binary") needs no libcuda/libcudart (NEEDED: $needed)"
  fi
done
missing_libs=$(ldd /usr/bin/gpu-route "$pkglibdir/gpu_routing.so" "$service" | grep 'not found' || true)
[ -z "$missing_libs" ] && pass "every shared library gpu-route, gpu_routing.so and gpu_routing_service need is installed" \
  || fail "libraries not found" "$missing_libs"

# --- 3. the SQL suites against the installed files ----------------------------------------------
eval "$(scripts/cluster.sh start "$cluster" "${GPU_ROUTING_TEST_PORT:-54439}")"
export PGOPTIONS="-c gpu_routing.device=${GPU_ROUTING_DEVICE:-auto}"
preload=$(psql -X -q -t -A -d postgres -c "SHOW shared_preload_libraries")
info=$(psql -X -q -t -A -d postgres -c "CREATE EXTENSION gpu_routing" \
         -c "SELECT name || ': ' || value FROM gpu_routing_info() WHERE name IN ('version', 'build', 'gpu')" \
         -c "DROP EXTENSION gpu_routing" 2>&1) || true
if [ "$preload" = gpu_routing ] && grep -qx "version: $version" <<<"$info"; then
  pass "a fresh cluster preloads the installed gpu_routing: $(paste -sd';' - <<<"$info" | cut -c1-200)"
else
  fail "the installed extension in a fresh cluster (preload: $preload)" "$info"
fi
# The Makefile's test lists and options, as `make installcheck` would use them.
make_var() {
  make -s --no-print-directory -f Makefile -f <(printf 'print-var-%s:\n\t@echo $(%s)\n' "$1" "$1") \
    PG_CONFIG="$pg_config" "print-var-$1"
}
pgxs=$pkglibdir/pgxs/src/test
bindir=$("$pg_config" --bindir)
read -r -a regress <<<"$(make_var REGRESS)"
read -r -a regress_opts <<<"$(make_var REGRESS_OPTS)"
t0=$SECONDS
if out=$("$pgxs/regress/pg_regress" --bindir="$bindir" "${regress_opts[@]}" --inputdir="$root/$(make_var REGRESS_DIR)" \
           --outputdir="$work/regress" --dbname=gpu_routing_package_regress "${regress[@]}" 2>&1); then
  pass "pg_regress on the installed files: $(grep -oE 'All [0-9]+ tests passed' <<<"$out" || echo "?? $out") ($((SECONDS - t0)) s)"
else
  fail "pg_regress on the installed files" "$(grep -E '^(ok|not ok|test| [a-z_]+ +\.\.\.)' <<<"$out" | grep -v ' ok ' || true
     head -n 150 "$work/regress/regression.diffs" 2>/dev/null || echo "$out" | tail -n 30)"
fi
read -r -a isolation <<<"$(make_var ISOLATION)"
read -r -a isolation_opts <<<"$(make_var ISOLATION_OPTS)"
t0=$SECONDS
if [ "${#isolation[@]}" -gt 0 ]; then
  if out=$("$pgxs/isolation/pg_isolation_regress" --bindir="$bindir" "${isolation_opts[@]}" \
             --outputdir="$work/isolation" --dbname=gpu_routing_package_isolation "${isolation[@]}" 2>&1); then
    pass "isolation tests on the installed files: $(grep -oE 'All [0-9]+ tests passed' <<<"$out" || echo "?? $out") ($((SECONDS - t0)) s)"
  else
    fail "isolation tests on the installed files" "$(head -n 150 "$work/isolation/regression.diffs" 2>/dev/null || echo "$out" | tail -n 30)"
  fi
fi
t0=$SECONDS
if command -v pg_prove >/dev/null; then
  createdb gpu_routing_package_tap
  if out=$(psql -X -q -v ON_ERROR_STOP=1 -d gpu_routing_package_tap -f test/fixtures.sql 2>&1 &&
           pg_prove -d gpu_routing_package_tap test/pgtap/*.sql 2>&1); then
    pass "pgTAP on the installed files: $(grep -E '^Files=' <<<"$out" | cut -d, -f1,2) ($((SECONDS - t0)) s)"
  else
    fail "pgTAP on the installed files" "$(grep -vE '\.\. ok$' <<<"$out" | tail -n 40)"
  fi
  dropdb --if-exists gpu_routing_package_tap
else
  fail "pgTAP: pg_prove is missing (Debian: libtap-parser-sourcehandler-pgtap-perl; scripts/setup.sh installs it)"
fi
t0=$SECONDS
if out=$(test/upgrade/run.sh gpu_routing_package_upgrade 2>&1); then
  pass "upgrade test on the installed files: $(tail -n 1 <<<"$out") ($((SECONDS - t0)) s)"
else
  fail "upgrade test on the installed files" "$(grep -v '^ok' <<<"$out" | head -n 60)"
fi

# --- 4. the client ------------------------------------------------------------------------------
# Debian's default PATH (an older gpu-route of scripts/install_client.sh in /usr/local/bin would
# come first otherwise).
debian_path=/usr/sbin:/usr/bin:/sbin:/bin
found=$(PATH=$debian_path command -v gpu-route || true)
help=$(PATH=$debian_path gpu-route --help 2>&1) || true
ver=$(PATH=$debian_path gpu-route --version 2>&1) || true
if [ "$found" = /usr/bin/gpu-route ] && grep -q '^Usage:' <<<"$help"; then
  pass "gpu-route --help from PATH ($found)"
else
  fail "gpu-route --help from PATH (found: ${found:-nothing})" "$(head -n 5 <<<"$help")"
fi
[ "$ver" = "gpu-route $version" ] && pass "gpu-route --version says the package's version: $ver" \
  || fail "gpu-route --version says \"$ver\", the package is $version"
other=$(command -v gpu-route || true)
[ "$other" = /usr/bin/gpu-route ] || echo "# note: this shell's PATH finds $other first (scripts/install_client.sh installs to /usr/local)"
createdb gpu_routing_package_client
psql -X -q -d gpu_routing_package_client -c "SET client_min_messages = warning" -c "CREATE EXTENSION gpu_routing" \
  -f "$GPU_ROUTING_DATA/sample_network.sql" >/dev/null
route=$(PATH=$debian_path gpu-route path --db "dbname=gpu_routing_package_client" --from 6 --to 10 \
          --edges-table sample_edges --reverse-cost-column reverse_cost 2>&1) || true
if grep -q 'cost 5)' <<<"$route"; then
  pass "gpu-route path 6 -> 10 on the sample network: $(tail -n 1 <<<"$route")"
else
  fail "gpu-route path 6 -> 10 on the sample network (want cost 5)" "$route"
fi
if command -v g++ >/dev/null && pkg-config --exists libpqxx 2>/dev/null; then
  # The package's header and library, not those of scripts/install_client.sh in /usr/local, which
  # g++ and ld search first.
  mkdir -p "$work/include"
  ln -s /usr/include/gpu_routing "$work/include/gpu_routing"
  if out=$(g++ -std=c++17 -O1 -I"$work/include" -o "$work/example" client/examples/ny_example.cpp \
             /usr/lib/libgpu_routing_client.a -lpqxx -lpq 2>&1); then
    pass "client/examples/ny_example.cpp compiles and links against the installed header and library"
  else
    fail "compiling the client example against the installed files" "$(head -n 20 <<<"$out")"
  fi
else
  echo "# skipped: compiling against the client library (needs g++ and libpqxx-dev)"
fi
dropdb --if-exists gpu_routing_package_client

echo "# $((SECONDS - started)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Builds the Debian packages of gpu_routing, into build/packages/:
#   postgresql-15-gpu-routing_VERSION_ARCH.deb  the extension (gpu_routing.so, the GPU service
#       program gpu_routing_service beside it in pkglibdir, and the SQL scripts), built with CUDA
#       when the toolkit is found (nvcc in PATH or /usr/local/cuda), the CUDA runtime linked
#       statically: it loads and answers on the CPU where there is no NVIDIA driver.
#   gpu-routing-client_VERSION_ARCH.deb         gpu-route, libgpu_routing_client.a and its header.
# VERSION is gpu_routing.control's default_version; ARCH is dpkg --print-architecture. Depends are
# computed by dpkg-shlibdeps (plus postgresql-15); the control templates are packaging/*.control.in.
# Each package's /usr/share/doc/PACKAGE holds README.md.gz, copyright (LICENSE in Debian's
# machine-readable format), changelog.gz (CHANGELOG.md) and changelog.Debian.gz.
#
# Usage: scripts/package.sh   (from anywhere; about 2 min the first time with CUDA on two cores,
#                              15 s when nothing changed)
# Environment:
#   WITH_CUDA=0            build the CPU engines only
#   PG_CONFIG              PostgreSQL 15's pg_config [/usr/lib/postgresql/15/bin/pg_config]
#   GPU_ROUTING_MAINTAINER the Maintainer field [DEBFULLNAME <DEBEMAIL>, else git's user]
#   GPU_ROUTING_PACKAGE_REVISION  appended to VERSION as -REVISION (none by default)
# Needs what scripts/setup.sh installs (PostgreSQL 15 server headers, libpqxx-dev, CMake, g++) and
# dpkg-dev (dpkg-shlibdeps; installed here when missing). It builds from a copy of the working tree
# (tracked files and untracked ones git does not ignore) in build/package/src, so the tree's own
# in-place objects (src/pg/*.o, the gpu_routing.so of `make`) are left alone; build/package is
# reused between runs. test/package/run.sh installs and tests the packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$root/build/package
out=$root/build/packages
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
jobs=$(nproc 2>/dev/null || echo 2)
export LC_ALL=C
step() { printf '== %s\n' "$*"; }
die() { echo "package.sh: $*" >&2; exit 1; }

if ! command -v dpkg-shlibdeps >/dev/null; then
  echo "package.sh: installing dpkg-dev (dpkg-shlibdeps)"
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
fi
for tool in dpkg-deb dpkg-shlibdeps cmake make objdump; do
  command -v "$tool" >/dev/null || die "$tool is missing (Debian: apt-get install dpkg-dev cmake make binutils)"
done
[ -x "$pg_config" ] || die "$pg_config is missing (Debian: postgresql-server-dev-15; or set PG_CONFIG)"
pg_major=$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
[ "$pg_major" = 15 ] || die "$pg_config is PostgreSQL $pg_major; the package is for 15"
version=$(sed -nE "s/^default_version *= *'([^']+)'.*/\1/p" gpu_routing.control)
[ -n "$version" ] || die "no default_version in gpu_routing.control"
[ -z "${GPU_ROUTING_PACKAGE_REVISION:-}" ] || version=$version-$GPU_ROUTING_PACKAGE_REVISION
arch=$(dpkg --print-architecture)
maintainer=${GPU_ROUTING_MAINTAINER:-}
if [ -z "$maintainer" ] && [ -n "${DEBEMAIL:-}" ]; then maintainer="${DEBFULLNAME:-gpu_routing maintainers} <$DEBEMAIL>"; fi
if [ -z "$maintainer" ] && git config user.email >/dev/null 2>&1; then
  maintainer="$(git config user.name || echo gpu_routing maintainers) <$(git config user.email)>"
fi
maintainer=${maintainer:-gpu_routing maintainers <gpu-routing@localhost>}
revision=$(git describe --always --dirty 2>/dev/null || echo unknown)

# --- a copy of the working tree ------------------------------------------------------------------
# Times are kept (tar), so an unchanged file does not rebuild; files gone from the tree are removed.
step "source: the working tree ($revision) -> build/package/src"
src=$work/src
mkdir -p "$src"
if git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files -z -c -o --exclude-standard | tr '\0' '\n' | while IFS= read -r f; do
    [ -f "$f" ] && printf '%s\n' "$f"; done | sort -u >"$work/src.files.new"
else
  find . -path ./build -prune -o -type f ! -name '*.o' ! -name '*.so' -printf '%P\n' | sort >"$work/src.files.new"
fi
if [ -f "$work/src.files" ]; then
  comm -23 "$work/src.files" "$work/src.files.new" | while IFS= read -r f; do rm -f "$src/$f"; done
fi
tar -cf - -T "$work/src.files.new" | tar -xf - -C "$src"
mv "$work/src.files.new" "$work/src.files"

# --- the extension ------------------------------------------------------------------------------
core=$work/core
[ "${WITH_CUDA:-auto}" != 0 ] || core=$work/core-nocuda
step "extension: make (core in ${core#"$root"/}; CUDA: ${WITH_CUDA:-auto})"
make_args=(PG_CONFIG="$pg_config" CORE_BUILD="$core" WITH_CUDA="${WITH_CUDA:-auto}")
# Linked every time: make compares the library's time with the core's, which says nothing when
# the core comes from the other folder (WITH_CUDA=0 and back).
rm -f "$src/gpu_routing.so"
make -C "$src" -s -j"$jobs" "${make_args[@]}" >"$work/make.log" 2>&1 || { tail -n 40 "$work/make.log"; die "make failed (build/package/make.log)"; }
ext_root=$work/root/postgresql-15-gpu-routing
rm -rf "$ext_root"
make -C "$src" -s install DESTDIR="$ext_root" "${make_args[@]}" >>"$work/make.log" 2>&1 || { tail -n 40 "$work/make.log"; die "make install failed"; }
pkglibdir=$("$pg_config" --pkglibdir)
sharedir=$("$pg_config" --sharedir)
so=$ext_root$pkglibdir/gpu_routing.so
service=$ext_root$pkglibdir/gpu_routing_service
[ -f "$so" ] || die "make install put no gpu_routing.so in $pkglibdir"
[ -x "$service" ] || die "make install put no executable gpu_routing_service in $pkglibdir"
if grep -q cudart_static "$core/extension_link_flags.txt" 2>/dev/null; then
  cuda_release=$(sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\([0-9]*\.[0-9]*\).*/\1/p' \
    "$core"/CMakeFiles/*/CMakeCUDACompiler.cmake | tail -n 1)
  cuda_archs=$(grep -h 'GPU_ROUTING_CUDA_ARCHS=' "$core/CMakeFiles/gpu_routing_core.dir/flags.make" \
    | head -n 1 | grep -o '[0-9][0-9]*-[a-z]*' | paste -sd, - | sed 's/,/, /g')
  build_text="Built with CUDA ${cuda_release:-?} (GPU code: ${cuda_archs:-?}) and OpenMP."
else
  build_text="Built without CUDA: the OpenMP CPU engines only."
fi

# --- the client -----------------------------------------------------------------------------------
step "client: gpu-route and libgpu_routing_client (build/package/client)"
client_root=$work/root/gpu-routing-client
rm -rf "$client_root"
cmake -S "$src" -B "$work/client" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DGPU_ROUTING_CUDA=OFF -DGPU_ROUTING_TESTS=OFF -DGPU_ROUTING_BENCH=OFF -DGPU_ROUTING_CLIENT=ON \
  >"$work/client.log" 2>&1 || { tail -n 40 "$work/client.log"; die "cmake (client) failed"; }
cmake --build "$work/client" --target gpu-route gpu_routing_client -j"$jobs" >>"$work/client.log" 2>&1 \
  || { tail -n 40 "$work/client.log"; die "client build failed (build/package/client.log)"; }
DESTDIR=$client_root cmake --install "$work/client" --component client --strip >>"$work/client.log" 2>&1 \
  || { tail -n 40 "$work/client.log"; die "cmake --install (client) failed"; }
[ -x "$client_root/usr/bin/gpu-route" ] || die "cmake --install put no /usr/bin/gpu-route"

# --- the packages -------------------------------------------------------------------------------
# LICENSE as Debian's machine-readable copyright file (copyright-format 1.0): one Files paragraph
# with LICENSE's copyright line, then the license's text (the lines after that line) as the License
# paragraph, each line indented by one space, blank lines as " .".
[ -f LICENSE ] || die "LICENSE is missing (the packages ship it as /usr/share/doc/PACKAGE/copyright)"
[ -f CHANGELOG.md ] || die "CHANGELOG.md is missing (the packages ship it as /usr/share/doc/PACKAGE/changelog.gz)"
copyright_line=$(grep -m 1 '^Copyright ' LICENSE | sed -E 's/^Copyright (\(c\) )?//' || true)
license_name=$(head -n 1 LICENSE | sed -E 's/ License$//')
[ -n "$copyright_line" ] || die "LICENSE has no line starting with 'Copyright '"
debian_copyright() {
  printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n'
  printf 'Upstream-Name: gpu_routing\n\nFiles: *\nCopyright: %s\nLicense: %s\n\n' "$copyright_line" "$license_name"
  printf 'License: %s\n' "$license_name"
  sed '1,/^Copyright /d' LICENSE | sed '/./,$!d' | sed -e 's/^$/./' -e 's/^/ /'
}
# deb_package NAME ROOT EXTRA_DEPENDS BINARIES...: DEBIAN/control (Depends from dpkg-shlibdeps on
# BINARIES plus EXTRA_DEPENDS), md5sums, docs, then dpkg-deb into build/packages. BINARIES other
# than shared libraries (*.so) are programs: mode 755.
mkdir -p "$out"
esc() { printf '%s' "$1" | sed -e 's/[\\|&]/\\&/g'; }  # a sed replacement text, | as delimiter
deb_package() {
  local name=$1 pkgroot=$2 extra=$3
  shift 3
  local doc=$pkgroot/usr/share/doc/$name
  mkdir -p "$doc" "$pkgroot/DEBIAN"
  cp README.md "$doc/README.md"
  gzip -9n "$doc/README.md"
  debian_copyright >"$doc/copyright"
  # The upstream change log, where Debian's policy puts it (a plain-text changelog.gz).
  gzip -9n <CHANGELOG.md >"$doc/changelog.gz"
  printf 'gpu-routing (%s) unstable; urgency=medium\n\n  * Built by scripts/package.sh from %s.\n\n -- %s  %s\n' \
    "$version" "$revision" "$maintainer" "$(date -R -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")" \
    | gzip -9n >"$doc/changelog.Debian.gz"
  # dpkg-shlibdeps reads debian/control of the folder it runs in.
  local shlib=$work/shlibdeps/$name
  mkdir -p "$shlib/debian"
  printf 'Source: gpu-routing\n\nPackage: %s\nArchitecture: any\n' "$name" >"$shlib/debian/control"
  local deps
  deps=$(cd "$shlib" && dpkg-shlibdeps -O --warnings=0 "$@" 2>"$shlib/warnings" | sed -n 's/^shlibs:Depends=//p') \
    || { cat "$shlib/warnings" >&2; die "dpkg-shlibdeps failed for $name"; }
  [ -n "$deps" ] || die "dpkg-shlibdeps found no dependencies for $name"
  [ -z "$extra" ] || deps="$extra, $deps"
  # Debian's modes: directories and files 755/644, programs 755 (those of usr/bin, and the
  # BINARIES that are no shared library: gpu_routing_service in pkglibdir), shared libraries 644.
  find "$pkgroot" -type d -exec chmod 755 {} +
  find "$pkgroot" -type f -exec chmod 644 {} +
  [ ! -d "$pkgroot/usr/bin" ] || find "$pkgroot/usr/bin" -type f -exec chmod 755 {} +
  local binary
  for binary in "$@"; do
    case "$binary" in *.so|*.so.*) ;; *) chmod 755 "$binary" ;; esac
  done
  local size
  size=$(du -sk --exclude=DEBIAN "$pkgroot" | cut -f1)
  sed -e "s|@VERSION@|$(esc "$version")|" -e "s|@ARCH@|$(esc "$arch")|" \
      -e "s|@MAINTAINER@|$(esc "$maintainer")|" -e "s|@INSTALLED_SIZE@|$size|" \
      -e "s|@DEPENDS@|$(esc "$deps")|" -e "s|@BUILD@|$(esc "$build_text")|" \
      "packaging/$name.control.in" >"$pkgroot/DEBIAN/control"
  (cd "$pkgroot" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) \
    >"$pkgroot/DEBIAN/md5sums"
  chmod 644 "$pkgroot/DEBIAN/control" "$pkgroot/DEBIAN/md5sums"
  local deb=$out/${name}_${version}_${arch}.deb
  dpkg-deb --build --root-owner-group "$pkgroot" "$deb" >/dev/null
  echo "$deb"
  dpkg-deb --field "$deb" Package Version Architecture Depends | sed 's/^/    /'
}

step "packages"
# Debian strips shipped binaries (the CUDA kernels stay: they are data sections of the library).
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$so" "$service"
for binary in "$so" "$service"; do
  if objdump -p "$binary" | grep -E 'NEEDED.*(libcuda|libcudart|libnvidia)'; then
    die "$(basename "$binary") links the CUDA driver or runtime dynamically (see above): it must not"
  fi
done
deb_package postgresql-15-gpu-routing "$ext_root" "postgresql-15" "$so" "$service"
deb_package gpu-routing-client "$client_root" "" "$client_root/usr/bin/gpu-route"
echo "package.sh: $build_text Packages in build/packages/."

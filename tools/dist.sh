#!/usr/bin/env bash
# `make dist`: the release artifacts of this checkout, into dist/ (DIST_DIR),
# for the machine's platform. Nothing here needs more than Rust, Python 3 and
# PyPI; the tools (maturin, zig, cargo-zigbuild, auditwheel, pinned in
# tools/dist/requirements.txt) go into a venv of their own, target/dist-tools.
#
#   ssefold-VERSION-cp311-cp311-manylinux_2_17_x86_64.whl
#                        a wheel built for one CPython, for each interpreter of
#                        DIST_PYTHONS (default: python3); pip prefers it to the abi3
#                        wheel on that version (its event objects cost ~10 % less:
#                        the stable ABI reaches type slots and reference counts
#                        through calls)
#   ssefold-VERSION-cp39-abi3-manylinux_2_17_x86_64.whl  one wheel for every CPython >= 3.9
#                        (the fallback for the versions without a wheel of their own)
#   ssefold-VERSION-cp313-cp313t-manylinux_2_17_x86_64.whl
#                        the free-threaded build, when a free-threaded CPython is at
#                        hand (SSEFOLD_FT_PYTHON, or the one tools/free-threaded-python.sh
#                        built); DIST_FREE_THREADED=0 skips it, =1 requires it
#   ssefold-VERSION.tar.gz                               the sdist (builds with Rust)
#   ssefold-VERSION-x86_64-linux-gnu.tar.gz              the C library: libssefold.so.VERSION
#                        (+ SONAME links) and libssefold.a, stripped; ssefold.h, ssefold.hpp,
#                        ssefold.pc, the CMake package; relocatable
#   go-lib/GOOS_GOARCH/libssefold.a  the static library the Go module carries
#   goproxy/             the Go module github.com/ssefold/ssefold/bindings/go at vVERSION
#                        with the static library for linux/amd64 inside (lib/linux_amd64),
#                        laid out as a Go module proxy: GOPROXY=file://$PWD/dist/goproxy
#   SHA256SUMS
#
# DIST_ONLY=go rebuilds only the Go module, from every library in dist/go-lib
# (the release workflow, once each platform's library is there).
#
# On Linux the libraries are linked by zig against glibc 2.17 (manylinux2014):
# they load on any glibc >= 2.17 distribution, whatever glibc this machine
# has. Source paths are remapped (`--remap-path-prefix`): no artifact names
# this checkout's or this machine's directories. tests/dist/check.sh installs
# and uses each artifact with no Rust toolchain on PATH (`make dist-test`).
# .github/workflows/release.yml runs this script on every platform of the
# release matrix; only linux/x86_64 runs here.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${DIST_DIR:-dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)

say() { printf 'dist: %s\n' "$*" >&2; }

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
IFS=. read -r major minor _ <<<"$version"
abi=$([ "$major" = 0 ] && echo "0.$minor" || echo "$major")

os=$(uname -s)
arch=$(uname -m)
case "$os/$arch" in
  Linux/x86_64) triple=x86_64-unknown-linux-gnu; c_name=x86_64-linux-gnu; go_dir=linux_amd64 ;;
  Linux/aarch64) triple=aarch64-unknown-linux-gnu; c_name=aarch64-linux-gnu; go_dir=linux_arm64 ;;
  *) say "$os/$arch: this script builds Linux artifacts; .github/workflows/release.yml builds the others"; exit 2 ;;
esac

# The tools, pinned, in their own venv (the test venv is left alone).
tools=target/dist-tools
if ! cmp -s tools/dist/requirements.txt "$tools/requirements.txt" 2>/dev/null; then
  say "installing the build tools into $tools"
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q --upgrade pip
  "$tools/bin/python" -m pip install -q -r tools/dist/requirements.txt
  cp tools/dist/requirements.txt "$tools/requirements.txt"
fi
export PATH="$root/$tools/bin:$PATH"

# Reproducible: file times from the commit, paths remapped, no debug info kept.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
cargo_home=${CARGO_HOME:-$HOME/.cargo}
export RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$root=ssefold-$version --remap-path-prefix=$cargo_home=cargo"
# The artifacts are stripped (maturin's `strip`, `make install`): the release
# profile's line tables would be built and linked for nothing (~15 % of a
# fat-LTO build here).
export CARGO_PROFILE_RELEASE_DEBUG=${CARGO_PROFILE_RELEASE_DEBUG:-0}
# The wheels build in one target directory (they share their dependencies'
# compiled code); the C library in another, beside them: cargo runs one
# build at a time per directory, and the release profile's link-time
# optimization is one thread, so two builds keep two cores busy.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/dist}
c_target_dir="$CARGO_TARGET_DIR-c"
glibc=2.17

stage=$(mktemp -d)
c_build=""
# A failure while the wheels build stops the C library's build too (it
# would go on holding its target directory's lock).
trap '[ -z "$c_build" ] || kill "$c_build" 2>/dev/null; rm -rf "$stage"' EXIT
rm -rf "$out/goproxy" "$out/SHA256SUMS"
if [ "${DIST_ONLY:-}" != go ]; then
rm -f "$out"/ssefold-*.whl "$out"/ssefold-*.tar.gz

# --- C: the libraries linked against glibc 2.17 (zig), built while the
# wheels build.
say "C library ($c_name, glibc >= $glibc), in the background"
CARGO_TARGET_DIR="$c_target_dir" cargo zigbuild -q --release --lib --target "$triple.$glibc" >"$stage/c-build.log" 2>&1 &
c_build=$!

# --- Python: a wheel per interpreter of DIST_PYTHONS, the abi3 wheel (the
# binding's `abi3` feature), the free-threaded wheel, the sdist.
for py in ${DIST_PYTHONS:-python3}; do
  tag=$("$py" -c 'import sys; print(sys.implementation.cache_tag)') || { say "DIST_PYTHONS: $py does not run"; exit 1; }
  case "$tag" in
    cpython-3[0-8] | cpython-3[0-8]t) say "DIST_PYTHONS: $py is $tag; the wheels need CPython >= 3.9"; exit 1 ;;
    cpython-3*t) say "DIST_PYTHONS: $py is free-threaded ($tag): SSEFOLD_FT_PYTHON builds that wheel"; exit 1 ;;
    cpython-3*) ;;
    *) say "DIST_PYTHONS: $py is $tag, not CPython"; exit 1 ;;
  esac
  say "Python wheel ($tag, manylinux_2_17)"
  maturin build -q --release --zig --target "$triple" --compatibility manylinux2014 -i "$py" --out "$out"
done
say "Python wheel (abi3, manylinux_2_17)"
maturin build -q --release --zig --target "$triple" --compatibility manylinux2014 --features abi3 --out "$out"
ft_python=""
case "${DIST_FREE_THREADED:-auto}" in
  0) ;;
  1) ft_python=$(tools/free-threaded-python.sh) ;;
  *) if [ -n "${SSEFOLD_FT_PYTHON:-}" ]; then ft_python=$SSEFOLD_FT_PYTHON
     elif [ -x target/python3.13t/bin/python3.13t ]; then ft_python=$root/target/python3.13t/bin/python3.13t; fi ;;
esac
if [ -n "$ft_python" ]; then
  say "Python wheel (free-threaded, $("$ft_python" -c 'import sys; print(sys.implementation.cache_tag)'))"
  maturin build -q --release --zig --target "$triple" --compatibility manylinux2014 -i "$ft_python" --out "$out"
else
  say "no free-threaded CPython at hand: no free-threaded wheel (tools/free-threaded-python.sh builds one)"
fi
maturin sdist --out "$out"

# --- C: the libraries installed into a staging prefix by the same `make
# install` users run, relocatable, then archived.
wait "$c_build" || { c_build=""; cat "$stage/c-build.log" >&2; say "the C library did not build"; exit 1; }
c_build=""
say "C tarball"
libs="$c_target_dir/$triple/release"
name="ssefold-$version-$c_name"
make -s install CAPI_LIB_DIR="$libs" PREFIX="$stage/$name" RELOCATABLE=1 RPATH=yes >/dev/null
cp LICENSE-MIT LICENSE-APACHE CHANGELOG.md "$stage/$name/"
sed -e "s|@VERSION@|$version|g" -e "s|@NAME@|$name|g" -e "s|@ABI@|$abi|g" -e "s|@GLIBC@|$glibc|g" \
  tools/dist/c-README.md.in > "$stage/$name/README.md"
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -C "$stage" -cf - "$name" \
  | gzip -9n > "$out/$name.tar.gz"

# --- Go: the package with the static libraries inside (dist/go-lib/GOOS_GOARCH,
# this platform's written here, the release workflow's other platforms
# downloaded there first), as a module zip served by a file-system module
# proxy (the layout `go get` reads from GOPROXY).
mkdir -p "$out/go-lib/$go_dir"
cp "$stage/$name/lib/libssefold.a" "$out/go-lib/$go_dir/libssefold.a"
fi   # DIST_ONLY=go: from here on
module=$(sed -n 's/^module //p' bindings/go/go.mod)
gostage="$stage/go"
mkdir -p "$gostage/include" "$gostage/lib"
say "Go module (lib/: $(cd "$out/go-lib" && echo *))"
for f in bindings/go/*; do
  case "$f" in
    *_test.go | */cgo_local.go) ;;                  # tests read the checkout; cgo_local links target/capi
    *.go | *.c | *.h | */go.mod | */README.md) cp "$f" "$gostage/" ;;
  esac
done
# The prebuilt library is the default: the build line of cgo_prebuilt.go
# (tag ssefold_prebuilt in the checkout) loses its tag.
sed -i 's|^//go:build ssefold_prebuilt && !ssefold_pkgconfig$|//go:build !ssefold_pkgconfig|' "$gostage/cgo_prebuilt.go"
grep -qx '//go:build !ssefold_pkgconfig' "$gostage/cgo_prebuilt.go" || { say "cgo_prebuilt.go: unexpected build line"; exit 1; }
cp include/ssefold.h "$gostage/include/"
cp LICENSE-MIT LICENSE-APACHE "$gostage/"
cp -r "$out/go-lib/." "$gostage/lib/"
python3 tools/dist/go_module_proxy.py "$gostage" "$module" "v$version" "$SOURCE_DATE_EPOCH" "$out/goproxy"

shopt -s nullglob
(cd "$out" && sha256sum ssefold-*.whl ssefold-*.tar.gz ssefold-*.zip goproxy/*/*/*/*/*/@v/*.zip >SHA256SUMS)
say "artifacts in $out:"
(cd "$out" && du -b ssefold-*.whl ssefold-*.tar.gz ssefold-*.zip goproxy/*/*/*/*/*/@v/*.zip | sort -k2 | while read -r size f; do
  awk -v f="$f" -v s="$size" 'BEGIN { printf "  %-72s %6.2f MB\n", f, s / 1e6 }'; done) >&2

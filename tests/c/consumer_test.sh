#!/usr/bin/env bash
# Checks an installed ssefold C library the way its users consume it: the
# SONAME chain, no debug info, then fresh programs built with pkg-config
# (shared, static, fully static) and with CMake's find_package(ssefold)
# (shared and static targets), each run without LD_LIBRARY_PATH (the RPATH
# the pkg-config and CMake files give), and a later major refused by
# find_package. Used on `make install`'s prefix (install_test.sh) and on the
# unpacked release tarball (tests/dist/check.sh).
# Usage: consumer_test.sh PREFIX VERSION [LIBDIR]   (LIBDIR: PREFIX/lib)
set -euo pipefail
prefix=$(cd "$1" && pwd)
version=$2
libdir=${3:-$prefix/lib}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# `producer | grep -c`, not `grep -q`: under pipefail, grep -q exiting at its
# first match can fail the pipeline (the producer killed by SIGPIPE).

# Libraries and the SONAME symlink chain: the ABI version is the major, or
# 0.<minor> before 1.0 (a 0.x minor release may break).
IFS=. read -r major minor _ <<<"$version"
if [ "$major" = 0 ]; then abi="0.$minor"; else abi="$major"; fi
test -f "$libdir/libssefold.a"
test -L "$libdir/libssefold.so" && test -L "$libdir/libssefold.so.$abi"
[ "$(readlink "$libdir/libssefold.so")" = "libssefold.so.$abi" ]
real=$(readlink "$libdir/libssefold.so.$abi")
test -f "$libdir/$real" && [ "$real" = "libssefold.so.$version" ]
readelf -d "$libdir/$real" | grep -F SONAME | grep -cF "[libssefold.so.$abi]" >/dev/null
test -f "$prefix/include/ssefold.h" && test -f "$prefix/include/ssefold.hpp"
# Stripped: no debug sections in the shared or the static library.
fail() { echo "FAIL: $*" >&2; exit 1; }
if readelf -S "$libdir/$real" | grep -c '\.debug_info' >/dev/null; then fail "$real has debug info"; fi
if readelf -S "$libdir/libssefold.a" 2>/dev/null | grep -c '\.debug_info' >/dev/null; then fail "libssefold.a has debug info"; fi

cat > "$tmp/app.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <ssefold.h>
static int on_event(void *u, const ssefold_sse_event *e) { (void)u; printf("%.*s\n", (int)e->data.len, e->data.ptr); return 0; }
int main(void) {
  const char *s = "data: installed\n\n";
  ssefold_sse_decoder *d = NULL;
  size_t n = 0;
  if (ssefold_sse_decoder_new(NULL, &d) || ssefold_sse_decoder_set_callback(d, on_event, NULL)) return 1;
  if (ssefold_sse_decoder_feed(d, (const uint8_t *)s, strlen(s), &n) || n != strlen(s)) return 1;
  ssefold_sse_decoder_free(d);
  return strcmp(ssefold_version(), SSEFOLD_VERSION) != 0;
}
C

# pkg-config, shared library.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion ssefold)" = "$version" ]
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror "$tmp/app.c" -o "$tmp/app_pc" $(pkg-config --cflags --libs ssefold)
readelf -d "$tmp/app_pc" | grep -F NEEDED | grep -cF "[libssefold.so.$abi]" >/dev/null
[ "$(env -u LD_LIBRARY_PATH "$tmp/app_pc")" = installed ]   # found through the RUNPATH from ssefold.pc
# pkg-config, static library (Libs.private carries the system libraries).
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror "$tmp/app.c" -o "$tmp/app_static" $(pkg-config --cflags ssefold) \
  "$libdir/libssefold.a" $(pkg-config --libs-only-l --static ssefold | sed 's/-lssefold//')
if readelf -d "$tmp/app_static" | grep -c 'libssefold' >/dev/null; then fail "app_static links libssefold dynamically"; fi
[ "$("$tmp/app_static")" = installed ]
# pkg-config --static with -static: a fully static program.
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror "$tmp/app.c" -o "$tmp/app_fully_static" -static $(pkg-config --cflags --libs --static ssefold) 2>"$tmp/static.log" \
  || { cat "$tmp/static.log" >&2; exit 1; }
readelf -h "$tmp/app_fully_static" >/dev/null
if readelf -d "$tmp/app_fully_static" 2>/dev/null | grep -c NEEDED >/dev/null; then fail "app_fully_static needs shared libraries"; fi
[ "$("$tmp/app_fully_static")" = installed ]

# CMake find_package from a fresh project, shared and static targets.
mkdir -p "$tmp/cmake"
cp "$tmp/app.c" "$tmp/cmake/app.c"
cat > "$tmp/cmake/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(ssefold @ABI@ REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE ssefold::ssefold)
add_executable(app_static app.c)
target_link_libraries(app_static PRIVATE ssefold::ssefold_static)
CM
sed -i "s/@ABI@/$major.$minor/" "$tmp/cmake/CMakeLists.txt"
cmake -S "$tmp/cmake" -B "$tmp/cmake/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cmake/build" >/dev/null
[ "$(env -u LD_LIBRARY_PATH "$tmp/cmake/build/app")" = installed ]  # found through the RPATH
[ "$("$tmp/cmake/build/app_static")" = installed ]

# A major version that does not exist is refused.
sed -i "s/find_package(ssefold $major.$minor REQUIRED)/find_package(ssefold $((major + 1)).0 REQUIRED)/" "$tmp/cmake/CMakeLists.txt"
if cmake -S "$tmp/cmake" -B "$tmp/cmake/build2" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
  echo "FAIL: find_package(ssefold $((major + 1)).0) accepted version $version" >&2
  exit 1
fi
echo "consumers: ok (pkg-config shared+static+fully static, find_package shared+static, stripped, RPATH, SONAME libssefold.so.$abi)"

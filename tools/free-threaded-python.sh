#!/usr/bin/env bash
# A free-threaded CPython (python3.13t, `--disable-gil`) for the Python
# binding's free-threaded tests and benchmarks, built from Debian trixie's
# python3.13 source package: Debian bookworm ships no free-threaded
# interpreter, and Debian's archive is the registry this project's machines
# reach (apt-get verifies the package against the archive's signed index).
#
#   tools/free-threaded-python.sh     prints the interpreter's path, building it
#                                     first (~2 minutes on 2 cores) if missing
#
# Installed under target/python3.13t (SSEFOLD_FT_PREFIX overrides). An
# interpreter is built once per source tarball: it is installed into a cache,
# ${XDG_CACHE_HOME:-~/.cache}/ssefold/python3.13t-<SHA-256 of the tarball> (the
# hash from the archive's signed index, before any download), and
# target/python3.13t links to it, so a clean checkout or `rm -rf target` on the
# same machine takes it from there. SSEFOLD_FT_CACHE sets the cache directory;
# SSEFOLD_FT_CACHE= (empty) builds into target/python3.13t as before. Needs
# apt-get, gcc, make and the headers tools/setup.sh installs (zlib, OpenSSL,
# libffi: pip needs the first two). Elsewhere, point SSEFOLD_FT_PYTHON at a
# free-threaded interpreter you have (3.13t or later): it is used instead.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'free-threaded-python: %s\n' "$*" >&2; }
gil_off() { "$1" -c 'import sys; sys.exit(sys._is_gil_enabled())' 2>/dev/null; }

if [ -n "${SSEFOLD_FT_PYTHON:-}" ]; then
  gil_off "$SSEFOLD_FT_PYTHON" || { say "SSEFOLD_FT_PYTHON=$SSEFOLD_FT_PYTHON is not a free-threaded CPython"; exit 1; }
  echo "$SSEFOLD_FT_PYTHON"
  exit 0
fi
prefix="${SSEFOLD_FT_PREFIX:-$PWD/target/python3.13t}"
python="$prefix/bin/python3.13t"
if [ -x "$python" ] && gil_off "$python"; then
  echo "$python"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 ||
  { say "no apt-get to fetch CPython's source with: set SSEFOLD_FT_PYTHON to a free-threaded interpreter"; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache"
echo "deb-src http://deb.debian.org/debian trixie main" >"$work/sources.list"
# A private source list, index and cache: the machine's apt configuration is
# not touched, and no root is needed. The system keyring still checks the archive's signature.
apt_options=(
  -q
  -o "Dir::Etc::SourceList=$work/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$work/lists"
  -o "Dir::Cache=$work/cache"
  -o "APT::Sandbox::User=$(id -un)"
)
apt-get "${apt_options[@]}" update >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }

# The cache entry: the upstream tarball's SHA-256 as the signed index gives it
# (and this script's configure line, by its version below).
build_version=1
cache="${SSEFOLD_FT_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/ssefold}"
if [ -n "$cache" ] && [ -z "${SSEFOLD_FT_PREFIX:-}" ]; then
  sha="$(cd "$work" && apt-get "${apt_options[@]}" source --print-uris python3.13 2>>"$work/apt.log" |
    sed -n "s/^'[^']*' python3\.13_[^ ]*\.orig\.tar\.xz [0-9]* SHA256:\([0-9a-f]*\)$/\1/p" | head -n 1)"
  if [ -n "$sha" ]; then
    cached="$cache/python3.13t-${sha:0:16}-b$build_version"
    mkdir -p "$cache"
    # One build per entry, however many checkouts ask at once.
    exec 9>"$cached.lock"
    flock 9
    if ! { [ -x "$cached/bin/python3.13t" ] && gil_off "$cached/bin/python3.13t"; }; then
      rm -rf "$cached"
      SSEFOLD_FT_CACHE='' SSEFOLD_FT_PREFIX="$cached" "$PWD/tools/free-threaded-python.sh" >/dev/null
    else
      say "cached: $cached"
    fi
    mkdir -p "$(dirname "$prefix")"
    rm -rf "$prefix"
    ln -s "$cached" "$prefix"
    gil_off "$python" || { say "$python has the GIL enabled"; exit 1; }
    echo "$python"
    exit 0
  fi
  say "no SHA-256 for python3.13's source in the index: building without the cache"
fi

say "fetching Debian trixie's python3.13 source package"
(cd "$work" && apt-get "${apt_options[@]}" source --download-only python3.13 >>"$work/apt.log" 2>&1) ||
  { cat "$work/apt.log" >&2; exit 1; }
tarball="$(ls "$work"/python3.13_*.orig.tar.xz)"
tar -xJf "$tarball" -C "$work"
source_dir="$(ls -d "$work"/Python-3.13*)"

say "building $(basename "$source_dir") with --disable-gil into $prefix"
(
  cd "$source_dir"
  # Its own parallel make, not a share of a calling make's job slots.
  unset MAKEFLAGS MFLAGS MAKELEVEL
  ./configure -q --disable-gil --disable-test-modules --prefix="$prefix" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; exit 1; }
  make -s -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -50 "$work/make.log" >&2; exit 1; }
  make -s install >"$work/install.log" 2>&1 || { tail -50 "$work/install.log" >&2; exit 1; }
)
gil_off "$python" || { say "$python has the GIL enabled"; exit 1; }
echo "$python"

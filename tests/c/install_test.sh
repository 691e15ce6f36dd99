#!/usr/bin/env bash
# Installs ssefold into a temporary prefix with `make install`, then checks
# it as its users consume it (consumer_test.sh: SONAME chain, stripped,
# pkg-config and CMake find_package consumers started without
# LD_LIBRARY_PATH), once more with a Debian-style LIBDIR (lib/<multiarch>).
# Usage: install_test.sh [REPO_ROOT]
set -euo pipefail
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n1)

make -s -C "$root" install PREFIX="$tmp/prefix" CAPI_PROFILE="${CAPI_PROFILE:-test}" >/dev/null
"$here/consumer_test.sh" "$tmp/prefix" "$version"
# A Debian-style LIBDIR: pkg-config and find_package still give the right
# include and library paths, and the programs start.
make -s -C "$root" install PREFIX="$tmp/deb" LIBDIR="$tmp/deb/lib/x86_64-linux-gnu" CAPI_PROFILE="${CAPI_PROFILE:-test}" >/dev/null
"$here/consumer_test.sh" "$tmp/deb" "$version" "$tmp/deb/lib/x86_64-linux-gnu"
echo "install: ok (make install, then the consumers, with lib/ and with a Debian LIBDIR)"

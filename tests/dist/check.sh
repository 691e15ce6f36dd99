#!/usr/bin/env bash
# Installs and uses each artifact `make dist` wrote, the way a user does, with
# no Rust toolchain on PATH (a PATH of the system's directories and the few
# tools the checks name) and away from this checkout:
#   Python  a fresh venv, `pip install --no-index` of the abi3 wheel: the README's
#           wheel example runs and prints what it should, `ssefold.__version__` is
#           the release, the module comes from the venv; `auditwheel show` says
#           manylinux_2_17 (x86_64 or aarch64); the wheel built for this python3's
#           version the same, chosen by pip from the directory over the abi3 one;
#           the free-threaded wheel the same on a 3.13t,
#           with the GIL staying off; the sdist holds what a source build needs and
#           every target its manifests declare
#   C       the tarball unpacked, then moved elsewhere (relocatable): no build path
#           in any file, glibc symbols no newer than 2.17, then
#           tests/c/consumer_test.sh (pkg-config and CMake consumers, shared and
#           static, run without LD_LIBRARY_PATH)
#   Go      a new module outside the checkout, the package fetched from
#           dist/goproxy with `go get` (an empty module cache, no network), built
#           with CGO_ENABLED=1, run: it folds a stream
# Usage: tests/dist/check.sh [DIST_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dist=$(cd "${1:-$root/dist}" && pwd)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
arch=$(uname -m)   # x86_64 or aarch64: the names tools/dist.sh gives this platform's artifacts
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# Under pipefail, `producer | grep -q` can fail when grep exits at its first
# match and the producer is then killed by SIGPIPE: the checks read a file or
# count (`grep -c`), which reads its whole input.
fail() { echo "dist check: FAIL: $*" >&2; exit 1; }
ok() { echo "dist check: ok: $*" >&2; }
one() { # the one file matching a pattern
  local m
  m=$(compgen -G "$1" || true)
  if [ -z "$m" ] || [ "$(wc -l <<<"$m")" != 1 ]; then fail "expected one file $1, found: ${m:-none}"; fi
  echo "$m"
}

# --- A PATH with no Rust on it.
bin="$tmp/bin"
mkdir -p "$bin"
ln -s "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$bin/python3"
go_exe=$(command -v go || echo /usr/local/go/bin/go)
ln -s "$(readlink -f "$go_exe")" "$bin/go"
tools="$root/target/dist-tools/bin"
export PATH="$bin:/usr/bin:/bin"
for t in cargo rustc rustup maturin; do
  ! command -v "$t" >/dev/null || fail "$t is on the scrubbed PATH ($(command -v "$t"))"
done
unset CARGO_HOME RUSTUP_HOME CARGO_TARGET_DIR VIRTUAL_ENV PYTHONPATH
cd "$tmp"

# --- Python: the abi3 wheel.
wheel=$(one "$dist/ssefold-$version-cp39-abi3-manylinux*_$arch.whl")
"$tools/python" "$tools/auditwheel" show "$wheel" >"$tmp/auditwheel.txt"
grep -qF "\"manylinux_2_17_$arch\"" "$tmp/auditwheel.txt" || { cat "$tmp/auditwheel.txt" >&2; fail "auditwheel: not manylinux_2_17"; }
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --no-index --disable-pip-version-check "$wheel"
# The README's wheel example (the block after the marker), run as a script.
python3 - "$root/README.md" >"$tmp/example.py" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<!-- the wheel's example.*?-->\s*```python\n(.*?)^```", text, re.S | re.M)
if not m:
    sys.exit("README.md: no wheel example")
print(m.group(1))
PY
out=$("$tmp/venv/bin/python" "$tmp/example.py")
[ "$out" = "$(printf 'Hello, world!\nend_turn 4 %s' "$version")" ] \
  || fail "the README's wheel example printed: $out"
"$tmp/venv/bin/python" - "$version" "$tmp/venv" <<'PY'
import os, sys
import ssefold
assert ssefold.__version__ == sys.argv[1], ssefold.__version__
assert os.path.realpath(ssefold._ssefold.__file__).startswith(os.path.realpath(sys.argv[2])), ssefold._ssefold.__file__
assert ssefold._ssefold.__file__.endswith(".abi3.so"), ssefold._ssefold.__file__
PY
ok "abi3 wheel $(basename "$wheel"): manylinux_2_17, installed with no Rust, README example, __version__ $version"

# --- Python: the wheel built for this CPython, which pip prefers to the abi3
# one when both are at hand (make dist builds it for python3 at least).
tag=$(python3 -c 'import sys; print(sys.implementation.cache_tag.replace("cpython-", "cp"))')
own_wheel=$(one "$dist/ssefold-$version-$tag-$tag-manylinux*_$arch.whl")
"$tools/python" "$tools/auditwheel" show "$own_wheel" >"$tmp/auditwheel-own.txt"
grep -qF "\"manylinux_2_17_$arch\"" "$tmp/auditwheel-own.txt" || { cat "$tmp/auditwheel-own.txt" >&2; fail "auditwheel: $own_wheel"; }
python3 -m venv "$tmp/venv-own"
"$tmp/venv-own/bin/python" -m pip install -q --no-index --find-links "$dist" --disable-pip-version-check "ssefold==$version"
own_out=$("$tmp/venv-own/bin/python" "$tmp/example.py")
[ "$own_out" = "$out" ] || fail "the $tag wheel printed: $own_out"
"$tmp/venv-own/bin/python" - "$tmp/venv-own" <<'PY' || fail "pip did not install the $tag wheel from $dist"
import os, sys, sysconfig
import ssefold
path = ssefold._ssefold.__file__
assert os.path.realpath(path).startswith(os.path.realpath(sys.argv[1])), path
assert path.endswith(sysconfig.get_config_var("EXT_SUFFIX")), path
PY
ok "$tag wheel $(basename "$own_wheel"): manylinux_2_17, preferred by pip to the abi3 wheel, README example"

# --- Python: the free-threaded wheel, when make dist built one.
ft_wheel=$(compgen -G "$dist/ssefold-$version-cp3*-cp3*t-manylinux*_$arch.whl" || true)
if [ -n "$ft_wheel" ]; then
  ft_python=${SSEFOLD_FT_PYTHON:-$root/target/python3.13t/bin/python3.13t}
  [ -x "$ft_python" ] || fail "a free-threaded wheel but no free-threaded CPython to try it ($ft_python)"
  "$tools/python" "$tools/auditwheel" show "$ft_wheel" >"$tmp/auditwheel-ft.txt"
  grep -qF "\"manylinux_2_17_$arch\"" "$tmp/auditwheel-ft.txt" || { cat "$tmp/auditwheel-ft.txt" >&2; fail "auditwheel: $ft_wheel"; }
  "$ft_python" -m venv "$tmp/venv-ft"
  "$tmp/venv-ft/bin/python" -m pip install -q --no-index --disable-pip-version-check "$ft_wheel"
  ft_out=$("$tmp/venv-ft/bin/python" "$tmp/example.py")
  [ "$ft_out" = "$out" ] || fail "the free-threaded wheel printed: $ft_out"
  "$tmp/venv-ft/bin/python" -c 'import sys, ssefold; assert not sys._is_gil_enabled(), "importing ssefold turned the GIL on"'
  ok "free-threaded wheel $(basename "$ft_wheel"): installed, README example, the GIL stays off"
fi

# --- Python: the sdist holds what a source build needs.
sdist=$(one "$dist/ssefold-$version.tar.gz")
tar -tzf "$sdist" >"$tmp/sdist.txt"
# Every target a manifest in it declares is in it too (cargo refuses to read
# a manifest whose declared bench, test, example or binary is missing, and
# maturin keeps the workspace's manifest as written).
mkdir -p "$tmp/sdist"
tar -xzf "$sdist" -C "$tmp/sdist"
python3 - "$tmp/sdist/ssefold-$version" <<'PY' || fail "the sdist's manifests name missing files"
import pathlib, sys, tomllib
top = pathlib.Path(sys.argv[1])
missing = []
for manifest in top.rglob("Cargo.toml"):
    spec = tomllib.loads(manifest.read_text(encoding="utf-8"))
    for kind, folder in (("bench", "benches"), ("test", "tests"), ("example", "examples"), ("bin", "src/bin")):
        for target in spec.get(kind, []):
            path = target.get("path") or f"{folder}/{target['name']}.rs"
            if not (manifest.parent / path).exists() and not (manifest.parent / folder / target["name"] / "main.rs").exists():
                missing.append(f"{manifest.relative_to(top)}: {kind} {target['name']} ({path})")
    for member in spec.get("workspace", {}).get("members", []):
        if not (manifest.parent / member / "Cargo.toml").exists():
            missing.append(f"{manifest.relative_to(top)}: workspace member {member}")
if missing:
    sys.exit("\n".join(missing))
PY
for f in pyproject.toml Cargo.toml Cargo.lock src/lib.rs include/ssefold.h bindings/python/Cargo.toml \
  bindings/python/src/lib.rs python/ssefold/__init__.py python/ssefold/_ssefold.pyi LICENSE-MIT LICENSE-APACHE PKG-INFO; do
  grep -qx "ssefold-$version/$f" "$tmp/sdist.txt" || fail "the sdist lacks $f"
done
! grep -qE '^ssefold-[^/]*/(target|\.venv|dist)/' "$tmp/sdist.txt" || fail "the sdist holds build output"
pkg_info=$(tar -xzOf "$sdist" "ssefold-$version/PKG-INFO")
grep -qx "Version: $version" <<<"$pkg_info" || fail "the sdist's PKG-INFO version"
ok "sdist $(basename "$sdist"): $(wc -l <"$tmp/sdist.txt") files"

# --- C: unpacked, moved, used.
tarball=$(one "$dist/ssefold-$version-$arch-linux-gnu.tar.gz")
mkdir -p "$tmp/unpacked" "$tmp/elsewhere/deeper"
tar -xzf "$tarball" -C "$tmp/unpacked"
name="ssefold-$version-$arch-linux-gnu"
mv "$tmp/unpacked/$name" "$tmp/elsewhere/deeper/"
prefix="$tmp/elsewhere/deeper/$name"
for f in README.md LICENSE-MIT LICENSE-APACHE CHANGELOG.md include/ssefold.h include/ssefold.hpp lib/pkgconfig/ssefold.pc \
  lib/cmake/ssefold/ssefold-config.cmake lib/cmake/ssefold/ssefold-config-version.cmake; do
  [ -f "$prefix/$f" ] || fail "the C tarball lacks $f"
done
# Nothing names the checkout, this machine's home or the build's staging directory.
for needle in "$root" "${HOME:-}" /tmp/; do
  case "$needle" in "" | /) continue ;; esac   # a container's HOME may be /
  ! grep -rlaF "$needle" "$prefix" >"$tmp/found.txt" || fail "the C tarball names $needle: $(cat "$tmp/found.txt")"
done
newest=$(objdump -T "$prefix/lib/libssefold.so.$version" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
[ "$(printf '%s\n2.17\n' "$newest" | sort -V | tail -n 1)" = 2.17 ] || fail "libssefold.so needs glibc $newest (> 2.17)"
"$root/tests/c/consumer_test.sh" "$prefix" "$version" >&2
ok "C tarball $(basename "$tarball"): relocatable, newest glibc symbol $newest, pkg-config and CMake consumers"

# --- Go: a module outside the checkout, the package from the module proxy.
module=$(sed -n 's/^module //p' "$root/bindings/go/go.mod")
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"strings"

	ssefold "github.com/ssefold/ssefold/bindings/go"
)

const stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"from Go\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

func main() {
	msg, err := ssefold.Fold(strings.NewReader(stream), ssefold.Anthropic)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ssefold.Version(), ssefold.BindingVersion)
	fmt.Println(string(msg))
}
GO
(
  cd "$tmp/consumer"
  export GOPATH="$tmp/gopath" GOMODCACHE="$tmp/gopath/mod" GOPROXY="file://$dist/goproxy" GONOSUMDB="$module" \
    GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=1
  go mod init example.com/consumer >/dev/null 2>&1
  go get "$module@v$version" >/dev/null 2>"$tmp/go-get.log" || { cat "$tmp/go-get.log" >&2; exit 1; }
  go build -o consumer . 2>"$tmp/go-build.log" || { cat "$tmp/go-build.log" >&2; exit 1; }
) || fail "go get / go build of $module@v$version from dist/goproxy"
go_out=$(env -u LD_LIBRARY_PATH "$tmp/consumer/consumer")
[ "$(head -n 1 <<<"$go_out")" = "$version $version" ] || fail "the Go program's versions: $go_out"
if ! grep -q '"text":"from Go"' <<<"$go_out" || ! grep -q '"stop_reason":"end_turn"' <<<"$go_out"; then
  fail "the Go program folded: $go_out"
fi
! ldd "$tmp/consumer/consumer" | grep -c ssefold >/dev/null || fail "the Go program links libssefold dynamically"
ok "Go module $module@v$version: go get from the module proxy, built with cgo and no Rust, folds"
echo "dist check: all artifacts ok" >&2

#!/usr/bin/env bash
# Installs what `make test` needs on a fresh Debian/Ubuntu machine, and only
# what is missing: run by `make test` (skip it with SSEFOLD_SKIP_SETUP=1) and
# so by .ci/run. On other systems install the same things by hand (README,
# "Prerequisites").
#
#   Debian packages  make cmake ninja-build pkg-config libgtest-dev shellcheck
#                    libcurl4-openssl-dev valgrind python3-venv chromium
#                    redis-server (the replay stores' tests start their own on a
#                    free port; the service Debian starts is not used), and nodejs
#                    npm when Node is missing (apt-get update first); gcc and the
#                    zlib, OpenSSL and libffi headers for the free-threaded CPython
#                    that tools/free-threaded-python.sh builds
#   Rust             rustup components rustfmt and clippy
#   Go               >= 1.23 on PATH or in /usr/local/go/bin (Debian's golang-go is too old:
#                    a missing Go is reported, not installed)
#   Python venv      .venv with maturin, pytest, mypy, pyright and the pinned
#                    test dependencies: created by `make python-venv`, not here
set -euo pipefail

debian_packages=(make cmake ninja-build pkg-config libgtest-dev libcurl4-openssl-dev valgrind python3-venv chromium
  redis-server gcc libssl-dev zlib1g-dev libffi-dev xz-utils shellcheck)
# Node.js >= 18 with npm: the image ships it; Debian's packages otherwise.
command -v npm >/dev/null 2>&1 || debian_packages+=(nodejs npm)

say() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    say "need root to run: $* (install these by hand, then rerun)"
    exit 1
  fi
}

# --- Debian packages: only the missing ones, after `apt-get update`.
if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for pkg in "${debian_packages[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
else
  say "not a Debian-like system: install by hand: ${debian_packages[*]} (see README, Prerequisites)"
fi

# --- Rust: the lint components.
if ! command -v cargo >/dev/null 2>&1; then
  say "cargo not found: install Rust (https://rustup.rs), then rerun"
  exit 1
fi
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || say "could not add rustfmt/clippy with rustup"
fi

# --- Go: needed for the Go binding's tests.
go_bin="$(command -v go || true)"
[ -n "$go_bin" ] || { [ -x /usr/local/go/bin/go ] && go_bin=/usr/local/go/bin/go; }
if [ -z "$go_bin" ]; then
  say "Go >= 1.23 not found (PATH or /usr/local/go/bin): install it from the Go project's releases, then rerun"
  exit 1
fi
go_minor="$("$go_bin" env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
if [ -z "$go_minor" ] || [ "$go_minor" -lt 23 ]; then
  say "Go >= 1.23 needed, found $("$go_bin" env GOVERSION) at $go_bin"
  exit 1
fi

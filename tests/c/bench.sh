#!/usr/bin/env bash
# C ABI vs Rust API throughput on the same corpus, same machine, one run
# (`make c-bench`). Builds the release library, the Rust bench example and
# the C bench (statically linked, -O2), then, for the SSE decoder and for
# the provider stream (SSEFOLD_BENCH_MODE=sse|fold), runs both alternately
# five times (25 timed runs per process), checks that their checksums agree,
# and counts instructions with callgrind (one pass over a 4 MiB corpus).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mib=${MIB:-16}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release --lib --quiet
cargo build --release --example capi_bench --quiet
cc -std=c99 -O2 -Wall -Werror -Iinclude tests/c/bench_sse.c -o "$tmp/bench_sse" target/release/libssefold.a \
  -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
target/release/examples/capi_bench "$tmp/small.sse" 4 >/dev/null

measure() {
  export SSEFOLD_BENCH_MODE=$1
  local rust_best=0 c_best=0 rust_med=0 c_med=0 r c
  echo "== $1 =="
  for round in 1 2 3 4 5; do
    r=$(target/release/examples/capi_bench "$tmp/corpus.sse" "$mib")
    c=$("$tmp/bench_sse" "$tmp/corpus.sse")
    echo "round $round: $r"
    echo "round $round: $c"
    [ "$(echo "$r" | grep -o 'events=[0-9]* data_bytes=[0-9]*')" = "$(echo "$c" | grep -o 'events=[0-9]* data_bytes=[0-9]*')" ] \
      || { echo "checksum mismatch" >&2; exit 1; }
    rust_best=$(echo "$r" | sed 's/.*MB\/s=//' | awk -v b="$rust_best" '{print ($1 > b) ? $1 : b}')
    c_best=$(echo "$c" | sed 's/.*MB\/s=//' | awk -v b="$c_best" '{print ($1 > b) ? $1 : b}')
    rust_med=$(echo "$r" | sed 's/.*median_MB\/s=\([0-9.]*\).*/\1/' | awk -v b="$rust_med" '{print ($1 > b) ? $1 : b}')
    c_med=$(echo "$c" | sed 's/.*median_MB\/s=\([0-9.]*\).*/\1/' | awk -v b="$c_med" '{print ($1 > b) ? $1 : b}')
  done
  # Instruction counts: independent of the machine's load, which makes
  # wall-clock figures noisy on shared cores. One pass of the measured
  # function (decode_once or fold_once, the same name on both sides), not
  # the reading of the corpus or its split into turns.
  if command -v valgrind >/dev/null; then
    local pass=decode_once
    [ "$1" = fold ] && pass=fold_once
    count() { SSEFOLD_BENCH_READ=1 SSEFOLD_BENCH_RUNS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      --toggle-collect="*$pass*" "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
    local ri ci
    ri=$(count target/release/examples/capi_bench "$tmp/small.sse")
    ci=$(count "$tmp/bench_sse" "$tmp/small.sse")
    awk -v m="$1" -v r="$ri" -v c="$ci" 'BEGIN { printf "%s instructions (4 MiB, one pass): rust-api %d, c-abi %d, c/rust = %.3f\n", m, r, c, c / r }'
  fi
  awk -v m="$1" -v r="$rust_best" -v c="$c_best" 'BEGIN { printf "%s best run:          rust-api %.1f MB/s, c-abi %.1f MB/s, c/rust = %.3f\n", m, r, c, c / r }'
  awk -v m="$1" -v r="$rust_med" -v c="$c_med" 'BEGIN { printf "%s best round median: rust-api %.1f MB/s, c-abi %.1f MB/s, c/rust = %.3f\n", m, r, c, c / r }'
}

measure sse
measure fold

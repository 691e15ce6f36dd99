#!/usr/bin/env bash
# Runs an example client against the loopback SSE server and checks that it
# printed the text of the response (its text deltas), in order.
# Usage: run_example.sh PYTHON EXAMPLE FIXTURE [WRAPPER...]  (e.g. valgrind ...)
set -euo pipefail
python=$1 example=$2 fixture=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$python" "$here/sse_server.py" "$fixture" 1 > "$tmp/port" &
server_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(head -n 1 "$tmp/port")

status=0
timeout 120 "$@" "$example" "http://127.0.0.1:$port/" > "$tmp/out" 2> "$tmp/err" || status=$?
wait "$server_pid"
cat "$tmp/err" >&2
# EXPECT_STATUS=1: a stream that ends early must fail (after printing its text).
if [ "$status" != "${EXPECT_STATUS:-0}" ]; then
  echo "FAIL: $example exited with $status, expected ${EXPECT_STATUS:-0}" >&2
  exit 1
fi

# The expected output: the text of every text delta, in order, then a newline.
"$python" - "$fixture" > "$tmp/want" <<'PY'
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
out = []
for block in text.split("\n\n"):
    for line in block.split("\n"):
        if line.startswith("data: "):
            try:
                data = json.loads(line[6:])
            except ValueError:  # a truncated last event
                continue
            if data.get("type") == "content_block_delta" and data["delta"].get("type") == "text_delta":
                out.append(data["delta"]["text"])
print("".join(out))
PY
if ! diff -u "$tmp/want" "$tmp/out"; then
  echo "FAIL: $example printed something else" >&2
  exit 1
fi
echo "ok: $(wc -c < "$tmp/out") bytes of text streamed through $(basename "$example")"

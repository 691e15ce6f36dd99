#!/usr/bin/env bash
# Runs an example client against the loopback SSE server and checks that it
# printed the data of every event of the fixture, in order.
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

timeout 120 "$@" "$example" "http://127.0.0.1:$port/" > "$tmp/out"
wait "$server_pid"

# The expected output: each event's data lines joined with LF, one per event.
"$python" - "$fixture" > "$tmp/want" <<'PY'
import sys
text = open(sys.argv[1], encoding="utf-8").read().replace("\r\n", "\n").replace("\r", "\n")
data = []
for line in text.split("\n")[:-1]:  # the part after the last LF is unterminated
    if line == "":
        if data:
            print("\n".join(data))
        data = []
    elif line == "data" or line.startswith("data:"):
        value = line[5:]
        data.append(value[1:] if value.startswith(" ") else value)
PY
if ! diff -u "$tmp/want" "$tmp/out"; then
  echo "FAIL: $example printed something else" >&2
  exit 1
fi
echo "ok: $(wc -l < "$tmp/out") lines streamed through $(basename "$example")"

#!/usr/bin/env bash
# Runs examples/c/tool_pool and checks its output: results released in call
# order whatever order the tools finished in, and the next request's tool
# results. Usage: run_tool_pool.sh EXAMPLE [WRAPPER...]  (e.g. valgrind ...)
set -euo pipefail
example=$1
shift
out=$(timeout 120 "$@" "$example" 3)
echo "$out"
got=$(echo "$out" | sed -n 's/^result \(call_[0-9]\).*/\1/p' | tr '\n' ' ')
if [ "$got" != "call_1 call_2 call_3 call_4 call_5 " ]; then
  echo "FAIL: results out of call order: $got" >&2
  exit 1
fi
# call_2 (20 ms) finishes before call_1 (60 ms); call_3 (exclusive) starts after both.
events=$(echo "$out" | sed -n 's/^event {"event":"tool_execution_\([a-z]*\)","call_id":"\(call_[0-9]\)".*/\1:\2/p' | tr '\n' ' ')
case "$events" in
  *"finished:call_2 "*"finished:call_1 started:call_3 "*) ;;
  *) echo "FAIL: unexpected event order: $events" >&2; exit 1 ;;
esac
want='next request: {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"read_file done in 60 ms"},{"type":"tool_result","tool_use_id":"call_2","content":"grep done in 20 ms"},{"type":"tool_result","tool_use_id":"call_3","content":"bash done in 30 ms"},{"type":"tool_result","tool_use_id":"call_4","content":"read_file done in 10 ms"},{"type":"tool_result","tool_use_id":"call_5","content":"No such tool available: no_such_tool","is_error":true}]}'
if ! echo "$out" | grep -qxF "$want"; then
  echo "FAIL: next request differs" >&2
  exit 1
fi

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
# The exclusive call_3 starts only after call_1 and call_2 have finished and
# runs alone: call_4 starts after it finishes. (Whether call_1 and call_2
# overlap depends on timing, under valgrind too: not checked.)
events=$(echo "$out" | sed -n 's/^event {"event":"tool_execution_\([a-z]*\)","call_id":"\(call_[0-9]\)".*/\1:\2/p' | tr '\n' ' ')
pos() { local i=0; for e in $events; do [ "$e" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
s3=$(pos started:call_3) f3=$(pos finished:call_3) f1=$(pos finished:call_1) f2=$(pos finished:call_2) s4=$(pos started:call_4)
if [ "$s3" -lt 0 ] || [ "$f1" -lt 0 ] || [ "$f2" -lt 0 ] || [ "$f1" -gt "$s3" ] || [ "$f2" -gt "$s3" ] ||
   [ "$f3" -lt "$s3" ] || [ "$s4" -lt "$f3" ]; then
  echo "FAIL: unexpected event order: $events" >&2
  exit 1
fi

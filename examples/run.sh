#!/usr/bin/env bash
# Runs every example's test (`go tool task examples`, suite "examples" of
# scripts/test-all.sh). Each example installs its pinned packages in its
# own folder; the SDKs come from this checkout: sdk-ts packed into
# examples/.sdk (what `npm install agentfs-sdk` would give), sdk-python
# installed from sdk-python/, the engine from bin/ (`go tool task build`).
#
# EXAMPLES="ai-sdk mcp" runs a few.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
root=$(cd .. && pwd)
export AGENTFS_BIN=${AGENTFS_BIN:-$root/bin/agentfs}
test -x "$AGENTFS_BIN" || { echo "no engine at $AGENTFS_BIN: run 'go tool task build'" >&2; exit 1; }
# The examples call `agentfs` as users do.
export PATH="$(dirname "$AGENTFS_BIN"):$PATH"

all=""
for ex in ai-sdk langchain go-agent mcp run-coding-agent replay openai-agents; do
  [ -x "$ex/test.sh" ] && all+=" $ex"
done
examples=${EXAMPLES:-$all}

needs_ts=0
for ex in $examples; do
  if [ -f "$ex/package.json" ] || [ -f "$ex/ts/package.json" ]; then needs_ts=1; fi
done
if [ $needs_ts = 1 ]; then
  mkdir -p .sdk
  (cd "$root/sdk-ts" && npm ci --no-audit --no-fund --silent && npm run build --silent \
    && npm pack --ignore-scripts --silent --pack-destination "$here/.sdk" >/dev/null)
fi

failed=()
for ex in $examples; do
  [ -d "$ex" ] || { echo "no example $ex" >&2; failed+=("$ex"); continue; }
  echo "=== example $ex"
  start=$(date +%s)
  if ./"$ex"/test.sh; then
    echo "--- PASS $ex ($(( $(date +%s) - start ))s)"
  else
    echo "--- FAIL $ex ($(( $(date +%s) - start ))s)"
    failed+=("$ex")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "failed examples: ${failed[*]}" >&2; exit 1; }

#!/usr/bin/env bash
# CI test of this example (examples/run.sh calls it): the MCP Inspector of
# tests/mcp (`go tool task compat-deps` installs it) against agentfs serve mcp.
set -euo pipefail
cd "$(dirname "$0")"
test -x ../../tests/mcp/node_modules/.bin/mcp-inspector || (cd ../../tests/mcp && npm install --no-audit --no-fund --silent)
node --test test.mjs

#!/usr/bin/env bash
# CI test of this example (examples/run.sh calls it after packing the SDK
# into examples/.sdk): install the pinned packages here, run the test.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --silent
node --test test.mjs

#!/usr/bin/env bash
# CI test of this example (examples/run.sh calls it after packing the SDK
# into examples/.sdk): the TypeScript assistant with its pinned packages,
# then the Python one in python/.venv (installed while requirements.txt is
# unchanged only once; the SDK from this checkout, editable).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --silent
node --test test.mjs
cd python
test -x .venv/bin/python || python3 -m venv .venv
if [ ! -f .venv/.installed ] || [ requirements.txt -nt .venv/.installed ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt -e "../../../sdk-python[openai-agents]"
  touch .venv/.installed
fi
.venv/bin/python -m pytest -q -p no:cacheprovider test_research.py

#!/usr/bin/env bash
# CI test of this example (examples/run.sh calls it): a virtualenv here
# with the pinned packages and agentfs from this checkout, then pytest.
# The install is skipped while requirements.txt is older than the venv's
# stamp (the SDK is an editable install: its changes need no reinstall).
set -euo pipefail
cd "$(dirname "$0")"
test -x .venv/bin/python || python3 -m venv .venv
if [ ! -f .venv/.installed ] || [ requirements.txt -nt .venv/.installed ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt -e "../../sdk-python[fsspec,langchain]"
  touch .venv/.installed
fi
.venv/bin/python -m pytest -q -p no:cacheprovider test_agent.py

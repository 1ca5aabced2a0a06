#!/usr/bin/env bash
# CI test of this example (examples/run.sh calls it): a virtualenv here
# with the pinned packages and agentfs from this checkout, then pytest.
set -euo pipefail
cd "$(dirname "$0")"
test -x .venv/bin/python || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt -e "../../sdk-python[fsspec,langchain]"
.venv/bin/python -m pytest -q -p no:cacheprovider test_agent.py

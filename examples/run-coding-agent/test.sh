#!/usr/bin/env bash
# CI test of this example (examples/run.sh calls it): the stand-in agent
# under `agentfs run` on a copy of project/, then diff, then commit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
work=$tmp/project logs=$tmp
mkdir "$work"
cp -r "$here/project/." "$work/"
cd "$work"

# 1. The agent works in the sandbox: its changes go to .agentfs/fix.db.
# The script comes on standard input: a private /tmp inside the sandbox
# hides host paths outside the project when the checkout is under /tmp.
agentfs run --session fix --no-network -- sh -s < "$here/stand-in-agent.sh" | tee "$logs/run.out"
grep -q "agent: HOME is read-only" "$logs/run.out"
grep -q "agent: done" "$logs/run.out"

# 2. The host directory is untouched until the review.
grep -q "return a - b" src/calc.py
test -f NOTES.tmp && ! test -e tests

# 3. Review: what changed.
agentfs diff fix | tee "$logs/diff.out"
expected='D file /NOTES.tmp
M file /src/calc.py
A dir /tests
A file /tests/test_calc.py'
[ "$(awk '{print $1, $2, $3}' "$logs/diff.out")" = "$expected" ] || { echo "unexpected diff"; exit 1; }

# 4. Commit: the host directory gets the changes, the overlay is empty.
agentfs commit fix
grep -q "return a + b" src/calc.py
grep -q "assert add(2, 3) == 5" tests/test_calc.py
! test -e NOTES.tmp
[ -z "$(agentfs diff fix)" ]
echo "run-coding-agent: ok"

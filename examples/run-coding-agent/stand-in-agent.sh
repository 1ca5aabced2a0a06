#!/bin/sh
# A scripted stand-in for a command-line coding agent (claude, codex,
# aider, ...): it does in the working directory what such an agent would,
# with ordinary host tools, not knowing it runs in a sandbox.
set -eu
echo "agent: AGENTFS=${AGENTFS:-} session=${AGENTFS_SESSION:-}"
# Fix the bug.
sed -i 's/return a - b/return a + b/' src/calc.py
# Add a test.
mkdir -p tests
printf 'from src.calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n' > tests/test_calc.py
# Clean up.
rm NOTES.tmp
# Try to touch something outside the project: the sandbox refuses.
if (echo x > "$HOME/agent-was-here") 2>/dev/null; then echo "agent: wrote to HOME"; else echo "agent: HOME is read-only"; fi
echo "agent: done"

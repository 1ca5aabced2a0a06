#!/usr/bin/env bash
# The main job on an embedded default: one local database file, no servers.
# An agent gets a workspace (.agentfs/demo.db), works in it through the
# in-process sandbox, every step lands in its timeline, a snapshot undoes a
# mistake, and (on Linux, as root) a real command runs copy-on-write over a
# host directory whose changes are reviewed and committed.
set -euo pipefail
cd "$(dirname "$0")/.."
A=./bin/agentfs
[ -x "$A" ] || (cd cli && go build -o ../bin/agentfs ./cmd/agentfs)

bold="" plain=""
if [ -t 1 ]; then bold=$(tput bold 2>/dev/null || true) plain=$(tput sgr0 2>/dev/null || true); fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
# show prints a command as one would type it (arguments quoted where
# needed), then runs it.
show() {
  local line="" a
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./:=@,+-]+$ ]]; then line+=" $a"; else line+=" '${a//\'/\'\\\'\'}'"; fi
  done
  printf '%s$%s%s\n' "$bold" "$line" "$plain"
  "$@"
}

step "1. A workspace for the agent: one SQLite file"
show $A init demo --force
show $A fs demo write /task.md "Summarise the docs into /out/summary.txt"
show $A fs demo import docs /docs
show $A fs demo ls /docs

step "2. The agent works in the sandbox (a shell inside the engine: no host process, no host file)"
show $A sh demo -c 'mkdir -p /out && for f in /docs/*.md; do printf "%s: %s lines\n" "${f##*/}" "$(wc -l < "$f")"; done > /out/summary.txt && cat /out/summary.txt'
show $A kv demo set progress '{"step":"summarised","files":'"$(ls docs/*.md | wc -l)"'}'
show $A kv demo get progress

step "3. Everything it did is in its timeline"
show $A timeline demo --limit 5

step "4. A snapshot, a mistake, and the undo"
show $A snapshot demo create before-cleanup
show $A sh demo -c 'rm -r /docs /out'
show $A fs demo ls /
show $A snapshot demo restore before-cleanup
show $A fs demo cat /out/summary.txt

step "5. Inspect it like any database"
show $A query demo "SELECT name, status FROM tool_calls ORDER BY id"
show $A fsck demo

if [ "$(uname -s)" = Linux ] && [ "$(id -u)" = 0 ] && [ -e /dev/fuse ]; then
  step "6. A real program, copy-on-write over a host directory, then review and commit"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  printf 'hello\n' > "$work/greeting.txt"
  bin=$PWD/bin/agentfs
  (
    cd "$work"
    show "$bin" run --session demo-run -- sh -c 'echo "hello, world" > greeting.txt && touch new.txt'
    printf '(the host file is unchanged: %s)\n' "$(cat greeting.txt)"
    show "$bin" diff demo-run
    show "$bin" commit demo-run
    printf '(after commit: %s)\n' "$(cat greeting.txt)"
  )
else
  step "6. (skipped: agentfs run needs Linux, root and /dev/fuse)"
fi

printf '\nThe whole workspace is .agentfs/demo.db: copy it, open it with sqlite3, or with agentfs-sdk.\n'

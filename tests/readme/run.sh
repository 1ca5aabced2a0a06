#!/usr/bin/env bash
# Runs every command of the README's quick tour (the ```sh block under
# "## Quick tour of the CLI"), in
# order, in a scratch directory with agentfs on PATH, and fails on the first
# command that fails: the README's examples stay true.
#
# The scratch directory holds what the tour assumes a user has: ./src (a Go
# file and a Makefile), ./project with a build/ directory, a Makefile and a
# package.json with a test script. Servers are started for 3 s and must
# still be running when stopped (exit 124 from timeout). Mount lines need
# FUSE: they are skipped without /dev/fuse unless AGENTFS_REQUIRE_FUSE=1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'agentfs umount /mnt/agent >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT

mkdir -p "$scratch/bin"
(cd "$root/cli" && go build -o "$scratch/bin/agentfs" ./cmd/agentfs)
export PATH="$scratch/bin:$PATH"

cd "$scratch"
mkdir -p src project/build "$HOME/.cache"
printf 'package main\n\nfunc main() {}\n' > src/main.go
printf 'all:\n\t@echo built\n' > src/Makefile
printf 'all:\n\t@echo built\ntest:\n\t@echo tested\n' > Makefile
printf '{"name":"t","version":"1.0.0","scripts":{"test":"echo npm-tested"}}\n' > package.json
echo obj > project/build/out.o

fuse=1
if [ ! -e /dev/fuse ] || [ "$(id -u)" != 0 ]; then
  [ "${AGENTFS_REQUIRE_FUSE:-}" = 1 ] && { echo "readme: /dev/fuse and root are required (AGENTFS_REQUIRE_FUSE=1)" >&2; exit 1; }
  fuse=0
fi

# The tour's lines (without comments and blank lines).
mapfile -t lines < <(awk '/^## Quick tour of the CLI/{t=1} t && /^```sh/{p=1; next} p && /^```/{exit} p' "$root/README.md" | sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d')
[ "${#lines[@]}" -gt 20 ] || { echo "readme: found only ${#lines[@]} lines in the quick tour" >&2; exit 1; }

# One shell runs the whole tour, as a user would type it (id=$(...) is used
# by the next line); each line is echoed, and the first failure stops it.
script=$scratch/tour.sh
{
  echo 'set -e; servers=(); trap '"'"'kill "${servers[@]}" 2>/dev/null || true'"'"' EXIT'
  for line in "${lines[@]}"; do
    case "$line" in
      "go tool task build") continue ;; # agentfs is already built above
      *"agentfs mount "*|*"agentfs umount "*|*"agentfs exec "*|*"agentfs init build -c"*|*"agentfs run "*|*"agentfs diff S"*)
        if [ "$fuse" = 0 ]; then printf 'echo %q\n' "skip (no FUSE): $line"; continue; fi ;;
    esac
    printf 'echo %q\n' "+ $line"
    case "$line" in
      *"serve sync"*)
        # the tour's next lines use this server: it runs in the background
        # until the end, and must be listening before they go on
        printf '(%s) </dev/null & servers+=($!)\n' "$line"
        printf 'for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/%s) 2>/dev/null && break; sleep 0.1; done\n' "$(sed -n 's/.*--listen [0-9.]*:\([0-9]*\).*/\1/p' <<<"$line")" ;;
      *"serve nfs"*|*"serve http"*)
        # a server must still be serving when timeout stops it (124)
        printf 'rc=0; timeout 3 bash -c %q </dev/null || rc=$?; [ "$rc" = 124 ] || { echo "readme: the server exited ($rc) instead of serving" >&2; exit 1; }\n' "$line" ;;
      *) printf '%s </dev/null\n' "$line" ;;
    esac
  done
} > "$script"
[ "$fuse" = 1 ] && mkdir -p /mnt/agent
bash "$script"
echo "readme: the quick tour's ${#lines[@]} lines ran"

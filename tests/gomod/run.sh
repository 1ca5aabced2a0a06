#!/usr/bin/env bash
# The Go modules as a user gets them: published, then installed by the go
# command from a module proxy, with no workspace and no checkout.
#
#  1. Every manifest agrees with VERSION (tools/cmd/checkversions).
#  2. core, cli, sdk-go and wasm are published from the working tree into a
#     file-based module proxy (GOPROXY=file://..., the layout a real proxy
#     serves) at vVERSION, as tagging core/vX.Y.Z, cli/vX.Y.Z, ... would.
#  3. Each module, with GOWORK=off against the proxy: `go mod tidy -diff`
#     changes nothing (but the go.sum lines of sibling modules, which
#     depend on the release's exact contents and so are not committed),
#     then `go build ./...` and `go vet ./...`.
#  4. In an empty directory: the root README's CLI install block
#     (`go install .../cli/cmd/agentfs@vVERSION`, init, fs write, fs cat).
#  5. In an empty directory: sdk-go/README.md's install block (go mod
#     init, go get .../sdk-go@vVERSION, go run .) with its main.go.
#
# Our modules come only from the test's proxy: they are removed from the
# module cache first, and the checksum database is off for their paths
# only (GONOSUMDB), as it is for any module before its first tag.
# Third-party modules come from the usual GOPROXY (after the machine's own
# module cache, read as a proxy, so nothing is downloaded twice) into a
# module cache kept under .cache/gomod (gitignored) between runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

SECONDS=0
step() { printf '\n--- [%ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(tr -d '[:space:]' <VERSION)
v=v$version
mods="core cli sdk-go wasm"
modprefix=github.com/agentfs-go/agentfs

step "manifests agree with VERSION ($version)"
go run ./tools/cmd/checkversions

work=$(mktemp -d "${TMPDIR:-/tmp}/agentfs-gomod.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

step "publish $mods at $v into a file-based module proxy"
go run ./tools/cmd/gomodpublish -out "$work/proxy" -version "$v" $mods

# Our modules from the test's proxy (tests/lib/goproxy.sh).
. "$root/tests/lib/goproxy.sh"
use_test_goproxy "$work/proxy"
export GOWORK=off
unset GOPRIVATE GONOPROXY GOSUMDB

for m in $mods tools; do
  step "$m: go mod tidy -diff (GOWORK=off)"
  # Only added go.sum lines of our own modules may differ; anything else
  # means the committed go.mod/go.sum are not what the module needs.
  if ! out=$(cd "$m" && go mod tidy -diff 2>&1); then
    extra=$(printf '%s\n' "$out" | grep -E '^[-+]' | grep -vE '^(\+\+\+|---) ' | grep -vE "^\+$modprefix/[a-z-]+ $v(/go\.mod)? h1:" || true)
    if [ -n "$extra" ]; then
      printf '%s\n' "$out" >&2
      fail "$m: go.mod/go.sum are not tidy against the published modules; run: (cd $m && GOWORK=off go mod tidy), then drop the $modprefix/* lines from go.sum"
    fi
  fi
  [ "$m" = tools ] && continue
  # Build and vet with the committed go.mod plus the sibling checksums,
  # through -modfile so the working tree is left as it is.
  cp "$m/go.mod" "$work/$m.mod"
  cp "$m/go.sum" "$work/$m.sum"
  (cd "$m" && go mod tidy -modfile="$work/$m.mod")
  cmp -s "$m/go.mod" "$work/$m.mod" || fail "$m: tidy changed go.mod"
  step "$m: go build ./... && go vet ./... (GOWORK=off)"
  if [ "$m" = wasm ]; then
    (cd "$m" && GOOS=js GOARCH=wasm go build -modfile="$work/$m.mod" -o /dev/null ./... && GOOS=js GOARCH=wasm go vet -modfile="$work/$m.mod" ./...)
  else
    (cd "$m" && go build -modfile="$work/$m.mod" ./... && go vet -modfile="$work/$m.mod" ./...)
  fi
done

# block FILE MARKER prints the fenced code block that follows the line
# "<!-- MARKER -->" in FILE: the README's commands are what runs.
block() {
  awk -v m="<!-- $2 -->" '
    index($0, m) == 1 { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$1"
}

step "README.md: install the CLI from the proxy and use it"
cli_script=$(block README.md "install: cli")
[ -n "$cli_script" ] || fail "README.md has no <!-- install: cli --> block"
printf '%s\n' "$cli_script"
mkdir -p "$work/cli-user" "$work/bin"
out=$(cd "$work/cli-user" && GOBIN="$work/bin" PATH="$work/bin:$PATH" bash -euo pipefail -c "$cli_script" 2>&1) ||
  { printf '%s\n' "$out" >&2; fail "README.md CLI install block failed"; }
printf '%s\n' "$out"
[ -x "$work/bin/agentfs" ] || fail "go install did not put agentfs in GOBIN"
grep -qx 'hello from agentfs' <<<"$out" || fail "fs cat did not print what fs write wrote"
"$work/bin/agentfs" version | grep -q "agentfs $version " || fail "installed agentfs does not report version $version"
[ -f "$work/cli-user/.agentfs/my-agent.db" ] || fail "init did not create .agentfs/my-agent.db"

step "sdk-go/README.md: go get the SDK from the proxy and run its program"
sdk_script=$(block sdk-go/README.md "install: sdk-go")
block sdk-go/README.md "install: sdk-go main.go" >"$work/main.go"
[ -n "$sdk_script" ] && [ -s "$work/main.go" ] || fail "sdk-go/README.md lacks its install blocks"
# The README says where main.go goes; put it there.
sdk_script=$(printf '%s\n' "$sdk_script" | sed "s|^# write main.go.*|cp '$work/main.go' main.go|")
printf '%s\n' "$sdk_script"
mkdir -p "$work/sdk-user"
out=$(cd "$work/sdk-user" && bash -euo pipefail -c "$sdk_script" 2>&1) ||
  { printf '%s\n' "$out" >&2; fail "sdk-go/README.md install block failed"; }
printf '%s\n' "$out"
grep -qx '/notes/todo.md: - ship' <<<"$out" || fail "the program did not read back what it wrote"
grep -qx 'missing is fs.ErrNotExist: true' <<<"$out" || fail "Stat of a missing file is not fs.ErrNotExist"
[ "$(cd "$work/sdk-user/hello" && go list -m "$modprefix/sdk-go")" = "$modprefix/sdk-go $v" ] || fail "the user's module does not require sdk-go $v"
[ -f "$work/sdk-user/hello/.agentfs/my-agent.db" ] || fail "the program did not create .agentfs/my-agent.db"
for m in core cli sdk-go; do
  [ -f "$GOMODCACHE/$modprefix/$m@$v/LICENSE" ] || fail "$m@$v as downloaded has no LICENSE"
done

echo
echo "gomod: OK in ${SECONDS}s ($v installs from a module proxy: go install of the CLI, go get of sdk-go, GOWORK=off build/vet/tidy of $mods)"

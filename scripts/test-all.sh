#!/usr/bin/env bash
# Runs every test suite of the project, each to its end even when an
# earlier one failed, prints one line per suite and a summary, and exits
# non-zero when any suite failed. `go tool task test` calls it, so one red
# Go test never hides the SDK suites' results.
#
# SUITES="go:core ts" limits the run to the named suites.
set -uo pipefail
cd "$(dirname "$0")/.."

all_suites="go:core go:cli go:sdk-go go:wasm go:tools gofmt wasm-go python ts rust xlang readme sync browser cloudflare go:nocgo crypt node examples gomod cargo pypi npm cross"
suites=${SUITES:-$all_suites}

run_suite() {
  case "$1" in
    go:tools) (cd tools && go vet ./... && go tool staticcheck ./...) ;;
    # wasm/ is GOOS=js only: its vet and staticcheck run in that build
    go:wasm) (cd wasm && GOOS=js GOARCH=wasm go vet ./... && GOOS=js GOARCH=wasm "$(go tool -n staticcheck)" ./... && go test -race -count=1 ./...) ;;
    # The engine without cgo (ncruces' SQLite compiled to Go, on real
    # files): its store-level packages, the SQL guard, and the CLI's tests
    # but the FUSE mount's (they drive vfs through this driver; vfs's own
    # suite runs with cgo, to keep CI short); cross-vetted for darwin and
    # windows. No -race: the race detector needs cgo.
    go:nocgo) (export CGO_ENABLED=0
      cd core && go vet ./store/... ./internal/rawsql/... &&
      GOOS=darwin go vet ./store/... && GOOS=windows go vet ./store/... &&
      go test -count=1 ./store/... ./kv/... ./toolcalls/... ./schema/... &&
      go test -count=1 -run 'TestAttack_SQL|TestCrypt' . ./internal/crypt/ &&
      cd ../cli && go build ./... && go test -count=1 -skip 'TestMount' ./...) ;;
    go:*) local m=${1#go:}; (cd "$m" && go vet ./... && go tool staticcheck ./... && go test -race -count=1 ./...) ;;
    gofmt) ./scripts/check-gofmt.sh ;;
    crypt) ./tests/crypt/run.sh ;;
    gomod) ./tests/gomod/run.sh ;;
    cargo) go tool task test-cargo ;;
    # every wheel + the sdist through a real index (pypiserver, twine, pip)
    pypi) ./tests/pypi/run.sh ;;
    # npm install agentfs-sdk from a Verdaccio registry (tests/npm/run.sh)
    npm) ./tests/npm/run.sh ;;
    cross) ./scripts/cross-vet.sh ;;
    wasm-go) go tool task test-wasm-go ;;
    # go:core runs the node command's tests (with -race); this suite runs
    # them again in the WebAssembly build, where goja and esbuild differ.
    node) (cd core && PATH="$PATH:$(go env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm go test -count=1 -run 'TestNode_EvalPrintArgs|TestNode_TypeScript' ./sandbox/jsnode) ;;
    python) go tool task test-python ;;
    ts) go tool task test-ts ;;
    browser) go tool task test-browser ;;
    cloudflare) go tool task test-cloudflare ;;
    rust) go tool task test-rust ;;
    xlang) go tool task test-xlang ;;
    # the README's first command and every line of its quick tour
    readme) go tool task demo && ./tests/readme/run.sh ;;
    sync) go tool task test-sync ;;
    examples) go tool task examples ;;
    *) echo "unknown suite $1" >&2; return 2 ;;
  esac
}

passed=() failed=()
report=""
for s in $suites; do
  echo "=== suite $s"
  start=$(date +%s)
  run_suite "$s"
  rc=$?
  secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then
    passed+=("$s"); report+=$(printf '\n  PASS  %-10s %5ss' "$s" "$secs")
  else
    failed+=("$s"); report+=$(printf '\n  FAIL  %-10s %5ss (exit %s)' "$s" "$secs" "$rc")
  fi
done

echo
echo "=== summary of suites:$report"
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]

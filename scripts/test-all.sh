#!/usr/bin/env bash
# Runs every test suite of the project, each to its end even when an
# earlier one failed, prints one line per suite and a summary, and exits
# non-zero when any suite failed. `go tool task test` calls it, so one red
# Go test never hides the SDK suites' results.
#
# SUITES="go:core ts" limits the run to the named suites.
set -uo pipefail
cd "$(dirname "$0")/.."

all_suites="go:core go:cli go:sdk-go go:wasm go:tools gofmt gomod cross wasm-go python ts rust xlang"
suites=${SUITES:-$all_suites}

run_suite() {
  case "$1" in
    go:tools) (cd tools && go vet ./...) ;;
    go:*) local m=${1#go:}; (cd "$m" && go vet ./... && go test -race -count=1 ./...) ;;
    gofmt) ./scripts/check-gofmt.sh ;;
    gomod) ./tests/gomod/run.sh ;;
    cross) ./scripts/cross-vet.sh ;;
    wasm-go) go tool task test-wasm-go ;;
    python) go tool task test-python ;;
    ts) go tool task test-ts ;;
    rust) go tool task test-rust ;;
    xlang) go tool task test-xlang ;;
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

#!/usr/bin/env bash
# Vets core, cli and sdk-go (tests included) for the platforms users run, without
# cgo: linux/arm64, darwin/arm64, darwin/amd64, windows/amd64. Each target
# is tried to its end so one failure does not hide another; `go vet`
# type-checks every file of the target, so a Linux-only call in a shared
# file fails here. CROSS_TARGETS="darwin/arm64" limits the run.
set -uo pipefail
cd "$(dirname "$0")/.."
targets=${CROSS_TARGETS:-"linux/arm64 darwin/arm64 darwin/amd64 windows/amd64"}
failed=()
for t in $targets; do
  for m in core cli sdk-go; do
    echo "--- CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} go vet ./... ($m)"
    if ! (cd "$m" && CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} go vet ./...); then
      failed+=("$t:$m")
    fi
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "cross: vet failed for ${failed[*]}" >&2
  exit 1
fi
echo "cross: core, cli and sdk-go vet clean for $targets"

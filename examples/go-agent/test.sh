#!/usr/bin/env bash
# CI test of this example (examples/run.sh calls it): the loop against the
# scripted model server on 127.0.0.1, then the program itself with -fake.
# Its own module (replace directives point at this checkout), outside go.work.
set -euo pipefail
cd "$(dirname "$0")"
export GOWORK=off
go vet ./...
go test -count=1 ./...
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go run . -fake -db "$tmp/a.db" | tee "$tmp/out"
grep -q "answer: Wrote /TODO.md" "$tmp/out"

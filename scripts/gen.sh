#!/usr/bin/env bash
# Regenerates every generated file from spec/proto, with local plugins only
# (pinned: Go tools in tools/go.mod, npm packages in tools/gen/package.json).
# Run by `go tool task gen`; `go tool task gen-check` runs it and fails when
# the committed files differ (CI does that).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin=$root/tools/.bin
mkdir -p "$bin"

# Go plugins, built from the versions pinned in tools/go.mod.
(cd tools && go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go \
  && go build -o "$bin/protoc-gen-connect-go" connectrpc.com/connect/cmd/protoc-gen-connect-go \
  && go build -o "$bin/protoc-gen-agentfs" ./cmd/protoc-gen-agentfs)

# buf and protoc-gen-es from npm (package-lock.json pins them).
if [ ! -x tools/gen/node_modules/.bin/buf ] || [ tools/gen/package-lock.json -nt tools/gen/node_modules/.package-lock.json ]; then
  (cd tools/gen && npm ci --no-audit --no-fund --silent)
fi
buf=tools/gen/node_modules/.bin/buf

"$buf" lint spec
"$buf" format --diff --exit-code spec

# Generated directories are emptied first so that removed definitions do
# not leave files behind.
rm -rf core/api/agentfs sdk-ts/src/gen
"$buf" generate spec --template spec/buf.gen.yaml

gofmt -w core/api

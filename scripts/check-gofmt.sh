#!/usr/bin/env bash
# Fails when a Go file is not gofmt-formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(gofmt -l core cli sdk-go wasm tools)
if [ -n "$bad" ]; then
  echo "gofmt needed on:"; echo "$bad"; exit 1
fi

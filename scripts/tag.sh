#!/usr/bin/env bash
# The tags of a release (`go tool task tag`): Go's multi-module tagging
# gives each published module a tag prefixed by its directory
# (core/vX.Y.Z, cli/vX.Y.Z, sdk-go/vX.Y.Z, wasm/vX.Y.Z), and vX.Y.Z marks
# the commit the npm, PyPI and crates.io packages and dist/ came from.
#
#   scripts/tag.sh            print the git tag commands for VERSION
#   scripts/tag.sh --create   create them (annotated, on HEAD) in the local
#                             repository; nothing is pushed: print the push
#
# --create refuses when manifests disagree with VERSION
# (tools/cmd/checkversions), the working tree has changes, or a tag exists.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

version=$(tr -d '[:space:]' <VERSION)
tags=(core/v$version cli/v$version sdk-go/v$version wasm/v$version v$version)

if [[ ${1:-} != --create ]]; then
  for t in "${tags[@]}"; do
    printf 'git tag -a %s -m "agentfs %s" %s\n' "$t" "$version" "$(git rev-parse --short HEAD)"
  done
  printf 'git push origin %s\n' "${tags[*]}"
  exit 0
fi

go run ./tools/cmd/checkversions
if [[ -n $(git status --porcelain) ]]; then
  echo "tag: the working tree has changes; commit them first (a tag names a commit, and the modules are zipped from it)" >&2
  exit 1
fi
for t in "${tags[@]}"; do
  if git rev-parse -q --verify "refs/tags/$t" >/dev/null; then
    echo "tag: $t exists already; bump VERSION for a new release" >&2
    exit 1
  fi
done
for t in "${tags[@]}"; do
  git tag -a "$t" -m "agentfs $version"
  echo "created $t"
done
echo "not pushed; to publish: git push origin ${tags[*]}"

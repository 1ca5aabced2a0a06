#!/usr/bin/env bash
# Builds every artifact of a release into dist/ (`go tool task release`),
# for every platform, with dist/SHA256SUMS over all of them:
#
#   dist/engines/agentfs-VERSION-TARGET.tar.gz   the CLI/engine per target
#                (.zip for win32-x64), each with LICENSE and README.md, from
#                scripts/build-engines.sh (the one cross build)
#   dist/npm/     the npm tarballs (sdk-ts/scripts/pack-all.sh)
#   dist/python/  the wheels and the sdist (sdk-python/scripts/build-dists.sh)
#   dist/crates/  agentfs-VERSION.crate (cargo package of sdk-rust)
#   dist/goproxy/ the Go modules core, cli, sdk-go, wasm at vVERSION as a
#                module proxy tree (.info, .mod, .zip; tools/cmd/gomodpublish):
#                exactly what the tags core/vVERSION, ... will serve
#
# RELEASE_PARTS="engines crates gomod" builds only some parts (the `cargo`
# suite's quick check); DIST=DIR writes elsewhere than dist/. A part whose script is missing is reported and
# makes the release fail at the end (after the other parts are built).
# Nothing is published or tagged: `go tool task tag` prints the tags.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

version=$(tr -d '[:space:]' <VERSION)
parts=${RELEASE_PARTS:-engines npm python crates gomod}
targets=(linux-x64 linux-arm64 darwin-arm64 darwin-x64 win32-x64)
dist=${DIST:-$ROOT/dist}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)
missing=()

say() { printf 'release: %s\n' "$*" >&2; }

go run ./tools/cmd/checkversions
rm -rf "$dist"
mkdir -p "$dist"

for part in $parts; do
  case $part in
  engines)
    # Binaries are cached between releases under .cache/engines (the
    # build script rebuilds a target only when a Go source is newer).
    ./scripts/build-engines.sh "$ROOT/.cache/engines" "${targets[@]}"
    mkdir -p "$dist/engines"
    for t in "${targets[@]}"; do
      name=agentfs-$version-$t
      stage=$(mktemp -d)
      mkdir "$stage/$name"
      exe=agentfs
      [[ $t == win32-* ]] && exe=agentfs.exe
      cp "$ROOT/.cache/engines/$t/$exe" LICENSE README.md "$stage/$name/"
      if [[ $t == win32-* ]]; then
        (cd "$stage" && zip -qr -X "$dist/engines/$name.zip" "$name")
      else
        # Owner and times fixed so the archive depends only on its files.
        tar -C "$stage" --owner=0 --group=0 --numeric-owner --mtime="@$(git log -1 --format=%ct)" \
          -czf "$dist/engines/$name.tar.gz" "$name"
      fi
      rm -rf "$stage"
    done
    ;;
  npm)
    if [[ -x sdk-ts/scripts/pack-all.sh ]]; then
      sdk-ts/scripts/pack-all.sh "$dist/npm"
    else
      say "MISSING: sdk-ts/scripts/pack-all.sh (the npm tarballs of agentfs-sdk and its per-platform packages are NOT in dist/)"
      missing+=(npm)
    fi
    ;;
  python)
    if [[ -x sdk-python/scripts/build-dists.sh ]]; then
      sdk-python/scripts/build-dists.sh "$dist/python"
    else
      say "MISSING: sdk-python/scripts/build-dists.sh (the wheels and sdist of agentfs are NOT in dist/)"
      missing+=(python)
    fi
    ;;
  crates)
    (cd sdk-rust && AGENTFS_SKIP_ENGINE_BUILD=1 cargo package --quiet --locked --no-verify --allow-dirty)
    mkdir -p "$dist/crates"
    cp "sdk-rust/target/package/agentfs-$version.crate" "$dist/crates/"
    ;;
  gomod)
    go run ./tools/cmd/gomodpublish -out "$dist/goproxy" -version "v$version" core cli sdk-go wasm >&2
    ;;
  *)
    say "unknown part $part (want engines npm python crates gomod)"
    exit 2
    ;;
  esac
done

(cd "$dist" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum >SHA256SUMS)
say "$(wc -l <"$dist/SHA256SUMS") files in dist/, checksums in dist/SHA256SUMS (verify: cd dist && sha256sum -c SHA256SUMS)"
if [[ ${#missing[@]} -gt 0 ]]; then
  say "INCOMPLETE: ${missing[*]} missing (see MISSING above)"
  exit 1
fi

#!/usr/bin/env bash
# Builds every npm tarball of the TypeScript SDK into OUTDIR and prints
# their paths on stdout, one a line (progress goes to stderr):
#
#   agentfs-sdk-VERSION.tgz              agentfs-sdk: the SDK and the
#                                        WebAssembly engine (wasm/)
#   agentfs-sdk-TARGET-VERSION.tgz       @agentfs-sdk/TARGET: the engine
#                                        binary (agentfs, agentfs.exe on
#                                        win32); linux-x64 also the Node
#                                        addon agentfs.node
#
#   sdk-ts/scripts/pack-all.sh OUTDIR                 every target
#   sdk-ts/scripts/pack-all.sh OUTDIR linux-x64 ...   the SDK and some targets
#
# TARGET is one of linux-x64 linux-arm64 darwin-arm64 darwin-x64 win32-x64
# (Node's platform-arch). agentfs-sdk lists every @agentfs-sdk/TARGET as
# an optional dependency at its exact version (sdk-ts/package.json; the
# manifests are sdk-ts/npm/TARGET/package.json, all at VERSION), so npm
# installs only the one whose os/cpu/libc match, as esbuild's packages do.
# The binaries come from scripts/build-engines.sh, the addon and the
# WebAssembly engine from go build, all kept in $AGENTFS_ENGINES (default
# .cache/engines at the repository root) and rebuilt only when a Go source
# is newer. The addon is built with cgo, so linux-x64 packs on a linux-x64
# host only.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: sdk-ts/scripts/pack-all.sh OUTDIR [TARGET...]}
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(linux-x64 linux-arm64 darwin-arm64 darwin-x64 win32-x64)
mkdir -p "$out"
out=$(cd "$out" && pwd)
engines=${AGENTFS_ENGINES:-$ROOT/.cache/engines}
mkdir -p "$engines"
engines=$(cd "$engines" && pwd)
version=$(tr -d '[:space:]' <"$ROOT/VERSION")

# A manifest at another version would publish a set npm cannot install
# together (the optional dependencies are exact).
for m in "$ROOT/sdk-ts/package.json" "${targets[@]/#/$ROOT/sdk-ts/npm/}"; do
	[[ $m == *.json ]] || m=$m/package.json
	v=$(node -p "require('$m').version")
	[[ $v == "$version" ]] || { echo "pack-all: $m has version $v, VERSION says $version (go run ./tools/cmd/checkversions)" >&2; exit 1; }
done

stale() { # stale FILE DIR...: FILE missing or older than a Go source under DIR...
	local f=$1; shift
	[[ ! -f $f ]] && return 0
	[[ -n $(find "$@" \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer "$f" -print -quit 2>/dev/null) ]]
}

"$ROOT/scripts/build-engines.sh" "$engines" "${targets[@]}"

for t in "${targets[@]}"; do
	[[ $t == linux-x64 ]] || continue
	if [[ "$(go env GOHOSTOS)-$(go env GOHOSTARCH)" != linux-amd64 ]]; then
		echo "pack-all: the linux-x64 package carries the Node addon (cgo): build it on a linux-x64 host" >&2
		exit 1
	fi
	addon=$engines/linux-x64/agentfs.node
	if stale "$addon" "$ROOT/core"; then
		(cd "$ROOT/core" && go build -trimpath -buildmode=c-shared -ldflags='-s -w' -o "$addon.tmp" ./cmd/agentfs-node)
		# c-shared also writes a C header (agentfs.node.h): not shipped.
		rm -f "$addon.h" "$addon.tmp.h" && mv "$addon.tmp" "$addon"
		echo "pack-all: built $addon" >&2
	fi
done

wasm=$engines/wasm/agentfs.wasm
if stale "$wasm" "$ROOT/core" "$ROOT/wasm"; then
	mkdir -p "$engines/wasm"
	(cd "$ROOT/wasm" && GOOS=js GOARCH=wasm go build -trimpath -ldflags=-s -o "$wasm.tmp" .)
	mv "$wasm.tmp" "$wasm"
	echo "pack-all: built $wasm" >&2
fi
# The Workers build (agentfs-sdk/cloudflare): the Durable Object's SQL
# storage instead of SQLite inside, no node command.
workers=$engines/wasm/agentfs-workers.wasm
if stale "$workers" "$ROOT/core" "$ROOT/wasm"; then
	(cd "$ROOT/wasm" && GOOS=js GOARCH=wasm go build -tags agentfs_workers -trimpath -ldflags='-s -w' -o "$workers.tmp" .)
	mv "$workers.tmp" "$workers"
	echo "pack-all: built $workers" >&2
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# agentfs-sdk: dist/ from the TypeScript sources, wasm/ from the cache,
# staged with its manifest plus the optional dependencies. They are added
# here, not in sdk-ts/package.json: there a development `npm ci` would look
# them up on the public registry (not there before a release: npm ci fails
# on the lockfile without them).
cd "$ROOT/sdk-ts"
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
	npm ci --no-audit --no-fund --silent >&2
fi
npm run build --silent >&2
main=$stage/agentfs-sdk
mkdir -p "$main/wasm"
cp -r package.json README.md dist "$main/"
cp "$ROOT/LICENSE" "$main/"
cp "$wasm" "$main/wasm/agentfs.wasm"
cp "$workers" "$main/wasm/agentfs-workers.wasm"
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$main/wasm/wasm_exec.js"
(cd "$main" && node -e '
	const fs = require("node:fs");
	const p = JSON.parse(fs.readFileSync("package.json", "utf8"));
	delete p.scripts; delete p.devDependencies;
	p.optionalDependencies = Object.fromEntries(fs.readdirSync(process.argv[1]).sort().map((t) => ["@agentfs-sdk/" + t, p.version]));
	fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\n");
' "$ROOT/sdk-ts/npm")
echo "$out/$(cd "$main" && npm pack --silent --pack-destination "$out" | tail -n1)"

# @agentfs-sdk/TARGET: staged in a temporary directory (the manifest, a
# README, the license and the engine, executable).
for t in "${targets[@]}"; do
	d=$stage/$t
	mkdir -p "$d"
	cp "$ROOT/sdk-ts/npm/$t/package.json" "$ROOT/LICENSE" "$d/"
	exe=agentfs
	[[ $t == win32-* ]] && exe=agentfs.exe
	install -m 0755 "$engines/$t/$exe" "$d/$exe"
	[[ $t == linux-x64 ]] && install -m 0755 "$engines/linux-x64/agentfs.node" "$d/agentfs.node"
	cat >"$d/README.md" <<MD
# @agentfs-sdk/$t

The $t engine of [agentfs-sdk](https://www.npmjs.com/package/agentfs-sdk)
$version: the \`$exe\` binary$([[ $t == linux-x64 ]] && echo " and the Node addon \`agentfs.node\`").
Do not install it yourself: \`npm install agentfs-sdk\` installs the engine
package of your platform as an optional dependency, and the SDK finds it.
MD
	echo "$out/$(cd "$d" && npm pack --silent --pack-destination "$out" | tail -n1)"
done

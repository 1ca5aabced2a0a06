#!/usr/bin/env bash
# Builds the agentfs engine (the CLI binary, which is also the engine the
# SDKs start) for the platforms the packages ship, into
# OUTDIR/TARGET/agentfs (agentfs.exe on Windows). This is the one cross
# build: the npm, Python and Rust packages and `go tool task release` all
# take their binaries from here.
#
#   scripts/build-engines.sh OUTDIR                      every target
#   scripts/build-engines.sh OUTDIR linux-x64 win32-x64  some targets
#
# Targets use Node's platform-arch names: linux-x64 linux-arm64
# darwin-arm64 darwin-x64 win32-x64. linux-x64 is built with cgo (go-libsql,
# the fastest driver, and the one `agentfs sync` needs) when the host is
# linux-x64; every other target is CGO_ENABLED=0 (the SQLite compiled to Go,
# store/driver_nocgo.go), so no cross C toolchain is needed.
# CGO_ENABLED=0 in the environment makes linux-x64 CGO-free too: a static
# binary that needs no libc (the Python musllinux/old-glibc wheel uses it;
# give it its own OUTDIR). A target whose
# binary is already newer than every Go source is not rebuilt (CI caches).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/build-engines.sh OUTDIR [TARGET...]}
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(linux-x64 linux-arm64 darwin-arm64 darwin-x64 win32-x64)
mkdir -p "$out"
out=$(cd "$out" && pwd)

host="$(go env GOHOSTOS)-$(go env GOHOSTARCH)"
newest_source() {
	find "$ROOT/core" "$ROOT/cli" \( -name '*.go' -o -name go.mod -o -name go.sum \) -newer "$1" -print -quit 2>/dev/null
}

for t in "${targets[@]}"; do
	case $t in
	linux-x64) goos=linux goarch=amd64 ;;
	linux-arm64) goos=linux goarch=arm64 ;;
	darwin-arm64) goos=darwin goarch=arm64 ;;
	darwin-x64) goos=darwin goarch=amd64 ;;
	win32-x64) goos=windows goarch=amd64 ;;
	*)
		echo "build-engines: unknown target $t (want linux-x64 linux-arm64 darwin-arm64 darwin-x64 win32-x64)" >&2
		exit 2
		;;
	esac
	exe=agentfs
	[[ $goos == windows ]] && exe=agentfs.exe
	bin="$out/$t/$exe"
	if [[ -f $bin && -z $(newest_source "$bin") ]]; then
		echo "build-engines: $t up to date ($bin)" >&2
		continue
	fi
	cgo=0
	[[ $host == linux-amd64 && $t == linux-x64 && ${CGO_ENABLED:-1} != 0 ]] && cgo=1
	mkdir -p "$out/$t"
	(cd "$ROOT/cli" && CGO_ENABLED=$cgo GOOS=$goos GOARCH=$goarch \
		go build -trimpath -ldflags='-s -w' -o "$bin.tmp" ./cmd/agentfs)
	mv "$bin.tmp" "$bin"
	printf 'build-engines: %s %s (cgo=%s, %.1f MiB)\n' "$t" "$bin" "$cgo" "$(echo "$(stat -c %s "$bin") / 1048576" | bc -l)" >&2
done

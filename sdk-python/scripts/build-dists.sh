#!/usr/bin/env bash
# Builds every distribution of the Python package into OUTDIR: one wheel
# per engine binary of scripts/build-engines.sh, each tagged for the
# platform that binary runs on (hatch_build.py reads the tag from the
# binary), and the sdist; then `twine check --strict` on all of them.
#
#   sdk-python/scripts/build-dists.sh OUTDIR
#
# The wheels (VERSION from VERSION):
#   agentfs-V-py3-none-manylinux_2_34_x86_64.whl   linux-x64, cgo (go-libsql; glibc >= 2.34)
#   agentfs-V-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl
#                                                  linux-x64, CGO_ENABLED=0, static: older glibc and musl
#   agentfs-V-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl
#   agentfs-V-py3-none-macosx_*_arm64.whl, agentfs-V-py3-none-macosx_*_x86_64.whl
#   agentfs-V-py3-none-win_amd64.whl
# pip prefers the most specific wheel that fits, so glibc >= 2.34 gets the
# cgo engine and every other Linux the static one.
#
# Engines are cached (build-engines.sh skips binaries newer than every Go
# source) in $AGENTFS_ENGINES (default .cache/engines) and, for the static
# linux-x64 one, $AGENTFS_ENGINES_STATIC (default .cache/engines-static).
# The build tools (requirements-dist.txt) live in .cache/pydist-venv.
set -euo pipefail
SDK=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$(dirname "$SDK")
out=${1:?usage: sdk-python/scripts/build-dists.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
engines=${AGENTFS_ENGINES:-$ROOT/.cache/engines}
static=${AGENTFS_ENGINES_STATIC:-$ROOT/.cache/engines-static}

"$ROOT/scripts/build-engines.sh" "$engines" linux-x64 linux-arm64 darwin-arm64 darwin-x64 win32-x64
CGO_ENABLED=0 "$ROOT/scripts/build-engines.sh" "$static" linux-x64

venv=${AGENTFS_DIST_VENV:-$ROOT/.cache/pydist-venv}
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$SDK/scripts/requirements-dist.txt"

rm -f "$out"/agentfs-*.whl "$out"/agentfs-*.tar.gz
for engine in "$engines/linux-x64/agentfs" "$static/linux-x64/agentfs" "$engines/linux-arm64/agentfs" \
	"$engines/darwin-arm64/agentfs" "$engines/darwin-x64/agentfs" "$engines/win32-x64/agentfs.exe"; do
	AGENTFS_WHEEL_ENGINE=$engine "$venv/bin/python" -m build --no-isolation --wheel --outdir "$out" "$SDK" >/dev/null
done
"$venv/bin/python" -m build --no-isolation --sdist --outdir "$out" "$SDK" >/dev/null
"$venv/bin/python" -m twine check --strict "$out"/agentfs-*
ls -l "$out"/agentfs-* >&2

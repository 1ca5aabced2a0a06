#!/usr/bin/env bash
# The Python package as users download it: size of every wheel and the
# sdist (sdk-python/scripts/build-dists.sh), and the time of `pip install
# agentfs` and `pip install "agentfs[fsspec]"` into a fresh venv from a
# local pypiserver (tests/pypi/lib.sh) with a cold pip cache (dependencies
# protobuf and fsspec come from the same local index). One run each:
# installs are dominated by unpacking the engine, so a noisy machine moves
# them only a little. Prints a Markdown table (and saves it as
# $RESULTS/pip-install.md when RESULTS is set).
#
#   ./bench/pip-install.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=$(tr -d '[:space:]' <VERSION)
work=$(mktemp -d "${TMPDIR:-/tmp}/agentfs-pipbench.XXXXXX")
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
. tests/pypi/lib.sh
pypi_tools
sdk-python/scripts/build-dists.sh "$work/dist" >&2
pypi_index "$work" "$work/dist" >&2

mib() { printf "%.2f" "$(echo "scale=4; $(stat -c %s "$1") / 1048576" | bc)"; }
# timed_install SPEC: seconds for pip install SPEC into a new venv, cold cache
timed_install() {
  local v=$work/venv-$RANDOM
  python3 -m venv "$v"
  local start end
  start=$(date +%s.%N)
  env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL PIP_INDEX_URL="$url/simple/" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="$work/cache-$RANDOM" \
    "$v/bin/pip" install --quiet "$1" >&2
  end=$(date +%s.%N)
  printf '%.1f' "$(echo "$end - $start" | bc)"
}
t_plain=$(timed_install agentfs)
t_fsspec=$(timed_install "agentfs[fsspec]")

table=$(
  printf '| distribution | size (MiB) |\n|---|---:|\n'
  for f in "$work"/dist/*; do printf '| `%s` | %s |\n' "$(basename "$f")" "$(mib "$f")"; done
  printf '\n| `pip install` into a fresh venv, local pypiserver, cold pip cache | seconds |\n|---|---:|\n'
  printf '| `pip install agentfs` (%s wheel + protobuf) | %s |\n' "$(uname -m)" "$t_plain"
  printf '| `pip install "agentfs[fsspec]"` (+ fsspec) | %s |\n' "$t_fsspec"
)
printf '%s\n' "$table"
if [ -n "${RESULTS:-}" ]; then printf '%s\n' "$table" >"$RESULTS/pip-install.md"; fi

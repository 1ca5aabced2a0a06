#!/usr/bin/env bash
# The Python package as a user gets it: published to a real index, then
# installed with pip (suite `pypi` of scripts/test-all.sh).
#
#  1. sdk-python/scripts/build-dists.sh: every wheel (one per engine of
#     scripts/build-engines.sh) and the sdist; `twine check --strict`.
#  2. check_dists.py: each wheel's tags against the engine it carries
#     (magic bytes and machine, glibc symbol versions by objdump, static by
#     readelf), the sdist's contents.
#  3. pypiserver (PyPI's index software, tests/pypi/requirements.txt) on
#     127.0.0.1 at a free port over a temp dir, uploads open (-a . -P .);
#     `twine upload` of every artifact; the third-party distributions of
#     index-deps.txt copied in, so every install resolves from this index
#     alone (PyPI's own "agentfs" is someone else's project).
#  4. pip's resolver picks the right file from the index for each
#     platform (pip download --platform ...).
#  5. A fresh venv: the root README's Python install lines run verbatim
#     (PIP_INDEX_URL points pip at the index), with sdk-python/README.md's
#     example and its fsspec example, in a directory with no Go and no
#     agentfs on PATH; then the same example on the static linux engine.
#  6. The sdist: without Go, pip fails with the one message saying what to
#     install; with Go, pip builds it (go install of this release from a
#     file-based module proxy made from the working tree, as tests/gomod
#     does) and the example runs on the engine it built.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
SECONDS=0
step() { printf '\n--- [%ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(tr -d '[:space:]' <VERSION)
work=$(mktemp -d "${TMPDIR:-/tmp}/agentfs-pypi.XXXXXX")
server=""
cleanup() {
  # wait answers 143 (the server died of our SIGTERM): not a failure.
  if [ -n "$server" ] && kill "$server" 2>/dev/null; then wait "$server" 2>/dev/null || true; fi
  chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"
}
trap cleanup EXIT

# block FILE MARKER prints the fenced code block that follows the line
# "<!-- MARKER -->" in FILE: the READMEs' commands and code are what runs.
block() {
  awk -v m="<!-- $2 -->" '
    index($0, m) == 1 { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$1"
}

. tests/pypi/lib.sh
step "tools: pypiserver and twine (tests/pypi/requirements.txt) in .cache/pypi-venv"
pypi_tools

step "build every wheel and the sdist (sdk-python/scripts/build-dists.sh)"
sdk-python/scripts/build-dists.sh "$work/dist"
cmp -s LICENSE sdk-python/LICENSE || fail "sdk-python/LICENSE differs from LICENSE (copy it)"

step "twine check --strict, and what each artifact carries"
"$tools/bin/twine" check --strict "$work"/dist/*
"$tools/bin/python" tests/pypi/check_dists.py "$work/dist" "$version"

step "pypiserver on 127.0.0.1, twine upload"
pypi_index "$work" "$work/dist"
listing=$(pypi_get "$url/simple/agentfs/")
n=$(grep -o "agentfs-$version[^\"#<]*\.\(whl\|tar\.gz\)" <<<"$listing" | sort -u | wc -l)
[ "$n" = "$(ls "$work/dist" | wc -l)" ] || fail "the index lists $n agentfs files, not every uploaded one"
export PIP_INDEX_URL=$url/simple/ PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

step "pip picks each platform's wheel from the index"
pick() { # pick PLATFORM... -> the file pip downloads for a system of those platforms
  local d=$work/pick-$RANDOM args=()
  for p in "$@"; do args+=(--platform "$p"); done
  env -u PIP_FIND_LINKS "$tools/bin/python" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 "${args[@]}" --dest "$d" "agentfs==$version" >&2
  ls "$d"
}
expect_pick() { local want=$1; shift; got=$(pick "$@"); [[ $got == $want ]] || fail "platform $*: pip chose $got, want $want"; echo "ok   $1... -> $got"; }
# A glibc 2.36 x86_64 system (Debian 12) supports manylinux_2_36 down to 2_17.
glibc() { local arch=$1 n; for n in $(seq "$2" -1 17); do echo "manylinux_2_${n}_$arch"; done; echo "manylinux2014_$arch"; }
expect_pick "agentfs-$version-py3-none-manylinux_2_34_x86_64.whl" $(glibc x86_64 36)
expect_pick "agentfs-$version-py3-none-manylinux_2_17_x86_64.*musllinux_1_1_x86_64.whl" $(glibc x86_64 31)
expect_pick "agentfs-$version-py3-none-manylinux_2_17_x86_64.*musllinux_1_1_x86_64.whl" musllinux_1_2_x86_64 musllinux_1_1_x86_64
expect_pick "agentfs-$version-py3-none-manylinux_2_17_aarch64.*musllinux_1_1_aarch64.whl" $(glibc aarch64 36)
expect_pick "agentfs-$version-py3-none-manylinux_2_17_aarch64.*musllinux_1_1_aarch64.whl" musllinux_1_2_aarch64 musllinux_1_1_aarch64
expect_pick "agentfs-$version-py3-none-macosx_1?_0_arm64.whl" macosx_14_0_arm64
expect_pick "agentfs-$version-py3-none-macosx_1*_x86_64.whl" macosx_14_0_x86_64
expect_pick "agentfs-$version-py3-none-win_amd64.whl" win_amd64

# A user's shell: the venv's bin first, then system directories only, so
# neither go nor any agentfs binary is reachable; no AGENTFS_* settings;
# pip looks at the test's index only (no find-links of this machine).
user_env() {
  env -u AGENTFS_BIN -u PYTHONPATH -u VIRTUAL_ENV -u GOFLAGS -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL PATH="$1/bin:/usr/bin:/bin" HOME="$work/home" "${@:2}"
}
mkdir -p "$work/home"
install=$(block README.md "install: python")
example=$(block sdk-python/README.md "example: python")
fsspec_example=$(block sdk-python/README.md "example: python fsspec")
[ -n "$install" ] && [ -n "$example" ] && [ -n "$fsspec_example" ] ||
  fail "README.md needs <!-- install: python -->, sdk-python/README.md <!-- example: python --> and <!-- example: python fsspec -->"
line1=$(sed -n 1p <<<"$install")
line2=$(sed -n 2p <<<"$install")
[[ $line1 == "pip install agentfs" && $line2 == 'pip install "agentfs[fsspec]"'* ]] ||
  fail "README.md's Python install block is not the two pip lines this test runs"

# run_example VENV DIR [ENV...]: the README's example in DIR with the venv's python
run_example() {
  local venv=$1 dir=$2; shift 2
  mkdir -p "$dir"
  printf '%s\n' "$example" >"$dir/example.py"
  out=$(cd "$dir" && user_env "$venv" "$@" python example.py 2>&1) || { printf '%s\n' "$out" >&2; fail "the README example failed"; }
  [ "$out" = "# hello" ] || fail "the README example printed '$out', want '# hello'"
  [ -f "$dir/.agentfs/my-agent.db" ] || fail "the README example did not create .agentfs/my-agent.db"
  echo "ok   README example in $dir"
}

step "fresh venv: ${line1}"
python3 -m venv "$work/venv"
start=$(date +%s.%N)
(cd "$work/home" && user_env "$work/venv" bash -euo pipefail -c "$line1")
printf 'pip install agentfs: %.1f s\n' "$(echo "$(date +%s.%N) - $start" | bc)"
whl_tag=$(grep '^Tag:' "$work"/venv/lib/python3*/site-packages/agentfs-"$version".dist-info/WHEEL)
echo "installed: $whl_tag"
if [ "$(uname -m)" = x86_64 ] && [ -n "$(ldd --version 2>&1 | grep -i glibc)" ]; then
  [ "$whl_tag" = "Tag: py3-none-manylinux_2_34_x86_64" ] || fail "pip installed $whl_tag on a glibc x86_64 machine"
fi
user_env "$work/venv" python -c 'import fsspec' 2>/dev/null && fail "fsspec installed without the extra"
run_example "$work/venv" "$work/user"
engine=$(cd "$work/user" && user_env "$work/venv" python -c 'import agentfs; print(agentfs.find_engine())')
[[ $engine == "$work/venv/"*"/site-packages/agentfs/_bin/agentfs" ]] || fail "the example ran engine $engine, not the wheel's"

step "same venv: ${line2}"
(cd "$work/home" && user_env "$work/venv" bash -euo pipefail -c "$line2")
printf '%s\n' "$fsspec_example" >"$work/user/fsspec_example.py"
out=$(cd "$work/user" && user_env "$work/venv" python fsspec_example.py 2>&1) || { printf '%s\n' "$out" >&2; fail "the fsspec example failed"; }
printf '%s\n' "$out"
grep -q "/dir/a.txt" <<<"$out" && grep -q "/notes/today.md" <<<"$out" || fail "fs.find did not list the files the examples wrote"

step "the static linux x86_64 engine (musllinux / older glibc wheel) runs the example"
mkdir -p "$work/static"
(cd "$work/static" && unzip -q "$work"/dist/agentfs-"$version"-py3-none-manylinux_2_17_x86_64.*.whl 'agentfs/_bin/agentfs')
run_example "$work/venv" "$work/user-static" AGENTFS_BIN="$work/static/agentfs/_bin/agentfs"

step "sdist without Go: one clear message"
python3 -m venv "$work/venv-sdist"
if out=$(cd "$work/home" && user_env "$work/venv-sdist" pip install --no-binary agentfs agentfs 2>&1); then
  fail "the sdist built without Go"
fi
grep -q "Install Go 1.26 or newer (https://go.dev/dl/)" <<<"$out" || { printf '%s\n' "$out" >&2; fail "no clear 'install Go' message"; }
grep "Install Go" <<<"$out" | head -3

step "sdist with Go: pip builds the engine (go install from a module proxy of the working tree)"
go run ./tools/cmd/gomodpublish -out "$work/proxy" -version "v$version" core cli
gomodcache=$root/.cache/pypi-gomod
hostcache=$(go env GOMODCACHE)
for d in "$gomodcache/github.com/agentfs-go" "$gomodcache/cache/download/github.com/agentfs-go"; do
  if [ -e "$d" ]; then chmod -R u+w "$d"; rm -rf "$d"; fi
done
start=$(date +%s.%N)
(cd "$work/home" && user_env "$work/venv-sdist" \
  PATH="$work/venv-sdist/bin:$(dirname "$(command -v go)"):/usr/bin:/bin" \
  GOPROXY="file://$work/proxy,file://$hostcache/cache/download,$(go env GOPROXY)" \
  GOMODCACHE="$gomodcache" GONOSUMDB=github.com/agentfs-go/agentfs GOWORK=off GOTOOLCHAIN=local \
  GODEBUG=goindex=0 GOCACHE="$(go env GOCACHE)" \
  pip install --quiet --no-binary agentfs agentfs)
printf 'pip install --no-binary agentfs agentfs (go install): %.1f s\n' "$(echo "$(date +%s.%N) - $start" | bc)"
grep '^Tag:' "$work"/venv-sdist/lib/python3*/site-packages/agentfs-"$version".dist-info/WHEEL
run_example "$work/venv-sdist" "$work/user-sdist"

step "pypi: all passed in ${SECONDS}s"

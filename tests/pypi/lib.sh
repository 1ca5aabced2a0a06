# Sourced by tests/pypi/run.sh and bench/pip-install.sh: a real index with
# the project's distributions on it.
#
#   pypi_tools              pypiserver + twine (requirements.txt) in .cache/pypi-venv -> $tools
#   pypi_index WORK DIST    pypiserver on 127.0.0.1 at a free port over WORK/index, with
#                           index-deps.txt copied in and DIST/* uploaded by twine;
#                           sets $url (index root) and $server (its pid; kill it when done)

pypi_tools() {
  tools=$root/.cache/pypi-venv
  [ -x "$tools/bin/python" ] || python3 -m venv "$tools"
  "$tools/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/tests/pypi/requirements.txt"
}

pypi_get() { "$tools/bin/python" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"; }

pypi_index() {
  local work=$1 dist=$2 port
  mkdir -p "$work/index"
  # Third-party distributions from PyPI (through pip's cache): every
  # install then resolves from this index alone.
  "$tools/bin/python" -m pip download --quiet --disable-pip-version-check --dest "$work/index" -r "$root/tests/pypi/index-deps.txt"
  port=$("$tools/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$tools/bin/pypi-server" run -i 127.0.0.1 -p "$port" -a . -P . --disable-fallback "$work/index" >"$work/server.log" 2>&1 &
  server=$!
  url=http://127.0.0.1:$port
  for _ in $(seq 300); do
    pypi_get "$url/health" >/dev/null 2>&1 && break
    kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; echo "pypi-server exited" >&2; return 1; }
    sleep 0.1
  done
  "$tools/bin/twine" upload --non-interactive --disable-progress-bar --repository-url "$url/" -u test -p test "$dist"/*
}

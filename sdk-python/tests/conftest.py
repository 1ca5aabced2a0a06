"""Fixtures: the engine binary, a real `agentfs serve http` server, and an
agent over each transport."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def engine() -> str:
    """$AGENTFS_BIN, else the checkout's bin/agentfs (`go tool task build`)."""
    exe = os.environ.get("AGENTFS_BIN") or str(REPO / "bin" / "agentfs")
    if not os.access(exe, os.X_OK):
        pytest.fail(f"no engine at {exe}: run `go tool task build` or set AGENTFS_BIN")
    os.environ["AGENTFS_BIN"] = exe
    return exe


class HttpServer:
    def __init__(self, engine: str, data: Path, token: str) -> None:
        self.token = token
        self.data = data
        env = dict(os.environ, AGENTFS_TOKEN=token)
        self.proc = subprocess.Popen(
            [engine, "serve", "http", "--listen", "127.0.0.1:0", "--data", str(data), "--quiet"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = ""
        lines = []
        for line in self.proc.stdout:
            lines.append(line)
            m = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
            if m:
                self.url = m.group(1)
                break
        if not self.url:
            raise RuntimeError("agentfs serve http did not start: " + "".join(lines))
        # Keep draining its output so it never blocks on a full pipe.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="session")
def http_server(engine: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    srv = HttpServer(engine, tmp_path_factory.mktemp("http-data"), "test-token-123")
    yield srv
    srv.stop()


_count = iter(range(1, 1 << 30))


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_kwargs(transport: str, request: pytest.FixtureRequest, tmp_path: Path, engine: str) -> dict[str, object]:
    """AgentFS.open arguments for a fresh agent over the transport."""
    if transport == "stdio":
        return {"path": str(tmp_path / "agent.db")}
    srv: HttpServer = request.getfixturevalue("http_server")
    return {"url": srv.url, "token": srv.token, "id": f"t{next(_count)}"}


@pytest.fixture
def agent(open_kwargs: dict[str, object]) -> Iterator[agentfs.AgentFS]:
    with agentfs.AgentFS.open(**open_kwargs) as a:  # type: ignore[arg-type]
        yield a


def has_go() -> bool:
    return shutil.which("go") is not None

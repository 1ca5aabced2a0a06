"""The stdio transport: engine discovery, handshake failures, many calls
from many threads, the engine dying mid-call."""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from pathlib import Path

import pytest

import agentfs
from agentfs import _stdio


def test_engine_discovery_order(engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTFS_BIN", engine)
    assert agentfs.find_engine() == engine
    fake = tmp_path / "agentfs"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    assert agentfs.find_engine(fake) == str(fake)  # explicit option first
    monkeypatch.delenv("AGENTFS_BIN")
    monkeypatch.setattr("agentfs._engine.BUNDLED", tmp_path / "nope")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert agentfs.find_engine() == str(fake)  # then PATH
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(agentfs.EngineNotFoundError) as ei:
        agentfs.find_engine()
    assert "AGENTFS_BIN" in str(ei.value) and "go tool task build" in str(ei.value)
    assert isinstance(ei.value, FileNotFoundError)
    monkeypatch.setenv("AGENTFS_BIN", str(tmp_path / "missing"))
    with pytest.raises(agentfs.EngineNotFoundError):
        agentfs.find_engine()


def test_engine_that_exits_at_once(tmp_path: Path) -> None:
    fake = tmp_path / "agentfs"
    fake.write_text("#!/bin/sh\necho 'boom: cannot start' >&2\nexit 3\n")
    fake.chmod(stat.S_IRWXU)
    with pytest.raises(agentfs.EngineUnavailableError) as ei:
        agentfs.AgentFS.open(engine=fake)
    msg = str(ei.value)
    assert "status 3" in msg and "boom: cannot start" in msg


def test_protocol_version_mismatch(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stdio, "PROTOCOL_VERSION", 99)
    with pytest.raises(agentfs.AgentFSError) as ei:
        agentfs.AgentFS.open()
    assert "protocol" in str(ei.value)


def test_no_create(engine: str, tmp_path: Path) -> None:
    with pytest.raises(Exception) as ei:
        agentfs.AgentFS.open(path=str(tmp_path / "missing.db"), create=False)
    assert isinstance(ei.value, (FileNotFoundError, agentfs.NotFoundError)), repr(ei.value)
    assert not (tmp_path / "missing.db").exists()


def test_id_opens_agentfs_dir(engine: str, tmp_path: Path) -> None:
    with agentfs.AgentFS.open(id="my-agent", cwd=tmp_path) as a:
        a.fs.write_file("/x", "1")
    assert (tmp_path / ".agentfs" / "my-agent.db").is_file()
    with agentfs.AgentFS.open(id="my-agent", cwd=tmp_path, create=False) as a:
        assert a.fs.read_file("/x") == "1"
    with pytest.raises(ValueError):
        agentfs.AgentFS.open(id="../escape")


def test_temporary_database_is_removed(engine: str) -> None:
    a = agentfs.AgentFS.open()
    path = a.info().path
    assert os.path.exists(path)
    a.close()
    assert not os.path.exists(path)
    with pytest.raises(agentfs.EngineUnavailableError):
        a.fs.stat("/")


def test_concurrent_calls_from_threads(engine: str, tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with agentfs.AgentFS.open(path=str(tmp_path / "c.db")) as a:

        def worker(i: int) -> None:
            try:
                for j in range(50):
                    a.fs.write_file(f"/t{i}/f{j}", f"{i}-{j}" * (j + 1))
                    a.kv.set(f"t{i}:{j}", j)
                for j in range(50):
                    assert a.fs.read_file(f"/t{i}/f{j}") == f"{i}-{j}" * (j + 1)
                    assert a.kv.get(f"t{i}:{j}") == j
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert len(a.fs.readdir("/")) == 8
        assert len(a.kv.list("t")) == 400


def test_engine_killed_mid_call(engine: str, tmp_path: Path) -> None:
    """Calls in flight when the engine dies fail with a clear error; none
    hangs, and later calls fail at once."""
    a = agentfs.AgentFS.open(path=str(tmp_path / "k.db"))
    transport = a.transport
    assert isinstance(transport, agentfs.StdioTransport)
    results: list[BaseException | None] = []
    lock = threading.Lock()
    started = threading.Event()
    big = b"y" * (64 << 20)

    def worker() -> None:
        started.set()
        try:
            while True:
                a.fs.write_file("/big", big)  # long calls: some are in flight at the kill
        except BaseException as e:  # noqa: BLE001
            with lock:
                results.append(e)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.3)
    os.kill(transport.pid, signal.SIGKILL)
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a call is still waiting after the engine died"
    assert len(results) == 4
    for e in results:
        assert isinstance(e, agentfs.EngineUnavailableError), repr(e)
        assert isinstance(e, ConnectionError)
        assert "killed by signal 9" in str(e) or "write failed" in str(e), str(e)
    with pytest.raises(agentfs.EngineUnavailableError) as ei:
        a.fs.stat("/")
    assert "killed by signal 9" in str(ei.value)
    a.close()  # closing a dead transport does not raise or hang


def _wait_for(cond, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 30
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_engine_killed_during_a_running_call(engine: str, tmp_path: Path) -> None:
    """A call that is certainly running in the engine (a sandbox script that
    sleeps) fails with a clear error when the engine is killed."""
    a = agentfs.AgentFS.open(path=str(tmp_path / "m.db"))
    transport = a.transport
    assert isinstance(transport, agentfs.StdioTransport)
    out: list[BaseException] = []

    def run() -> None:
        try:
            a.exec("echo started > /flag; sleep 60")
        except BaseException as e:  # noqa: BLE001
            out.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    _wait_for(lambda: a.fs.exists("/flag"), "the script to start")
    os.kill(transport.pid, signal.SIGKILL)
    t.join(timeout=30)
    assert not t.is_alive(), "the call still waits after the engine died"
    assert len(out) == 1 and isinstance(out[0], agentfs.EngineUnavailableError), out
    assert "killed by signal 9" in str(out[0])
    a.close()


def test_close_finishes_calls_in_flight(engine: str, tmp_path: Path) -> None:
    a = agentfs.AgentFS.open(path=str(tmp_path / "s.db"))
    done: list[object] = []

    def write() -> None:
        try:
            a.fs.write_file("/f", b"z" * (8 << 20))
            done.append(True)
        except agentfs.EngineUnavailableError as e:  # sent after the shutdown
            done.append(e)

    t = threading.Thread(target=write)
    t.start()
    time.sleep(0.05)
    a.close()
    t.join(timeout=60)
    assert not t.is_alive() and len(done) == 1
    with agentfs.AgentFS.open(path=str(tmp_path / "s.db")) as b:
        if done[0] is True:  # answered before the engine exited: it is on disk
            assert b.fs.stat("/f").size == 8 << 20
        else:
            assert "closed" in str(done[0])


def test_heartbeat_keeps_an_idle_engine(engine: str) -> None:
    # With heartbeat_ms the engine exits after 3 silent intervals; the SDK
    # pings while idle, so an idle agent stays usable. 1.5 s intervals:
    # shorter ones flaked on loaded CI machines (load 20-40 on 2 cores),
    # where the client's pinging thread was starved for longer than 3
    # intervals of 50 ms, then of 400 ms. Idle for 4 intervals, so
    # without the pings the engine would have left.
    with agentfs.AgentFS.open(heartbeat_ms=1500) as a:
        a.fs.write_file("/x", "1")
        time.sleep(6.0)
        assert a.fs.read_file("/x") == "1"
        assert isinstance(a.transport, agentfs.StdioTransport)
        assert a.transport._proc.poll() is None


def test_unclosed_agent_is_cleaned_up_at_exit(engine: str, tmp_path: Path) -> None:
    # A program that never closes its temporary agent: at interpreter exit
    # the engine is stopped cleanly and removes the temporary database.
    import subprocess
    import sys

    code = "import agentfs\na = agentfs.AgentFS.open()\na.fs.write_file('/x', 'y')\nprint(a.info().path)\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip()
    assert path.endswith(".db")
    assert not os.path.exists(path) and not os.path.exists(os.path.dirname(path))

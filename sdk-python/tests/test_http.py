"""The HTTP transport against a real `agentfs serve http`: auth, agents."""

from __future__ import annotations

import urllib.request

import pytest

import agentfs

from conftest import HttpServer


def test_auth_failure(http_server: HttpServer) -> None:
    with pytest.raises(agentfs.PermissionDeniedError) as ei:
        agentfs.AgentFS.open(url=http_server.url, token="wrong", id="auth1")
    assert isinstance(ei.value, PermissionError)
    with pytest.raises(agentfs.PermissionDeniedError):
        agentfs.AgentFS.open(url=http_server.url, id="auth2")  # no token at all


def test_health_needs_no_token(http_server: HttpServer) -> None:
    with urllib.request.urlopen(http_server.url + "/healthz", timeout=10) as r:
        assert r.read().strip() == b"ok"


def test_missing_agent_without_create(http_server: HttpServer) -> None:
    with pytest.raises(agentfs.NotFoundError):
        agentfs.AgentFS.open(url=http_server.url, token=http_server.token, id="never-made", create=False)


def test_agents_are_separate_and_persist(http_server: HttpServer) -> None:
    kw = {"url": http_server.url, "token": http_server.token}
    with agentfs.AgentFS.open(id="h-a", **kw) as a, agentfs.AgentFS.open(id="h-b", **kw) as b:
        a.fs.write_file("/who", "a")
        b.fs.write_file("/who", "b")
        assert a.fs.read_file("/who") == "a" and b.fs.read_file("/who") == "b"
    with agentfs.AgentFS.open(id="h-a", create=False, **kw) as a:
        assert a.fs.read_file("/who") == "a"
    assert (http_server.data / "h-a.db").is_file()


def test_url_from_environment(http_server: HttpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTFS_URL", http_server.url)
    monkeypatch.setenv("AGENTFS_TOKEN", http_server.token)
    with agentfs.AgentFS.open(id="h-env") as a:
        assert isinstance(a.transport, agentfs.HttpTransport)
        a.kv.set("k", 1)
        assert a.kv.get("k") == 1


def test_server_gone(engine: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    srv = HttpServer(engine, tmp_path, "tok")
    a = agentfs.AgentFS.open(url=srv.url, token="tok", id="gone")
    a.fs.write_file("/x", "1")
    srv.stop()
    with pytest.raises(agentfs.EngineUnavailableError):
        a.fs.read_file("/x")
    a.close()


def test_server_killed_during_a_running_call(engine: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import threading
    import time

    srv = HttpServer(engine, tmp_path, "tok")
    a = agentfs.AgentFS.open(url=srv.url, token="tok", id="mid")
    out: list[BaseException] = []

    def run() -> None:
        try:
            a.exec("echo started > /flag; sleep 60")
        except BaseException as e:  # noqa: BLE001
            out.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while not a.fs.exists("/flag"):  # from this thread's own connection
        assert time.monotonic() < deadline
        time.sleep(0.02)
    srv.proc.kill()
    srv.proc.wait()
    t.join(timeout=30)
    assert not t.is_alive(), "the call still waits after the server died"
    assert len(out) == 1 and isinstance(out[0], agentfs.EngineUnavailableError), out
    a.close()

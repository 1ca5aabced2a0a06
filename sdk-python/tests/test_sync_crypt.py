"""Sync and encryption through the SDK: a real `agentfs serve sync`
started here (bearer token), agents opened with sync_remote_url,
pull/push/sync/stats in the synchronous and the asyncio API; encrypted
agents round trip and refuse a wrong key."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentfs
from agentfs import aio

TOKEN = "sdk-python-sync-token"
KEY = "ab" * 32


@pytest.fixture
def sync_url(engine: str, tmp_path: Path) -> Iterator[str]:
    env = dict(os.environ, AGENTFS_TOKEN=TOKEN)
    proc = subprocess.Popen(
        [engine, "serve", "sync", "--listen", "127.0.0.1:0", "--data", str(tmp_path / "remote")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    assert proc.stdout is not None
    url, lines = "", []
    for line in proc.stdout:
        lines.append(line)
        m = re.search(r"at (http://127\.0\.0\.1:\d+)/ID", line)
        if m:
            url = m.group(1)
            break
    if not url:
        proc.kill()
        raise RuntimeError("agentfs serve sync did not start: " + "".join(lines))
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    yield url + "/shared"
    proc.terminate()
    proc.wait(timeout=30)


def test_sync(sync_url: str, tmp_path: Path) -> None:
    with agentfs.AgentFS.open(path=str(tmp_path / "a.db"), sync_remote_url=sync_url, sync_token=TOKEN) as a:
        a.fs.write_file("/notes.md", "from a")
        a.kv.set("k", {"v": 1})
        st = a.stats()
        assert st.cdc_operations > 0 and st.remote_url == sync_url and st.last_push_unix_time is None
        assert a.push().rows > 0
        st = a.stats()
        assert st.cdc_operations == 0 and st.last_push_unix_time and st.network_sent_bytes > 0
        with agentfs.AgentFS.open(path=str(tmp_path / "b.db"), sync_remote_url=sync_url, sync_token=TOKEN) as b:
            assert b.fs.read_file("/notes.md") == "from a"
            assert b.kv.get("k") == {"v": 1}
            b.fs.write_file("/b.txt", "from b")
            _, pushed = b.sync()
            assert pushed.rows > 0
        pulled = a.pull()
        assert pulled.changed and pulled.applied > 0
        assert a.fs.read_file("/b.txt") == "from b"
    # A wrong token: PermissionDeniedError naming TURSO_DB_AUTH_TOKEN, and no database left.
    with pytest.raises(agentfs.PermissionDeniedError, match="TURSO_DB_AUTH_TOKEN"):
        agentfs.AgentFS.open(path=str(tmp_path / "c.db"), sync_remote_url=sync_url, sync_token="wrong")
    assert not (tmp_path / "c.db").exists()
    with agentfs.AgentFS.open(path=str(tmp_path / "plain.db")) as p:
        with pytest.raises(agentfs.FailedPreconditionError, match="not set up for sync"):
            p.pull()


async def test_sync_aio(sync_url: str, tmp_path: Path) -> None:
    async with aio.AgentFS.open(path=str(tmp_path / "a.db"), sync_remote_url=sync_url, sync_token=TOKEN) as a:
        await a.fs.write_file("/x.txt", "async")
        assert (await a.push()).rows > 0
        async with aio.AgentFS.open(path=str(tmp_path / "b.db"), sync_remote_url=sync_url, sync_token=TOKEN) as b:
            assert await b.fs.read_file("/x.txt") == "async"
            await b.fs.write_file("/y.txt", "back")
            await b.sync()
        assert (await a.pull()).applied > 0
        assert await a.fs.read_file("/y.txt") == "back"
        assert (await a.stats()).last_pull_unix_time


def test_encryption(tmp_path: Path) -> None:
    p = tmp_path / "enc.db"
    with agentfs.AgentFS.open(path=str(p), encryption_key=KEY, cipher="aegis256") as a:
        a.fs.write_file("/secret.txt", "MARKER-SDK-PY-SECRET")
    for f in (p, Path(str(p) + "-wal")):
        if f.exists():
            assert b"MARKER-SDK-PY-SECRET" not in f.read_bytes(), f
    before = p.read_bytes()
    with pytest.raises(agentfs.PermissionDeniedError, match="wrong key"):
        agentfs.AgentFS.open(path=str(p), encryption_key="cd" * 32)
    with pytest.raises(agentfs.PermissionDeniedError, match="is encrypted"):
        agentfs.AgentFS.open(path=str(p))
    with pytest.raises(agentfs.InvalidArgumentError, match="32-byte key"):
        agentfs.AgentFS.open(path=str(p), encryption_key="ab" * 8, cipher="aegis256")
    with pytest.raises(agentfs.InvalidArgumentError, match="not hexadecimal"):
        agentfs.AgentFS.open(path=str(p), encryption_key="zz")
    assert p.read_bytes() == before
    with agentfs.AgentFS.open(path=str(p), encryption_key=bytes.fromhex(KEY)) as b:
        assert b.fs.read_file("/secret.txt") == "MARKER-SDK-PY-SECRET"


async def test_encryption_aio(tmp_path: Path) -> None:
    p = tmp_path / "enc.db"
    async with aio.AgentFS.open(path=str(p), encryption_key=KEY) as a:
        await a.fs.write_file("/s", "MARKER-AIO")
    with pytest.raises(agentfs.PermissionDeniedError):
        async with aio.AgentFS.open(path=str(p), encryption_key="cd" * 32):
            pass
    async with aio.AgentFS.open(path=str(p), encryption_key=KEY) as b:
        assert await b.fs.read_file("/s") == "MARKER-AIO"


def _fill_remote(sync_url: str, tmp_path: Path) -> bytes:
    """Pushes ~3 MiB of files to the remote; returns the last file's bytes
    (/big/last.bin, written last, so it sits past any prefix of the file)."""
    last = os.urandom(256 << 10)
    with agentfs.AgentFS.open(path=str(tmp_path / "writer.db"), sync_remote_url=sync_url, sync_token=TOKEN) as w:
        for i in range(12):
            w.fs.write_file(f"/big/f{i}.bin", os.urandom(256 << 10))
        w.fs.write_file("/big/last.bin", last)
        w.push()
    return last


def test_sync_partial_prefix(sync_url: str, tmp_path: Path) -> None:
    last = _fill_remote(sync_url, tmp_path)
    with agentfs.AgentFS.open(path=str(tmp_path / "full.db"), sync_remote_url=sync_url, sync_token=TOKEN) as full:
        whole = full.stats().network_received_bytes
        assert full.fs.read_bytes("/big/last.bin") == last
    assert whole > 3 << 20

    with agentfs.AgentFS.open(
        path=str(tmp_path / "part.db"),
        sync_remote_url=sync_url,
        sync_token=TOKEN,
        sync_partial_bootstrap_length=128 << 10,
        sync_partial_segment_size=64 << 10,
    ) as part:
        boot = part.stats().network_received_bytes
        assert 0 < boot < whole // 8, (boot, whole)
        # A file outside the prefix comes over the network when read.
        assert part.fs.read_bytes("/big/last.bin") == last
        after = part.stats().network_received_bytes
        assert boot < after < whole, (boot, after, whole)
        assert sorted(part.fs.readdir("/big"))[-1] == "last.bin"

    with pytest.raises(agentfs.InvalidArgumentError, match="exclude each other"):
        agentfs.AgentFS.open(
            path=str(tmp_path / "bad.db"), sync_remote_url=sync_url, sync_token=TOKEN,
            sync_partial_bootstrap_length=4096, sync_partial_bootstrap_query="SELECT 1",
        )
    with pytest.raises(agentfs.InvalidArgumentError, match="sync_remote_url"):
        agentfs.AgentFS.open(path=str(tmp_path / "nourl.db"), sync_partial_bootstrap_length=4096)


async def test_sync_partial_query_aio(sync_url: str, tmp_path: Path) -> None:
    last = _fill_remote(sync_url, tmp_path)
    async with aio.AgentFS.open(
        path=str(tmp_path / "q.db"),
        sync_remote_url=sync_url,
        sync_token=TOKEN,
        sync_partial_bootstrap_query="SELECT name FROM fs_dentry WHERE parent_ino = 1",
        sync_partial_prefetch=True,
    ) as part:
        boot = (await part.stats()).network_received_bytes
        assert 0 < boot < 1 << 20, boot
        assert await part.fs.read_file("/big/last.bin", None) == last


def test_sync_partial_refused_over_http(http_server: object) -> None:
    with pytest.raises(agentfs.InvalidArgumentError, match="not an HTTP agent"):
        agentfs.AgentFS.open(id="p", url=getattr(http_server, "url"), token=getattr(http_server, "token"), sync_partial_bootstrap_length=4096)

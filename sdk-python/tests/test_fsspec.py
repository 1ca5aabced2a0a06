"""The fsspec filesystem, through fsspec's own API and URLs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

import agentfs
from agentfs.fsspec import AgentFSFileSystem


@pytest.fixture
def afs(agent: agentfs.AgentFS) -> Iterator[AgentFSFileSystem]:
    fs = AgentFSFileSystem(agent=agent, skip_instance_cache=True)
    yield fs


def test_registered_for_the_protocol() -> None:
    assert fsspec.get_filesystem_class("agentfs") is AgentFSFileSystem


def test_pipe_cat_ls_info(afs: AgentFSFileSystem) -> None:
    afs.pipe("/docs/a.txt", b"alpha")
    afs.pipe({"/docs/b.txt": b"beta", "/docs/sub/c.txt": b"gamma"})
    assert afs.cat("/docs/a.txt") == b"alpha"
    assert afs.cat_file("/docs/b.txt", start=1, end=3) == b"et"
    assert afs.cat_file("/docs/b.txt", start=-2) == b"ta"
    assert afs.ls("/docs", detail=False) == ["/docs/a.txt", "/docs/b.txt", "/docs/sub"]
    entries = {e["name"]: e for e in afs.ls("/docs")}
    assert entries["/docs/a.txt"]["type"] == "file" and entries["/docs/a.txt"]["size"] == 5
    assert entries["/docs/sub"]["type"] == "directory"
    info = afs.info("/docs/sub/c.txt")
    assert info["size"] == 5 and info["type"] == "file"
    assert afs.isdir("/docs") and afs.isfile("/docs/a.txt") and not afs.exists("/nope")
    with pytest.raises(FileNotFoundError):
        afs.info("/nope")
    with pytest.raises(FileNotFoundError):
        afs.cat("/nope")


def test_find_glob_walk_du(afs: AgentFSFileSystem) -> None:
    for p in ["/t/a.py", "/t/b.txt", "/t/x/c.py", "/t/x/y/d.py"]:
        afs.pipe(p, p.encode())
    assert afs.find("/t") == ["/t/a.py", "/t/b.txt", "/t/x/c.py", "/t/x/y/d.py"]
    assert afs.find("/t", withdirs=True) == ["/t/a.py", "/t/b.txt", "/t/x", "/t/x/c.py", "/t/x/y", "/t/x/y/d.py"]
    assert afs.find("/t", maxdepth=1) == ["/t/a.py", "/t/b.txt"]
    assert afs.find("/t/a.py") == ["/t/a.py"]
    assert afs.glob("/t/**/*.py") == ["/t/a.py", "/t/x/c.py", "/t/x/y/d.py"]
    assert afs.du("/t") == sum(len(p) for p in ["/t/a.py", "/t/b.txt", "/t/x/c.py", "/t/x/y/d.py"])
    walked = list(afs.walk("/t"))
    assert walked[0] == ("/t", ["x"], ["a.py", "b.txt"])


def test_open_read_write_append(afs: AgentFSFileSystem) -> None:
    data = os.urandom(3 * 1024 * 1024 + 7)  # several blocks, so several pwrites
    with afs.open("/f.bin", "wb", block_size=1 << 20) as f:
        f.write(data[:1000])
        f.write(data[1000:])
    assert afs.cat("/f.bin") == data
    with afs.open("/f.bin", "rb") as f:
        f.seek(2 * 1024 * 1024)
        assert f.read(10) == data[2 * 1024 * 1024 : 2 * 1024 * 1024 + 10]
        assert f.size == len(data)
    with afs.open("/f.bin", "ab") as f:
        f.write(b"END")
    assert afs.cat("/f.bin")[-3:] == b"END" and afs.size("/f.bin") == len(data) + 3
    with afs.open("/t.txt", "w") as f:  # text mode goes through fsspec's wrapper
        f.write("héllo\n")
    with afs.open("/t.txt", "r") as f:
        assert f.read() == "héllo\n"
    with afs.open("/empty", "wb"):
        pass
    assert afs.info("/empty")["size"] == 0
    with pytest.raises(FileExistsError):
        afs.open("/empty", "xb").close()


def test_rm_mv_copy_mkdir(afs: AgentFSFileSystem) -> None:
    afs.pipe("/r/a/1", b"1")
    afs.pipe("/r/a/2", b"2")
    afs.cp_file("/r/a/1", "/r/copy")
    assert afs.cat("/r/copy") == b"1"
    afs.mv("/r/copy", "/r/moved")
    assert not afs.exists("/r/copy") and afs.cat("/r/moved") == b"1"
    afs.copy("/r/a", "/r/b", recursive=True)
    assert sorted(afs.find("/r/b")) == ["/r/b/1", "/r/b/2"]
    afs.rm("/r/moved")
    afs.rm("/r/a", recursive=True)
    assert afs.ls("/r", detail=False) == ["/r/b"]
    afs.mkdir("/m/n")
    with pytest.raises(FileExistsError):
        afs.mkdir("/m/n")
    afs.makedirs("/m/n", exist_ok=True)
    afs.rmdir("/m/n")
    afs.touch("/m/t")
    assert afs.cat("/m/t") == b""
    assert afs.modified("/m/t").year >= 2024


def test_url_opens_agent_by_id(engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with fsspec.open("agentfs://url-agent/dir/hello.txt", "wb") as f:
        f.write(b"from a URL")
    with fsspec.open("agentfs://url-agent/dir/hello.txt", "rb") as f:
        assert f.read() == b"from a URL"
    fs, path = fsspec.core.url_to_fs("agentfs://url-agent/dir")
    assert isinstance(fs, AgentFSFileSystem) and path == "/dir"
    assert fs.ls(path, detail=False) == ["/dir/hello.txt"]
    fs.close()
    AgentFSFileSystem.clear_instance_cache()
    assert (tmp_path / ".agentfs" / "url-agent.db").is_file()
    with agentfs.AgentFS.open(id="url-agent") as a:
        assert a.fs.read_file("/dir/hello.txt") == "from a URL"


def test_attack_atomic_write_visible_at_close(afs: AgentFSFileSystem) -> None:
    """A file written with "wb" keeps its old content until close: a reader
    never sees it half written, and several blocks are pwrites."""
    old = b"old content\n" * 1000
    with afs.open("/atomic.bin", "wb") as f:
        f.write(old)
    data = os.urandom(3 * 1024 * 1024 + 5)
    with afs.open("/atomic.bin", "wb", block_size=1 << 20) as f:
        f.write(data[: 2 * 1024 * 1024 + 1])
        f.flush()
        assert afs.cat("/atomic.bin") == old
        f.write(data[2 * 1024 * 1024 + 1 :])
    assert afs.cat("/atomic.bin") == data

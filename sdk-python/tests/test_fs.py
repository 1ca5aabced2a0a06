"""The synchronous filesystem API over both transports."""

from __future__ import annotations

import errno
import os
import stat

import pytest

import agentfs


def test_write_read_text_and_bytes(agent: agentfs.AgentFS) -> None:
    fs = agent.fs
    fs.write_file("/deep/er/a.txt", "héllo")  # parents are created
    assert fs.read_file("/deep/er/a.txt") == "héllo"
    assert fs.read_file("/deep/er/a.txt", encoding=None) == "héllo".encode()
    blob = bytes(range(256)) * 40
    fs.write_file("/b.bin", blob)
    assert fs.read_bytes("/b.bin") == blob
    fs.append_file("/b.bin", b"tail")
    assert fs.read_bytes("/b.bin") == blob + b"tail"
    fs.write_file("/latin", "é", encoding="latin-1")
    assert fs.read_bytes("/latin") == b"\xe9"


def test_stat(agent: agentfs.AgentFS) -> None:
    fs = agent.fs
    fs.write_file("/f", b"12345")
    st = fs.stat("/f")
    assert (st.size, st.nlink, st.type, st.perm) == (5, 1, "file", 0o644)
    assert st.is_file() and not st.is_directory() and not st.is_symbolic_link()
    assert st.mode == stat.S_IFREG | 0o644 and st.st_size == 5
    assert st.mtime_ns > 0 and st.mtime == st.mtime_ns // 10**9
    d = fs.stat("/")
    assert d.is_directory() and d.type == "dir"
    fs.symlink("/f", "/l")
    assert fs.lstat("/l").is_symbolic_link()
    assert fs.stat("/l").ino == st.ino
    assert fs.readlink("/l") == "/f"


def test_directories(agent: agentfs.AgentFS) -> None:
    fs = agent.fs
    fs.mkdir("/a")
    fs.mkdir("/a/b/c", recursive=True)
    fs.mkdir("/a/b/c", recursive=True)  # mkdir -p accepts an existing directory
    fs.write_file("/a/z.txt", "z")
    assert fs.readdir("/a") == ["b", "z.txt"]
    plus = {e.name: e.stats.type for e in fs.readdir_plus("/a")}
    assert plus == {"b": "dir", "z.txt": "file"}
    assert [e.name for e in fs.walk("/a")] == ["/a", "/a/b", "/a/b/c", "/a/z.txt"]
    with pytest.raises(OSError) as ei:
        fs.rmdir("/a")
    assert ei.value.errno == errno.ENOTEMPTY
    fs.rm("/a", recursive=True)
    assert not fs.exists("/a")
    fs.rm("/a", force=True)


def test_rename_copy_link_chmod_truncate(agent: agentfs.AgentFS) -> None:
    fs = agent.fs
    fs.write_file("/x", "data")
    fs.rename("/x", "/y")
    assert not fs.exists("/x") and fs.read_file("/y") == "data"
    fs.write_file("/z", "other")
    with pytest.raises(FileExistsError):
        fs.rename("/y", "/z", noreplace=True)
    fs.rename("/y", "/z", exchange=True)
    assert (fs.read_file("/y"), fs.read_file("/z")) == ("other", "data")
    fs.copy_file("/z", "/c")
    assert fs.read_file("/c") == "data"
    fs.link("/c", "/hard")
    assert fs.stat("/c").nlink == 2
    fs.chmod("/c", 0o600)
    assert fs.stat("/hard").perm == 0o600
    fs.truncate("/c", 2)
    assert fs.read_file("/hard") == "da"
    fs.utimes("/c", mtime_ns=1_000_000_000_123)
    assert fs.stat("/c").mtime_ns == 1_000_000_000_123
    fs.unlink("/hard")
    fs.delete_file("/c")
    assert fs.readdir("/") == ["y", "z"]


def test_xattr_and_statfs(agent: agentfs.AgentFS) -> None:
    fs = agent.fs
    fs.write_file("/x", "1")
    fs.setxattr("/x", "user.k", b"v")
    assert fs.getxattr("/x", "user.k") == b"v"
    assert fs.listxattr("/x") == ["user.k"]
    fs.removexattr("/x", "user.k")
    with pytest.raises(OSError) as ei:
        fs.getxattr("/x", "user.k")
    assert ei.value.errno == errno.ENODATA
    sf = fs.statfs()
    assert sf.inodes >= 2 and sf.bytes_used >= 1


@pytest.mark.parametrize(
    "call, exc, code",
    [
        (lambda fs: fs.stat("/missing"), FileNotFoundError, "ENOENT"),
        (lambda fs: fs.read_file("/missing"), FileNotFoundError, "ENOENT"),
        (lambda fs: fs.mkdir("/dir"), FileExistsError, "EEXIST"),
        (lambda fs: fs.write_file("/file", "x", exclusive=True), FileExistsError, "EEXIST"),
        (lambda fs: fs.read_file("/dir"), IsADirectoryError, "EISDIR"),
        (lambda fs: fs.unlink("/dir"), IsADirectoryError, "EISDIR"),
        (lambda fs: fs.readdir("/file"), NotADirectoryError, "ENOTDIR"),
        (lambda fs: fs.stat("/file/child"), NotADirectoryError, "ENOTDIR"),
        (lambda fs: fs.rmdir("/dir2"), OSError, "ENOTEMPTY"),
        (lambda fs: fs.readlink("/file"), OSError, "EINVAL"),
        (lambda fs: fs.rename("/dir", "/dir/sub"), OSError, "EINVAL"),
    ],
)
def test_errno_to_exception(agent: agentfs.AgentFS, call, exc: type[OSError], code: str) -> None:  # type: ignore[no-untyped-def]
    fs = agent.fs
    fs.mkdir("/dir")
    fs.mkdir("/dir2")
    fs.write_file("/dir2/f", "")
    fs.write_file("/file", "x")
    with pytest.raises(exc) as ei:
        call(fs)
    e = ei.value
    assert type(e) is exc  # the built-in class itself, as os functions raise
    assert e.errno == getattr(errno, code)
    assert e.code == code  # type: ignore[attr-defined]
    assert e.filename and e.filename.startswith("/")
    assert e.strerror == os.strerror(e.errno)


def test_rename_error_has_both_paths(agent: agentfs.AgentFS) -> None:
    with pytest.raises(FileNotFoundError) as ei:
        agent.fs.rename("/missing", "/other")
    assert ei.value.filename == "/missing" and ei.value.filename2 == "/other"
    assert ei.value.syscall == "rename"  # type: ignore[attr-defined]


def test_permission_and_busy_errors(agent: agentfs.AgentFS) -> None:
    agent.fs.mkdir("/d")
    with pytest.raises(PermissionError) as ei:
        agent.fs.link("/d", "/hard-link-to-dir")  # link(2) of a directory: EPERM
    assert ei.value.errno == errno.EPERM and ei.value.code == "EPERM"  # type: ignore[attr-defined]
    with pytest.raises(OSError) as eb:
        agent.fs.rmdir("/")
    assert type(eb.value) is OSError and eb.value.errno == errno.EBUSY


def test_file_handles(agent: agentfs.AgentFS) -> None:
    fs = agent.fs
    with fs.open("/h", "w+") as f:
        assert f.write(b"hello world") == 11
        assert f.pwrite(b"W", 6) == 1
        assert f.pread(100, 0) == b"hello World"
        assert f.fstat().size == 11
        f.truncate(5)
        f.fsync()
        assert f.fstat().size == 5
    assert fs.read_file("/h") == "hello"
    with fs.open("/h", "a") as f:
        f.write(b"!!")
    with fs.open("/h", "rb") as f:
        assert f.read(3) == b"hel"
        assert f.read() == b"lo!!"
        f.seek(-2, os.SEEK_END)
        assert f.read() == b"!!"
    with pytest.raises(FileExistsError):
        fs.open("/h", "x")
    with pytest.raises(FileNotFoundError):
        fs.open("/nope", "r")
    # A handle stays valid after its file is unlinked.
    f = fs.open("/h", "r")
    fs.unlink("/h")
    assert f.pread(5, 0) == b"hello"
    f.close()


def test_large_file_roundtrip(agent: agentfs.AgentFS) -> None:
    data = os.urandom(5 * 1024 * 1024 + 123)
    agent.fs.write_file("/big", data)
    assert agent.fs.read_bytes("/big") == data
    with agent.fs.open("/big") as f:
        assert f.pread(10, 5 * 1024 * 1024) == data[5 * 1024 * 1024 : 5 * 1024 * 1024 + 10]


def test_info_and_query(agent: agentfs.AgentFS) -> None:
    info = agent.info()
    assert info.schema_version == "0.4" and info.chunk_size == 4096
    agent.fs.write_file("/q", "x")
    rows = agent.query("SELECT size FROM fs_inode WHERE size = ?", 1)
    assert rows == [(1,)]


def test_exec_in_the_sandbox(agent: agentfs.AgentFS) -> None:
    agent.fs.write_file("/in/a.txt", "one\ntwo\nthree\n")
    r = agent.exec("wc -l < a.txt; cat missing", dir="/in")
    assert r.exit_code != 0
    assert r.stdout.strip() == b"3" and b"missing" in r.stderr
    r = agent.exec("tr a-z A-Z > out.txt", dir="/in", stdin=b"hello")
    assert r.exit_code == 0 and agent.fs.read_file("/in/out.txt") == "HELLO"

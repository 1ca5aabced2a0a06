"""agent.mount_sandbox(): the agent's files on a real FUSE mount (served by
`agentfs mount`), used by real programs (git, tar), then back in the agent.
Fails instead of skipping when AGENTFS_REQUIRE_FUSE=1."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agentfs
from agentfs import aio


def _fuse_missing() -> str:
    if not sys.platform.startswith("linux"):
        return "FUSE mounts are Linux only"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    return ""


WHY = _fuse_missing()
if WHY and os.environ.get("AGENTFS_REQUIRE_FUSE") == "1":
    raise RuntimeError(f"FUSE unavailable: {WHY} (AGENTFS_REQUIRE_FUSE=1)")

pytestmark = pytest.mark.skipif(bool(WHY), reason=WHY or "FUSE present")

KEY = "ab" * 32


def sh(cwd: str, home: Path, script: str) -> str:
    env = dict(
        os.environ,
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return subprocess.run(["sh", "-c", script], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_mount_sandbox_git_tar_and_back(engine: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    a = agentfs.AgentFS.open(path=str(tmp_path / "a.db"))
    try:
        a.fs.write_file("/src/hello.txt", "hello\n")
        with a.mount_sandbox() as m:
            assert os.path.isabs(m.path)
            sh(m.path, home, "git init -q -b main && git add -A && git commit -qm first && tar cf snap.tar src")
            assert sh(m.path, home, "git status --porcelain --untracked-files=no") == ""
            assert sh(m.path, home, "tar tf snap.tar") == "src/\nsrc/hello.txt\n"
        assert not os.path.exists(m.path), "the temporary mount point is removed"
        m.unmount()  # a second unmount does nothing

        # Back in the agent: its engine reads what the mount wrote.
        assert a.fs.read_file("/.git/HEAD") == "ref: refs/heads/main\n"
        assert a.fs.stat("/snap.tar").size >= 512
        assert a.exec("ls /.git/refs/heads").stdout == b"main\n"

        # Out again on the caller's directory; close() unmounts it.
        d = tmp_path / "mnt"
        d.mkdir()
        m2 = a.mount_sandbox(d)
        assert m2.path == str(d)
        assert sh(str(d), home, "git log --format=%s && cat src/hello.txt") == "first\nhello\n"
    finally:
        a.close()
    assert os.listdir(d) == [], "close() unmounted the caller's directory and left it"
    assert not m2.mounted


def test_mount_sandbox_busy_then_unmounts(engine: str, tmp_path: Path) -> None:
    with agentfs.AgentFS.open(path=str(tmp_path / "a.db")) as a:
        m = a.mount_sandbox()
        f = open(os.path.join(m.path, "held.txt"), "w")
        try:
            with pytest.raises(OSError) as e:
                m.unmount()
            assert e.value.errno == errno.EBUSY
            assert m.mounted
        finally:
            f.close()
        m.unmount()
        assert a.fs.read_file("/held.txt") == ""


def test_mount_sandbox_encrypted(engine: str, tmp_path: Path) -> None:
    # The key reaches `agentfs mount` through its environment: the mount
    # reads and writes the encrypted database.
    home = tmp_path / "home"
    home.mkdir()
    p = tmp_path / "enc.db"
    with agentfs.AgentFS.open(path=str(p), encryption_key=KEY) as a:
        a.fs.write_file("/secret.txt", "classified\n")
        with a.mount_sandbox() as m:
            assert sh(m.path, home, "cat secret.txt && tar cf s.tar secret.txt && echo new > new.txt") == "classified\n"
        assert a.fs.read_file("/new.txt") == "new\n"
        assert a.fs.stat("/s.tar").size >= 512
    assert b"classified" not in p.read_bytes()


async def test_mount_sandbox_aio(engine: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    async with aio.AgentFS.open(path=str(tmp_path / "a.db")) as a:
        await a.fs.write_file("/src/a.txt", "async\n")
        async with await a.mount_sandbox() as m:
            sh(m.path, home, "git init -q -b main && git add -A && git commit -qm aio")
        assert not os.path.exists(m.path)
        assert await a.fs.read_file("/.git/HEAD") == "ref: refs/heads/main\n"
        m2 = await a.mount_sandbox()
        assert sh(m2.path, home, "git log --format=%s") == "aio\n"
    # close() unmounted it (and removed the temporary directory).
    assert not m2.mounted and not os.path.exists(m2.path)


def test_mount_sandbox_refused_over_http(http_server: object, engine: str) -> None:
    url = getattr(http_server, "url")
    with agentfs.AgentFS.open(id="mnt", url=url, token=getattr(http_server, "token")) as a:
        with pytest.raises(agentfs.UnimplementedError, match="agentfs mount"):
            a.mount_sandbox()

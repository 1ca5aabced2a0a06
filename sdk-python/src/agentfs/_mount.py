"""agent.mount_sandbox(): the escape hatch from the in-process sandbox.

The agent's filesystem is mounted with FUSE on a host directory by the
engine's CLI (`agentfs mount`, a server process of its own on the same
database file), so that any native program (git, a compiler, tar) runs
over the agent's files; unmount() hands them back. Linux with /dev/fuse
(and fusermount3 when not root). The same design as the TypeScript SDK's
mountSandbox, so that one engine serves the mount for every SDK.
"""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import sys
import tempfile
import threading
import types
from typing import Callable

from ._errors import FailedPreconditionError, UnimplementedError

HTTP_REFUSAL = (
    "mount_sandbox: needs an agent whose database is a file of this machine (not HTTP); "
    "for a server's agent, run `agentfs mount` on the server"
)


def _run(engine: str, args: list[str], env: dict[str, str]) -> None:
    # stdin/stdout are not the CLI's to keep: `agentfs mount` returns once
    # the mount is ready and its server runs on, detached.
    p = subprocess.run([engine, *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if p.returncode == 0:
        return
    # The CLI's one-line error (and hint) says what went wrong.
    msg = "; ".join(line for line in (p.stderr or "").strip().splitlines() if line) or f"exit status {p.returncode}"
    what = f"agentfs {' '.join(args)}: {msg}"
    if "busy" in msg.lower():
        raise OSError(errno.EBUSY, what, args[-1])
    raise FailedPreconditionError(what)


class SandboxMount:
    """The agent's filesystem mounted on a host directory
    (AgentFS.mount_sandbox). Use it with `with` to unmount at the end of the
    block."""

    def __init__(self, path: str, engine: str, env: dict[str, str], temp: bool, forget: Callable[[SandboxMount], None]) -> None:
        self.path = path
        """The mount point, absolute."""
        self._engine = engine
        self._env = env
        self._temp = temp
        self._forget = forget
        self._lock = threading.Lock()
        self.mounted = True

    def unmount(self) -> None:
        """Unmounts (removing the directory when mount_sandbox made it).
        Raises OSError(EBUSY) while a process still uses the mount; once it
        succeeded, later calls do nothing."""
        with self._lock:
            if not self.mounted:
                return
            _run(self._engine, ["umount", self.path], self._env)
            self.mounted = False
            self._forget(self)
            if self._temp:
                os.rmdir(self.path)

    def __enter__(self) -> SandboxMount:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> None:
        self.unmount()

    def __repr__(self) -> str:
        return f"SandboxMount({self.path!r}, mounted={self.mounted})"


class AsyncSandboxMount:
    """SandboxMount for agentfs.aio: `await m.unmount()`, `async with`."""

    def __init__(self, m: SandboxMount) -> None:
        self._m = m
        self.path = m.path
        """The mount point, absolute."""

    @property
    def mounted(self) -> bool:
        return self._m.mounted

    async def unmount(self) -> None:
        """See SandboxMount.unmount."""
        # Waiting for the CLI blocks: not on the event loop.
        await asyncio.to_thread(self._m.unmount)

    async def __aenter__(self) -> AsyncSandboxMount:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.unmount()

    def __repr__(self) -> str:
        return f"AsyncSandboxMount({self.path!r}, mounted={self.mounted})"


class Mounts:
    """An agent's mounts not unmounted yet: close() ends them before the
    engine (and so the database) closes."""

    def __init__(self, env: dict[str, str]) -> None:
        # AGENTFS_KEY/AGENTFS_CIPHER of an encrypted database: the key
        # travels in the mount server's environment, never in its
        # arguments (which every user of the machine can read).
        self._env = env
        self._lock = threading.Lock()
        self._live: list[SandboxMount] = []

    def mount(self, engine: str, db_path: str, dir: str | os.PathLike[str] | None) -> SandboxMount:
        if not sys.platform.startswith("linux"):
            raise UnimplementedError(f"mount_sandbox: FUSE mounts are Linux only (this is {sys.platform})")
        if not db_path:
            raise UnimplementedError("mount_sandbox: the engine did not name the agent's database file")
        temp = dir is None
        path = tempfile.mkdtemp(prefix="agentfs-mount-") if dir is None else os.path.abspath(os.fspath(dir))
        env = {**os.environ, **self._env}
        try:
            _run(engine, ["mount", db_path, path], env)
        except BaseException:
            if temp:
                try:
                    os.rmdir(path)
                except OSError:
                    pass
            raise
        m = SandboxMount(path, engine, env, temp, self._forget)
        with self._lock:
            self._live.append(m)
        return m

    def _forget(self, m: SandboxMount) -> None:
        with self._lock:
            if m in self._live:
                self._live.remove(m)

    def unmount_all(self) -> BaseException | None:
        """Unmounts every mount; returns the first failure (the others are
        still tried)."""
        with self._lock:
            live = list(self._live)
        first: BaseException | None = None
        for m in live:
            try:
                m.unmount()
            except Exception as e:  # noqa: BLE001 - every mount is tried; the first failure is raised by close()
                first = first or e
        return first


def key_env(key: bytes, cipher: str) -> dict[str, str]:
    """What `agentfs mount` needs to open an encrypted database."""
    if not key:
        return {}
    env = {"AGENTFS_KEY": key.hex()}
    if cipher:
        env["AGENTFS_CIPHER"] = cipher
    return env

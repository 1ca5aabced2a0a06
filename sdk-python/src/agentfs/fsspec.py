"""An fsspec filesystem over an agent: `agentfs://ID/path/in/agent`.

Registered under the fsspec.specs entry point, so with this package and
fsspec installed:

    import fsspec
    fs = fsspec.filesystem("agentfs", id="my-agent")          # .agentfs/my-agent.db
    with fsspec.open("agentfs://my-agent/notes/a.txt", "w") as f:
        f.write("hello")

The URL's host part is the agent id; storage options are AgentFS.open's
(id, path, url, token, engine, cwd, ...) or agent= an open agentfs.AgentFS.
Reads and writes through open() use file handles (pread/pwrite), so large
files stream instead of being held in memory; a file written with "wb" or
"xb" changes at close(), all at once (old content or new, never a mix).
"""

from __future__ import annotations

import datetime
import os
from typing import Any

from fsspec.spec import AbstractBufferedFile, AbstractFileSystem
from fsspec.utils import stringify_path

from ._sync import AgentFS, File
from ._types import Stats

__all__ = ["AgentFSFileSystem"]

# O_ATOMIC is the engine's open flag for an atomic replacement (vfs.OAtomic
# in core/vfs/file.go): sequential writes, visible at close.
O_ATOMIC = 1 << 30
_ATOMIC_WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | O_ATOMIC


class AgentFSFileSystem(AbstractFileSystem):  # type: ignore[misc]
    protocol = "agentfs"
    root_marker = "/"

    def __init__(self, *args: Any, agent: AgentFS | None = None, **storage_options: Any) -> None:
        open_keys = ("id", "path", "url", "token", "engine", "cwd", "create", "read_only", "chunk_size", "durability")
        open_kw = {k: storage_options.pop(k) for k in open_keys if k in storage_options}
        super().__init__(*args, **storage_options)
        self._owns = agent is None
        self.agent = agent if agent is not None else AgentFS.open(**open_kw)
        self._fs = self.agent.fs

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]  # type: ignore[return-value]
        p = stringify_path(path)
        if p.startswith("agentfs://"):
            p = p[len("agentfs://") :]
            _, _, p = p.partition("/")
        elif p.startswith("agentfs:"):
            p = p[len("agentfs:") :]
        p = "/" + p.lstrip("/")
        return p.rstrip("/") or "/"

    @staticmethod
    def _get_kwargs_from_urls(path: str) -> dict[str, Any]:
        if path.startswith("agentfs://"):
            host = path[len("agentfs://") :].partition("/")[0]
            if host:
                return {"id": host}
        return {}

    # --- listing and attributes ------------------------------------------

    def _info(self, path: str, st: Stats) -> dict[str, Any]:
        kind = {"file": "file", "dir": "directory"}.get(st.type, "other")
        return {
            "name": path,
            "size": st.size,
            "type": kind,
            "mode": st.mode,
            "ino": st.ino,
            "nlink": st.nlink,
            "uid": st.uid,
            "gid": st.gid,
            "mtime": st.mtime_ns / 1e9,
            "islink": st.is_symbolic_link(),
        }

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        return self._info(path, self._fs.stat(path))

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path)
        try:
            entries = self._fs.readdir_plus(path)
        except NotADirectoryError:
            out = [self.info(path)]
        else:
            base = path.rstrip("/")
            out = [self._info(f"{base}/{e.name}", e.stats) for e in entries]
        return out if detail else [o["name"] for o in out]

    def find(
        self, path: str, maxdepth: int | None = None, withdirs: bool = False, detail: bool = False, **kwargs: Any
    ) -> Any:
        if maxdepth is not None:
            return super().find(path, maxdepth=maxdepth, withdirs=withdirs, detail=detail, **kwargs)
        # One Walk call for the whole subtree instead of a listing per directory.
        path = self._strip_protocol(path)
        try:
            entries = self._fs.walk(path)
        except FileNotFoundError:
            entries = []
        out: dict[str, dict[str, Any]] = {}
        for e in entries:
            info = self._info(e.name, e.stats)
            if info["type"] == "directory" and (e.name == path or not withdirs):
                continue
            out[e.name] = info
        if not out and entries and entries[0].stats.type == "file":
            out[path] = self._info(path, entries[0].stats)
        names = sorted(out)
        return {n: out[n] for n in names} if detail else names

    def modified(self, path: str) -> datetime.datetime:
        st = self._fs.stat(self._strip_protocol(path))
        return datetime.datetime.fromtimestamp(st.mtime_ns / 1e9, tz=datetime.timezone.utc)

    def created(self, path: str) -> datetime.datetime:
        st = self._fs.stat(self._strip_protocol(path))
        return datetime.datetime.fromtimestamp(st.ctime_ns / 1e9, tz=datetime.timezone.utc)

    # --- whole-file operations --------------------------------------------

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        path = self._strip_protocol(path)
        if start is None and end is None:
            return self._fs.read_file(path, None)
        with self._fs.open(path, "rb") as f:
            size = f.fstat().size
            start = 0 if start is None else (start if start >= 0 else max(size + start, 0))
            end = size if end is None else (end if end >= 0 else max(size + end, 0))
            return f.pread(max(end - start, 0), start) if end > start else b""

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        self._fs.write_file(self._strip_protocol(path), value, exclusive=mode == "create")

    def touch(self, path: str, truncate: bool = True, **kwargs: Any) -> None:
        path = self._strip_protocol(path)
        if truncate or not self.exists(path):
            self._fs.write_file(path, b"")
        else:
            now = datetime.datetime.now(tz=datetime.timezone.utc).timestamp()
            self._fs.utimes(path, int(now * 1e9), int(now * 1e9))

    # --- directories, removal, moves -------------------------------------

    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        path = self._strip_protocol(path)
        if self._fs.exists(path):
            raise FileExistsError(17, os.strerror(17), path)
        self._fs.mkdir(path, recursive=create_parents)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        path = self._strip_protocol(path)
        if not exist_ok and self._fs.exists(path):
            raise FileExistsError(17, os.strerror(17), path)
        self._fs.mkdir(path, recursive=True)

    def rmdir(self, path: str) -> None:
        self._fs.rmdir(self._strip_protocol(path))

    def _rm(self, path: str) -> None:
        path = self._strip_protocol(path)
        if self._fs.lstat(path).is_directory():
            self._fs.rmdir(path)
        else:
            self._fs.unlink(path)

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        if isinstance(path, str) and recursive and maxdepth is None and not _has_magic(path):
            # The engine removes the tree in one call.
            self._fs.rm(self._strip_protocol(path), recursive=True)
            return
        super().rm(path, recursive=recursive, maxdepth=maxdepth)

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        src, dst = self._strip_protocol(path1), self._strip_protocol(path2)
        if self._fs.stat(src).is_directory():
            # copy(recursive=True) hands directories here too (as LocalFileSystem does).
            self._fs.mkdir(dst, recursive=True)
        else:
            self._fs.copy_file(src, dst)

    def mv(self, path1: Any, path2: Any, recursive: bool = False, maxdepth: int | None = None, **kwargs: Any) -> None:
        if isinstance(path1, str) and isinstance(path2, str) and not _has_magic(path1):
            self._fs.rename(self._strip_protocol(path1), self._strip_protocol(path2))
            return
        super().mv(path1, path2, recursive=recursive, maxdepth=maxdepth, **kwargs)

    # --- streams -----------------------------------------------------------

    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: int | None = None,
        autocommit: bool = True,
        cache_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> AgentFSFile:
        return AgentFSFile(self, self._strip_protocol(path), mode, block_size or "default", autocommit, cache_options)

    def close(self) -> None:
        """Closes the agent if this filesystem opened it."""
        if self._owns:
            self.agent.close()


class AgentFSFile(AbstractBufferedFile):  # type: ignore[misc]
    """A buffered file over an agent file handle: reads are pread, each
    flushed block is one pwrite."""

    DEFAULT_BLOCK_SIZE = 1 << 20

    def __init__(
        self,
        fs: AgentFSFileSystem,
        path: str,
        mode: str,
        block_size: Any,
        autocommit: bool,
        cache_options: dict[str, Any] | None,
    ) -> None:
        self._handle: File | None = None
        self._base = 0
        if mode == "rb":
            self._handle = fs._fs.open(path, "r")
            size = self._handle.fstat().size
        else:
            size = None
        super().__init__(
            fs,
            path,
            mode=mode,
            block_size=block_size,
            autocommit=autocommit,
            cache_type="readahead",
            cache_options=cache_options,
            size=size,
        )

    def _fetch_range(self, start: int, end: int) -> bytes:
        assert self._handle is not None
        return self._handle.pread(end - start, start)

    def _initiate_upload(self) -> None:
        # "wb" and "xb" write through an atomic handle (O_ATOMIC): the file
        # keeps its old content until close() makes the new one visible at
        # once, and a client that dies before close() leaves it unchanged.
        flags: str | int
        if self.mode == "wb":
            flags = _ATOMIC_WRITE
        elif self.mode == "xb":
            flags = _ATOMIC_WRITE | os.O_EXCL
        else:
            flags = "r+"
        try:
            self._handle = self.fs._fs.open(self.path, flags)
        except FileNotFoundError:
            if self.mode != "ab":
                raise
            self._handle = self.fs._fs.open(self.path, "w")
        if self.mode == "ab":
            self._base = self._handle.fstat().size

    def _upload_chunk(self, final: bool = False) -> bool:
        assert self._handle is not None
        data = self.buffer.getvalue()
        if data:
            self._handle.pwrite(data, self._base + self.offset)
        return True

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._handle is not None:
                h, self._handle = self._handle, None
                h.close()


def _has_magic(path: str) -> bool:
    return any(c in path for c in "*?[")

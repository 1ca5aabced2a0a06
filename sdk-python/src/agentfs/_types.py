"""The values the idiomatic API returns (field names as in Turso's
agentfs-sdk for Python where it has them)."""

from __future__ import annotations

import stat as _stat
from dataclasses import dataclass
from typing import Any, Literal

from .v1 import filesystem_pb2, tools_pb2

S_IFMT = _stat.S_IFMT(0o177777)
S_IFREG = _stat.S_IFREG
S_IFDIR = _stat.S_IFDIR
S_IFLNK = _stat.S_IFLNK

FileType = Literal["file", "dir", "symlink", "fifo", "char", "block", "socket", "unknown"]

_TYPES: dict[int, FileType] = {
    _stat.S_IFREG: "file",
    _stat.S_IFDIR: "dir",
    _stat.S_IFLNK: "symlink",
    _stat.S_IFIFO: "fifo",
    _stat.S_IFCHR: "char",
    _stat.S_IFBLK: "block",
    _stat.S_IFSOCK: "socket",
}


@dataclass(frozen=True)
class Stats:
    """Attributes of an inode. atime/mtime/ctime are Unix seconds (as in
    agentfs-sdk); the *_ns fields keep the nanoseconds. The st_* properties
    read like os.stat_result."""

    ino: int
    mode: int
    nlink: int
    uid: int
    gid: int
    size: int
    atime: int
    mtime: int
    ctime: int
    atime_ns: int = 0
    mtime_ns: int = 0
    ctime_ns: int = 0
    rdev: int = 0
    blksize: int = 0
    blocks: int = 0

    @classmethod
    def from_proto(cls, s: filesystem_pb2.Stat) -> Stats:
        return cls(
            ino=s.ino,
            mode=s.mode,
            nlink=s.nlink,
            uid=s.uid,
            gid=s.gid,
            size=s.size,
            atime=s.atime_ns // 1_000_000_000,
            mtime=s.mtime_ns // 1_000_000_000,
            ctime=s.ctime_ns // 1_000_000_000,
            atime_ns=s.atime_ns,
            mtime_ns=s.mtime_ns,
            ctime_ns=s.ctime_ns,
            rdev=s.rdev,
            blksize=s.blksize,
            blocks=s.blocks,
        )

    @property
    def type(self) -> FileType:
        return _TYPES.get(_stat.S_IFMT(self.mode), "unknown")

    @property
    def perm(self) -> int:
        """Permission bits (mode without the file type)."""
        return _stat.S_IMODE(self.mode)

    def is_file(self) -> bool:
        return _stat.S_ISREG(self.mode)

    def is_directory(self) -> bool:
        return _stat.S_ISDIR(self.mode)

    def is_symbolic_link(self) -> bool:
        return _stat.S_ISLNK(self.mode)

    @property
    def st_mode(self) -> int:
        return self.mode

    @property
    def st_ino(self) -> int:
        return self.ino

    @property
    def st_nlink(self) -> int:
        return self.nlink

    @property
    def st_uid(self) -> int:
        return self.uid

    @property
    def st_gid(self) -> int:
        return self.gid

    @property
    def st_size(self) -> int:
        return self.size

    @property
    def st_atime(self) -> float:
        return self.atime_ns / 1e9

    @property
    def st_mtime(self) -> float:
        return self.mtime_ns / 1e9

    @property
    def st_ctime(self) -> float:
        return self.ctime_ns / 1e9


@dataclass(frozen=True)
class DirEntry:
    """A directory entry with its attributes (readdir_plus, walk). For walk,
    name is the full path."""

    name: str
    stats: Stats


@dataclass(frozen=True)
class StatFs:
    inodes: int
    bytes_used: int
    block_size: int
    blocks: int
    blocks_free: int
    files_free: int
    name_max: int


@dataclass
class ToolCall:
    """One recorded tool call (agentfs-sdk's ToolCall)."""

    id: int
    name: str
    parameters: Any | None = None
    result: Any | None = None
    error: str | None = None
    status: Literal["pending", "success", "error"] = "pending"
    started_at: int = 0
    completed_at: int | None = None
    duration_ms: int | None = None


@dataclass
class ToolCallStats:
    """Counts of one tool. total_calls counts every call, pending ones too
    (the engine's definition, the same in every SDK)."""

    name: str
    total_calls: int
    successful: int
    failed: int
    avg_duration_ms: float
    pending: int = 0


@dataclass
class AgentFSOptions:
    """agentfs-sdk's options object; AgentFS.open also takes them as keywords."""

    id: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class SyncPullResult:
    """What a pull did: the remote's revision now held, whether it had
    changes, rows applied here, rows kept (this side changed them too)."""

    revision: str
    changed: bool
    applied: int
    kept: int


@dataclass(frozen=True)
class SyncPushResult:
    """What a push did: rows sent (0: nothing to push) and the revision."""

    rows: int
    revision: str


@dataclass(frozen=True)
class SyncStats:
    """The sync state, with the field names of Turso's sync statistics;
    the unix times are None when it never happened."""

    cdc_operations: int
    main_wal_size: int
    revert_wal_size: int
    last_pull_unix_time: int | None
    last_push_unix_time: int | None
    revision: str
    network_sent_bytes: int
    network_received_bytes: int
    remote_url: str


@dataclass(frozen=True)
class Info:
    """What the engine says about the open database."""

    id: str
    path: str
    schema_version: str
    chunk_size: int
    page_size: int
    read_only: bool
    overlay_base: str
    engine_version: str


@dataclass(frozen=True)
class ExecResult:
    """Outcome of a script run by the engine's in-process sandbox."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    limit: str
    duration_ns: int


_STATUS: dict[int, Literal["pending", "success", "error"]] = {
    tools_pb2.TOOL_STATUS_PENDING: "pending",
    tools_pb2.TOOL_STATUS_SUCCESS: "success",
    tools_pb2.TOOL_STATUS_ERROR: "error",
}

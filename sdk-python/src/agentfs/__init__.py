"""AgentFS for Python: an agent's filesystem, key-value store and tool-call
log in one SQLite file, served by the agentfs engine.

    from agentfs import AgentFS

    with AgentFS.open(id="my-agent") as agent:
        agent.fs.write_file("/notes/today.md", "# hello")
        print(agent.fs.read_file("/notes/today.md"))
        agent.kv.set("config", {"model": "x"})

The asyncio API is agentfs.aio; an fsspec filesystem answers agentfs:// URLs
(agentfs.fsspec). Filesystem failures raise the built-in OSError subclasses
(FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError,
PermissionError, ...) with errno and filename set.
"""

from ._connect import __version__
from ._engine import find_engine
from ._errors import (
    AgentFSError,
    AlreadyExistsError,
    CanceledError,
    EngineNotFoundError,
    EngineUnavailableError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnimplementedError,
)
from ._http import HttpTransport
from ._mount import AsyncSandboxMount, SandboxMount
from ._session import AsyncSession, PromptError, PromptResult, Session, SessionEvent, SessionInfo
from ._process import NetRule, OutputChunk, Process, ProcessInfo, ProcessResult, Shell
from ._stdio import StdioTransport
from ._sync import AgentFS, File, Filesystem, KvStore, ToolCalls
from ._types import (
    S_IFDIR,
    S_IFLNK,
    S_IFMT,
    S_IFREG,
    AgentFSOptions,
    DirEntry,
    ExecResult,
    Info,
    StatFs,
    Stats,
    SyncPullResult,
    SyncPushResult,
    SyncStats,
    ToolCall,
    ToolCallStats,
)

__all__ = [
    "NetRule",
    "AgentFS",
    "AgentFSOptions",
    "AgentFSError",
    "AsyncSandboxMount",
    "AlreadyExistsError",
    "CanceledError",
    "DirEntry",
    "EngineNotFoundError",
    "EngineUnavailableError",
    "ExecResult",
    "FailedPreconditionError",
    "File",
    "Filesystem",
    "HttpTransport",
    "Info",
    "InvalidArgumentError",
    "KvStore",
    "NotFoundError",
    "OutputChunk",
    "Process",
    "ProcessInfo",
    "ProcessResult",
    "Shell",
    "AsyncSession",
    "PromptError",
    "PromptResult",
    "Session",
    "SessionEvent",
    "SessionInfo",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "SandboxMount",
    "S_IFDIR",
    "S_IFLNK",
    "S_IFMT",
    "S_IFREG",
    "StatFs",
    "Stats",
    "StdioTransport",
    "SyncPullResult",
    "SyncPushResult",
    "SyncStats",
    "ToolCall",
    "ToolCallStats",
    "ToolCalls",
    "UnimplementedError",
    "__version__",
    "find_engine",
]

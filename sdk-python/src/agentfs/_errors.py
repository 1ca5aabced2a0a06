"""Errors: agentfs.v1.Error turned into Python's own exceptions.

Filesystem failures carry a POSIX errno and become the built-in OSError
subclass for it (FileNotFoundError, FileExistsError, IsADirectoryError,
NotADirectoryError, PermissionError, ...) with errno, strerror, filename and
filename2 set, as os functions raise them. Other failures become an
AgentFSError subclass for their kind.
"""

from __future__ import annotations

import errno as _errno
import os

from agentfs.v1 import errors_pb2

__all__ = [
    "AgentFSError",
    "InvalidArgumentError",
    "NotFoundError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "FailedPreconditionError",
    "CanceledError",
    "UnimplementedError",
    "ResourceExhaustedError",
    "EngineUnavailableError",
    "EngineNotFoundError",
    "from_proto",
]

K = errors_pb2.ErrorKind


class AgentFSError(Exception):
    """A failure that is not a filesystem errno: bad argument, missing agent,
    authentication, the engine going away... `kind` is the agentfs.v1.ErrorKind
    name without its prefix ("NOT_FOUND")."""

    kind: str = "INTERNAL"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind


class InvalidArgumentError(AgentFSError, ValueError):
    kind = "INVALID_ARGUMENT"


class NotFoundError(AgentFSError, LookupError):
    """An agent, snapshot, tool call or handle that does not exist."""

    kind = "NOT_FOUND"


class AlreadyExistsError(AgentFSError):
    kind = "ALREADY_EXISTS"


class PermissionDeniedError(AgentFSError, PermissionError):
    """Missing or wrong credentials, or a write to a read-only database."""

    kind = "PERMISSION_DENIED"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        PermissionError.__init__(self, _errno.EACCES, message)
        self.message = message
        if kind is not None:
            self.kind = kind

    def __str__(self) -> str:
        return self.message


class FailedPreconditionError(AgentFSError):
    kind = "FAILED_PRECONDITION"


class CanceledError(AgentFSError):
    kind = "CANCELED"


class UnimplementedError(AgentFSError, NotImplementedError):
    kind = "UNIMPLEMENTED"


class ResourceExhaustedError(AgentFSError):
    kind = "RESOURCE_EXHAUSTED"


class EngineUnavailableError(AgentFSError, ConnectionError):
    """The engine went away: the process exited or the connection dropped.
    Calls in flight fail with it instead of waiting forever."""

    kind = "UNAVAILABLE"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        ConnectionError.__init__(self, message)
        self.message = message
        if kind is not None:
            self.kind = kind

    def __str__(self) -> str:
        return self.message


class EngineNotFoundError(AgentFSError, FileNotFoundError):
    """No agentfs binary was found (option, AGENTFS_BIN, bundled, PATH)."""

    kind = "NOT_FOUND"

    def __init__(self, message: str) -> None:
        FileNotFoundError.__init__(self, _errno.ENOENT, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


_BY_KIND: dict[int, type[AgentFSError]] = {
    K.ERROR_KIND_INVALID_ARGUMENT: InvalidArgumentError,
    K.ERROR_KIND_NOT_FOUND: NotFoundError,
    K.ERROR_KIND_ALREADY_EXISTS: AlreadyExistsError,
    K.ERROR_KIND_PERMISSION_DENIED: PermissionDeniedError,
    K.ERROR_KIND_FAILED_PRECONDITION: FailedPreconditionError,
    K.ERROR_KIND_CANCELED: CanceledError,
    K.ERROR_KIND_UNIMPLEMENTED: UnimplementedError,
    K.ERROR_KIND_RESOURCE_EXHAUSTED: ResourceExhaustedError,
    K.ERROR_KIND_UNAVAILABLE: EngineUnavailableError,
}


def from_proto(err: errors_pb2.Error) -> Exception:
    """Returns the exception to raise for an agentfs.v1.Error."""
    num = err.errno
    if not num and err.code:
        num = getattr(_errno, err.code, 0)
    if num:
        # OSError(errno, ...) picks the subclass itself (ENOENT ->
        # FileNotFoundError, EACCES/EPERM -> PermissionError, ...).
        strerror = os.strerror(num)
        if err.syscall == "policy" and err.message:
            # A refused sandbox policy: the message names the entry.
            strerror = err.message
        e: OSError
        if err.path and err.dest:
            e = OSError(num, strerror, err.path, None, err.dest)
        elif err.path:
            e = OSError(num, strerror, err.path)
        else:
            e = OSError(num, strerror)
        e.code = err.code or _errno.errorcode.get(num, "")  # type: ignore[attr-defined]
        e.syscall = err.syscall  # type: ignore[attr-defined]
        e.message = err.message  # type: ignore[attr-defined]
        return e
    cls = _BY_KIND.get(err.kind, AgentFSError)
    kind = K.Name(err.kind).removeprefix("ERROR_KIND_") if err.kind in K.values() else "INTERNAL"
    return cls(err.message or kind.lower().replace("_", " "), kind=kind)

from agentfs.v1 import sandbox_pb2 as _sandbox_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StartProcessRequest(_message.Message):
    __slots__ = ("exec", "shell_id", "keep_stdin_open", "timeout_ms", "lease_ms", "detach")
    EXEC_FIELD_NUMBER: _ClassVar[int]
    SHELL_ID_FIELD_NUMBER: _ClassVar[int]
    KEEP_STDIN_OPEN_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    DETACH_FIELD_NUMBER: _ClassVar[int]
    exec: _sandbox_pb2.ExecRequest
    shell_id: int
    keep_stdin_open: bool
    timeout_ms: int
    lease_ms: int
    detach: bool
    def __init__(self, exec: _Optional[_Union[_sandbox_pb2.ExecRequest, _Mapping]] = ..., shell_id: _Optional[int] = ..., keep_stdin_open: _Optional[bool] = ..., timeout_ms: _Optional[int] = ..., lease_ms: _Optional[int] = ..., detach: _Optional[bool] = ...) -> None: ...

class StartProcessResponse(_message.Message):
    __slots__ = ("pid",)
    PID_FIELD_NUMBER: _ClassVar[int]
    pid: int
    def __init__(self, pid: _Optional[int] = ...) -> None: ...

class ReadProcessRequest(_message.Message):
    __slots__ = ("pid", "wait_ms", "max_bytes")
    PID_FIELD_NUMBER: _ClassVar[int]
    WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    pid: int
    wait_ms: int
    max_bytes: int
    def __init__(self, pid: _Optional[int] = ..., wait_ms: _Optional[int] = ..., max_bytes: _Optional[int] = ...) -> None: ...

class ProcessChunk(_message.Message):
    __slots__ = ("stream", "data")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    stream: int
    data: bytes
    def __init__(self, stream: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...

class ReadProcessResponse(_message.Message):
    __slots__ = ("chunks", "exited", "exit_code", "signal", "limit")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EXITED_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[ProcessChunk]
    exited: bool
    exit_code: int
    signal: int
    limit: str
    def __init__(self, chunks: _Optional[_Iterable[_Union[ProcessChunk, _Mapping]]] = ..., exited: _Optional[bool] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., limit: _Optional[str] = ...) -> None: ...

class WriteProcessRequest(_message.Message):
    __slots__ = ("pid", "data", "close_stdin")
    PID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    CLOSE_STDIN_FIELD_NUMBER: _ClassVar[int]
    pid: int
    data: bytes
    close_stdin: bool
    def __init__(self, pid: _Optional[int] = ..., data: _Optional[bytes] = ..., close_stdin: _Optional[bool] = ...) -> None: ...

class WriteProcessResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class KillProcessRequest(_message.Message):
    __slots__ = ("pid", "signal")
    PID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    pid: int
    signal: int
    def __init__(self, pid: _Optional[int] = ..., signal: _Optional[int] = ...) -> None: ...

class KillProcessResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListProcessesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ProcessInfo(_message.Message):
    __slots__ = ("pid", "script", "shell_id", "running", "exit_code", "started_unix_ms")
    PID_FIELD_NUMBER: _ClassVar[int]
    SCRIPT_FIELD_NUMBER: _ClassVar[int]
    SHELL_ID_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    STARTED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    pid: int
    script: str
    shell_id: int
    running: bool
    exit_code: int
    started_unix_ms: int
    def __init__(self, pid: _Optional[int] = ..., script: _Optional[str] = ..., shell_id: _Optional[int] = ..., running: _Optional[bool] = ..., exit_code: _Optional[int] = ..., started_unix_ms: _Optional[int] = ...) -> None: ...

class ListProcessesResponse(_message.Message):
    __slots__ = ("processes",)
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    processes: _containers.RepeatedCompositeFieldContainer[ProcessInfo]
    def __init__(self, processes: _Optional[_Iterable[_Union[ProcessInfo, _Mapping]]] = ...) -> None: ...

class OpenShellRequest(_message.Message):
    __slots__ = ("exec",)
    EXEC_FIELD_NUMBER: _ClassVar[int]
    exec: _sandbox_pb2.ExecRequest
    def __init__(self, exec: _Optional[_Union[_sandbox_pb2.ExecRequest, _Mapping]] = ...) -> None: ...

class OpenShellResponse(_message.Message):
    __slots__ = ("shell_id",)
    SHELL_ID_FIELD_NUMBER: _ClassVar[int]
    shell_id: int
    def __init__(self, shell_id: _Optional[int] = ...) -> None: ...

class CloseShellRequest(_message.Message):
    __slots__ = ("shell_id",)
    SHELL_ID_FIELD_NUMBER: _ClassVar[int]
    shell_id: int
    def __init__(self, shell_id: _Optional[int] = ...) -> None: ...

class CloseShellResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StreamProcessRequest(_message.Message):
    __slots__ = ("start", "pid", "deadline_ms")
    START_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    start: StartProcessRequest
    pid: int
    deadline_ms: int
    def __init__(self, start: _Optional[_Union[StartProcessRequest, _Mapping]] = ..., pid: _Optional[int] = ..., deadline_ms: _Optional[int] = ...) -> None: ...

class StreamProcessResponse(_message.Message):
    __slots__ = ("pid", "chunks", "exited", "exit_code", "signal", "limit")
    PID_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EXITED_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    pid: int
    chunks: _containers.RepeatedCompositeFieldContainer[ProcessChunk]
    exited: bool
    exit_code: int
    signal: int
    limit: str
    def __init__(self, pid: _Optional[int] = ..., chunks: _Optional[_Iterable[_Union[ProcessChunk, _Mapping]]] = ..., exited: _Optional[bool] = ..., exit_code: _Optional[int] = ..., signal: _Optional[int] = ..., limit: _Optional[str] = ...) -> None: ...

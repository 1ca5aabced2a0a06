from agentfs.v1 import agent_pb2 as _agent_pb2
from agentfs.v1 import errors_pb2 as _errors_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Frame(_message.Message):
    __slots__ = ("id", "hello", "welcome", "call", "result", "cancel", "ping", "pong", "shutdown", "message")
    ID_FIELD_NUMBER: _ClassVar[int]
    HELLO_FIELD_NUMBER: _ClassVar[int]
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    SHUTDOWN_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    id: int
    hello: Hello
    welcome: Welcome
    call: Call
    result: Result
    cancel: Cancel
    ping: Ping
    pong: Pong
    shutdown: Shutdown
    message: StreamMessage
    def __init__(self, id: _Optional[int] = ..., hello: _Optional[_Union[Hello, _Mapping]] = ..., welcome: _Optional[_Union[Welcome, _Mapping]] = ..., call: _Optional[_Union[Call, _Mapping]] = ..., result: _Optional[_Union[Result, _Mapping]] = ..., cancel: _Optional[_Union[Cancel, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., shutdown: _Optional[_Union[Shutdown, _Mapping]] = ..., message: _Optional[_Union[StreamMessage, _Mapping]] = ...) -> None: ...

class OpenOptions(_message.Message):
    __slots__ = ("id", "path", "no_create", "read_only", "chunk_size", "durability", "dir", "encryption_key", "cipher", "sync_remote_url", "sync_token", "sync_partial_bootstrap_length", "sync_partial_bootstrap_query", "sync_partial_segment_size", "sync_partial_prefetch")
    ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    NO_CREATE_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    CHUNK_SIZE_FIELD_NUMBER: _ClassVar[int]
    DURABILITY_FIELD_NUMBER: _ClassVar[int]
    DIR_FIELD_NUMBER: _ClassVar[int]
    ENCRYPTION_KEY_FIELD_NUMBER: _ClassVar[int]
    CIPHER_FIELD_NUMBER: _ClassVar[int]
    SYNC_REMOTE_URL_FIELD_NUMBER: _ClassVar[int]
    SYNC_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SYNC_PARTIAL_BOOTSTRAP_LENGTH_FIELD_NUMBER: _ClassVar[int]
    SYNC_PARTIAL_BOOTSTRAP_QUERY_FIELD_NUMBER: _ClassVar[int]
    SYNC_PARTIAL_SEGMENT_SIZE_FIELD_NUMBER: _ClassVar[int]
    SYNC_PARTIAL_PREFETCH_FIELD_NUMBER: _ClassVar[int]
    id: str
    path: str
    no_create: bool
    read_only: bool
    chunk_size: int
    durability: str
    dir: str
    encryption_key: bytes
    cipher: str
    sync_remote_url: str
    sync_token: str
    sync_partial_bootstrap_length: int
    sync_partial_bootstrap_query: str
    sync_partial_segment_size: int
    sync_partial_prefetch: bool
    def __init__(self, id: _Optional[str] = ..., path: _Optional[str] = ..., no_create: _Optional[bool] = ..., read_only: _Optional[bool] = ..., chunk_size: _Optional[int] = ..., durability: _Optional[str] = ..., dir: _Optional[str] = ..., encryption_key: _Optional[bytes] = ..., cipher: _Optional[str] = ..., sync_remote_url: _Optional[str] = ..., sync_token: _Optional[str] = ..., sync_partial_bootstrap_length: _Optional[int] = ..., sync_partial_bootstrap_query: _Optional[str] = ..., sync_partial_segment_size: _Optional[int] = ..., sync_partial_prefetch: _Optional[bool] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("protocol_version", "client", "open", "heartbeat_ms")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    OPEN_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_MS_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    client: str
    open: OpenOptions
    heartbeat_ms: int
    def __init__(self, protocol_version: _Optional[int] = ..., client: _Optional[str] = ..., open: _Optional[_Union[OpenOptions, _Mapping]] = ..., heartbeat_ms: _Optional[int] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("protocol_version", "engine_version", "info")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    ENGINE_VERSION_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    engine_version: str
    info: _agent_pb2.InfoResponse
    def __init__(self, protocol_version: _Optional[int] = ..., engine_version: _Optional[str] = ..., info: _Optional[_Union[_agent_pb2.InfoResponse, _Mapping]] = ...) -> None: ...

class Call(_message.Message):
    __slots__ = ("method", "payload")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    method: str
    payload: bytes
    def __init__(self, method: _Optional[str] = ..., payload: _Optional[bytes] = ...) -> None: ...

class Result(_message.Message):
    __slots__ = ("payload", "error")
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    error: _errors_pb2.Error
    def __init__(self, payload: _Optional[bytes] = ..., error: _Optional[_Union[_errors_pb2.Error, _Mapping]] = ...) -> None: ...

class StreamMessage(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    def __init__(self, payload: _Optional[bytes] = ...) -> None: ...

class Cancel(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Ping(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Pong(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Shutdown(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

from agentfs.v1 import sandbox_pb2 as _sandbox_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OpenSessionRequest(_message.Message):
    __slots__ = ("session_id", "provider", "model", "base_url", "api_key", "system", "policy", "tools", "read_only", "max_turns", "max_tokens", "max_response_bytes", "timeout_ms")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    BASE_URL_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    MAX_TURNS_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_RESPONSE_BYTES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    provider: str
    model: str
    base_url: str
    api_key: str
    system: str
    policy: _sandbox_pb2.ExecRequest
    tools: _containers.RepeatedScalarFieldContainer[str]
    read_only: bool
    max_turns: int
    max_tokens: int
    max_response_bytes: int
    timeout_ms: int
    def __init__(self, session_id: _Optional[str] = ..., provider: _Optional[str] = ..., model: _Optional[str] = ..., base_url: _Optional[str] = ..., api_key: _Optional[str] = ..., system: _Optional[str] = ..., policy: _Optional[_Union[_sandbox_pb2.ExecRequest, _Mapping]] = ..., tools: _Optional[_Iterable[str]] = ..., read_only: _Optional[bool] = ..., max_turns: _Optional[int] = ..., max_tokens: _Optional[int] = ..., max_response_bytes: _Optional[int] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("session_id", "provider", "model", "messages", "created_unix_ms", "updated_unix_ms")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    provider: str
    model: str
    messages: int
    created_unix_ms: int
    updated_unix_ms: int
    def __init__(self, session_id: _Optional[str] = ..., provider: _Optional[str] = ..., model: _Optional[str] = ..., messages: _Optional[int] = ..., created_unix_ms: _Optional[int] = ..., updated_unix_ms: _Optional[int] = ...) -> None: ...

class OpenSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: SessionInfo
    def __init__(self, session: _Optional[_Union[SessionInfo, _Mapping]] = ...) -> None: ...

class PromptRequest(_message.Message):
    __slots__ = ("session_id", "text")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    text: str
    def __init__(self, session_id: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class PromptResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SessionEvent(_message.Message):
    __slots__ = ("type", "text", "tool_call_id", "tool_name", "arguments_json", "result_json", "is_error", "error", "stop_reason", "turn", "input_tokens", "output_tokens")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    type: str
    text: str
    tool_call_id: str
    tool_name: str
    arguments_json: str
    result_json: str
    is_error: bool
    error: str
    stop_reason: str
    turn: int
    input_tokens: int
    output_tokens: int
    def __init__(self, type: _Optional[str] = ..., text: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., arguments_json: _Optional[str] = ..., result_json: _Optional[str] = ..., is_error: _Optional[bool] = ..., error: _Optional[str] = ..., stop_reason: _Optional[str] = ..., turn: _Optional[int] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ...) -> None: ...

class ReadSessionEventsRequest(_message.Message):
    __slots__ = ("session_id", "wait_ms", "max_events")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_EVENTS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    wait_ms: int
    max_events: int
    def __init__(self, session_id: _Optional[str] = ..., wait_ms: _Optional[int] = ..., max_events: _Optional[int] = ...) -> None: ...

class ReadSessionEventsResponse(_message.Message):
    __slots__ = ("events", "idle")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    IDLE_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[SessionEvent]
    idle: bool
    def __init__(self, events: _Optional[_Iterable[_Union[SessionEvent, _Mapping]]] = ..., idle: _Optional[bool] = ...) -> None: ...

class CancelPromptRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CancelPromptResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CloseSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CloseSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

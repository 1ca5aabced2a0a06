from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ToolStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_STATUS_UNSPECIFIED: _ClassVar[ToolStatus]
    TOOL_STATUS_PENDING: _ClassVar[ToolStatus]
    TOOL_STATUS_SUCCESS: _ClassVar[ToolStatus]
    TOOL_STATUS_ERROR: _ClassVar[ToolStatus]
TOOL_STATUS_UNSPECIFIED: ToolStatus
TOOL_STATUS_PENDING: ToolStatus
TOOL_STATUS_SUCCESS: ToolStatus
TOOL_STATUS_ERROR: ToolStatus

class ToolCall(_message.Message):
    __slots__ = ("id", "name", "parameters_json", "result_json", "error", "status", "started_at", "completed_at", "duration_ms")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    parameters_json: str
    result_json: str
    error: str
    status: ToolStatus
    started_at: int
    completed_at: int
    duration_ms: int
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., parameters_json: _Optional[str] = ..., result_json: _Optional[str] = ..., error: _Optional[str] = ..., status: _Optional[_Union[ToolStatus, str]] = ..., started_at: _Optional[int] = ..., completed_at: _Optional[int] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class ToolStats(_message.Message):
    __slots__ = ("name", "total_calls", "successful", "failed", "pending", "avg_duration_ms")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CALLS_FIELD_NUMBER: _ClassVar[int]
    SUCCESSFUL_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    AVG_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    name: str
    total_calls: int
    successful: int
    failed: int
    pending: int
    avg_duration_ms: float
    def __init__(self, name: _Optional[str] = ..., total_calls: _Optional[int] = ..., successful: _Optional[int] = ..., failed: _Optional[int] = ..., pending: _Optional[int] = ..., avg_duration_ms: _Optional[float] = ...) -> None: ...

class ToolStartRequest(_message.Message):
    __slots__ = ("name", "parameters_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    parameters_json: str
    def __init__(self, name: _Optional[str] = ..., parameters_json: _Optional[str] = ...) -> None: ...

class ToolStartResponse(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class ToolSuccessRequest(_message.Message):
    __slots__ = ("id", "result_json")
    ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    id: int
    result_json: str
    def __init__(self, id: _Optional[int] = ..., result_json: _Optional[str] = ...) -> None: ...

class ToolSuccessResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ToolFailRequest(_message.Message):
    __slots__ = ("id", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: int
    error: str
    def __init__(self, id: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class ToolFailResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ToolRecordRequest(_message.Message):
    __slots__ = ("name", "started_at", "completed_at", "parameters_json", "result_json", "error")
    NAME_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    name: str
    started_at: int
    completed_at: int
    parameters_json: str
    result_json: str
    error: str
    def __init__(self, name: _Optional[str] = ..., started_at: _Optional[int] = ..., completed_at: _Optional[int] = ..., parameters_json: _Optional[str] = ..., result_json: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class ToolRecordResponse(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class ToolGetRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    def __init__(self, id: _Optional[int] = ...) -> None: ...

class ToolGetResponse(_message.Message):
    __slots__ = ("found", "call")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    found: bool
    call: ToolCall
    def __init__(self, found: _Optional[bool] = ..., call: _Optional[_Union[ToolCall, _Mapping]] = ...) -> None: ...

class ToolListRequest(_message.Message):
    __slots__ = ("name", "status", "since", "until", "limit", "ascending")
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    ASCENDING_FIELD_NUMBER: _ClassVar[int]
    name: str
    status: ToolStatus
    since: int
    until: int
    limit: int
    ascending: bool
    def __init__(self, name: _Optional[str] = ..., status: _Optional[_Union[ToolStatus, str]] = ..., since: _Optional[int] = ..., until: _Optional[int] = ..., limit: _Optional[int] = ..., ascending: _Optional[bool] = ...) -> None: ...

class ToolListResponse(_message.Message):
    __slots__ = ("calls",)
    CALLS_FIELD_NUMBER: _ClassVar[int]
    calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    def __init__(self, calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ...) -> None: ...

class ToolStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ToolStatsResponse(_message.Message):
    __slots__ = ("stats",)
    STATS_FIELD_NUMBER: _ClassVar[int]
    stats: _containers.RepeatedCompositeFieldContainer[ToolStats]
    def __init__(self, stats: _Optional[_Iterable[_Union[ToolStats, _Mapping]]] = ...) -> None: ...

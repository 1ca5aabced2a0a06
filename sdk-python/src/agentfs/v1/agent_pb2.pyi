from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHANGE_KIND_UNSPECIFIED: _ClassVar[ChangeKind]
    CHANGE_KIND_ADDED: _ClassVar[ChangeKind]
    CHANGE_KIND_MODIFIED: _ClassVar[ChangeKind]
    CHANGE_KIND_DELETED: _ClassVar[ChangeKind]
CHANGE_KIND_UNSPECIFIED: ChangeKind
CHANGE_KIND_ADDED: ChangeKind
CHANGE_KIND_MODIFIED: ChangeKind
CHANGE_KIND_DELETED: ChangeKind

class InfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class InfoResponse(_message.Message):
    __slots__ = ("id", "path", "schema_version", "chunk_size", "page_size", "read_only", "overlay_base", "engine_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    CHUNK_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    OVERLAY_BASE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    path: str
    schema_version: str
    chunk_size: int
    page_size: int
    read_only: bool
    overlay_base: str
    engine_version: str
    def __init__(self, id: _Optional[str] = ..., path: _Optional[str] = ..., schema_version: _Optional[str] = ..., chunk_size: _Optional[int] = ..., page_size: _Optional[int] = ..., read_only: _Optional[bool] = ..., overlay_base: _Optional[str] = ..., engine_version: _Optional[str] = ...) -> None: ...

class Snapshot(_message.Message):
    __slots__ = ("name", "created_at_ns", "size")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_NS_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    name: str
    created_at_ns: int
    size: int
    def __init__(self, name: _Optional[str] = ..., created_at_ns: _Optional[int] = ..., size: _Optional[int] = ...) -> None: ...

class CreateSnapshotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class CreateSnapshotResponse(_message.Message):
    __slots__ = ("snapshot",)
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    snapshot: Snapshot
    def __init__(self, snapshot: _Optional[_Union[Snapshot, _Mapping]] = ...) -> None: ...

class ListSnapshotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSnapshotsResponse(_message.Message):
    __slots__ = ("snapshots",)
    SNAPSHOTS_FIELD_NUMBER: _ClassVar[int]
    snapshots: _containers.RepeatedCompositeFieldContainer[Snapshot]
    def __init__(self, snapshots: _Optional[_Iterable[_Union[Snapshot, _Mapping]]] = ...) -> None: ...

class RestoreSnapshotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RestoreSnapshotResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Value(_message.Message):
    __slots__ = ("null", "integer", "real", "text", "blob")
    NULL_FIELD_NUMBER: _ClassVar[int]
    INTEGER_FIELD_NUMBER: _ClassVar[int]
    REAL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    BLOB_FIELD_NUMBER: _ClassVar[int]
    null: bool
    integer: int
    real: float
    text: str
    blob: bytes
    def __init__(self, null: _Optional[bool] = ..., integer: _Optional[int] = ..., real: _Optional[float] = ..., text: _Optional[str] = ..., blob: _Optional[bytes] = ...) -> None: ...

class Row(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[Value]
    def __init__(self, values: _Optional[_Iterable[_Union[Value, _Mapping]]] = ...) -> None: ...

class QueryRequest(_message.Message):
    __slots__ = ("sql", "params")
    SQL_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    sql: str
    params: _containers.RepeatedCompositeFieldContainer[Value]
    def __init__(self, sql: _Optional[str] = ..., params: _Optional[_Iterable[_Union[Value, _Mapping]]] = ...) -> None: ...

class QueryResponse(_message.Message):
    __slots__ = ("columns", "rows")
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    columns: _containers.RepeatedScalarFieldContainer[str]
    rows: _containers.RepeatedCompositeFieldContainer[Row]
    def __init__(self, columns: _Optional[_Iterable[str]] = ..., rows: _Optional[_Iterable[_Union[Row, _Mapping]]] = ...) -> None: ...

class FsckProblem(_message.Message):
    __slots__ = ("rule", "message", "repaired")
    RULE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REPAIRED_FIELD_NUMBER: _ClassVar[int]
    rule: str
    message: str
    repaired: bool
    def __init__(self, rule: _Optional[str] = ..., message: _Optional[str] = ..., repaired: _Optional[bool] = ...) -> None: ...

class FsckRequest(_message.Message):
    __slots__ = ("repair",)
    REPAIR_FIELD_NUMBER: _ClassVar[int]
    repair: bool
    def __init__(self, repair: _Optional[bool] = ...) -> None: ...

class FsckResponse(_message.Message):
    __slots__ = ("ok", "problems")
    OK_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    problems: _containers.RepeatedCompositeFieldContainer[FsckProblem]
    def __init__(self, ok: _Optional[bool] = ..., problems: _Optional[_Iterable[_Union[FsckProblem, _Mapping]]] = ...) -> None: ...

class CheckpointRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CheckpointResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Change(_message.Message):
    __slots__ = ("path", "kind", "type")
    PATH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    path: str
    kind: ChangeKind
    type: str
    def __init__(self, path: _Optional[str] = ..., kind: _Optional[_Union[ChangeKind, str]] = ..., type: _Optional[str] = ...) -> None: ...

class DiffRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DiffResponse(_message.Message):
    __slots__ = ("changes",)
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[Change]
    def __init__(self, changes: _Optional[_Iterable[_Union[Change, _Mapping]]] = ...) -> None: ...

class AgentSummary(_message.Message):
    __slots__ = ("id", "size", "modified_at_ns")
    ID_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_AT_NS_FIELD_NUMBER: _ClassVar[int]
    id: str
    size: int
    modified_at_ns: int
    def __init__(self, id: _Optional[str] = ..., size: _Optional[int] = ..., modified_at_ns: _Optional[int] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("agents",)
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[AgentSummary]
    def __init__(self, agents: _Optional[_Iterable[_Union[AgentSummary, _Mapping]]] = ...) -> None: ...

class CreateAgentRequest(_message.Message):
    __slots__ = ("id", "chunk_size", "exist_ok")
    ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_SIZE_FIELD_NUMBER: _ClassVar[int]
    EXIST_OK_FIELD_NUMBER: _ClassVar[int]
    id: str
    chunk_size: int
    exist_ok: bool
    def __init__(self, id: _Optional[str] = ..., chunk_size: _Optional[int] = ..., exist_ok: _Optional[bool] = ...) -> None: ...

class CreateAgentResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: InfoResponse
    def __init__(self, info: _Optional[_Union[InfoResponse, _Mapping]] = ...) -> None: ...

class SyncPullRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SyncPullResponse(_message.Message):
    __slots__ = ("revision", "changed", "applied", "kept")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    revision: str
    changed: bool
    applied: int
    kept: int
    def __init__(self, revision: _Optional[str] = ..., changed: _Optional[bool] = ..., applied: _Optional[int] = ..., kept: _Optional[int] = ...) -> None: ...

class SyncPushRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SyncPushResponse(_message.Message):
    __slots__ = ("rows", "revision")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    rows: int
    revision: str
    def __init__(self, rows: _Optional[int] = ..., revision: _Optional[str] = ...) -> None: ...

class SyncRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SyncResponse(_message.Message):
    __slots__ = ("pull", "push")
    PULL_FIELD_NUMBER: _ClassVar[int]
    PUSH_FIELD_NUMBER: _ClassVar[int]
    pull: SyncPullResponse
    push: SyncPushResponse
    def __init__(self, pull: _Optional[_Union[SyncPullResponse, _Mapping]] = ..., push: _Optional[_Union[SyncPushResponse, _Mapping]] = ...) -> None: ...

class SyncStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SyncStatsResponse(_message.Message):
    __slots__ = ("cdc_operations", "main_wal_size", "revert_wal_size", "last_pull_unix_time", "last_push_unix_time", "revision", "network_sent_bytes", "network_received_bytes", "remote_url")
    CDC_OPERATIONS_FIELD_NUMBER: _ClassVar[int]
    MAIN_WAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    REVERT_WAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    LAST_PULL_UNIX_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_PUSH_UNIX_TIME_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    NETWORK_SENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    NETWORK_RECEIVED_BYTES_FIELD_NUMBER: _ClassVar[int]
    REMOTE_URL_FIELD_NUMBER: _ClassVar[int]
    cdc_operations: int
    main_wal_size: int
    revert_wal_size: int
    last_pull_unix_time: int
    last_push_unix_time: int
    revision: str
    network_sent_bytes: int
    network_received_bytes: int
    remote_url: str
    def __init__(self, cdc_operations: _Optional[int] = ..., main_wal_size: _Optional[int] = ..., revert_wal_size: _Optional[int] = ..., last_pull_unix_time: _Optional[int] = ..., last_push_unix_time: _Optional[int] = ..., revision: _Optional[str] = ..., network_sent_bytes: _Optional[int] = ..., network_received_bytes: _Optional[int] = ..., remote_url: _Optional[str] = ...) -> None: ...

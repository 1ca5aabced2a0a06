from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BindingSpec(_message.Message):
    __slots__ = ("name", "description", "schema_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    schema_json: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., schema_json: _Optional[str] = ...) -> None: ...

class NetRuleSpec(_message.Message):
    __slots__ = ("prefix", "methods", "headers", "allow_private")
    class HeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    METHODS_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_PRIVATE_FIELD_NUMBER: _ClassVar[int]
    prefix: str
    methods: _containers.RepeatedScalarFieldContainer[str]
    headers: _containers.ScalarMap[str, str]
    allow_private: bool
    def __init__(self, prefix: _Optional[str] = ..., methods: _Optional[_Iterable[str]] = ..., headers: _Optional[_Mapping[str, str]] = ..., allow_private: _Optional[bool] = ...) -> None: ...

class ExecRequest(_message.Message):
    __slots__ = ("script", "dir", "stdin", "env", "readable", "writable", "restrict_paths", "allow", "deny", "net", "bindings", "limits", "no_audit", "default_deny", "limit_values")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SCRIPT_FIELD_NUMBER: _ClassVar[int]
    DIR_FIELD_NUMBER: _ClassVar[int]
    STDIN_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    READABLE_FIELD_NUMBER: _ClassVar[int]
    WRITABLE_FIELD_NUMBER: _ClassVar[int]
    RESTRICT_PATHS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    DENY_FIELD_NUMBER: _ClassVar[int]
    NET_FIELD_NUMBER: _ClassVar[int]
    BINDINGS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    NO_AUDIT_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_DENY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_VALUES_FIELD_NUMBER: _ClassVar[int]
    script: str
    dir: str
    stdin: bytes
    env: _containers.ScalarMap[str, str]
    readable: _containers.RepeatedScalarFieldContainer[str]
    writable: _containers.RepeatedScalarFieldContainer[str]
    restrict_paths: bool
    allow: _containers.RepeatedScalarFieldContainer[str]
    deny: _containers.RepeatedScalarFieldContainer[str]
    net: _containers.RepeatedCompositeFieldContainer[NetRuleSpec]
    bindings: _containers.RepeatedCompositeFieldContainer[BindingSpec]
    limits: str
    no_audit: bool
    default_deny: bool
    limit_values: SandboxLimits
    def __init__(self, script: _Optional[str] = ..., dir: _Optional[str] = ..., stdin: _Optional[bytes] = ..., env: _Optional[_Mapping[str, str]] = ..., readable: _Optional[_Iterable[str]] = ..., writable: _Optional[_Iterable[str]] = ..., restrict_paths: _Optional[bool] = ..., allow: _Optional[_Iterable[str]] = ..., deny: _Optional[_Iterable[str]] = ..., net: _Optional[_Iterable[_Union[NetRuleSpec, _Mapping]]] = ..., bindings: _Optional[_Iterable[_Union[BindingSpec, _Mapping]]] = ..., limits: _Optional[str] = ..., no_audit: _Optional[bool] = ..., default_deny: _Optional[bool] = ..., limit_values: _Optional[_Union[SandboxLimits, _Mapping]] = ...) -> None: ...

class SandboxLimits(_message.Message):
    __slots__ = ("max_commands", "max_steps", "max_call_depth", "wall_time_ms", "max_output_bytes", "max_stream_bytes", "max_fs_write_bytes", "max_response_bytes", "net_timeout_ms", "max_memory_bytes", "max_background")
    MAX_COMMANDS_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_CALL_DEPTH_FIELD_NUMBER: _ClassVar[int]
    WALL_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_STREAM_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_FS_WRITE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_RESPONSE_BYTES_FIELD_NUMBER: _ClassVar[int]
    NET_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_BACKGROUND_FIELD_NUMBER: _ClassVar[int]
    max_commands: int
    max_steps: int
    max_call_depth: int
    wall_time_ms: int
    max_output_bytes: int
    max_stream_bytes: int
    max_fs_write_bytes: int
    max_response_bytes: int
    net_timeout_ms: int
    max_memory_bytes: int
    max_background: int
    def __init__(self, max_commands: _Optional[int] = ..., max_steps: _Optional[int] = ..., max_call_depth: _Optional[int] = ..., wall_time_ms: _Optional[int] = ..., max_output_bytes: _Optional[int] = ..., max_stream_bytes: _Optional[int] = ..., max_fs_write_bytes: _Optional[int] = ..., max_response_bytes: _Optional[int] = ..., net_timeout_ms: _Optional[int] = ..., max_memory_bytes: _Optional[int] = ..., max_background: _Optional[int] = ...) -> None: ...

class PolicyRequest(_message.Message):
    __slots__ = ("exec",)
    EXEC_FIELD_NUMBER: _ClassVar[int]
    exec: ExecRequest
    def __init__(self, exec: _Optional[_Union[ExecRequest, _Mapping]] = ...) -> None: ...

class PolicyResponse(_message.Message):
    __slots__ = ("policy",)
    POLICY_FIELD_NUMBER: _ClassVar[int]
    policy: EffectivePolicy
    def __init__(self, policy: _Optional[_Union[EffectivePolicy, _Mapping]] = ...) -> None: ...

class EffectivePolicy(_message.Message):
    __slots__ = ("default_deny", "restrict_reads", "readable", "restrict_writes", "writable", "restrict_commands", "allow", "deny", "env", "user", "uid", "gid", "hostname", "umask", "net", "limits_profile", "limits", "bindings")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DEFAULT_DENY_FIELD_NUMBER: _ClassVar[int]
    RESTRICT_READS_FIELD_NUMBER: _ClassVar[int]
    READABLE_FIELD_NUMBER: _ClassVar[int]
    RESTRICT_WRITES_FIELD_NUMBER: _ClassVar[int]
    WRITABLE_FIELD_NUMBER: _ClassVar[int]
    RESTRICT_COMMANDS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    DENY_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    UMASK_FIELD_NUMBER: _ClassVar[int]
    NET_FIELD_NUMBER: _ClassVar[int]
    LIMITS_PROFILE_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    BINDINGS_FIELD_NUMBER: _ClassVar[int]
    default_deny: bool
    restrict_reads: bool
    readable: _containers.RepeatedScalarFieldContainer[str]
    restrict_writes: bool
    writable: _containers.RepeatedScalarFieldContainer[str]
    restrict_commands: bool
    allow: _containers.RepeatedScalarFieldContainer[str]
    deny: _containers.RepeatedScalarFieldContainer[str]
    env: _containers.ScalarMap[str, str]
    user: str
    uid: int
    gid: int
    hostname: str
    umask: int
    net: _containers.RepeatedCompositeFieldContainer[EffectiveNetRule]
    limits_profile: str
    limits: SandboxLimits
    bindings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, default_deny: _Optional[bool] = ..., restrict_reads: _Optional[bool] = ..., readable: _Optional[_Iterable[str]] = ..., restrict_writes: _Optional[bool] = ..., writable: _Optional[_Iterable[str]] = ..., restrict_commands: _Optional[bool] = ..., allow: _Optional[_Iterable[str]] = ..., deny: _Optional[_Iterable[str]] = ..., env: _Optional[_Mapping[str, str]] = ..., user: _Optional[str] = ..., uid: _Optional[int] = ..., gid: _Optional[int] = ..., hostname: _Optional[str] = ..., umask: _Optional[int] = ..., net: _Optional[_Iterable[_Union[EffectiveNetRule, _Mapping]]] = ..., limits_profile: _Optional[str] = ..., limits: _Optional[_Union[SandboxLimits, _Mapping]] = ..., bindings: _Optional[_Iterable[str]] = ...) -> None: ...

class EffectiveNetRule(_message.Message):
    __slots__ = ("prefix", "methods", "header_names", "allow_private")
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    METHODS_FIELD_NUMBER: _ClassVar[int]
    HEADER_NAMES_FIELD_NUMBER: _ClassVar[int]
    ALLOW_PRIVATE_FIELD_NUMBER: _ClassVar[int]
    prefix: str
    methods: _containers.RepeatedScalarFieldContainer[str]
    header_names: _containers.RepeatedScalarFieldContainer[str]
    allow_private: bool
    def __init__(self, prefix: _Optional[str] = ..., methods: _Optional[_Iterable[str]] = ..., header_names: _Optional[_Iterable[str]] = ..., allow_private: _Optional[bool] = ...) -> None: ...

class ExecResponse(_message.Message):
    __slots__ = ("exit_code", "stdout", "stderr", "limit", "duration_ns")
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    STDOUT_FIELD_NUMBER: _ClassVar[int]
    STDERR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    DURATION_NS_FIELD_NUMBER: _ClassVar[int]
    exit_code: int
    stdout: bytes
    stderr: bytes
    limit: str
    duration_ns: int
    def __init__(self, exit_code: _Optional[int] = ..., stdout: _Optional[bytes] = ..., stderr: _Optional[bytes] = ..., limit: _Optional[str] = ..., duration_ns: _Optional[int] = ...) -> None: ...

class CallBindingRequest(_message.Message):
    __slots__ = ("name", "args_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    args_json: str
    def __init__(self, name: _Optional[str] = ..., args_json: _Optional[str] = ...) -> None: ...

class CallBindingResponse(_message.Message):
    __slots__ = ("result_json", "error")
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    result_json: str
    error: str
    def __init__(self, result_json: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

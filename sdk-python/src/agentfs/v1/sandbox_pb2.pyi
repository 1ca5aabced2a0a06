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
    __slots__ = ("prefix", "methods", "headers")
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
    prefix: str
    methods: _containers.RepeatedScalarFieldContainer[str]
    headers: _containers.ScalarMap[str, str]
    def __init__(self, prefix: _Optional[str] = ..., methods: _Optional[_Iterable[str]] = ..., headers: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ExecRequest(_message.Message):
    __slots__ = ("script", "dir", "stdin", "env", "readable", "writable", "restrict_paths", "allow", "deny", "net", "bindings", "limits", "no_audit")
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
    def __init__(self, script: _Optional[str] = ..., dir: _Optional[str] = ..., stdin: _Optional[bytes] = ..., env: _Optional[_Mapping[str, str]] = ..., readable: _Optional[_Iterable[str]] = ..., writable: _Optional[_Iterable[str]] = ..., restrict_paths: _Optional[bool] = ..., allow: _Optional[_Iterable[str]] = ..., deny: _Optional[_Iterable[str]] = ..., net: _Optional[_Iterable[_Union[NetRuleSpec, _Mapping]]] = ..., bindings: _Optional[_Iterable[_Union[BindingSpec, _Mapping]]] = ..., limits: _Optional[str] = ..., no_audit: _Optional[bool] = ...) -> None: ...

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

from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_KIND_UNSPECIFIED: _ClassVar[ErrorKind]
    ERROR_KIND_ERRNO: _ClassVar[ErrorKind]
    ERROR_KIND_INVALID_ARGUMENT: _ClassVar[ErrorKind]
    ERROR_KIND_NOT_FOUND: _ClassVar[ErrorKind]
    ERROR_KIND_ALREADY_EXISTS: _ClassVar[ErrorKind]
    ERROR_KIND_PERMISSION_DENIED: _ClassVar[ErrorKind]
    ERROR_KIND_FAILED_PRECONDITION: _ClassVar[ErrorKind]
    ERROR_KIND_CANCELED: _ClassVar[ErrorKind]
    ERROR_KIND_INTERNAL: _ClassVar[ErrorKind]
    ERROR_KIND_UNIMPLEMENTED: _ClassVar[ErrorKind]
    ERROR_KIND_RESOURCE_EXHAUSTED: _ClassVar[ErrorKind]
    ERROR_KIND_UNAVAILABLE: _ClassVar[ErrorKind]
ERROR_KIND_UNSPECIFIED: ErrorKind
ERROR_KIND_ERRNO: ErrorKind
ERROR_KIND_INVALID_ARGUMENT: ErrorKind
ERROR_KIND_NOT_FOUND: ErrorKind
ERROR_KIND_ALREADY_EXISTS: ErrorKind
ERROR_KIND_PERMISSION_DENIED: ErrorKind
ERROR_KIND_FAILED_PRECONDITION: ErrorKind
ERROR_KIND_CANCELED: ErrorKind
ERROR_KIND_INTERNAL: ErrorKind
ERROR_KIND_UNIMPLEMENTED: ErrorKind
ERROR_KIND_RESOURCE_EXHAUSTED: ErrorKind
ERROR_KIND_UNAVAILABLE: ErrorKind

class Error(_message.Message):
    __slots__ = ("code", "errno", "syscall", "path", "dest", "message", "kind")
    CODE_FIELD_NUMBER: _ClassVar[int]
    ERRNO_FIELD_NUMBER: _ClassVar[int]
    SYSCALL_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DEST_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    code: str
    errno: int
    syscall: str
    path: str
    dest: str
    message: str
    kind: ErrorKind
    def __init__(self, code: _Optional[str] = ..., errno: _Optional[int] = ..., syscall: _Optional[str] = ..., path: _Optional[str] = ..., dest: _Optional[str] = ..., message: _Optional[str] = ..., kind: _Optional[_Union[ErrorKind, str]] = ...) -> None: ...

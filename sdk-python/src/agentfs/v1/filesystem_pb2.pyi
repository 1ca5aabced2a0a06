from agentfs.v1 import errors_pb2 as _errors_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RenameFlags(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RENAME_FLAGS_UNSPECIFIED: _ClassVar[RenameFlags]
    RENAME_FLAGS_NOREPLACE: _ClassVar[RenameFlags]
    RENAME_FLAGS_EXCHANGE: _ClassVar[RenameFlags]

class XattrFlags(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    XATTR_FLAGS_UNSPECIFIED: _ClassVar[XattrFlags]
    XATTR_FLAGS_CREATE: _ClassVar[XattrFlags]
    XATTR_FLAGS_REPLACE: _ClassVar[XattrFlags]
RENAME_FLAGS_UNSPECIFIED: RenameFlags
RENAME_FLAGS_NOREPLACE: RenameFlags
RENAME_FLAGS_EXCHANGE: RenameFlags
XATTR_FLAGS_UNSPECIFIED: XattrFlags
XATTR_FLAGS_CREATE: XattrFlags
XATTR_FLAGS_REPLACE: XattrFlags

class Stat(_message.Message):
    __slots__ = ("ino", "mode", "nlink", "uid", "gid", "size", "rdev", "atime_ns", "mtime_ns", "ctime_ns", "blksize", "blocks")
    INO_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    NLINK_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    RDEV_FIELD_NUMBER: _ClassVar[int]
    ATIME_NS_FIELD_NUMBER: _ClassVar[int]
    MTIME_NS_FIELD_NUMBER: _ClassVar[int]
    CTIME_NS_FIELD_NUMBER: _ClassVar[int]
    BLKSIZE_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    ino: int
    mode: int
    nlink: int
    uid: int
    gid: int
    size: int
    rdev: int
    atime_ns: int
    mtime_ns: int
    ctime_ns: int
    blksize: int
    blocks: int
    def __init__(self, ino: _Optional[int] = ..., mode: _Optional[int] = ..., nlink: _Optional[int] = ..., uid: _Optional[int] = ..., gid: _Optional[int] = ..., size: _Optional[int] = ..., rdev: _Optional[int] = ..., atime_ns: _Optional[int] = ..., mtime_ns: _Optional[int] = ..., ctime_ns: _Optional[int] = ..., blksize: _Optional[int] = ..., blocks: _Optional[int] = ...) -> None: ...

class DirEntry(_message.Message):
    __slots__ = ("name", "stat")
    NAME_FIELD_NUMBER: _ClassVar[int]
    STAT_FIELD_NUMBER: _ClassVar[int]
    name: str
    stat: Stat
    def __init__(self, name: _Optional[str] = ..., stat: _Optional[_Union[Stat, _Mapping]] = ...) -> None: ...

class StatRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class StatResponse(_message.Message):
    __slots__ = ("stat",)
    STAT_FIELD_NUMBER: _ClassVar[int]
    stat: Stat
    def __init__(self, stat: _Optional[_Union[Stat, _Mapping]] = ...) -> None: ...

class LstatRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class LstatResponse(_message.Message):
    __slots__ = ("stat",)
    STAT_FIELD_NUMBER: _ClassVar[int]
    stat: Stat
    def __init__(self, stat: _Optional[_Union[Stat, _Mapping]] = ...) -> None: ...

class AccessRequest(_message.Message):
    __slots__ = ("path", "mode")
    PATH_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    path: str
    mode: int
    def __init__(self, path: _Optional[str] = ..., mode: _Optional[int] = ...) -> None: ...

class AccessResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReadFileRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class ReadFileResponse(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class WriteFileRequest(_message.Message):
    __slots__ = ("path", "data", "mode", "create_parents", "append", "exclusive")
    PATH_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    CREATE_PARENTS_FIELD_NUMBER: _ClassVar[int]
    APPEND_FIELD_NUMBER: _ClassVar[int]
    EXCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    path: str
    data: bytes
    mode: int
    create_parents: bool
    append: bool
    exclusive: bool
    def __init__(self, path: _Optional[str] = ..., data: _Optional[bytes] = ..., mode: _Optional[int] = ..., create_parents: _Optional[bool] = ..., append: _Optional[bool] = ..., exclusive: _Optional[bool] = ...) -> None: ...

class WriteFileResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReaddirRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class ReaddirResponse(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class ReaddirPlusRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class ReaddirPlusResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[DirEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[DirEntry, _Mapping]]] = ...) -> None: ...

class MkdirRequest(_message.Message):
    __slots__ = ("path", "mode", "recursive")
    PATH_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    path: str
    mode: int
    recursive: bool
    def __init__(self, path: _Optional[str] = ..., mode: _Optional[int] = ..., recursive: _Optional[bool] = ...) -> None: ...

class MkdirResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RmdirRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class RmdirResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class UnlinkRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class UnlinkResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RemoveRequest(_message.Message):
    __slots__ = ("path", "recursive", "force")
    PATH_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    path: str
    recursive: bool
    force: bool
    def __init__(self, path: _Optional[str] = ..., recursive: _Optional[bool] = ..., force: _Optional[bool] = ...) -> None: ...

class RemoveResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RenameRequest(_message.Message):
    __slots__ = ("old_path", "new_path", "flags")
    OLD_PATH_FIELD_NUMBER: _ClassVar[int]
    NEW_PATH_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    old_path: str
    new_path: str
    flags: RenameFlags
    def __init__(self, old_path: _Optional[str] = ..., new_path: _Optional[str] = ..., flags: _Optional[_Union[RenameFlags, str]] = ...) -> None: ...

class RenameResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CopyFileRequest(_message.Message):
    __slots__ = ("src", "dst")
    SRC_FIELD_NUMBER: _ClassVar[int]
    DST_FIELD_NUMBER: _ClassVar[int]
    src: str
    dst: str
    def __init__(self, src: _Optional[str] = ..., dst: _Optional[str] = ...) -> None: ...

class CopyFileResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SymlinkRequest(_message.Message):
    __slots__ = ("target", "link_path")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    LINK_PATH_FIELD_NUMBER: _ClassVar[int]
    target: str
    link_path: str
    def __init__(self, target: _Optional[str] = ..., link_path: _Optional[str] = ...) -> None: ...

class SymlinkResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReadlinkRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class ReadlinkResponse(_message.Message):
    __slots__ = ("target",)
    TARGET_FIELD_NUMBER: _ClassVar[int]
    target: str
    def __init__(self, target: _Optional[str] = ...) -> None: ...

class LinkRequest(_message.Message):
    __slots__ = ("old_path", "new_path")
    OLD_PATH_FIELD_NUMBER: _ClassVar[int]
    NEW_PATH_FIELD_NUMBER: _ClassVar[int]
    old_path: str
    new_path: str
    def __init__(self, old_path: _Optional[str] = ..., new_path: _Optional[str] = ...) -> None: ...

class LinkResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ChmodRequest(_message.Message):
    __slots__ = ("path", "mode")
    PATH_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    path: str
    mode: int
    def __init__(self, path: _Optional[str] = ..., mode: _Optional[int] = ...) -> None: ...

class ChmodResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ChownRequest(_message.Message):
    __slots__ = ("path", "uid", "gid", "no_follow")
    PATH_FIELD_NUMBER: _ClassVar[int]
    UID_FIELD_NUMBER: _ClassVar[int]
    GID_FIELD_NUMBER: _ClassVar[int]
    NO_FOLLOW_FIELD_NUMBER: _ClassVar[int]
    path: str
    uid: int
    gid: int
    no_follow: bool
    def __init__(self, path: _Optional[str] = ..., uid: _Optional[int] = ..., gid: _Optional[int] = ..., no_follow: _Optional[bool] = ...) -> None: ...

class ChownResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class UtimesRequest(_message.Message):
    __slots__ = ("path", "atime_ns", "mtime_ns", "no_follow")
    PATH_FIELD_NUMBER: _ClassVar[int]
    ATIME_NS_FIELD_NUMBER: _ClassVar[int]
    MTIME_NS_FIELD_NUMBER: _ClassVar[int]
    NO_FOLLOW_FIELD_NUMBER: _ClassVar[int]
    path: str
    atime_ns: int
    mtime_ns: int
    no_follow: bool
    def __init__(self, path: _Optional[str] = ..., atime_ns: _Optional[int] = ..., mtime_ns: _Optional[int] = ..., no_follow: _Optional[bool] = ...) -> None: ...

class UtimesResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TruncateRequest(_message.Message):
    __slots__ = ("path", "size")
    PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    path: str
    size: int
    def __init__(self, path: _Optional[str] = ..., size: _Optional[int] = ...) -> None: ...

class TruncateResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MknodRequest(_message.Message):
    __slots__ = ("path", "mode", "rdev")
    PATH_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    RDEV_FIELD_NUMBER: _ClassVar[int]
    path: str
    mode: int
    rdev: int
    def __init__(self, path: _Optional[str] = ..., mode: _Optional[int] = ..., rdev: _Optional[int] = ...) -> None: ...

class MknodResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StatfsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StatfsResponse(_message.Message):
    __slots__ = ("inodes", "bytes_used", "block_size", "blocks", "blocks_free", "files_free", "name_max")
    INODES_FIELD_NUMBER: _ClassVar[int]
    BYTES_USED_FIELD_NUMBER: _ClassVar[int]
    BLOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FREE_FIELD_NUMBER: _ClassVar[int]
    FILES_FREE_FIELD_NUMBER: _ClassVar[int]
    NAME_MAX_FIELD_NUMBER: _ClassVar[int]
    inodes: int
    bytes_used: int
    block_size: int
    blocks: int
    blocks_free: int
    files_free: int
    name_max: int
    def __init__(self, inodes: _Optional[int] = ..., bytes_used: _Optional[int] = ..., block_size: _Optional[int] = ..., blocks: _Optional[int] = ..., blocks_free: _Optional[int] = ..., files_free: _Optional[int] = ..., name_max: _Optional[int] = ...) -> None: ...

class GetXattrRequest(_message.Message):
    __slots__ = ("path", "name", "no_follow")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NO_FOLLOW_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    no_follow: bool
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., no_follow: _Optional[bool] = ...) -> None: ...

class GetXattrResponse(_message.Message):
    __slots__ = ("value",)
    VALUE_FIELD_NUMBER: _ClassVar[int]
    value: bytes
    def __init__(self, value: _Optional[bytes] = ...) -> None: ...

class SetXattrRequest(_message.Message):
    __slots__ = ("path", "name", "value", "flags", "no_follow")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    NO_FOLLOW_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    value: bytes
    flags: XattrFlags
    no_follow: bool
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., value: _Optional[bytes] = ..., flags: _Optional[_Union[XattrFlags, str]] = ..., no_follow: _Optional[bool] = ...) -> None: ...

class SetXattrResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListXattrRequest(_message.Message):
    __slots__ = ("path", "no_follow")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NO_FOLLOW_FIELD_NUMBER: _ClassVar[int]
    path: str
    no_follow: bool
    def __init__(self, path: _Optional[str] = ..., no_follow: _Optional[bool] = ...) -> None: ...

class ListXattrResponse(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class RemoveXattrRequest(_message.Message):
    __slots__ = ("path", "name", "no_follow")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NO_FOLLOW_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    no_follow: bool
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., no_follow: _Optional[bool] = ...) -> None: ...

class RemoveXattrResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WalkRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class WalkResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[DirEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[DirEntry, _Mapping]]] = ...) -> None: ...

class OpenRequest(_message.Message):
    __slots__ = ("path", "flags", "mode")
    PATH_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    path: str
    flags: int
    mode: int
    def __init__(self, path: _Optional[str] = ..., flags: _Optional[int] = ..., mode: _Optional[int] = ...) -> None: ...

class OpenResponse(_message.Message):
    __slots__ = ("handle", "stat")
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    STAT_FIELD_NUMBER: _ClassVar[int]
    handle: int
    stat: Stat
    def __init__(self, handle: _Optional[int] = ..., stat: _Optional[_Union[Stat, _Mapping]] = ...) -> None: ...

class PreadRequest(_message.Message):
    __slots__ = ("handle", "offset", "size")
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    handle: int
    offset: int
    size: int
    def __init__(self, handle: _Optional[int] = ..., offset: _Optional[int] = ..., size: _Optional[int] = ...) -> None: ...

class PreadResponse(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class PwriteRequest(_message.Message):
    __slots__ = ("handle", "offset", "data")
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    handle: int
    offset: int
    data: bytes
    def __init__(self, handle: _Optional[int] = ..., offset: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...

class PwriteResponse(_message.Message):
    __slots__ = ("written",)
    WRITTEN_FIELD_NUMBER: _ClassVar[int]
    written: int
    def __init__(self, written: _Optional[int] = ...) -> None: ...

class FtruncateRequest(_message.Message):
    __slots__ = ("handle", "size")
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    handle: int
    size: int
    def __init__(self, handle: _Optional[int] = ..., size: _Optional[int] = ...) -> None: ...

class FtruncateResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FsyncRequest(_message.Message):
    __slots__ = ("handle",)
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    handle: int
    def __init__(self, handle: _Optional[int] = ...) -> None: ...

class FsyncResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FstatRequest(_message.Message):
    __slots__ = ("handle",)
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    handle: int
    def __init__(self, handle: _Optional[int] = ...) -> None: ...

class FstatResponse(_message.Message):
    __slots__ = ("stat",)
    STAT_FIELD_NUMBER: _ClassVar[int]
    stat: Stat
    def __init__(self, stat: _Optional[_Union[Stat, _Mapping]] = ...) -> None: ...

class CloseRequest(_message.Message):
    __slots__ = ("handle",)
    HANDLE_FIELD_NUMBER: _ClassVar[int]
    handle: int
    def __init__(self, handle: _Optional[int] = ...) -> None: ...

class CloseResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BatchOp(_message.Message):
    __slots__ = ("stat", "lstat", "read_file", "write_file", "mkdir", "unlink", "remove", "rename", "symlink", "chmod", "readdir_plus", "rmdir", "utimes")
    STAT_FIELD_NUMBER: _ClassVar[int]
    LSTAT_FIELD_NUMBER: _ClassVar[int]
    READ_FILE_FIELD_NUMBER: _ClassVar[int]
    WRITE_FILE_FIELD_NUMBER: _ClassVar[int]
    MKDIR_FIELD_NUMBER: _ClassVar[int]
    UNLINK_FIELD_NUMBER: _ClassVar[int]
    REMOVE_FIELD_NUMBER: _ClassVar[int]
    RENAME_FIELD_NUMBER: _ClassVar[int]
    SYMLINK_FIELD_NUMBER: _ClassVar[int]
    CHMOD_FIELD_NUMBER: _ClassVar[int]
    READDIR_PLUS_FIELD_NUMBER: _ClassVar[int]
    RMDIR_FIELD_NUMBER: _ClassVar[int]
    UTIMES_FIELD_NUMBER: _ClassVar[int]
    stat: StatRequest
    lstat: LstatRequest
    read_file: ReadFileRequest
    write_file: WriteFileRequest
    mkdir: MkdirRequest
    unlink: UnlinkRequest
    remove: RemoveRequest
    rename: RenameRequest
    symlink: SymlinkRequest
    chmod: ChmodRequest
    readdir_plus: ReaddirPlusRequest
    rmdir: RmdirRequest
    utimes: UtimesRequest
    def __init__(self, stat: _Optional[_Union[StatRequest, _Mapping]] = ..., lstat: _Optional[_Union[LstatRequest, _Mapping]] = ..., read_file: _Optional[_Union[ReadFileRequest, _Mapping]] = ..., write_file: _Optional[_Union[WriteFileRequest, _Mapping]] = ..., mkdir: _Optional[_Union[MkdirRequest, _Mapping]] = ..., unlink: _Optional[_Union[UnlinkRequest, _Mapping]] = ..., remove: _Optional[_Union[RemoveRequest, _Mapping]] = ..., rename: _Optional[_Union[RenameRequest, _Mapping]] = ..., symlink: _Optional[_Union[SymlinkRequest, _Mapping]] = ..., chmod: _Optional[_Union[ChmodRequest, _Mapping]] = ..., readdir_plus: _Optional[_Union[ReaddirPlusRequest, _Mapping]] = ..., rmdir: _Optional[_Union[RmdirRequest, _Mapping]] = ..., utimes: _Optional[_Union[UtimesRequest, _Mapping]] = ...) -> None: ...

class BatchResult(_message.Message):
    __slots__ = ("error", "skipped", "stat", "lstat", "read_file", "readdir_plus")
    ERROR_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    STAT_FIELD_NUMBER: _ClassVar[int]
    LSTAT_FIELD_NUMBER: _ClassVar[int]
    READ_FILE_FIELD_NUMBER: _ClassVar[int]
    READDIR_PLUS_FIELD_NUMBER: _ClassVar[int]
    error: _errors_pb2.Error
    skipped: bool
    stat: StatResponse
    lstat: LstatResponse
    read_file: ReadFileResponse
    readdir_plus: ReaddirPlusResponse
    def __init__(self, error: _Optional[_Union[_errors_pb2.Error, _Mapping]] = ..., skipped: _Optional[bool] = ..., stat: _Optional[_Union[StatResponse, _Mapping]] = ..., lstat: _Optional[_Union[LstatResponse, _Mapping]] = ..., read_file: _Optional[_Union[ReadFileResponse, _Mapping]] = ..., readdir_plus: _Optional[_Union[ReaddirPlusResponse, _Mapping]] = ...) -> None: ...

class BatchRequest(_message.Message):
    __slots__ = ("ops", "stop_on_error")
    OPS_FIELD_NUMBER: _ClassVar[int]
    STOP_ON_ERROR_FIELD_NUMBER: _ClassVar[int]
    ops: _containers.RepeatedCompositeFieldContainer[BatchOp]
    stop_on_error: bool
    def __init__(self, ops: _Optional[_Iterable[_Union[BatchOp, _Mapping]]] = ..., stop_on_error: _Optional[bool] = ...) -> None: ...

class BatchResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[BatchResult]
    def __init__(self, results: _Optional[_Iterable[_Union[BatchResult, _Mapping]]] = ...) -> None: ...

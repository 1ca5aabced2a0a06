package agentfs

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/rpc/rpcerr"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Agent is an open agent: its filesystem, key-value store and tool-call
// log. Both the in-process engine (Open) and a remote server (Dial)
// satisfy it, so code written against Agent runs with either.
type Agent interface {
	FS() FileSystem
	KV() KVStore
	Tools() ToolLog
	Close() error
}

// Stat holds the attributes of an inode: Mode is the POSIX st_mode (type
// and permission bits); Stat.FileMode converts it to an io/fs mode.
type Stat = vfs.Stat

// DirEntry is one entry of ReaddirPlus: a name and its lstat attributes.
type DirEntry = vfs.DirEntry

// FSStat describes the filesystem as statfs does. DBFileBytes is only
// known in-process (0 from a remote agent).
type FSStat = vfs.FSStat

// KVEntry is one key of KVStore.List with its JSON value.
type KVEntry = kv.Entry

// ToolCall is one row of the tool-call log.
type ToolCall = toolcalls.Call

// ToolStats summarises the calls of one tool.
type ToolStats = toolcalls.Stats

// ToolFilter selects calls for ToolLog.List; zero fields match everything.
type ToolFilter = toolcalls.Filter

// Tool call statuses, as in ToolCall.Status.
const (
	StatusPending = toolcalls.StatusPending
	StatusSuccess = toolcalls.StatusSuccess
	StatusError   = toolcalls.StatusError
)

// ErrNotFound is returned for a missing key (KVStore.Get) or an unknown
// tool call id (ToolLog.Get, Success, Error).
var ErrNotFound = rpcerr.ErrNotFound

// ErrFinished is returned when finishing a tool call that is not pending.
var ErrFinished = errors.New("agentfs: tool call already finished")

// WriteOptions tune FileSystem.WriteFile. The zero value replaces (or
// creates, mode 0644) the file; the parent directory must exist.
type WriteOptions struct {
	Perm          uint32 // permission bits of a new file; 0 means 0644
	CreateParents bool   // create missing parent directories (0755)
	Append        bool   // append instead of replacing
	Exclusive     bool   // fail with EEXIST when the file exists
}

// RemoveOptions tune FileSystem.Remove, as rm's flags.
type RemoveOptions struct {
	Recursive bool // remove a directory and everything below it
	Force     bool // succeed when the path does not exist
}

// FileSystem is an agent's POSIX-like filesystem. Paths are absolute and
// "/" separated. Failures are *fs.PathError values wrapping a
// syscall.Errno, so errors.Is(err, fs.ErrNotExist) and
// errors.Is(err, syscall.ENOTEMPTY) work. Permission bits are POSIX
// numbers (0o644, 0o4755), not fs.FileMode.
type FileSystem interface {
	// Stat follows a final symlink; Lstat does not.
	Stat(ctx context.Context, name string) (Stat, error)
	Lstat(ctx context.Context, name string) (Stat, error)
	// Access checks that name exists (mode is R_OK/W_OK/X_OK, not enforced).
	Access(ctx context.Context, name string, mode uint32) error
	// Exists reports whether name exists, following symlinks.
	Exists(ctx context.Context, name string) (bool, error)
	ReadFile(ctx context.Context, name string) ([]byte, error)
	// WriteFile replaces (or appends to) a whole file in one transaction.
	WriteFile(ctx context.Context, name string, data []byte, opts WriteOptions) error
	// Readdir lists the names of a directory, sorted bytewise.
	Readdir(ctx context.Context, name string) ([]string, error)
	// ReaddirPlus lists a directory with the lstat attributes of each entry.
	ReaddirPlus(ctx context.Context, name string) ([]DirEntry, error)
	Mkdir(ctx context.Context, name string, perm uint32) error
	// MkdirAll is mkdir -p: it creates parents and accepts an existing directory.
	MkdirAll(ctx context.Context, name string, perm uint32) error
	// Rmdir removes an empty directory.
	Rmdir(ctx context.Context, name string) error
	// Unlink removes a non-directory entry.
	Unlink(ctx context.Context, name string) error
	// Remove is rm: a directory needs Recursive (EISDIR otherwise), a
	// missing path needs Force (ENOENT otherwise).
	Remove(ctx context.Context, name string, opts RemoveOptions) error
	// RemoveAll is rm -rf.
	RemoveAll(ctx context.Context, name string) error
	// Rename moves oldname to newname, replacing newname as rename(2) does.
	Rename(ctx context.Context, oldname, newname string) error
	// CopyFile copies the content and permission bits of a regular file.
	CopyFile(ctx context.Context, src, dst string) error
	Symlink(ctx context.Context, target, linkname string) error
	Readlink(ctx context.Context, name string) (string, error)
	// Link makes newname a hard link to oldname.
	Link(ctx context.Context, oldname, newname string) error
	// Chmod sets the permission bits (following symlinks).
	Chmod(ctx context.Context, name string, perm uint32) error
	// Chown sets owner and group (following symlinks); -1 keeps one.
	Chown(ctx context.Context, name string, uid, gid int64) error
	// Lchown is Chown on a symlink itself.
	Lchown(ctx context.Context, name string, uid, gid int64) error
	// Utimes sets access and modification times; a zero time is left unchanged.
	Utimes(ctx context.Context, name string, atime, mtime time.Time) error
	// Truncate sets the size of a file; growing it reads as zeros.
	Truncate(ctx context.Context, name string, size int64) error
	Statfs(ctx context.Context) (FSStat, error)
	// Open opens a file with os.O_* flags (O_RDONLY, O_WRONLY, O_RDWR,
	// O_CREATE, O_EXCL, O_TRUNC, O_APPEND); perm applies to a created file
	// (0 means 0644).
	Open(ctx context.Context, name string, flag int, perm uint32) (File, error)
}

// File is an open file. Reads and writes at an offset are each atomic; the
// file stays readable after it is unlinked, until Close.
type File interface {
	io.Reader
	io.Writer
	io.Seeker
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Name is the path the file was opened with.
	Name() string
	Truncate(size int64) error
	// Sync makes the file's writes durable.
	Sync() error
	Stat() (Stat, error)
}

// KVStore is an agent's key-value store; values are JSON documents.
type KVStore interface {
	// Set stores v encoded as JSON (a json.RawMessage is stored as is).
	Set(ctx context.Context, key string, v any) error
	// Get decodes the value of key into out, or returns ErrNotFound.
	Get(ctx context.Context, key string, out any) error
	// GetJSON returns the JSON text of key, or ErrNotFound.
	GetJSON(ctx context.Context, key string) (json.RawMessage, error)
	// List returns the entries whose key starts with prefix, in key order.
	List(ctx context.Context, prefix string) ([]KVEntry, error)
	// Delete removes key and reports whether it existed.
	Delete(ctx context.Context, key string) (bool, error)
}

// ToolRecord is a finished tool call for ToolLog.Record.
type ToolRecord struct {
	Name        string
	StartedAt   time.Time
	CompletedAt time.Time
	Parameters  any    // encoded as JSON; nil for none
	Result      any    // encoded as JSON; nil for none
	Error       string // non-empty makes the call failed
}

// ToolLog is the append-only log of an agent's tool calls. Parameters and
// results are encoded as JSON (a json.RawMessage is stored as is; nil
// means none).
type ToolLog interface {
	// Start records a pending call and returns its id.
	Start(ctx context.Context, name string, params any) (int64, error)
	Success(ctx context.Context, id int64, result any) error
	Error(ctx context.Context, id int64, message string) error
	// Record inserts a finished call in one step.
	Record(ctx context.Context, r ToolRecord) (int64, error)
	// Get returns one call or ErrNotFound.
	Get(ctx context.Context, id int64) (ToolCall, error)
	// List returns the calls matching f, newest first unless f.Ascending.
	List(ctx context.Context, f ToolFilter) ([]ToolCall, error)
	// Stats returns per-tool counts, by name.
	Stats(ctx context.Context) ([]ToolStats, error)
}

// encodeJSON encodes an optional value; nil gives nil (no value).
func encodeJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if raw, ok := v.(json.RawMessage); ok && raw == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

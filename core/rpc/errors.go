package rpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"connectrpc.com/connect"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/internal/hostfs"
	"github.com/agentfs-go/agentfs/core/rpc/rpcerr"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// opError is a failure of one API operation: the engine's error with the
// operation's node:fs name and paths, so every transport can build the
// same agentfs.v1.Error from it.
type opError struct {
	syscall, path, dest string
	err                 error
}

func (e *opError) Error() string { return e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// fail wraps err (nil stays nil) with the operation's name and paths.
func fail(err error, syscall, path string, dest ...string) error {
	if err == nil {
		return nil
	}
	e := &opError{syscall: syscall, path: path, err: err}
	if len(dest) > 0 {
		e.dest = dest[0]
	}
	return e
}

// kindError is a non-filesystem failure of a given class.
type kindError struct {
	kind v1.ErrorKind
	msg  string
}

func (e *kindError) Error() string { return e.msg }

func errorf(kind v1.ErrorKind, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// ToProto describes err as an agentfs.v1.Error.
func ToProto(err error) *v1.Error {
	out := &v1.Error{Message: err.Error()}
	var op *opError
	if errors.As(err, &op) {
		out.Syscall, out.Path, out.Dest = op.syscall, op.path, op.dest
	}
	var ke *kindError
	var ce *connect.Error
	if errors.Is(err, core.ErrInvalidID) || errors.Is(err, core.ErrInvalidOption) || errors.Is(err, core.ErrInvalidSnapshotName) {
		// Bad input of the call, whatever errno it carries (a too long
		// id wraps ENAMETOOLONG): the message says what to change.
		out.Kind = v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT
		return out
	}
	var pe *sandbox.PolicyError
	if errors.As(err, &pe) {
		// EINVAL with the message that names the entry and says why.
		out.Kind, out.Errno, out.Code = v1.ErrorKind_ERROR_KIND_ERRNO, int32(syscall.EINVAL), "EINVAL"
		out.Syscall = "policy"
		out.Message = "EINVAL: " + pe.Error()
		return out
	}
	errno := vfs.Errno(err)
	if errno == 0 && errors.Is(err, store.ErrReadOnly) {
		// A write to a database opened read-only is EROFS, so SDKs raise
		// their read-only error (io::ErrorKind::ReadOnlyFilesystem...).
		errno = syscall.EROFS
	}
	if errno != 0 && !errors.As(err, &ke) {
		out.Kind = v1.ErrorKind_ERROR_KIND_ERRNO
		out.Errno = int32(errno)
		out.Code = hostfs.ErrnoName(errno)
		out.Message = nodeMessage(errno, out.Syscall, out.Path, out.Dest)
		return out
	}
	switch {
	case errors.As(err, &ke):
		out.Kind = ke.kind
	case errors.Is(err, context.Canceled):
		out.Kind = v1.ErrorKind_ERROR_KIND_CANCELED
	case errors.Is(err, core.ErrNeedsMigration), errors.Is(err, core.ErrNotAgentFS), errors.Is(err, core.ErrOverlay),
		errors.Is(err, store.ErrNotADatabase), errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrCantRead):
		out.Kind = v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION
	case errors.Is(err, store.ErrNeedKey), errors.Is(err, store.ErrWrongKey):
		out.Kind = v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED
	case errors.Is(err, store.ErrNotEncrypted):
		out.Kind = v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION
	case errors.Is(err, errors.ErrUnsupported):
		out.Kind = v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED
	case errors.Is(err, toolcalls.ErrFinished):
		out.Kind = v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION
	case errors.Is(err, core.ErrSnapshotNotFound):
		out.Kind = v1.ErrorKind_ERROR_KIND_NOT_FOUND
	case errors.Is(err, core.ErrSnapshotExists):
		out.Kind = v1.ErrorKind_ERROR_KIND_ALREADY_EXISTS
	case errors.As(err, &ce):
		out.Kind = rpcerr.KindOf(ce.Code())
		out.Message = ce.Message()
	default:
		out.Kind = v1.ErrorKind_ERROR_KIND_INTERNAL
	}
	return out
}

// nodeMessage formats a filesystem error as node:fs does:
// "ENOENT: no such file or directory, stat '/x'".
func nodeMessage(errno syscall.Errno, sys, path, dest string) string {
	text := errno.Error()
	if text != "" {
		// As Linux's strerror; GOOS=js capitalizes ("No such file...").
		text = strings.ToLower(text[:1]) + text[1:]
	}
	msg := hostfs.ErrnoName(errno) + ": " + text
	if sys != "" {
		msg += ", " + sys
	}
	if path != "" {
		msg += " '" + path + "'"
	}
	if dest != "" {
		msg += " -> '" + dest + "'"
	}
	return msg
}

// FromProto turns an agentfs.v1.Error back into a Go error (see
// rpcerr.FromProto: the mapping clients share).
func FromProto(e *v1.Error) error { return rpcerr.FromProto(e) }

// Kind reports the class of an error returned by FromProto.
func Kind(err error) v1.ErrorKind {
	var ke *kindError
	if errors.As(err, &ke) {
		return ke.kind
	}
	var re *rpcerr.Error
	if errors.As(err, &re) {
		return re.Kind
	}
	if vfs.Errno(err) != 0 {
		return v1.ErrorKind_ERROR_KIND_ERRNO
	}
	return v1.ErrorKind_ERROR_KIND_UNSPECIFIED
}

// toConnect converts a handler's error for the HTTP door: the status code
// plus the agentfs.v1.Error as a detail.
func toConnect(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) && len(ce.Details()) > 0 {
		return err
	}
	e := ToProto(err)
	out := connect.NewError(rpcerr.CodeOf(e), errors.New(e.Message))
	if d, derr := connect.NewErrorDetail(e); derr == nil {
		out.AddDetail(d)
	}
	return out
}

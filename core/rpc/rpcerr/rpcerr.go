// Package rpcerr maps the API's errors between their wire forms (the
// agentfs.v1.Error message, Connect status codes) and Go errors. It is a
// leaf: the server (package rpc) and clients that must not link the
// engine (sdk-go's remote client) share this one mapping.
package rpcerr

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"connectrpc.com/connect"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
)

// ErrNotFound is matched (errors.Is) by an Error of kind NOT_FOUND: an
// unknown agent, key or tool call.
var ErrNotFound = errors.New("agentfs: not found")

// Error is a failure the server reported without an errno: a wrong
// token, an unknown agent, a bad argument. errors.Is matches it to
// fs.ErrPermission, ErrNotFound (and fs.ErrNotExist), fs.ErrExist and
// fs.ErrInvalid by kind.
type Error struct {
	Kind    v1.ErrorKind
	Code    connect.Code // zero when the error did not come over HTTP
	Message string
}

func (e *Error) Error() string {
	if e.Code == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s (%s)", e.Message, e.Code)
}

func (e *Error) Is(target error) bool {
	switch target {
	case fs.ErrPermission:
		return e.Kind == v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED
	case ErrNotFound, fs.ErrNotExist:
		return e.Kind == v1.ErrorKind_ERROR_KIND_NOT_FOUND
	case fs.ErrExist:
		return e.Kind == v1.ErrorKind_ERROR_KIND_ALREADY_EXISTS
	case fs.ErrInvalid:
		return e.Kind == v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT
	case context.Canceled:
		return e.Kind == v1.ErrorKind_ERROR_KIND_CANCELED
	}
	return false
}

// FromProto turns an agentfs.v1.Error into a Go error: a *fs.PathError
// wrapping the errno for filesystem errors (so errors.Is(err,
// fs.ErrNotExist) works on the client side), an *Error otherwise.
func FromProto(e *v1.Error) error {
	if e.GetErrno() != 0 && e.GetSyscall() == "policy" {
		// A refused sandbox policy: the message names the entry.
		return &PolicyError{Errno: syscall.Errno(e.GetErrno()), Message: e.GetMessage()}
	}
	if e.GetErrno() != 0 {
		return &fs.PathError{Op: e.GetSyscall(), Path: e.GetPath(), Err: syscall.Errno(e.GetErrno())}
	}
	return &Error{Kind: e.GetKind(), Message: e.GetMessage()}
}

// PolicyError is a sandbox policy the engine refused (EINVAL): Message
// says which entry and why; errors.Is(err, syscall.EINVAL) holds.
type PolicyError struct {
	Errno   syscall.Errno
	Message string
}

func (e *PolicyError) Error() string { return e.Message }
func (e *PolicyError) Unwrap() error { return e.Errno }

// FromConnect turns the error of a Connect call into the API's: its
// agentfs.v1.Error detail when there is one (FromProto, with the status
// code), else an *Error of the kind of its code; cancellation and
// deadlines also match context.Canceled and context.DeadlineExceeded. A
// transport failure that is no *connect.Error stays as it is.
func FromConnect(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	for _, d := range ce.Details() {
		m, derr := d.Value()
		if derr != nil {
			continue
		}
		if e, ok := m.(*v1.Error); ok {
			out := FromProto(e)
			if re, ok := out.(*Error); ok {
				re.Code = ce.Code()
			}
			return out
		}
	}
	switch ce.Code() {
	case connect.CodeCanceled:
		return errors.Join(context.Canceled, err)
	case connect.CodeDeadlineExceeded:
		return errors.Join(context.DeadlineExceeded, err)
	}
	return &Error{Kind: KindOf(ce.Code()), Code: ce.Code(), Message: ce.Message()}
}

// CodeOf is the Connect/gRPC status code of an agentfs.v1.Error.
func CodeOf(e *v1.Error) connect.Code {
	if e.Kind == v1.ErrorKind_ERROR_KIND_ERRNO {
		switch syscall.Errno(e.Errno) {
		case syscall.ENOENT:
			return connect.CodeNotFound
		case syscall.EEXIST:
			return connect.CodeAlreadyExists
		case syscall.EACCES, syscall.EPERM, syscall.EROFS:
			return connect.CodePermissionDenied
		case syscall.ENOSPC, syscall.EFBIG, syscall.ENAMETOOLONG:
			return connect.CodeResourceExhausted
		case syscall.ENOSYS, syscall.EOPNOTSUPP:
			return connect.CodeUnimplemented
		case syscall.EINVAL, syscall.EBADF:
			return connect.CodeInvalidArgument
		default:
			return connect.CodeFailedPrecondition
		}
	}
	if c, ok := codeOfKind[e.Kind]; ok {
		return c
	}
	return connect.CodeInternal
}

// codeOfKind pairs each non-errno ErrorKind with its Connect code; the
// table serves both directions.
var codeOfKind = map[v1.ErrorKind]connect.Code{
	v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT:    connect.CodeInvalidArgument,
	v1.ErrorKind_ERROR_KIND_NOT_FOUND:           connect.CodeNotFound,
	v1.ErrorKind_ERROR_KIND_ALREADY_EXISTS:      connect.CodeAlreadyExists,
	v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED:   connect.CodePermissionDenied,
	v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION: connect.CodeFailedPrecondition,
	v1.ErrorKind_ERROR_KIND_CANCELED:            connect.CodeCanceled,
	v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED:       connect.CodeUnimplemented,
	v1.ErrorKind_ERROR_KIND_RESOURCE_EXHAUSTED:  connect.CodeResourceExhausted,
	v1.ErrorKind_ERROR_KIND_UNAVAILABLE:         connect.CodeUnavailable,
	v1.ErrorKind_ERROR_KIND_INTERNAL:            connect.CodeInternal,
}

// KindOf is the ErrorKind of a Connect code (an unauthenticated call is
// PERMISSION_DENIED; an unknown code INTERNAL).
func KindOf(c connect.Code) v1.ErrorKind {
	if c == connect.CodeUnauthenticated {
		return v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED
	}
	for k, code := range codeOfKind {
		if code == c {
			return k
		}
	}
	return v1.ErrorKind_ERROR_KIND_INTERNAL
}

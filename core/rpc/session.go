// Package rpc serves the API of spec/proto over the engine's two doors:
// the stdio protocol of spec/PROTOCOL.md (ServeStdio) and HTTP with
// Connect, gRPC and gRPC-Web (NewHTTPHandler). Both run the same Service
// methods; a Session in the context says which agent a call is for.
package rpc

import (
	"context"
	"sync"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Session is what calls on one agent share: the open database, the file
// handles opened through the API, and, on stdio, the client to call back.
type Session struct {
	Agent *core.Agent
	// ID is the agent's id when it has one (the file name without .db).
	ID string
	// Peer calls the client (HostService); nil when the transport cannot.
	Peer agentfsv1rpc.Caller
	// ReadOnly records that the agent was opened for queries only.
	ReadOnly bool
	// SyncToken is the sync remote's token of this connection (the
	// handshake's sync_token); empty: TURSO_DB_AUTH_TOKEN.
	SyncToken string

	// ProcLimits bound the session's process table (zero: defaults).
	ProcLimits sandbox.ProcLimits

	mu      sync.Mutex
	next    uint64
	handles map[uint64]*vfs.File
	ptab    *sandbox.Procs          // ProcessService's table, made on first use
	leases  map[uint64]*lease       // HTTP: the lease of each process
	asess   map[string]*openSession // SessionService's open sessions, made on first use
}

// NewSession starts a session on an open agent.
func NewSession(a *core.Agent, id string, peer agentfsv1rpc.Caller) *Session {
	return &Session{Agent: a, ID: id, Peer: peer, handles: map[uint64]*vfs.File{}}
}

func (s *Session) addHandle(f *vfs.File) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.handles[s.next] = f
	return s.next
}

func (s *Session) handle(id uint64, op string) (*vfs.File, error) {
	s.mu.Lock()
	f := s.handles[id]
	s.mu.Unlock()
	if f == nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_NOT_FOUND, "%s: no open file handle %d (closed, or opened by another connection)", op, id)
	}
	return f, nil
}

func (s *Session) dropHandle(id uint64) *vfs.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.handles[id]
	delete(s.handles, id)
	return f
}

// CloseHandles closes every handle still open (the connection ended). A
// file opened with vfs.OAtomic is discarded: its client did not close it,
// so its content may be incomplete.
func (s *Session) CloseHandles() {
	s.mu.Lock()
	hs := s.handles
	s.handles = map[uint64]*vfs.File{}
	s.mu.Unlock()
	for _, f := range hs {
		f.Abort()
	}
}

type sessionKey struct{}

// WithSession returns a context whose calls go to s.
func WithSession(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

func sessionFrom(ctx context.Context) (*Session, error) {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	if s == nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "no agent selected: send the Agentfs-Agent header with the agent id")
	}
	return s, nil
}

func fsFrom(ctx context.Context) (*vfs.FS, error) {
	s, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	return s.Agent.FS, nil
}

package rpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/httpguard"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

// AgentHeader names the agent a call is for.
const AgentHeader = "Agentfs-Agent"

// AgentDir is the HTTP server's set of agents: the databases DIR/ID.db,
// opened on first use and kept open until Close.
type AgentDir struct {
	Dir string
	// Options of every open (durability, chunk size of new agents).
	Options core.Options
	// ProcLimits bound each agent's process table (zero: the defaults).
	ProcLimits sandbox.ProcLimits

	mu     sync.Mutex
	open   map[string]*Session
	closed bool
}

// NewAgentDir serves the agents under dir (created if missing).
func NewAgentDir(dir string, opts core.Options) (*AgentDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &AgentDir{Dir: dir, Options: opts, open: map[string]*Session{}}, nil
}

func (d *AgentDir) path(id string) string { return filepath.Join(d.Dir, id+".db") }

// checkFile refuses an agent database that is not a regular file of
// the directory: a symbolic link (or anything else) at DIR/ID.db could
// make an agent id reach a file outside the served directory.
func (d *AgentDir) checkFile(id string) error {
	st, err := os.Lstat(d.path(id))
	if err != nil || st.Mode().IsRegular() {
		return nil // a missing file is the caller's to handle
	}
	return errorf(v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED, "agent %q: %s is not a regular file (a symbolic link?); serve http opens only databases inside its directory", id, filepath.Base(d.path(id)))
}

// session returns the open session of an existing agent.
func (d *AgentDir) session(ctx context.Context, id string) (*Session, error) {
	if err := core.CheckID(id); err != nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "%v", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_UNAVAILABLE, "the server is shutting down")
	}
	if s := d.open[id]; s != nil {
		return s, nil
	}
	if err := d.checkFile(id); err != nil {
		return nil, err
	}
	opts := d.Options
	opts.Create = false
	a, err := core.Open(ctx, d.path(id), opts)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_NOT_FOUND, "agent %q does not exist (create it with AgentService.CreateAgent)", id)
	}
	if err != nil {
		return nil, err
	}
	s := NewSession(a, id, nil)
	s.ReadOnly = opts.ReadOnly
	s.ProcLimits = d.ProcLimits
	d.open[id] = s
	return s, nil
}

func (d *AgentDir) create(ctx context.Context, r *v1.CreateAgentRequest) (*Session, error) {
	if err := core.CheckID(r.Id); err != nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "%v", err)
	}
	d.mu.Lock()
	if err := d.checkFile(r.Id); err != nil {
		d.mu.Unlock()
		return nil, err
	}
	_, statErr := os.Stat(d.path(r.Id))
	if statErr == nil && !r.ExistOk {
		d.mu.Unlock()
		return nil, errorf(v1.ErrorKind_ERROR_KIND_ALREADY_EXISTS, "agent %q exists already", r.Id)
	}
	if statErr != nil {
		opts := d.Options
		opts.Create = true
		opts.ChunkSize = int(r.ChunkSize)
		a, err := core.Open(ctx, d.path(r.Id), opts)
		if err != nil {
			d.mu.Unlock()
			return nil, err
		}
		s := NewSession(a, r.Id, nil)
		s.ProcLimits = d.ProcLimits
		d.open[r.Id] = s
	}
	d.mu.Unlock()
	return d.session(ctx, r.Id)
}

func (d *AgentDir) list() (*v1.ListAgentsResponse, error) {
	matches, err := filepath.Glob(filepath.Join(d.Dir, "*.db"))
	if err != nil {
		return nil, err
	}
	sort.Strings(matches)
	out := &v1.ListAgentsResponse{}
	for _, m := range matches {
		id := strings.TrimSuffix(filepath.Base(m), ".db")
		st, err := os.Lstat(m)
		if err != nil || !core.ValidID(id) || !st.Mode().IsRegular() {
			continue // not an agent this server would open
		}
		out.Agents = append(out.Agents, &v1.AgentSummary{Id: id, Size: st.Size(), ModifiedAtNs: st.ModTime().UnixNano()})
	}
	return out, nil
}

// Close closes every open agent.
func (d *AgentDir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	var first error
	for id, s := range d.open {
		s.CloseProcs()
		s.CloseAgentSessions()
		s.CloseHandles()
		if err := s.Agent.Close(); err != nil && first == nil {
			first = err
		}
		delete(d.open, id)
	}
	return first
}

// HTTPOptions configure NewHTTPHandler.
type HTTPOptions struct {
	Version string
	// Token, when set, is required as "Authorization: Bearer TOKEN" on
	// every call but /healthz.
	Token string
	// MaxRequestBytes bounds request bodies (default 256 MiB).
	MaxRequestBytes int64
	// AccessLog receives one line per request (no secrets); nil: none.
	AccessLog *log.Logger
	// QueryLimits bound AgentService.Query (see Service.QueryLimits).
	QueryLimits core.QueryLimits
	// MaxLimits is the most a caller may ask of Exec (nil: the normal
	// profile; limits "none" only when the ceiling is "none").
	MaxLimits *LimitCeiling
}

// NewHTTPHandler serves every service over Connect, gRPC and gRPC-Web for
// the agents of dir, plus GET /healthz.
func NewHTTPHandler(dir *AgentDir, o HTTPOptions) http.Handler {
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = 256 << 20
	}
	if o.MaxLimits == nil {
		o.MaxLimits = &LimitCeiling{Name: "normal", Limits: sandbox.Normal}
	}
	svc := &Service{Version: o.Version, Agents: dir, QueryLimits: o.QueryLimits, MaxLimits: o.MaxLimits, FixedModelEndpoint: true}
	opts := []connect.HandlerOption{
		connect.WithInterceptors(&agentInterceptor{dir: dir}),
		connect.WithReadMaxBytes(int(o.MaxRequestBytes)),
		connect.WithSendMaxBytes(1 << 30),
		// Small answers (a stat, a 1 KiB file) cost more to gzip than to
		// send: compress only what is worth it.
		connect.WithCompressMinBytes(8 << 10),
	}
	mux := http.NewServeMux()
	for _, mk := range []func() (string, http.Handler){
		func() (string, http.Handler) { return agentfsv1connect.NewFilesystemServiceHandler(svc, opts...) },
		func() (string, http.Handler) { return agentfsv1connect.NewKvServiceHandler(svc, opts...) },
		func() (string, http.Handler) { return agentfsv1connect.NewToolsServiceHandler(svc, opts...) },
		func() (string, http.Handler) { return agentfsv1connect.NewAgentServiceHandler(svc, opts...) },
		func() (string, http.Handler) { return agentfsv1connect.NewSandboxServiceHandler(svc, opts...) },
		func() (string, http.Handler) { return agentfsv1connect.NewProcessServiceHandler(svc, opts...) },
		func() (string, http.Handler) { return agentfsv1connect.NewSessionServiceHandler(svc, opts...) },
	} {
		path, h := mk()
		mux.Handle(path, h)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	})
	h := httpguard.Wrap(mux, httpguard.Options{Token: o.Token, Public: []string{"/healthz"}, Reject: rejectConnect})
	if o.AccessLog != nil {
		h = accessLog(o.AccessLog, h)
	}
	return h
}

// agentInterceptor puts the session of the Agentfs-Agent header into the
// context and turns handler errors into Connect errors with the
// agentfs.v1.Error detail.
type agentInterceptor struct{ dir *AgentDir }

// Procedures that need no agent.
var agentless = map[string]bool{
	agentfsv1connect.AgentServiceListAgentsProcedure:  true,
	agentfsv1connect.AgentServiceCreateAgentProcedure: true,
}

func (i *agentInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		// Calls about the set of agents ignore the header: a client that
		// names its agent on every call must be able to create it.
		if id := req.Header().Get(AgentHeader); id != "" && !agentless[req.Spec().Procedure] {
			s, err := i.dir.session(ctx, id)
			if err != nil {
				return nil, toConnect(err)
			}
			ctx = WithSession(ctx, s)
		} else if !agentless[req.Spec().Procedure] {
			return nil, toConnect(errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "%s needs the %s header with the agent id", req.Spec().Procedure, AgentHeader))
		}
		resp, err := next(ctx, req)
		return resp, toConnect(err)
	}
}

func (i *agentInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler does for server streams (StreamProcess) what
// WrapUnary does for unary calls; every streaming procedure needs an agent.
func (i *agentInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		id := conn.RequestHeader().Get(AgentHeader)
		if id == "" {
			return toConnect(errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "%s needs the %s header with the agent id", conn.Spec().Procedure, AgentHeader))
		}
		s, err := i.dir.session(ctx, id)
		if err != nil {
			return toConnect(err)
		}
		return toConnect(next(WithSession(ctx, s), conn))
	}
}

// rejectConnect answers a request refused by httpguard as a Connect
// error with the agentfs.v1.Error detail, so every client reads it.
func rejectConnect(w http.ResponseWriter, r *http.Request, status int, msg string) {
	code, kind := connect.CodePermissionDenied, v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED
	if status == http.StatusUnauthorized {
		code = connect.CodeUnauthenticated
	}
	err := connect.NewError(code, errors.New(msg))
	if d, derr := connect.NewErrorDetail(&v1.Error{Kind: kind, Message: msg}); derr == nil {
		err.AddDetail(d)
	}
	connect.NewErrorWriter().Write(w, r, err)
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog writes one line per request: remote address, method, path,
// agent, status, bytes and duration. Headers (the token) are never logged.
func accessLog(l *log.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		agent := r.Header.Get(AgentHeader)
		if agent == "" {
			agent = "-"
		}
		l.Printf("%s %s %s agent=%s status=%d bytes=%d %s", r.RemoteAddr, r.Method, r.URL.Path, agent, sw.status, sw.bytes, time.Since(start).Round(time.Microsecond))
	})
}

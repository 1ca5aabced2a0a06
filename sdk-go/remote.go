package agentfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/rpc/rpcerr"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// RemoteOptions say which server and agent Dial talks to.
type RemoteOptions struct {
	// URL of `agentfs serve http`, e.g. "http://127.0.0.1:7777".
	URL string
	// Agent is the agent id (the database ID.db under the server's --data).
	Agent string
	// Token is sent as "Authorization: Bearer TOKEN"; when empty,
	// $AGENTFS_TOKEN (the variable `agentfs serve http` reads) is used.
	Token string
	// Create makes the agent when it does not exist.
	Create bool
	// HTTPClient to use; http.DefaultClient when nil.
	HTTPClient *http.Client
	// ClientOptions are added to the Connect clients' options, after the
	// SDK's own: connect.WithGRPCWeb() or connect.WithGRPC() (HTTP/2) to
	// change protocol, connect.WithAcceptCompression to accept gzip
	// responses (off by default: file data is mostly small or already
	// compressed, and gzip costs more than it saves on a fast link).
	ClientOptions []connect.ClientOption
}

// Remote is an agent served by `agentfs serve http`, reached over the
// Connect protocol (protobuf over HTTP). It implements Agent with the
// same semantics as the in-process engine: filesystem failures are
// *fs.PathError values wrapping the server's errno.
type Remote struct {
	id    string
	agent agentfsv1connect.AgentServiceClient
	fs    *remoteFS
	kv    *remoteKV
	tools *remoteTools
	execer
	sessions
}

var _ Agent = (*Remote)(nil)

// Dial connects to the agent opts.Agent of the server at opts.URL. It
// makes one call (creating the agent with opts.Create) so that a wrong
// URL, token or agent id fails here.
func Dial(ctx context.Context, opts RemoteOptions) (*Remote, error) {
	if opts.URL == "" || opts.Agent == "" {
		return nil, errors.New("agentfs: Dial needs RemoteOptions.URL and RemoteOptions.Agent")
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	if opts.Token == "" {
		opts.Token = os.Getenv("AGENTFS_TOKEN")
	}
	base := strings.TrimSuffix(opts.URL, "/")
	co := connect.WithClientOptions(append([]connect.ClientOption{
		connect.WithInterceptors(headers{token: opts.Token, agent: opts.Agent}),
		connect.WithAcceptCompression("gzip", nil, nil),
	}, opts.ClientOptions...)...)
	r := &Remote{
		id:    opts.Agent,
		agent: agentfsv1connect.NewAgentServiceClient(hc, base, co),
	}
	r.fs = &remoteFS{c: agentfsv1connect.NewFilesystemServiceClient(hc, base, co)}
	r.kv = &remoteKV{c: agentfsv1connect.NewKvServiceClient(hc, base, co)}
	r.tools = &remoteTools{c: agentfsv1connect.NewToolsServiceClient(hc, base, co)}
	r.execer = execer{c: remoteProcs{agentfsv1connect.NewProcessServiceClient(hc, base, co), agentfsv1connect.NewSandboxServiceClient(hc, base, co)}, mapErr: remoteErr}
	r.sessions = sessions{sc: agentfsv1connect.NewSessionServiceClient(hc, base, co), mapErr: remoteErr}
	var err error
	if opts.Create {
		_, err = r.agent.CreateAgent(ctx, &v1.CreateAgentRequest{Id: opts.Agent, ExistOk: true})
	} else {
		_, err = r.agent.Info(ctx, &v1.InfoRequest{})
	}
	if err != nil {
		return nil, fmt.Errorf("agentfs: dial %s agent %q: %w", base, opts.Agent, remoteErr(err))
	}
	return r, nil
}

// ID is the agent id.
func (r *Remote) ID() string { return r.id }

// FS is the agent's filesystem.
func (r *Remote) FS() FileSystem { return r.fs }

// KV is the agent's key-value store.
func (r *Remote) KV() KVStore { return r.kv }

// Tools is the agent's tool-call log.
func (r *Remote) Tools() ToolLog { return r.tools }

// Close releases nothing on the server (the agent stays open there);
// open Files must be closed themselves.
func (r *Remote) Close() error {
	// Streamed processes end with their client, as over stdio.
	r.execer.closeStreams()
	return nil
}

// headers adds the bearer token and the agent id to every call.
type headers struct{ token, agent string }

// The server resolves the agent of every call that names one, so calls
// about the set of agents must not name one (CreateAgent would fail on
// an agent that does not exist yet).
var agentless = map[string]bool{
	agentfsv1connect.AgentServiceCreateAgentProcedure: true,
	agentfsv1connect.AgentServiceListAgentsProcedure:  true,
}

func (h headers) set(hd http.Header, procedure string) {
	if h.token != "" {
		hd.Set("Authorization", "Bearer "+h.token)
	}
	if !agentless[procedure] {
		hd.Set("Agentfs-Agent", h.agent)
	}
}

func (h headers) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		h.set(req.Header(), req.Spec().Procedure)
		return next(ctx, req)
	}
}

func (h headers) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		h.set(conn.RequestHeader(), spec.Procedure)
		return conn
	}
}

func (h headers) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// RemoteError is a failure reported by the server that has no errno: a
// wrong token, an unknown agent, a bad argument. errors.Is matches it to
// fs.ErrPermission, ErrNotFound, fs.ErrExist and fs.ErrInvalid by kind.
// The mapping is the server's own (core/rpc/rpcerr).
type RemoteError = rpcerr.Error

// remoteErr turns a Connect error into the SDK's: a *fs.PathError with
// the errno for filesystem failures, a *RemoteError for the rest (a
// transport failure without an agentfs.v1.Error stays as it is).
func remoteErr(err error) error { return rpcerr.FromConnect(err) }

func statFromProto(s *v1.Stat) Stat {
	if s == nil {
		return Stat{}
	}
	return Stat{
		Ino: s.Ino, Mode: s.Mode, Nlink: s.Nlink, UID: s.Uid, GID: s.Gid, Size: s.Size, Rdev: s.Rdev,
		Atime: time.Unix(0, s.AtimeNs), Mtime: time.Unix(0, s.MtimeNs), Ctime: time.Unix(0, s.CtimeNs),
		Blksize: s.Blksize,
	}
}

// remoteFS is FileSystem over FilesystemService.
type remoteFS struct {
	c agentfsv1connect.FilesystemServiceClient
}

// call runs one unary call and maps its error.
func call[Req, Resp any](ctx context.Context, fn func(context.Context, *Req) (*Resp, error), req *Req) (*Resp, error) {
	resp, err := fn(ctx, req)
	if err != nil {
		return nil, remoteErr(err)
	}
	return resp, nil
}

func (r *remoteFS) Stat(ctx context.Context, name string) (Stat, error) {
	resp, err := call(ctx, r.c.Stat, &v1.StatRequest{Path: name})
	if err != nil {
		return Stat{}, err
	}
	return statFromProto(resp.Stat), nil
}

func (r *remoteFS) Lstat(ctx context.Context, name string) (Stat, error) {
	resp, err := call(ctx, r.c.Lstat, &v1.LstatRequest{Path: name})
	if err != nil {
		return Stat{}, err
	}
	return statFromProto(resp.Stat), nil
}

func (r *remoteFS) Access(ctx context.Context, name string, mode uint32) error {
	_, err := call(ctx, r.c.Access, &v1.AccessRequest{Path: name, Mode: mode})
	return err
}

func (r *remoteFS) Exists(ctx context.Context, name string) (bool, error) {
	_, err := r.Stat(ctx, name)
	if errors.Is(err, syscall.ENOENT) {
		return false, nil
	}
	return err == nil, err
}

func (r *remoteFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	resp, err := call(ctx, r.c.ReadFile, &v1.ReadFileRequest{Path: name})
	if err != nil {
		return nil, err
	}
	if resp.Data == nil {
		return []byte{}, nil
	}
	return resp.Data, nil
}

func (r *remoteFS) WriteFile(ctx context.Context, name string, data []byte, o WriteOptions) error {
	_, err := call(ctx, r.c.WriteFile, &v1.WriteFileRequest{
		Path: name, Data: data, Mode: o.Perm, CreateParents: o.CreateParents, Append: o.Append, Exclusive: o.Exclusive,
	})
	return err
}

func (r *remoteFS) Readdir(ctx context.Context, name string) ([]string, error) {
	resp, err := call(ctx, r.c.Readdir, &v1.ReaddirRequest{Path: name})
	if err != nil {
		return nil, err
	}
	return resp.Names, nil
}

func (r *remoteFS) ReaddirPlus(ctx context.Context, name string) ([]DirEntry, error) {
	resp, err := call(ctx, r.c.ReaddirPlus, &v1.ReaddirPlusRequest{Path: name})
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, len(resp.Entries))
	for i, e := range resp.Entries {
		out[i] = DirEntry{Name: e.Name, Stat: statFromProto(e.Stat)}
	}
	return out, nil
}

func (r *remoteFS) Mkdir(ctx context.Context, name string, perm uint32) error {
	_, err := call(ctx, r.c.Mkdir, &v1.MkdirRequest{Path: name, Mode: perm})
	return err
}

func (r *remoteFS) MkdirAll(ctx context.Context, name string, perm uint32) error {
	_, err := call(ctx, r.c.Mkdir, &v1.MkdirRequest{Path: name, Mode: perm, Recursive: true})
	return err
}

func (r *remoteFS) Rmdir(ctx context.Context, name string) error {
	_, err := call(ctx, r.c.Rmdir, &v1.RmdirRequest{Path: name})
	return err
}

func (r *remoteFS) Unlink(ctx context.Context, name string) error {
	_, err := call(ctx, r.c.Unlink, &v1.UnlinkRequest{Path: name})
	return err
}

func (r *remoteFS) Remove(ctx context.Context, name string, o RemoveOptions) error {
	_, err := call(ctx, r.c.Remove, &v1.RemoveRequest{Path: name, Recursive: o.Recursive, Force: o.Force})
	return err
}

func (r *remoteFS) RemoveAll(ctx context.Context, name string) error {
	return r.Remove(ctx, name, RemoveOptions{Recursive: true, Force: true})
}

func (r *remoteFS) Rename(ctx context.Context, oldname, newname string) error {
	_, err := call(ctx, r.c.Rename, &v1.RenameRequest{OldPath: oldname, NewPath: newname})
	return err
}

func (r *remoteFS) CopyFile(ctx context.Context, src, dst string) error {
	_, err := call(ctx, r.c.CopyFile, &v1.CopyFileRequest{Src: src, Dst: dst})
	return err
}

func (r *remoteFS) Symlink(ctx context.Context, target, linkname string) error {
	_, err := call(ctx, r.c.Symlink, &v1.SymlinkRequest{Target: target, LinkPath: linkname})
	return err
}

func (r *remoteFS) Readlink(ctx context.Context, name string) (string, error) {
	resp, err := call(ctx, r.c.Readlink, &v1.ReadlinkRequest{Path: name})
	if err != nil {
		return "", err
	}
	return resp.Target, nil
}

func (r *remoteFS) Link(ctx context.Context, oldname, newname string) error {
	_, err := call(ctx, r.c.Link, &v1.LinkRequest{OldPath: oldname, NewPath: newname})
	return err
}

func (r *remoteFS) Chmod(ctx context.Context, name string, perm uint32) error {
	_, err := call(ctx, r.c.Chmod, &v1.ChmodRequest{Path: name, Mode: perm})
	return err
}

func (r *remoteFS) Chown(ctx context.Context, name string, uid, gid int64) error {
	_, err := call(ctx, r.c.Chown, &v1.ChownRequest{Path: name, Uid: uid, Gid: gid})
	return err
}

func (r *remoteFS) Lchown(ctx context.Context, name string, uid, gid int64) error {
	_, err := call(ctx, r.c.Chown, &v1.ChownRequest{Path: name, Uid: uid, Gid: gid, NoFollow: true})
	return err
}

func (r *remoteFS) Utimes(ctx context.Context, name string, atime, mtime time.Time) error {
	req := &v1.UtimesRequest{Path: name}
	if !atime.IsZero() {
		ns := atime.UnixNano()
		req.AtimeNs = &ns
	}
	if !mtime.IsZero() {
		ns := mtime.UnixNano()
		req.MtimeNs = &ns
	}
	_, err := call(ctx, r.c.Utimes, req)
	return err
}

func (r *remoteFS) Truncate(ctx context.Context, name string, size int64) error {
	_, err := call(ctx, r.c.Truncate, &v1.TruncateRequest{Path: name, Size: size})
	return err
}

func (r *remoteFS) Statfs(ctx context.Context) (FSStat, error) {
	resp, err := call(ctx, r.c.Statfs, &v1.StatfsRequest{})
	if err != nil {
		return FSStat{}, err
	}
	return FSStat{
		BlockSize: resp.BlockSize, Blocks: resp.Blocks, BlocksFree: resp.BlocksFree,
		Files: resp.Inodes, FilesFree: resp.FilesFree, NameMax: resp.NameMax, DataBytes: resp.BytesUsed,
	}, nil
}

// Open flags on the wire are Linux's, whatever the client's OS.
const (
	wireWronly    = 0x1
	wireRdwr      = 0x2
	wireCreat     = 0x40
	wireExcl      = 0x80
	wireTrunc     = 0x200
	wireAppend    = 0x400
	wireDirectory = 0x10000
	wireNofollow  = 0x20000
)

func wireFlags(flag int) uint32 {
	var w uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		w = wireWronly
	case os.O_RDWR:
		w = wireRdwr
	}
	for _, m := range []struct {
		os   int
		wire uint32
	}{
		{os.O_CREATE, wireCreat}, {os.O_EXCL, wireExcl}, {os.O_TRUNC, wireTrunc}, {os.O_APPEND, wireAppend},
		{vfs.ODirectory, wireDirectory}, {vfs.ONoFollow, wireNofollow},
	} {
		if flag&m.os != 0 {
			w |= m.wire
		}
	}
	return w
}

func (r *remoteFS) Open(ctx context.Context, name string, flag int, perm uint32) (File, error) {
	resp, err := call(ctx, r.c.Open, &v1.OpenRequest{Path: name, Flags: wireFlags(flag), Mode: perm})
	if err != nil {
		return nil, err
	}
	// The handle outlives the call that opened it: keep ctx's values but
	// not its cancellation.
	return &remoteFile{c: r.c, ctx: context.WithoutCancel(ctx), h: resp.Handle, name: name, append: flag&os.O_APPEND != 0}, nil
}

// ioChunk bounds the data of one Pread or Pwrite (the server limits
// requests to 256 MiB by default).
const ioChunk = 8 << 20

// remoteFile is an open file handle on the server.
type remoteFile struct {
	c      agentfsv1connect.FilesystemServiceClient
	ctx    context.Context
	h      uint64
	name   string
	append bool

	mu  sync.Mutex
	off int64
}

func (f *remoteFile) Name() string { return f.name }

// ReadAt reads len(p) bytes at off; short at the end of the file, with io.EOF.
func (f *remoteFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		size := min(len(p)-n, ioChunk)
		resp, err := call(f.ctx, f.c.Pread, &v1.PreadRequest{Handle: f.h, Offset: off + int64(n), Size: int64(size)})
		if err != nil {
			return n, err
		}
		n += copy(p[n:], resp.Data)
		if len(resp.Data) < size {
			return n, io.EOF
		}
	}
	return n, nil
}

// WriteAt writes p at off (at the end of the file in O_APPEND mode). Data
// over 8 MiB goes in several calls, each atomic.
func (f *remoteFile) WriteAt(p []byte, off int64) (int, error) {
	n := 0
	for {
		size := min(len(p)-n, ioChunk)
		resp, err := call(f.ctx, f.c.Pwrite, &v1.PwriteRequest{Handle: f.h, Offset: off + int64(n), Data: p[n : n+size]})
		if err != nil {
			return n, err
		}
		n += int(resp.Written)
		if n >= len(p) || resp.Written == 0 {
			return n, nil
		}
	}
}

func (f *remoteFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	if n > 0 && err == io.EOF {
		err = nil
	}
	return n, err
}

func (f *remoteFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.WriteAt(p, f.off)
	if err != nil {
		return n, err
	}
	if f.append {
		st, err := f.Stat()
		if err != nil {
			return n, err
		}
		f.off = st.Size
	} else {
		f.off += int64(n)
	}
	return n, nil
}

func (f *remoteFile) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.off
	case io.SeekEnd:
		st, err := f.Stat()
		if err != nil {
			return 0, err
		}
		base = st.Size
	default:
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	if base+offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	f.off = base + offset
	return f.off, nil
}

func (f *remoteFile) Truncate(size int64) error {
	_, err := call(f.ctx, f.c.Ftruncate, &v1.FtruncateRequest{Handle: f.h, Size: size})
	return err
}

func (f *remoteFile) Sync() error {
	_, err := call(f.ctx, f.c.Fsync, &v1.FsyncRequest{Handle: f.h})
	return err
}

func (f *remoteFile) Stat() (Stat, error) {
	resp, err := call(f.ctx, f.c.Fstat, &v1.FstatRequest{Handle: f.h})
	if err != nil {
		return Stat{}, err
	}
	return statFromProto(resp.Stat), nil
}

func (f *remoteFile) Close() error {
	_, err := call(f.ctx, f.c.Close, &v1.CloseRequest{Handle: f.h})
	if errors.Is(err, ErrNotFound) {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	return err
}

// remoteKV is KVStore over KvService.
type remoteKV struct {
	c agentfsv1connect.KvServiceClient
}

func (r *remoteKV) Set(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("kv set %q: %w", key, err)
	}
	_, err = call(ctx, r.c.KvSet, &v1.KvSetRequest{Key: key, ValueJson: string(b)})
	return err
}

func (r *remoteKV) Get(ctx context.Context, key string, out any) error {
	b, err := r.GetJSON(ctx, key)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func (r *remoteKV) GetJSON(ctx context.Context, key string) (json.RawMessage, error) {
	resp, err := call(ctx, r.c.KvGet, &v1.KvGetRequest{Key: key})
	if err != nil {
		return nil, err
	}
	if !resp.Found {
		return nil, fmt.Errorf("kv key %q: %w", key, ErrNotFound)
	}
	return json.RawMessage(resp.ValueJson), nil
}

func (r *remoteKV) List(ctx context.Context, prefix string) ([]KVEntry, error) {
	resp, err := call(ctx, r.c.KvList, &v1.KvListRequest{Prefix: prefix})
	if err != nil {
		return nil, err
	}
	out := make([]KVEntry, len(resp.Entries))
	for i, e := range resp.Entries {
		out[i] = KVEntry{Key: e.Key, Value: json.RawMessage(e.ValueJson), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	}
	return out, nil
}

func (r *remoteKV) Delete(ctx context.Context, key string) (bool, error) {
	resp, err := call(ctx, r.c.KvDelete, &v1.KvDeleteRequest{Key: key})
	if err != nil {
		return false, err
	}
	return resp.Deleted, nil
}

// remoteTools is ToolLog over ToolsService.
type remoteTools struct {
	c agentfsv1connect.ToolsServiceClient
}

// optJSON encodes an optional value as optional JSON text.
func optJSON(v any) (*string, error) {
	b, err := encodeJSON(v)
	if err != nil || b == nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// toolCallErr maps the server's NOT_FOUND and FAILED_PRECONDITION of a
// tool call to ErrNotFound and ErrFinished.
func toolCallErr(id int64, err error) error {
	var re *RemoteError
	if errors.As(err, &re) {
		switch re.Kind {
		case v1.ErrorKind_ERROR_KIND_NOT_FOUND:
			return fmt.Errorf("tool call %d: %w", id, ErrNotFound)
		case v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION:
			return fmt.Errorf("tool call %d: %w", id, ErrFinished)
		}
	}
	return err
}

func (r *remoteTools) Start(ctx context.Context, name string, params any) (int64, error) {
	p, err := optJSON(params)
	if err != nil {
		return 0, fmt.Errorf("tool %q parameters: %w", name, err)
	}
	resp, err := call(ctx, r.c.ToolStart, &v1.ToolStartRequest{Name: name, ParametersJson: p})
	if err != nil {
		return 0, err
	}
	return resp.Id, nil
}

func (r *remoteTools) Success(ctx context.Context, id int64, result any) error {
	res, err := optJSON(result)
	if err != nil {
		return fmt.Errorf("tool call %d result: %w", id, err)
	}
	_, err = call(ctx, r.c.ToolSuccess, &v1.ToolSuccessRequest{Id: id, ResultJson: res})
	return toolCallErr(id, err)
}

func (r *remoteTools) Error(ctx context.Context, id int64, message string) error {
	_, err := call(ctx, r.c.ToolFail, &v1.ToolFailRequest{Id: id, Error: message})
	return toolCallErr(id, err)
}

func (r *remoteTools) Record(ctx context.Context, rec ToolRecord) (int64, error) {
	p, err := optJSON(rec.Parameters)
	if err != nil {
		return 0, fmt.Errorf("tool %q parameters: %w", rec.Name, err)
	}
	res, err := optJSON(rec.Result)
	if err != nil {
		return 0, fmt.Errorf("tool %q result: %w", rec.Name, err)
	}
	req := &v1.ToolRecordRequest{
		Name: rec.Name, StartedAt: rec.StartedAt.Unix(), CompletedAt: rec.CompletedAt.Unix(),
		ParametersJson: p, ResultJson: res,
	}
	if rec.Error != "" {
		req.Error = &rec.Error
	}
	resp, err := call(ctx, r.c.ToolRecord, req)
	if err != nil {
		return 0, err
	}
	return resp.Id, nil
}

var toolStatus = map[v1.ToolStatus]string{
	v1.ToolStatus_TOOL_STATUS_PENDING: StatusPending,
	v1.ToolStatus_TOOL_STATUS_SUCCESS: StatusSuccess,
	v1.ToolStatus_TOOL_STATUS_ERROR:   StatusError,
}

func callFromProto(c *v1.ToolCall) ToolCall {
	out := ToolCall{
		ID: c.Id, Name: c.Name, Error: c.Error, Status: toolStatus[c.Status],
		StartedAt: c.StartedAt, CompletedAt: c.CompletedAt, DurationMs: c.DurationMs,
	}
	if c.ParametersJson != nil {
		out.Parameters = json.RawMessage(*c.ParametersJson)
	}
	if c.ResultJson != nil {
		out.Result = json.RawMessage(*c.ResultJson)
	}
	return out
}

func (r *remoteTools) Get(ctx context.Context, id int64) (ToolCall, error) {
	resp, err := call(ctx, r.c.ToolGet, &v1.ToolGetRequest{Id: id})
	if err != nil {
		return ToolCall{}, err
	}
	if !resp.Found {
		return ToolCall{}, fmt.Errorf("tool call %d: %w", id, ErrNotFound)
	}
	return callFromProto(resp.Call), nil
}

func (r *remoteTools) List(ctx context.Context, f ToolFilter) ([]ToolCall, error) {
	req := &v1.ToolListRequest{Name: f.Name, Limit: int64(f.Limit), Ascending: f.Ascending}
	if f.Status != "" {
		for k, v := range toolStatus {
			if v == f.Status {
				req.Status = k
			}
		}
		if req.Status == v1.ToolStatus_TOOL_STATUS_UNSPECIFIED {
			return nil, fmt.Errorf("tool list: unknown status %q", f.Status)
		}
	}
	if !f.Since.IsZero() {
		req.Since = f.Since.Unix()
	}
	if !f.Until.IsZero() {
		req.Until = f.Until.Unix()
	}
	resp, err := call(ctx, r.c.ToolList, req)
	if err != nil {
		return nil, err
	}
	out := make([]ToolCall, len(resp.Calls))
	for i, c := range resp.Calls {
		out[i] = callFromProto(c)
	}
	return out, nil
}

func (r *remoteTools) Stats(ctx context.Context) ([]ToolStats, error) {
	resp, err := call(ctx, r.c.ToolStats, &v1.ToolStatsRequest{})
	if err != nil {
		return nil, err
	}
	out := make([]ToolStats, len(resp.Stats))
	for i, s := range resp.Stats {
		out[i] = ToolStats{Name: s.Name, TotalCalls: s.TotalCalls, Successful: s.Successful, Failed: s.Failed, Pending: s.Pending, AvgDurationMs: s.AvgDurationMs}
	}
	return out, nil
}

// Pull asks the server to pull the agent's sync remote (the server's
// agent must be set up for sync; the server's TURSO_DB_AUTH_TOKEN is the
// token).
func (r *Remote) Pull(ctx context.Context) (SyncPullResult, error) {
	res, err := call(ctx, r.agent.SyncPull, &v1.SyncPullRequest{})
	if err != nil {
		return SyncPullResult{}, err
	}
	return pullResult(res), nil
}

func pullResult(res *v1.SyncPullResponse) SyncPullResult {
	return SyncPullResult{Revision: res.GetRevision(), Changed: res.GetChanged(), Applied: int(res.GetApplied()), Kept: int(res.GetKept())}
}

// Push asks the server to push the agent to its sync remote.
func (r *Remote) Push(ctx context.Context) (SyncPushResult, error) {
	res, err := call(ctx, r.agent.SyncPush, &v1.SyncPushRequest{})
	if err != nil {
		return SyncPushResult{}, err
	}
	return SyncPushResult{Rows: int(res.GetRows()), Revision: res.GetRevision()}, nil
}

// Sync asks the server to pull, then push.
func (r *Remote) Sync(ctx context.Context) (SyncPullResult, SyncPushResult, error) {
	res, err := call(ctx, r.agent.Sync, &v1.SyncRequest{})
	if err != nil {
		return SyncPullResult{}, SyncPushResult{}, err
	}
	return pullResult(res.GetPull()), SyncPushResult{Rows: int(res.GetPush().GetRows()), Revision: res.GetPush().GetRevision()}, nil
}

// SyncStats reports the sync state of the server's agent.
func (r *Remote) SyncStats(ctx context.Context) (SyncStats, error) {
	res, err := call(ctx, r.agent.SyncStats, &v1.SyncStatsRequest{})
	if err != nil {
		return SyncStats{}, err
	}
	st := SyncStats{
		CDCOperations: res.GetCdcOperations(), MainWALSize: res.GetMainWalSize(), RevertWALSize: res.GetRevertWalSize(),
		Revision: res.GetRevision(), NetworkSentBytes: res.GetNetworkSentBytes(), NetworkReceivedBytes: res.GetNetworkReceivedBytes(),
		RemoteURL: res.GetRemoteUrl(),
	}
	if t := res.GetLastPullUnixTime(); t != 0 {
		st.LastPullUnixTime = &t
	}
	if t := res.GetLastPushUnixTime(); t != 0 {
		st.LastPushUnixTime = &t
	}
	return st, nil
}

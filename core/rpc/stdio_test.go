package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
)

// testClient is a minimal stdio client: the protocol as an SDK speaks it.
type testClient struct {
	t    testing.TB
	w    io.WriteCloser
	r    *bufio.Reader
	wmu  sync.Mutex
	mu   sync.Mutex
	next uint64
	wait map[uint64]chan *v1.Frame
	// streams receive every frame of a server-streaming call.
	streams map[uint64]chan *v1.Frame
	// host answers the engine's calls (HostService).
	host func(method string, payload []byte) *v1.Result
	done chan error // ServeStdio's return
}

func startEngine(t testing.TB, hello *v1.Hello) (*testClient, *v1.Frame) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &testClient{t: t, w: inW, r: bufio.NewReader(outR), wait: map[uint64]chan *v1.Frame{}, streams: map[uint64]chan *v1.Frame{}, done: make(chan error, 1)}
	go func() {
		err := ServeStdio(context.Background(), inR, outW, io.Discard, "test")
		outW.Close()
		c.done <- err
	}()
	c.write(&v1.Frame{Id: 1, Body: &v1.Frame_Hello{Hello: hello}})
	first, err := c.read()
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if first.GetWelcome() != nil {
		go c.readLoop()
		t.Cleanup(func() { inW.Close(); <-c.done })
	}
	return c, first
}

func (c *testClient) write(f *v1.Frame) {
	b, err := proto.Marshal(f)
	if err != nil {
		c.t.Fatal(err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
	c.w.Write(b)
}

func (c *testClient) read() (*v1.Frame, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(c.r, buf); err != nil {
		return nil, err
	}
	var f v1.Frame
	return &f, proto.Unmarshal(buf, &f)
}

func (c *testClient) readLoop() {
	for {
		f, err := c.read()
		if err != nil {
			c.mu.Lock()
			for id, ch := range c.wait {
				close(ch)
				delete(c.wait, id)
			}
			for id, ch := range c.streams {
				close(ch)
				delete(c.streams, id)
			}
			c.mu.Unlock()
			return
		}
		if call := f.GetCall(); call != nil {
			go func() {
				res := &v1.Result{Error: &v1.Error{Kind: v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED}}
				if c.host != nil {
					res = c.host(call.Method, call.Payload)
				}
				c.write(&v1.Frame{Id: f.Id, Body: &v1.Frame_Result{Result: res}})
			}()
			continue
		}
		c.mu.Lock()
		if sc := c.streams[f.Id]; sc != nil {
			// A server stream: messages, then the Result that ends it.
			if f.GetMessage() == nil {
				delete(c.streams, f.Id)
			}
			c.mu.Unlock()
			sc <- f
			continue
		}
		ch := c.wait[f.Id]
		delete(c.wait, f.Id)
		c.mu.Unlock()
		if ch != nil {
			ch <- f
		}
	}
}

// send writes a frame with a fresh id and returns the channel of its answer.
func (c *testClient) send(mk func(id uint64) *v1.Frame) (uint64, chan *v1.Frame) {
	ch := make(chan *v1.Frame, 1)
	c.mu.Lock()
	c.next++
	id := c.next + 100
	c.wait[id] = ch
	c.mu.Unlock()
	c.write(mk(id))
	return id, ch
}

// Call implements agentfsv1rpc.Caller, so the generated typed clients
// drive the engine in these tests.
func (c *testClient) Call(ctx context.Context, method string, req, resp proto.Message) error {
	payload, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	_, ch := c.send(func(id uint64) *v1.Frame {
		return &v1.Frame{Id: id, Body: &v1.Frame_Call{Call: &v1.Call{Method: method, Payload: payload}}}
	})
	select {
	case f, ok := <-ch:
		if !ok {
			return errors.New("engine gone")
		}
		if e := f.GetResult().GetError(); e != nil {
			return FromProto(e)
		}
		return proto.Unmarshal(f.GetResult().GetPayload(), resp)
	case <-time.After(30 * time.Second):
		return errors.New("timeout")
	}
}

func tempHello(t *testing.T) *v1.Hello {
	return &v1.Hello{ProtocolVersion: ProtocolVersion, Client: "test", Open: &v1.OpenOptions{Path: filepath.Join(t.TempDir(), "a.db")}}
}

func TestStdioFilesAndErrors(t *testing.T) {
	c, welcome := startEngine(t, tempHello(t))
	if welcome.GetWelcome().GetInfo().GetSchemaVersion() != "0.4" || welcome.GetWelcome().GetProtocolVersion() != ProtocolVersion {
		t.Fatalf("welcome: %v", welcome)
	}
	ctx := context.Background()
	fsc := agentfsv1rpc.NewFilesystemServiceClient(c)
	if _, err := fsc.WriteFile(ctx, &v1.WriteFileRequest{Path: "/d/a.txt", Data: []byte("hello"), CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	got, err := fsc.ReadFile(ctx, &v1.ReadFileRequest{Path: "/d/a.txt"})
	if err != nil || string(got.Data) != "hello" {
		t.Fatalf("ReadFile: %q %v", got.GetData(), err)
	}
	st, err := fsc.Stat(ctx, &v1.StatRequest{Path: "/d/a.txt"})
	if err != nil || st.Stat.Size != 5 || st.Stat.Mode != 0o100644 || st.Stat.Nlink != 1 {
		t.Fatalf("Stat: %v %v", st, err)
	}
	// Errors carry the errno, the node:fs syscall name and the path.
	_, err = fsc.Stat(ctx, &v1.StatRequest{Path: "/nope"})
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) || pe.Op != "stat" || pe.Path != "/nope" {
		t.Fatalf("Stat(/nope): %#v", err)
	}
	if _, err := fsc.Mkdir(ctx, &v1.MkdirRequest{Path: "/d"}); !errors.Is(err, syscall.EEXIST) {
		t.Errorf("Mkdir existing: %v", err)
	}
	if _, err := fsc.Rmdir(ctx, &v1.RmdirRequest{Path: "/d"}); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("Rmdir non-empty: %v", err)
	}
	if _, err := fsc.Remove(ctx, &v1.RemoveRequest{Path: "/d"}); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("Remove dir without recursive: %v", err)
	}
	if _, err := fsc.Remove(ctx, &v1.RemoveRequest{Path: "/missing", Force: true}); err != nil {
		t.Errorf("Remove force missing: %v", err)
	}
	// Handles: pwrite past the end leaves a hole read as zeros.
	h, err := fsc.Open(ctx, &v1.OpenRequest{Path: "/h.bin", Flags: uint32(syscall.O_RDWR | syscall.O_CREAT)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsc.Pwrite(ctx, &v1.PwriteRequest{Handle: h.Handle, Offset: 5000, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	pr, err := fsc.Pread(ctx, &v1.PreadRequest{Handle: h.Handle, Offset: 4990, Size: 100})
	if err != nil || len(pr.Data) != 11 || pr.Data[10] != 'x' || pr.Data[0] != 0 {
		t.Fatalf("Pread: %q %v", pr.GetData(), err)
	}
	if _, err := fsc.Close(ctx, &v1.CloseRequest{Handle: h.Handle}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsc.Pread(ctx, &v1.PreadRequest{Handle: h.Handle, Size: 1}); Kind(err) != v1.ErrorKind_ERROR_KIND_NOT_FOUND {
		t.Errorf("Pread after Close: %v", err)
	}
	// Batch: each op has its own result; stop_on_error skips the rest.
	br, err := fsc.Batch(ctx, &v1.BatchRequest{StopOnError: true, Ops: []*v1.BatchOp{
		{Op: &v1.BatchOp_Mkdir{Mkdir: &v1.MkdirRequest{Path: "/b"}}},
		{Op: &v1.BatchOp_Stat{Stat: &v1.StatRequest{Path: "/b"}}},
		{Op: &v1.BatchOp_Stat{Stat: &v1.StatRequest{Path: "/b/none"}}},
		{Op: &v1.BatchOp_Mkdir{Mkdir: &v1.MkdirRequest{Path: "/c"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := br.Results
	if r[0].Error != nil || r[1].GetStat().GetStat().GetMode()&0o170000 != 0o040000 || r[2].GetError().GetCode() != "ENOENT" || !r[3].Skipped {
		t.Fatalf("Batch results: %v", r)
	}
	if _, err := fsc.Stat(ctx, &v1.StatRequest{Path: "/c"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("skipped op ran: %v", err)
	}
}

func TestStdioKVToolsAgent(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	ctx := context.Background()
	kv := agentfsv1rpc.NewKvServiceClient(c)
	if _, err := kv.KvSet(ctx, &v1.KvSetRequest{Key: "k:1", ValueJson: `{"a":[1,2]}`}); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.KvSet(ctx, &v1.KvSetRequest{Key: "bad", ValueJson: `{`}); Kind(err) != v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT {
		t.Errorf("KvSet invalid JSON: %v", err)
	}
	g, err := kv.KvGet(ctx, &v1.KvGetRequest{Key: "k:1"})
	if err != nil || !g.Found || g.ValueJson != `{"a":[1,2]}` {
		t.Fatalf("KvGet: %v %v", g, err)
	}
	if g, _ := kv.KvGet(ctx, &v1.KvGetRequest{Key: "none"}); g.Found {
		t.Error("KvGet of a missing key found something")
	}
	tools := agentfsv1rpc.NewToolsServiceClient(c)
	errMsg := "boom"
	if _, err := tools.ToolRecord(ctx, &v1.ToolRecordRequest{Name: "t", StartedAt: 100, CompletedAt: 103, Error: &errMsg}); err != nil {
		t.Fatal(err)
	}
	id, err := tools.ToolStart(ctx, &v1.ToolStartRequest{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.ToolSuccess(ctx, &v1.ToolSuccessRequest{Id: id.Id + 100}); Kind(err) != v1.ErrorKind_ERROR_KIND_NOT_FOUND {
		t.Errorf("ToolSuccess of a missing id: %v", err)
	}
	st, err := tools.ToolStats(ctx, &v1.ToolStatsRequest{})
	if err != nil || len(st.Stats) != 1 || st.Stats[0].TotalCalls != 2 || st.Stats[0].Failed != 1 || st.Stats[0].Pending != 1 {
		t.Fatalf("ToolStats: %v %v", st, err)
	}
	ag := agentfsv1rpc.NewAgentServiceClient(c)
	q, err := ag.Query(ctx, &v1.QueryRequest{Sql: "SELECT key, ? FROM kv_store", Params: []*v1.Value{{Kind: &v1.Value_Integer{Integer: 7}}}})
	if err != nil || len(q.Rows) != 1 || q.Rows[0].Values[0].GetText() != "k:1" || q.Rows[0].Values[1].GetInteger() != 7 {
		t.Fatalf("Query: %v %v", q, err)
	}
	if _, err := ag.Query(ctx, &v1.QueryRequest{Sql: "DELETE FROM kv_store"}); err == nil {
		t.Error("Query ran a DELETE")
	}
	if g, _ := kv.KvGet(ctx, &v1.KvGetRequest{Key: "k:1"}); !g.GetFound() {
		t.Error("the refused DELETE removed the key")
	}
	if _, err := ag.CreateSnapshot(ctx, &v1.CreateSnapshotRequest{Name: "s1"}); err != nil {
		t.Fatal(err)
	}
	if l, err := ag.ListSnapshots(ctx, &v1.ListSnapshotsRequest{}); err != nil || len(l.Snapshots) != 1 || l.Snapshots[0].Name != "s1" {
		t.Fatalf("ListSnapshots: %v %v", l, err)
	}
	if f, err := ag.Fsck(ctx, &v1.FsckRequest{}); err != nil || !f.Ok {
		t.Fatalf("Fsck: %v %v", f, err)
	}
	if _, err := ag.Diff(ctx, &v1.DiffRequest{}); Kind(err) != v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION {
		t.Errorf("Diff of a plain agent: %v", err)
	}
}

func TestStdioHandshakeRefusals(t *testing.T) {
	for name, h := range map[string]*v1.Hello{
		"version":    {ProtocolVersion: 99, Client: "future-sdk"},
		"bad id":     {ProtocolVersion: ProtocolVersion, Open: &v1.OpenOptions{Id: "../x"}},
		"id or path": {ProtocolVersion: ProtocolVersion, Open: &v1.OpenOptions{Id: "a", Path: "/tmp/b.db"}},
		"no create":  {ProtocolVersion: ProtocolVersion, Open: &v1.OpenOptions{Path: filepath.Join(t.TempDir(), "none.db"), NoCreate: true}},
	} {
		t.Run(name, func(t *testing.T) {
			c, f := startEngine(t, h)
			e := f.GetResult().GetError()
			if e == nil || e.Message == "" {
				t.Fatalf("handshake answered %v, want an error", f)
			}
			if name == "version" && !strings.Contains(e.Message, "protocol 1") {
				t.Errorf("message does not say the versions: %q", e.Message)
			}
			c.w.Close()
			if err := <-c.done; !errors.Is(err, ErrHandshake) {
				t.Errorf("ServeStdio returned %v, want ErrHandshake", err)
			}
		})
	}
}

func TestStdioConcurrentCalls(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	fsc := agentfsv1rpc.NewFilesystemServiceClient(c)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("/f%d", i)
			if _, err := fsc.WriteFile(ctx, &v1.WriteFileRequest{Path: p, Data: []byte(p)}); err != nil {
				errs <- err
				return
			}
			r, err := fsc.ReadFile(ctx, &v1.ReadFileRequest{Path: p})
			if err != nil || string(r.Data) != p {
				errs <- fmt.Errorf("read %s: %q %v", p, r.GetData(), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	l, err := fsc.Readdir(ctx, &v1.ReaddirRequest{Path: "/"})
	if err != nil || len(l.Names) != 200 {
		t.Fatalf("Readdir: %d names, %v", len(l.GetNames()), err)
	}
}

func TestStdioProtocolFrames(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	// Unknown method and undecodable payload are errors, not crashes.
	_, ch := c.send(func(id uint64) *v1.Frame {
		return &v1.Frame{Id: id, Body: &v1.Frame_Call{Call: &v1.Call{Method: "/agentfs.v1.Nope/Nope"}}}
	})
	if f := <-ch; f.GetResult().GetError().GetKind() != v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED {
		t.Errorf("unknown method: %v", f)
	}
	_, ch = c.send(func(id uint64) *v1.Frame {
		return &v1.Frame{Id: id, Body: &v1.Frame_Call{Call: &v1.Call{Method: agentfsv1connect.FilesystemServiceStatProcedure, Payload: []byte{0xff, 0xff}}}}
	})
	if f := <-ch; f.GetResult().GetError().GetKind() != v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT {
		t.Errorf("bad payload: %v", f)
	}
	_, ch = c.send(func(id uint64) *v1.Frame { return &v1.Frame{Id: id, Body: &v1.Frame_Ping{Ping: &v1.Ping{}}} })
	if f := <-ch; f.GetPong() == nil {
		t.Errorf("ping answered %v", f)
	}
	_, ch = c.send(func(id uint64) *v1.Frame {
		return &v1.Frame{Id: id, Body: &v1.Frame_Shutdown{Shutdown: &v1.Shutdown{}}}
	})
	if f := <-ch; f.GetResult() == nil || f.GetResult().GetError() != nil {
		t.Errorf("shutdown answered %v", f)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("ServeStdio after shutdown: %v", err)
		}
		c.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("engine did not exit after shutdown")
	}
}

func TestStdioHeartbeatExit(t *testing.T) {
	h := tempHello(t)
	h.HeartbeatMs = 50
	c, _ := startEngine(t, h)
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		c.done <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("a silent client did not make the engine exit")
	}
}

// A sandbox script calls a binding; the engine calls the client back over
// the same connection.
func TestStdioExecBindingCallsBack(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	c.host = func(method string, payload []byte) *v1.Result {
		if method != agentfsv1connect.HostServiceCallBindingProcedure {
			return &v1.Result{Error: &v1.Error{Kind: v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED}}
		}
		var req v1.CallBindingRequest
		proto.Unmarshal(payload, &req)
		out, _ := proto.Marshal(&v1.CallBindingResponse{ResultJson: `{"echo":` + req.ArgsJson + `}`})
		return &v1.Result{Payload: out}
	}
	sb := agentfsv1rpc.NewSandboxServiceClient(c)
	res, err := sb.Exec(context.Background(), &v1.ExecRequest{
		Script:   "greet --name bob | tee /out.json; echo done",
		Bindings: []*v1.BindingSpec{{Name: "greet", SchemaJson: `{"type":"object","properties":{"name":{"type":"string"}}}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), `"echo":{"name":"bob"}`) || !strings.HasSuffix(string(res.Stdout), "done\n") {
		t.Fatalf("exec: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	got, err := agentfsv1rpc.NewFilesystemServiceClient(c).ReadFile(context.Background(), &v1.ReadFileRequest{Path: "/out.json"})
	if err != nil || !strings.Contains(string(got.Data), "bob") {
		t.Fatalf("the script's output file: %q %v", got.GetData(), err)
	}
}

func TestStdioTemporaryDatabase(t *testing.T) {
	c, w := startEngine(t, &v1.Hello{ProtocolVersion: ProtocolVersion})
	path := w.GetWelcome().GetInfo().GetPath()
	if path == "" {
		t.Fatal("no path in Welcome")
	}
	if _, err := agentfsv1rpc.NewFilesystemServiceClient(c).WriteFile(context.Background(), &v1.WriteFileRequest{Path: "/x", Data: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	c.w.Close()
	<-c.done
	c.done <- nil
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary database %s left behind (%v)", path, err)
	}
}

// A call that runs long on the reading goroutine (here: a sandbox script
// waiting for a host binding the client holds back) hands the reading
// over: the calls behind it are answered meanwhile.
func TestStdioSlowCallDoesNotHoldUpOthers(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	release := make(chan struct{})
	c.host = func(method string, payload []byte) *v1.Result {
		<-release
		out, _ := proto.Marshal(&v1.CallBindingResponse{ResultJson: `{}`})
		return &v1.Result{Payload: out}
	}
	execDone := make(chan error, 1)
	go func() {
		_, err := agentfsv1rpc.NewSandboxServiceClient(c).Exec(context.Background(), &v1.ExecRequest{
			Script:   "hold",
			Bindings: []*v1.BindingSpec{{Name: "hold", SchemaJson: `{"type":"object"}`}},
		})
		execDone <- err
	}()
	fsc := agentfsv1rpc.NewFilesystemServiceClient(c)
	for i := 0; i < 20; i++ {
		if _, err := fsc.WriteFile(context.Background(), &v1.WriteFileRequest{Path: fmt.Sprintf("/f%d", i), Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-execDone:
		t.Fatalf("exec finished before its binding answered: %v", err)
	default:
	}
	close(release)
	if err := <-execDone; err != nil {
		t.Fatal(err)
	}
}

// File data answers are framed around the data (no marshal copy): large
// and empty files, and preads, come back byte-identical.
func TestStdioFileDataFraming(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	fsc := agentfsv1rpc.NewFilesystemServiceClient(c)
	ctx := context.Background()
	big := make([]byte, 200<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, data := range [][]byte{big, {}, []byte("x")} {
		if _, err := fsc.WriteFile(ctx, &v1.WriteFileRequest{Path: "/f", Data: data}); err != nil {
			t.Fatal(err)
		}
		got, err := fsc.ReadFile(ctx, &v1.ReadFileRequest{Path: "/f"})
		if err != nil || !bytes.Equal(got.Data, data) {
			t.Fatalf("ReadFile of %d bytes: got %d bytes, %v", len(data), len(got.GetData()), err)
		}
	}
	fsc.WriteFile(ctx, &v1.WriteFileRequest{Path: "/f", Data: big})
	h, err := fsc.Open(ctx, &v1.OpenRequest{Path: "/f"})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := fsc.Pread(ctx, &v1.PreadRequest{Handle: h.Handle, Offset: 1000, Size: 100 << 10})
	if err != nil || !bytes.Equal(pr.Data, big[1000:1000+100<<10]) {
		t.Fatalf("Pread: %d bytes, %v", len(pr.GetData()), err)
	}
}

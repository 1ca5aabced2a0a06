package rpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
)

// localWriter feeds the client's bytes to a Local engine.
type localWriter struct{ l *Local }

func (w localWriter) Write(p []byte) (int, error) { w.l.Write(p); return len(p), nil }
func (w localWriter) Close() error                { w.l.CloseWrite(); return nil }

// startLocal is startEngine over rpc.Local: the frames travel through
// memory, and the returned syncCaller makes calls with CallSync.
func startLocal(t testing.TB, hello *v1.Hello) (*testClient, syncCaller, *v1.Frame) {
	t.Helper()
	outR, outW := io.Pipe()
	l := ServeLocal(context.Background(), "test", io.Discard, func(p []byte) {
		outW.Write(p) // the pipe hands the bytes over before returning
	})
	c := &testClient{t: t, w: localWriter{l}, r: bufio.NewReader(outR), wait: map[uint64]chan *v1.Frame{}, streams: map[uint64]chan *v1.Frame{}, done: make(chan error, 1)}
	go func() {
		err := l.Wait()
		outW.Close()
		c.done <- err
	}()
	c.write(&v1.Frame{Id: 1, Body: &v1.Frame_Hello{Hello: hello}})
	first, err := c.read()
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if first.GetWelcome() == nil {
		t.Fatalf("handshake refused: %v", first)
	}
	go c.readLoop()
	t.Cleanup(func() { c.w.Close(); <-c.done })
	return c, syncCaller{l}, first
}

// syncCaller implements agentfsv1rpc.Caller with Local.CallSync.
type syncCaller struct{ l *Local }

func (s syncCaller) Call(_ context.Context, method string, req, resp proto.Message) error {
	payload, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	head, data := s.l.CallSync(method, payload)
	var res v1.Result
	if err := proto.Unmarshal(append(head, data...), &res); err != nil {
		return err
	}
	if res.Error != nil {
		return FromProto(res.Error)
	}
	return proto.Unmarshal(res.Payload, resp)
}

func TestLocalSyncCallsAndFramesShareTheAgent(t *testing.T) {
	c, sc, _ := startLocal(t, tempHello(t))
	ctx := context.Background()
	viaSync := agentfsv1rpc.NewFilesystemServiceClient(sc)
	viaFrames := agentfsv1rpc.NewFilesystemServiceClient(c)

	if _, err := viaSync.WriteFile(ctx, &v1.WriteFileRequest{Path: "/d/a.txt", Data: []byte("hello"), CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	got, err := viaFrames.ReadFile(ctx, &v1.ReadFileRequest{Path: "/d/a.txt"})
	if err != nil || string(got.Data) != "hello" {
		t.Fatalf("frames read what the sync call wrote: %q %v", got.GetData(), err)
	}
	// File data larger than the inline limit comes back as head + data.
	big := bytes.Repeat([]byte("0123456789abcdef"), 20000)
	if _, err := viaFrames.WriteFile(ctx, &v1.WriteFileRequest{Path: "/big", Data: big}); err != nil {
		t.Fatal(err)
	}
	head, data := sc.l.CallSync(agentfsv1connect.FilesystemServiceReadFileProcedure, mustMarshal(t, &v1.ReadFileRequest{Path: "/big"}))
	if len(data) != len(big) || len(head) > 16 {
		t.Fatalf("ReadFile of %d bytes: head %d bytes, data %d bytes", len(big), len(head), len(data))
	}
	rf, err := viaSync.ReadFile(ctx, &v1.ReadFileRequest{Path: "/big"})
	if err != nil || !bytes.Equal(rf.Data, big) {
		t.Fatalf("sync ReadFile of the big file: %d bytes, %v", len(rf.GetData()), err)
	}
	// Errors keep their errno, operation and path.
	_, err = viaSync.Stat(ctx, &v1.StatRequest{Path: "/nope"})
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) || pe.Path != "/nope" {
		t.Fatalf("Stat(/nope): %#v", err)
	}
	// A request that does not decode is an error, not a crash.
	head, _ = sc.l.CallSync(agentfsv1connect.FilesystemServiceStatProcedure, []byte{0xff, 0xff, 0xff})
	var res v1.Result
	if err := proto.Unmarshal(head, &res); err != nil || res.GetError().GetKind() != v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT {
		t.Fatalf("undecodable request: %v %v", res.GetError(), err)
	}
	head, _ = sc.l.CallSync("/agentfs.v1.Nope/Nope", nil)
	if err := proto.Unmarshal(head, &res); err != nil || res.GetError().GetKind() != v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED {
		t.Fatalf("unknown method: %v %v", res.GetError(), err)
	}

	// After the client ends the connection, sync calls fail cleanly.
	c.w.Close()
	<-c.done
	c.done <- nil // for the cleanup
	_, err = viaSync.Stat(ctx, &v1.StatRequest{Path: "/"})
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Stat after the end: %v", err)
	}
}

// A sandbox script runs through frames; its binding is answered by the
// client and, while the script waits, the client calls the agent
// synchronously.
func TestLocalExecBindingCallsBackIntoTheAgent(t *testing.T) {
	c, sc, _ := startLocal(t, tempHello(t))
	ctx := context.Background()
	viaSync := agentfsv1rpc.NewFilesystemServiceClient(sc)
	if _, err := viaSync.WriteFile(ctx, &v1.WriteFileRequest{Path: "/name", Data: []byte("ada")}); err != nil {
		t.Fatal(err)
	}
	c.host = func(method string, payload []byte) *v1.Result {
		got, err := viaSync.ReadFile(ctx, &v1.ReadFileRequest{Path: "/name"})
		if err != nil {
			return &v1.Result{Error: ToProto(err)}
		}
		out, _ := proto.Marshal(&v1.CallBindingResponse{ResultJson: `{"name":"` + string(got.Data) + `"}`})
		return &v1.Result{Payload: out}
	}
	res, err := agentfsv1rpc.NewSandboxServiceClient(c).Exec(ctx, &v1.ExecRequest{
		Script:   "who > /out.json; cat /out.json",
		Bindings: []*v1.BindingSpec{{Name: "who"}},
	})
	if err != nil || res.ExitCode != 0 || !strings.Contains(string(res.Stdout), `"name":"ada"`) {
		t.Fatalf("exec: %v %v", res, err)
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Submit runs a call without a frame; WriteFile's data is read where it
// lies, and the answer is a Result frame with the call's id.
func TestLocalSubmitReadsDataInPlace(t *testing.T) {
	c, sc, _ := startLocal(t, tempHello(t))
	l := sc.l
	big := bytes.Repeat([]byte("in place "), 1<<20) // 9 MiB: past largeCall too
	head := mustMarshal(t, &v1.WriteFileRequest{Path: "/big"})
	ch := make(chan *v1.Frame, 1)
	c.mu.Lock()
	c.wait[7001] = ch
	c.mu.Unlock()
	l.Submit(7001, agentfsv1connect.FilesystemServiceWriteFileProcedure, head, big)
	if f := <-ch; f.GetResult().GetError() != nil {
		t.Fatalf("WriteFile: %v", f.GetResult().GetError())
	}
	// Read back into memory from an allocator, as the addon does.
	var allocated []byte
	hd, data := l.CallSyncInto(agentfsv1connect.FilesystemServiceReadFileProcedure, mustMarshal(t, &v1.ReadFileRequest{Path: "/big"}),
		func(n int) []byte { allocated = make([]byte, n); return allocated })
	if !bytes.Equal(data, big) || &data[0] != &allocated[0] {
		t.Fatalf("ReadFile into the allocator: %d bytes, same memory %v", len(data), len(data) > 0 && &data[0] == &allocated[0])
	}
	var res v1.Result
	if err := proto.Unmarshal(append(hd, data...), &res); err != nil || res.Error != nil {
		t.Fatalf("result: %v %v", res.Error, err)
	}
	// Pwrite through Submit, and a decode error for a bad head.
	fsc := agentfsv1rpc.NewFilesystemServiceClient(sc)
	h, err := fsc.Open(context.Background(), &v1.OpenRequest{Path: "/big", Flags: 2 /* O_RDWR */})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.wait[7002] = ch
	c.mu.Unlock()
	l.Submit(7002, agentfsv1connect.FilesystemServicePwriteProcedure, mustMarshal(t, &v1.PwriteRequest{Handle: h.Handle, Offset: 2}), bytes.Repeat([]byte("X"), 70000))
	f := <-ch
	var pw v1.PwriteResponse
	if f.GetResult().GetError() != nil || proto.Unmarshal(f.GetResult().GetPayload(), &pw) != nil || pw.Written != 70000 {
		t.Fatalf("Pwrite: %v", f)
	}
	got, err := fsc.ReadFile(context.Background(), &v1.ReadFileRequest{Path: "/big"})
	if err != nil || string(got.Data[:4]) != "inXX" || got.Data[70002] != big[70002] {
		t.Fatalf("after Pwrite: %q %v", got.GetData()[:8], err)
	}
	c.mu.Lock()
	c.wait[7003] = ch
	c.mu.Unlock()
	l.Submit(7003, agentfsv1connect.FilesystemServiceWriteFileProcedure, []byte{0xff, 0xff}, big)
	if f := <-ch; f.GetResult().GetError().GetKind() != v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT {
		t.Fatalf("bad head: %v", f)
	}
}

// StreamProcess through Submit (the in-process and WebAssembly engines'
// way of starting calls) streams as over frames: message frames, then
// the Result.
func TestLocalSubmitStreamProcess(t *testing.T) {
	c, sc, _ := startLocal(t, tempHello(t))
	ch := make(chan *v1.Frame, 16)
	c.mu.Lock()
	c.streams[7100] = ch
	c.mu.Unlock()
	req := mustMarshal(t, &v1.StreamProcessRequest{Target: &v1.StreamProcessRequest_Start{Start: &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: "echo a; echo b >&2; exit 4"}}}})
	sc.l.Submit(7100, agentfsv1connect.ProcessServiceStreamProcessProcedure, req, nil)
	s := &stdioStream{c, 7100, ch}
	out, last, err := recvAll(t, s)
	if err != nil || out != "a\n" || last == nil || !last.Exited || last.ExitCode != 4 {
		t.Fatalf("submitted stream: %q %v %v", out, last, err)
	}
	// And through frames on the same connection.
	if out, last, err := recvAll(t, c.streamProcess(context.Background(), &v1.StreamProcessRequest{Target: &v1.StreamProcessRequest_Start{Start: &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: "echo c"}}}})); err != nil || out != "c\n" || !last.Exited {
		t.Fatalf("framed stream: %q %v %v", out, last, err)
	}
}

package rpc

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

// procStream is one StreamProcess call as a test sees it on either door.
type procStream interface {
	// Recv returns the next message, io.EOF at the stream's clean end.
	Recv() (*v1.StreamProcessResponse, error)
	// Cancel is the client giving up: a Cancel frame on stdio, the
	// request's context (the HTTP stream is reset) on HTTP.
	Cancel()
}

type openStream func(ctx context.Context, r *v1.StreamProcessRequest) procStream

// stdioStream reads a StreamProcess call's frames: messages, then Result.
type stdioStream struct {
	c  *testClient
	id uint64
	ch chan *v1.Frame
}

func (c *testClient) streamProcess(_ context.Context, r *v1.StreamProcessRequest) procStream {
	payload, err := proto.Marshal(r)
	if err != nil {
		c.t.Fatal(err)
	}
	ch := make(chan *v1.Frame, 1024)
	c.mu.Lock()
	c.next++
	id := c.next + 100
	c.streams[id] = ch
	c.mu.Unlock()
	c.write(&v1.Frame{Id: id, Body: &v1.Frame_Call{Call: &v1.Call{Method: agentfsv1connect.ProcessServiceStreamProcessProcedure, Payload: payload}}})
	return &stdioStream{c, id, ch}
}

func (s *stdioStream) Recv() (*v1.StreamProcessResponse, error) {
	f, ok := <-s.ch
	if !ok {
		return nil, errors.New("engine gone")
	}
	if m := f.GetMessage(); m != nil {
		out := &v1.StreamProcessResponse{}
		return out, proto.Unmarshal(m.Payload, out)
	}
	if e := f.GetResult().GetError(); e != nil {
		return nil, FromProto(e)
	}
	return nil, io.EOF
}

func (s *stdioStream) Cancel() {
	s.c.write(&v1.Frame{Id: s.id, Body: &v1.Frame_Cancel{Cancel: &v1.Cancel{}}})
}

// connectStream is a Connect server stream.
type connectStream struct {
	st     *connect.ServerStreamForClient[v1.StreamProcessResponse]
	err    error
	cancel context.CancelFunc
}

func connectOpener(pc agentfsv1connect.ProcessServiceClient) openStream {
	return func(ctx context.Context, r *v1.StreamProcessRequest) procStream {
		ctx, cancel := context.WithCancel(ctx)
		st, err := pc.StreamProcess(ctx, r)
		return &connectStream{st, err, cancel}
	}
}

func (s *connectStream) Recv() (*v1.StreamProcessResponse, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.st.Receive() {
		return s.st.Msg(), nil
	}
	if err := s.st.Err(); err != nil {
		return nil, err
	}
	return nil, io.EOF
}

func (s *connectStream) Cancel() { s.cancel() }

// recvAll reads a stream to its end.
func recvAll(t *testing.T, s procStream) (stdout string, last *v1.StreamProcessResponse, err error) {
	t.Helper()
	for {
		m, err := s.Recv()
		if err == io.EOF {
			return stdout, last, nil
		}
		if err != nil {
			return stdout, last, err
		}
		for _, c := range m.Chunks {
			if c.Stream == 1 {
				stdout += string(c.Data)
			}
		}
		last = m
	}
}

func testStreaming(t *testing.T, open openStream, pc procClient) {
	ctx := context.Background()
	// Output arrives as written: the first line comes while the script
	// waits for stdin, so before it could have exited.
	s := open(ctx, &v1.StreamProcessRequest{Target: &v1.StreamProcessRequest_Start{Start: &v1.StartProcessRequest{
		Exec: &v1.ExecRequest{Script: `echo first; read -r x; echo "got $x" >&2; echo done; exit 3`}, KeepStdinOpen: true,
	}}})
	head, err := s.Recv()
	if err != nil || head.Pid == 0 || len(head.Chunks) != 0 || head.Exited {
		t.Fatalf("first message %v %v, want the pid alone", head, err)
	}
	m, err := s.Recv()
	if err != nil || len(m.Chunks) != 1 || string(m.Chunks[0].Data) != "first\n" || m.Exited {
		t.Fatalf("first output %v %v", m, err)
	}
	if _, err := pc.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: head.Pid, Data: []byte("hi\n"), CloseStdin: true}); err != nil {
		t.Fatal(err)
	}
	var chunks []string
	var last *v1.StreamProcessResponse
	for {
		m, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range m.Chunks {
			chunks = append(chunks, string(c.Data))
		}
		last = m
	}
	if got := strings.Join(chunks, ""); got != "got hi\ndone\n" || last == nil || !last.Exited || last.ExitCode != 3 || last.Pid != head.Pid {
		t.Fatalf("rest %q, last %v", got, last)
	}
	// Reaped with the last message; its stdin, written late, is a broken
	// pipe and closing it does nothing (the client may learn of the end
	// after the engine did); kill by pid says it is reaped.
	if l, err := pc.ListProcesses(ctx, &v1.ListProcessesRequest{}); err != nil || len(l.Processes) != 0 {
		t.Errorf("the streamed process is still listed: %v %v", l, err)
	}
	if _, err := pc.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: head.Pid, Data: []byte("late\n")}); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("late write: %v, want a broken pipe", err)
	}
	if _, err := pc.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: head.Pid, CloseStdin: true}); err != nil {
		t.Errorf("late close of stdin: %v", err)
	}
	if _, err := pc.KillProcess(ctx, &v1.KillProcessRequest{Pid: head.Pid}); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("kill of a reaped pid: %v", err)
	}

	// A process of StartProcess, streamed by pid; output that
	// ReadProcess took already is not sent again.
	st, err := pc.StartProcess(ctx, &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: `echo a; read -r x; echo b`}, KeepStdinOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	if out, _, _ := readUntil(t, pc, st.Pid, "a\n"); out != "a\n" {
		t.Fatalf("read %q", out)
	}
	s = open(ctx, &v1.StreamProcessRequest{Target: &v1.StreamProcessRequest_Pid{Pid: st.Pid}})
	if _, err := pc.WriteProcess(ctx, &v1.WriteProcessRequest{Pid: st.Pid, Data: []byte("\n"), CloseStdin: true}); err != nil {
		t.Fatal(err)
	}
	if out, last, err := recvAll(t, s); err != nil || out != "b\n" || !last.Exited || last.ExitCode != 0 {
		t.Fatalf("by pid: %q %v %v", out, last, err)
	}

	// deadline_ms kills a process that outlives it; the stream still
	// ends with the exit status, which names the signal.
	s = open(ctx, &v1.StreamProcessRequest{DeadlineMs: 50, Target: &v1.StreamProcessRequest_Start{Start: &v1.StartProcessRequest{Exec: &v1.ExecRequest{Script: `echo up; sleep 3600`}}}})
	if out, last, err := recvAll(t, s); err != nil || out != "up\n" || !last.Exited || last.Signal != 9 || last.ExitCode != 137 {
		t.Fatalf("deadline: %q %v %v", out, last, err)
	}

	// Neither start nor pid.
	if _, err := open(ctx, &v1.StreamProcessRequest{}).Recv(); err == nil || !strings.Contains(err.Error(), "give start") {
		t.Errorf("empty request: %v", err)
	}
	if l, err := pc.ListProcesses(ctx, &v1.ListProcessesRequest{}); err != nil || len(l.Processes) != 0 {
		t.Errorf("left behind: %v %v", l, err)
	}
}

func TestStdioStreamProcess(t *testing.T) {
	c, _ := startEngine(t, tempHello(t))
	testStreaming(t, c.streamProcess, agentfsv1rpc.NewProcessServiceClient(c))
}

func TestHTTPStreamProcess(t *testing.T) {
	srv := startHTTP(t, "")
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
	if _, err := admin.CreateAgent(context.Background(), &v1.CreateAgentRequest{Id: "p"}); err != nil {
		t.Fatal(err)
	}
	pc := agentfsv1connect.NewProcessServiceClient(srv.Client(), srv.URL, headers("", "p"))
	testStreaming(t, connectOpener(pc), pc)

	// Without the agent header the stream is refused like any call.
	anon := agentfsv1connect.NewProcessServiceClient(srv.Client(), srv.URL)
	if _, err := connectOpener(anon)(context.Background(), &v1.StreamProcessRequest{}).Recv(); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("no agent header: %v", err)
	}
}

// toolLister is ToolsService.ToolList on either door.
type toolLister interface {
	ToolList(context.Context, *v1.ToolListRequest) (*v1.ToolListResponse, error)
}

// waitKilled waits until the table no longer holds the victim (a client
// that went away: the engine killed and reaped it), then checks that the
// script stopped: its exec audit record, written only when the
// interpreter returned, is there with a failing status. The test's own
// timeout bounds the wait.
func waitKilled(t *testing.T, pc procClient, tools toolLister, victim string) {
	t.Helper()
	ctx := context.Background()
	for {
		l, err := pc.ListProcesses(ctx, &v1.ListProcessesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Processes) == 0 {
			break
		}
		time.Sleep(time.Millisecond) // polling, not a bound
	}
	calls, err := tools.ToolList(ctx, &v1.ToolListRequest{Name: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls.Calls {
		if strings.Contains(c.GetParametersJson(), victim) {
			if c.Error == nil || *c.Error == "" {
				t.Errorf("the killed script's record has no failure: %v", c)
			}
			return
		}
	}
	t.Errorf("no audit record of %s: the script did not stop (%v)", victim, calls.Calls)
}

// Attack and cancellation: a streaming client that cancels, whose
// deadline passes, or that goes away takes its process with it, on both
// doors.
func TestStreamCancelKillsProcess(t *testing.T) {
	victim := func(name string) *v1.StreamProcessRequest {
		return &v1.StreamProcessRequest{Target: &v1.StreamProcessRequest_Start{Start: &v1.StartProcessRequest{
			Exec: &v1.ExecRequest{Script: "echo up; while :; do sleep 3600; done # " + name},
		}}}
	}
	waitUp := func(t *testing.T, s procStream) {
		t.Helper()
		for {
			m, err := s.Recv()
			if err != nil {
				t.Fatalf("before the output: %v", err)
			}
			if len(m.Chunks) > 0 {
				return
			}
		}
	}
	t.Run("stdio-cancel", func(t *testing.T) {
		c, _ := startEngine(t, tempHello(t))
		pc := agentfsv1rpc.NewProcessServiceClient(c)
		s := c.streamProcess(context.Background(), victim("victim-stdio-cancel"))
		waitUp(t, s)
		s.Cancel()
		if _, err := s.Recv(); !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "cancel") {
			t.Errorf("after Cancel: %v, want a cancelled call", err)
		}
		waitKilled(t, pc, agentfsv1rpc.NewToolsServiceClient(c), "victim-stdio-cancel")
	})
	t.Run("stdio-disconnect", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "a.db")
		c, _ := startEngine(t, &v1.Hello{ProtocolVersion: ProtocolVersion, Client: "test", Open: &v1.OpenOptions{Path: db}})
		s := c.streamProcess(context.Background(), victim("victim-stdio-gone"))
		waitUp(t, s)
		c.w.Close() // the client goes away mid-stream
		// The engine ends (it does not wait for the endless script) ...
		if err := <-c.done; err != nil {
			t.Fatalf("engine: %v", err)
		}
		c.done <- nil // for the cleanup's receive
		// ... after the script stopped: its audit record is there.
		a, err := core.Open(context.Background(), db, core.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		calls, err := a.Tools.List(context.Background(), toolcalls.Filter{Name: "exec"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, call := range calls {
			found = found || strings.Contains(string(call.Parameters), "victim-stdio-gone")
		}
		if !found {
			t.Errorf("no audit record of the streamed script: %v", calls)
		}
	})
	t.Run("stdio-shutdown", func(t *testing.T) {
		c, _ := startEngine(t, tempHello(t))
		s := c.streamProcess(context.Background(), victim("victim-shutdown"))
		waitUp(t, s)
		_, ch := c.send(func(id uint64) *v1.Frame {
			return &v1.Frame{Id: id, Body: &v1.Frame_Shutdown{Shutdown: &v1.Shutdown{}}}
		})
		if f := <-ch; f.GetResult() == nil || f.GetResult().GetError() != nil {
			t.Errorf("shutdown answer: %v", f)
		}
		if _, err := s.Recv(); err == nil || err == io.EOF {
			t.Errorf("the stream ended with %v, want an error (its process was killed)", err)
		}
	})
	for _, how := range []string{"disconnect", "timeout"} {
		t.Run("http-"+how, func(t *testing.T) {
			srv := startHTTP(t, "")
			ctx := context.Background()
			admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
			if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "p"}); err != nil {
				t.Fatal(err)
			}
			pc := agentfsv1connect.NewProcessServiceClient(srv.Client(), srv.URL, headers("", "p"))
			tools := agentfsv1connect.NewToolsServiceClient(srv.Client(), srv.URL, headers("", "p"))
			name := "victim-http-" + how
			if how == "disconnect" {
				s := connectOpener(pc)(ctx, victim(name))
				waitUp(t, s)
				s.Cancel()
			} else {
				// The Connect-Timeout-Ms header of a deadline: the stream
				// fails with deadline_exceeded and the process is killed.
				dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				s := connectOpener(pc)(dctx, victim(name))
				if _, _, err := recvAll(t, s); connect.CodeOf(err) != connect.CodeDeadlineExceeded {
					t.Errorf("stream past its deadline: %v", err)
				}
			}
			waitKilled(t, pc, tools, name)
		})
	}
}

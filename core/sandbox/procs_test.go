package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
)

// drain reads p until it ends and returns its chunks and exit.
func drain(t *testing.T, p *sandbox.Proc) ([]sandbox.Chunk, sandbox.Exit) {
	t.Helper()
	var all []sandbox.Chunk
	for {
		cs, exit, err := p.Read(ctx, 0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cs...)
		if exit != nil {
			return all, *exit
		}
	}
}

func text(cs []sandbox.Chunk, s sandbox.Stream) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Stream == s {
			b.Write(c.Data)
		}
	}
	return b.String()
}

func TestProcs_OutputOrderAndExit(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{})
	defer tab.Close()
	p, err := tab.Start(ctx, sb, `echo one; echo two >&2; echo three; echo four >&2; exit 3`, sandbox.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, exit := drain(t, p)
	// Adjacent chunks of one stream are joined first: a line may come in
	// more than one (echo wrote "three" and its newline apart once in CI).
	var runs []sandbox.Chunk
	for _, c := range cs {
		if n := len(runs); n > 0 && runs[n-1].Stream == c.Stream {
			runs[n-1].Data = append(runs[n-1].Data, c.Data...)
			continue
		}
		runs = append(runs, sandbox.Chunk{Stream: c.Stream, Data: append([]byte(nil), c.Data...)})
	}
	var seq []string
	for _, c := range runs {
		for _, l := range strings.SplitAfter(string(c.Data), "\n") {
			if l != "" {
				seq = append(seq, fmt.Sprintf("%d:%s", c.Stream, strings.TrimSpace(l)))
			}
		}
	}
	if got := strings.Join(seq, " "); got != "1:one 2:two 1:three 2:four" {
		t.Errorf("interleaving = %q", got)
	}
	if exit.Code != 3 || exit.Signal != 0 {
		t.Errorf("exit = %+v", exit)
	}
	// The Read that returned the exit reaped the process.
	if _, err := tab.Get(p.ID); !errors.Is(err, sandbox.ErrNoProc) {
		t.Errorf("Get after reap: %v", err)
	}
}

func TestProcs_StdinStreamAndEOF(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{})
	defer tab.Close()
	p, err := tab.Start(ctx, sb, `while read -r l; do echo "got $l"; done; echo eof`, sandbox.StartOptions{KeepStdinOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(ctx, []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	// The first line's answer arrives while stdin is still open.
	var got string
	for !strings.Contains(got, "got a\n") {
		cs, exit, err := p.Read(ctx, 0, time.Minute)
		if err != nil || exit != nil {
			t.Fatalf("read: %v %v", err, exit)
		}
		got += text(cs, sandbox.Stdout)
	}
	if err := p.Write(ctx, []byte("b\n")); err != nil {
		t.Fatal(err)
	}
	p.CloseStdin()
	cs, exit := drain(t, p)
	got += text(cs, sandbox.Stdout)
	if got != "got a\ngot b\neof\n" || exit.Code != 0 {
		t.Errorf("got %q exit %+v", got, exit)
	}
	if err := p.Write(ctx, []byte("late")); err == nil {
		t.Error("write after the end succeeded")
	}
}

func TestProcs_KillAndWait(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{})
	defer tab.Close()
	p, err := tab.Start(ctx, sb, `echo started; sleep 3600; echo never`, sandbox.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// echo may arrive in more than one chunk: read until its line is whole.
	var first string
	for !strings.HasSuffix(first, "\n") {
		cs, exit, err := p.Read(ctx, 0, time.Minute)
		if err != nil || exit != nil {
			t.Fatalf("read = %v, exit %+v, after %q", err, exit, first)
		}
		first += text(cs, sandbox.Stdout)
	}
	if first != "started\n" {
		t.Fatalf("first output %q", first)
	}
	if l := tab.List(); len(l) != 1 || !l[0].Running || l[0].ID != p.ID {
		t.Errorf("List = %+v", l)
	}
	p.Kill(sandbox.SIGTERM)
	exit, err := p.Wait(ctx)
	if err != nil || exit.Code != 128+sandbox.SIGTERM || exit.Signal != sandbox.SIGTERM {
		t.Errorf("wait = %+v, %v", exit, err)
	}
	cs, e2 := drain(t, p)
	if text(cs, sandbox.Stdout) != "" || e2.Code != exit.Code {
		t.Errorf("after kill: %q %+v", text(cs, sandbox.Stdout), e2)
	}
}

func TestProcs_Timeout(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{})
	defer tab.Close()
	p, err := tab.Start(ctx, sb, `sleep 3600`, sandbox.StartOptions{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if exit, _ := p.Wait(ctx); exit.Signal != sandbox.SIGKILL || exit.Code != 137 {
		t.Errorf("exit = %+v", exit)
	}
}

// A caller that never reads: the script blocks on the buffered bytes
// (memory stays bounded) until it is killed.
func TestProcs_UnreadOutputIsBounded(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{MaxUnread: 4096})
	defer tab.Close()
	p, err := tab.Start(ctx, sb, `yes`, sandbox.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the buffer is full: a Read then returns at most the
	// limit, and the script is still running.
	var cs []sandbox.Chunk
	for n := 0; n < 4096; {
		cs, _, _ = p.Read(ctx, 4096-n, time.Minute)
		for _, c := range cs {
			n += len(c.Data)
		}
	}
	time.Sleep(20 * time.Millisecond) // give yes the chance to overfill (it must not)
	cs, exit, _ := p.Read(ctx, 0, 0)
	n := 0
	for _, c := range cs {
		n += len(c.Data)
	}
	if n > 4096 || exit != nil {
		t.Errorf("read %d bytes (limit 4096), exit %v", n, exit)
	}
	p.Kill(sandbox.SIGKILL)
	if exit, _ := p.Wait(ctx); exit.Code != 137 {
		t.Errorf("exit %+v", exit)
	}
}

func TestProcs_CapOnProcesses(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{MaxProcs: 3})
	var ps []*sandbox.Proc
	for i := 0; i < 3; i++ {
		p, err := tab.Start(ctx, sb, `sleep 3600`, sandbox.StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if _, err := tab.Start(ctx, sb, `echo x`, sandbox.StartOptions{}); !errors.Is(err, sandbox.ErrTooMany) {
		t.Fatalf("4th start: %v", err)
	}
	// Removing one frees a slot. Remove kills without waiting (Close
	// waits only for the processes still in the table): wait for it here.
	if err := tab.Remove(ps[0].ID); err != nil {
		t.Fatal(err)
	}
	<-ps[0].Done()
	if _, err := tab.Start(ctx, sb, `echo x`, sandbox.StartOptions{}); err != nil {
		t.Fatalf("start after remove: %v", err)
	}
	// Close stops every script.
	tab.Close()
	for _, p := range ps {
		select {
		case <-p.Done():
		default:
			t.Errorf("process %d still running after Close", p.ID)
		}
	}
	if _, err := tab.Start(ctx, sb, `echo x`, sandbox.StartOptions{}); err == nil {
		t.Error("start on a closed table succeeded")
	}
}

func TestProcs_ShellKeepsState(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{})
	defer tab.Close()
	sh, err := tab.OpenShell(sb, "/")
	if err != nil {
		t.Fatal(err)
	}
	runIn := func(script string) string {
		p, err := tab.Start(ctx, nil, script, sandbox.StartOptions{Shell: sh.ID})
		if err != nil {
			t.Fatal(err)
		}
		cs, _ := drain(t, p)
		return text(cs, sandbox.Stdout)
	}
	runIn(`mkdir -p /x; cd /x; export A=1; f() { echo "f:$1"; }; B=2`)
	if got := runIn(`pwd; echo $A$B; f z`); got != "/x\n12\nf:z\n" {
		t.Errorf("state = %q", got)
	}
	if sh.Dir() != "/x" {
		t.Errorf("Dir = %q", sh.Dir())
	}
	if err := tab.CloseShell(sh.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Start(ctx, nil, `pwd`, sandbox.StartOptions{Shell: sh.ID}); !errors.Is(err, sandbox.ErrNoProc) {
		t.Errorf("start in closed shell: %v", err)
	}
}

// Stream hands output over as it is written (the first line arrives while
// the script still waits on stdin), then the exit, and reaps.
func TestProcs_StreamDeliversAsWritten(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{})
	defer tab.Close()
	p, err := tab.Start(ctx, sb, `echo first; read -r x; echo "then $x"; exit 5`, sandbox.StartOptions{KeepStdinOpen: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	sent := false
	exit, err := p.Stream(ctx, func(cs []sandbox.Chunk) error {
		got = append(got, text(cs, sandbox.Stdout))
		if !sent && strings.Join(got, "") == "first\n" {
			// Only now does the script get its line: the first line
			// came before the script could end. (echo may write its
			// text and its newline apart: they can come as two chunks.)
			sent = true
			return p.Write(ctx, []byte("go\n"))
		}
		return nil
	})
	if err != nil || exit.Code != 5 || strings.Join(got, "") != "first\nthen go\n" || !sent {
		t.Fatalf("stream: %q exit %+v err %v (line sent: %v)", got, exit, err, sent)
	}
	if l := tab.List(); len(l) != 0 {
		t.Errorf("not reaped: %v", l)
	}
	// Its client learns of the end from the stream, after the table did:
	// stdin and kill by pid still answer as for an ended process.
	if q, err := tab.Get(p.ID); err != nil {
		t.Errorf("a process reaped by Stream is gone at once: %v", err)
	} else if err := q.Write(ctx, []byte("late\n")); !errors.Is(err, syscall.EPIPE) {
		t.Errorf("write to the ended process: %v, want EPIPE", err)
	}
}

// A streaming reader that goes away (its context ends, or sending fails)
// takes the process with it: an endless loop is killed, the entry records
// SIGKILL, and the table forgets it.
func TestProcs_StreamCancelKills(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	tab := sandbox.NewProcs(sandbox.ProcLimits{})
	defer tab.Close()
	for _, how := range []string{"context", "send"} {
		p, err := tab.Start(ctx, sb, `while :; do echo tick; done`, sandbox.StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithCancel(ctx)
		gone := errors.New("client gone")
		exit, err := p.Stream(sctx, func([]sandbox.Chunk) error {
			if how == "send" {
				return gone
			}
			cancel()
			return nil
		})
		cancel()
		want := error(context.Canceled)
		if how == "send" {
			want = gone
		}
		if !errors.Is(err, want) || exit.Signal != sandbox.SIGKILL || exit.Code != 128+sandbox.SIGKILL {
			t.Errorf("%s: exit %+v err %v", how, exit, err)
		}
		if info := p.Info(); info.Running || info.Exit.Signal != sandbox.SIGKILL {
			t.Errorf("%s: entry after the kill: %+v", how, info)
		}
		select {
		case <-p.Done():
		default:
			t.Errorf("%s: the script is still running", how)
		}
		if _, err := tab.Get(p.ID); !errors.Is(err, sandbox.ErrNoProc) {
			t.Errorf("%s: not reaped: %v", how, err)
		}
	}
}

//go:build unix

package overlay_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"

	"github.com/agentfs-go/agentfs/core/nfsserver"
	"github.com/agentfs-go/agentfs/core/overlay"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

// The in-process shell works on the overlay like on any agent: base files
// are visible, its changes land in the delta and show in the diff.
func TestOverlay_Sandbox(t *testing.T) {
	a, base := newOverlay(t, map[string]string{"src/a.go": "package a // TODO\n", "src/b.go": "package b\n", "old.log": "x"})
	sb, err := sandbox.New(a, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sb.Exec(ctx, "grep -rl TODO /src; echo new > /src/c.go; rm /old.log; mv /src/b.go /src/bb.go; ls /src", sandbox.ExecOptions{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Exec = %+v, %v", res, err)
	}
	if want := "/src/a.go\na.go\nbb.go\nc.go\n"; res.Stdout != want {
		t.Fatalf("stdout = %q, want %q", res.Stdout, want)
	}
	changes, err := overlay.Diff(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	got := diffLines(t, changes)
	want := []string{"D file /old.log", "D file /src/b.go", "A file /src/bb.go", "A file /src/c.go"}
	if len(got) != len(want) {
		t.Fatalf("diff = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("diff = %v, want %v", got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "old.log")); err != nil {
		t.Fatalf("the shell reached the host: %v", err)
	}
}

// The NFS server serves the overlay like any agent.
func TestOverlay_NFS(t *testing.T) {
	a, base := newOverlay(t, map[string]string{"docs/readme.md": "read me", "gone.txt": "x"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- nfsserver.Serve(sctx, ln, a) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	c, err := rpc.DialTCP("tcp", fmt.Sprintf("127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port), false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	target, err := (&nfs.Mount{Client: c}).Mount("/", rpc.AuthNull)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	r, err := target.Open("/docs/readme.md")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != "read me" {
		t.Fatalf("read over NFS = %q, %v", b, err)
	}
	w, err := target.OpenFile("/docs/new.md", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("written over NFS")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := target.Remove("/gone.txt"); err != nil {
		t.Fatal(err)
	}
	changes, err := overlay.Diff(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	got := diffLines(t, changes)
	if len(got) != 2 || got[0] != "A file /docs/new.md" || got[1] != "D file /gone.txt" {
		t.Fatalf("diff = %v", got)
	}
	if _, err := os.Stat(filepath.Join(base, "gone.txt")); err != nil {
		t.Fatalf("NFS reached the host: %v", err)
	}
}

package rpc_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/rpc"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// TestAttack_Atomic_HandleOfDroppedConnection: a client that streams a
// file through an OAtomic handle and disconnects before closing it
// leaves the old content: the session discards the handle.
func TestAttack_Atomic_HandleOfDroppedConnection(t *testing.T) {
	ctx := context.Background()
	a, err := core.Open(ctx, filepath.Join(t.TempDir(), "a.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	old := bytes.Repeat([]byte("old "), 1<<18)
	if err := a.FS.WriteFile(ctx, "/f", old, vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &rpc.Service{}
	for _, closed := range []bool{false, true} {
		sess := rpc.NewSession(a, "t", nil)
		sctx := rpc.WithSession(ctx, sess)
		o, err := svc.Open(sctx, &v1.OpenRequest{Path: "/f", Flags: uint32(os.O_WRONLY | os.O_CREATE | os.O_TRUNC | vfs.OAtomic)})
		if err != nil {
			t.Fatal(err)
		}
		piece := bytes.Repeat([]byte("new!"), 1<<18) // 1 MiB
		for i := int64(0); i < 6; i++ {
			if _, err := svc.Pwrite(sctx, &v1.PwriteRequest{Handle: o.Handle, Offset: i << 20, Data: piece}); err != nil {
				t.Fatal(err)
			}
		}
		if closed {
			if _, err := svc.Close(sctx, &v1.CloseRequest{Handle: o.Handle}); err != nil {
				t.Fatal(err)
			}
		} else {
			sess.CloseHandles() // the connection ended
		}
		got, err := a.FS.ReadFile(ctx, "/f")
		if err != nil {
			t.Fatal(err)
		}
		want := old
		if closed {
			want = bytes.Repeat(piece, 6)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("closed=%v: /f has %d bytes starting %q; want %d bytes", closed, len(got), got[:8], len(want))
		}
	}
}

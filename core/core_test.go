package core_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func TestOpen_CreateWriteRead(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "a.db")
	a, err := core.Open(ctx, p, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.FS.WriteFile(ctx, "/x/y.txt", []byte("hello"), vfs.WriteOptions{CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	got, err := a.FS.ReadFile(ctx, "/x/y.txt")
	if err != nil || string(got) != "hello" {
		t.Fatalf("ReadFile = %q, %v; want hello", got, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a, err = core.Open(ctx, p, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	got, err = a.FS.ReadFile(ctx, "/x/y.txt")
	if err != nil || string(got) != "hello" {
		t.Fatalf("after reopen ReadFile = %q, %v; want hello", got, err)
	}
}

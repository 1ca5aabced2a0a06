package vfs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// A cancelled context reaches the database: the operation fails with the
// context's error and changes nothing; the next call with a live context
// works.
func TestContext_CancelledOperation(t *testing.T) {
	f := newFS(t)
	live := t.Context()
	if err := f.WriteFile(live, "/keep", []byte("old"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(live)
	cancel()
	if err := f.WriteFile(done, "/keep", []byte("new"), vfs.WriteOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteFile with a cancelled context = %v", err)
	}
	if err := f.MkdirAll(done, "/a/b/c", 0o755); !errors.Is(err, context.Canceled) {
		t.Errorf("MkdirAll with a cancelled context = %v", err)
	}
	if _, err := f.ReadFile(done, "/keep"); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadFile with a cancelled context = %v", err)
	}
	if got, err := f.ReadFile(live, "/keep"); err != nil || string(got) != "old" {
		t.Errorf("content after the cancelled write = %q, %v; want old", got, err)
	}
	if ok, err := f.Exists(live, "/a"); err != nil || ok {
		t.Errorf("/a after the cancelled MkdirAll: exists %v, %v", ok, err)
	}
}

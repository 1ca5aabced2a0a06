//go:build !js

package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/store"
)

// A partially synced database (PATH-sync-missing beside it) opened by a
// program without the sync client is refused: its absent pages would
// read as zeros.
func TestOpen_PartialWithoutSyncClient(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "a.db")
	db, err := store.Open(ctx, p, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.WriteFile(p+"-sync-missing", []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(ctx, p, store.Options{}); err == nil || !strings.Contains(err.Error(), "ENOTSUP") {
		t.Fatalf("open: %v", err)
	}
}

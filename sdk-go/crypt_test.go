//go:build !js

package agentfs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
)

// The Go SDK opens encrypted databases through Options.Engine.Encryption.
func TestCrypt_SDKOption(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "a.db")
	enc := &store.Encryption{Cipher: "aes256gcm", Key: bytes.Repeat([]byte{3}, 32)}
	a, err := agentfs.Open(ctx, agentfs.Options{Path: p, Engine: core.Options{Encryption: enc}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.FS().WriteFile(ctx, "/s", []byte("MARKER-SDK-GO"), agentfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("MARKER-SDK-GO")) {
		t.Fatal("plaintext in the database file")
	}
	if _, err := agentfs.Open(ctx, agentfs.Options{Path: p}); !errors.Is(err, store.ErrNeedKey) {
		t.Fatalf("open without the key: %v, want ErrNeedKey", err)
	}
	a, err = agentfs.Open(ctx, agentfs.Options{Path: p, Engine: core.Options{Encryption: enc}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got, err := a.FS().ReadFile(ctx, "/s"); err != nil || string(got) != "MARKER-SDK-GO" {
		t.Fatalf("read %q, %v", got, err)
	}
}

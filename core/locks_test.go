//go:build cgo

package core_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	agentsync "github.com/agentfs-go/agentfs/core/sync"
	"github.com/agentfs-go/agentfs/core/sync/synctest"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// An agent open in this process keeps its database's locks whatever else
// this process does with the file. SQLite's locks are POSIX locks, which
// closing any descriptor of the file in the process releases; the engine
// read the file's header with os.Open and Close on every open (is it
// encrypted?) and before every sync. With its locks gone, a second process
// that closed the database took itself for the last connection: it
// checkpointed and deleted the WAL under the agent, whose next commits
// went to the deleted file while the other process started a new one.
//
// Each case does one such thing beside an open agent, then a child
// process opens the database, writes and closes it: the WAL must still be
// there, and every write of both processes must be in the database.
func TestLocks_KeptBesideOtherOpensOfTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	ctx := context.Background()
	base := synctest.Start(t, nil)
	key := &store.Encryption{Cipher: "aes256gcm", Key: bytes.Repeat([]byte{7}, 32)}

	cases := []struct {
		name string
		enc  *store.Encryption
		sync bool
		// beside runs with the agent open at p.
		beside func(t *testing.T, p string, enc *store.Encryption)
	}{
		{name: "second open", beside: openAndClose},
		{name: "second open, encrypted", enc: key, beside: openAndClose},
		{name: "sync push", sync: true, beside: push},
		{name: "sync push, encrypted", enc: key, sync: true, beside: push},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "a.db")
			opts := core.Options{Create: true, Encryption: c.enc}
			if c.sync {
				if err := agentsync.Prepare(ctx, p, fmt.Sprintf("%s/locks-%d", base, i), agentsync.Options{}, opts); err != nil {
					t.Fatal(err)
				}
				opts.Create = false
			}
			a, err := core.Open(ctx, p, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			write := func(name string) {
				t.Helper()
				if err := a.FS.WriteFile(ctx, name, []byte(name), vfs.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			write("/before")
			c.beside(t, p, c.enc)
			write("/between")

			if c.enc != nil {
				t.Setenv(envHelperKey, hex.EncodeToString(c.enc.Key))
			}
			startHelper(t, "touch", p, 1, 0).wait(t, "the other process", 2*time.Minute)
			if _, err := os.Stat(p + "-wal"); err != nil {
				t.Errorf("the WAL of the open agent is gone after the other process closed the database: %v", err)
			}
			write("/after")
			startHelper(t, "touch", p, 2, 0).wait(t, "the other process, again", 2*time.Minute)
			write("/last")
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}

			b, err := core.Open(ctx, p, core.Options{Encryption: c.enc})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			for _, name := range []string{"/before", "/between", "/touch-1", "/after", "/touch-2", "/last"} {
				if _, err := b.FS.ReadFile(ctx, name); err != nil {
					t.Errorf("%s is lost: %v", name, err)
				}
			}
			if r, err := b.Fsck(ctx, false); err != nil || !r.Clean() {
				t.Errorf("fsck: %v %+v", err, r)
			}
		})
	}
}

// openAndClose opens the agent a second time in this process and closes
// that handle.
func openAndClose(t *testing.T, p string, enc *store.Encryption) {
	t.Helper()
	a, err := core.Open(context.Background(), p, core.Options{Encryption: enc})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// push pushes the agent's changes to the sync server.
func push(t *testing.T, p string, enc *store.Encryption) {
	t.Helper()
	if _, err := agentsync.Push(context.Background(), p, agentsync.Options{Encryption: enc}); err != nil {
		t.Fatal(err)
	}
}

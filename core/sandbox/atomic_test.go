package sandbox_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// oldRedirect is the content a stopped "cmd > f" must leave.
var oldRedirect = bytes.Repeat([]byte("old content\n"), 100_000)

func nameless(t *testing.T, a *core.Agent) int64 {
	t.Helper()
	var n int64
	err := a.DB.Do(ctx, func(c *store.Conn) error {
		return c.QueryRow(`SELECT COUNT(*) FROM fs_inode i WHERE i.ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino)`).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func wantOldRedirect(t *testing.T, a *core.Agent, what string) {
	t.Helper()
	got, err := a.FS.ReadFile(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, oldRedirect) {
		t.Errorf("%s: /f has %d bytes (starts %q), want the old %d bytes: a stopped redirection left a mix", what, len(got), got[:min(len(got), 20)], len(oldRedirect))
	}
	if n := nameless(t, a); n != 0 {
		t.Errorf("%s: %d nameless inodes left (staging not discarded)", what, n)
	}
	rep, err := a.Fsck(ctx, false)
	if err != nil || !rep.Clean() {
		t.Errorf("%s: fsck %+v, %v", what, rep, err)
	}
}

// TestAttack_Atomic_RedirectStoppedByLimitKeepsOld: a script stopped by
// the filesystem-write limit after several MiB went to "> /f" leaves /f
// as it was.
func TestAttack_Atomic_RedirectStoppedByLimitKeepsOld(t *testing.T) {
	lim := sandbox.Normal
	lim.MaxFSWriteBytes = 12 << 20 // past the first staged batches
	a, sb := newSandbox(t, sandbox.Options{Limits: lim})
	if err := a.FS.WriteFile(ctx, "/f", oldRedirect, vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := sb.Exec(ctx, "seq 1 100000000 > /f", sandbox.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Limit == nil || res.Limit.Limit != "filesystem writes" {
		t.Fatalf("Exec = exit %d, limit %v; want the filesystem-write limit", res.ExitCode, res.Limit)
	}
	wantOldRedirect(t, a, "after the write limit")
}

// TestAttack_Atomic_RedirectCancelledKeepsOld: a script whose caller
// cancels it while it writes "> /f" leaves /f as it was.
func TestAttack_Atomic_RedirectCancelledKeepsOld(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	if err := a.FS.WriteFile(ctx, "/f", oldRedirect, vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	// Cancelled once the script has written 6 MiB (a staged batch and
	// more) to its stdout pipe... which is /f: watch the staging inode.
	go func() {
		for cctx.Err() == nil {
			var size int64
			_ = a.DB.Do(ctx, func(c *store.Conn) error {
				return c.QueryRow(`SELECT COALESCE(MAX(size), 0) FROM fs_inode i WHERE NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino) AND i.ino <> 1`).Scan(&size)
			})
			if size >= 4<<20 {
				cancel()
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	_, err := sb.Exec(cctx, "seq 1 1000000000 > /f", sandbox.ExecOptions{})
	cancel()
	if err == nil {
		t.Fatalf("Exec of a cancelled script returned no error")
	}
	wantOldRedirect(t, a, "after cancel")
}

// TestAtomic_RedirectWrites: a redirection that completes writes the
// whole output (several staged batches), keeps the mode of a replaced
// file, and "exec > f" is committed at the end of the script.
func TestAtomic_RedirectWrites(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	if err := a.FS.WriteFile(ctx, "/f", oldRedirect, vfs.WriteOptions{Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	res := run(t, sb, "seq 1 2000000 > /f; echo ok; exec > /g; echo one; echo two")
	if res.ExitCode != 0 || res.Stdout != "ok\n" {
		t.Fatalf("Exec = %d, %q, %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	var want strings.Builder
	for i := 1; i <= 2000000; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	got, err := a.FS.ReadFile(ctx, "/f")
	if err != nil || string(got) != want.String() {
		t.Errorf("/f: %d bytes, %v; want %d bytes of seq", len(got), err, want.Len())
	}
	if st, _ := a.FS.Stat(ctx, "/f"); st.Perm() != 0o600 {
		t.Errorf("/f mode %o after the redirection, want 0600 kept", st.Perm())
	}
	if g, err := a.FS.ReadFile(ctx, "/g"); err != nil || string(g) != "one\ntwo\n" {
		t.Errorf("/g = %q, %v", g, err)
	}
	if n := nameless(t, a); n != 0 {
		t.Errorf("%d nameless inodes left", n)
	}
	// Errors of open(2) stay those of a redirection.
	res = run(t, sb, "echo x > /data; echo x > /nodir/f")
	if !strings.Contains(res.Stderr, "Is a directory") || !strings.Contains(res.Stderr, "No such file or directory") {
		t.Errorf("stderr = %q", res.Stderr)
	}
}

//go:build cgo

package cmd

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/httpguard"
	"github.com/agentfs-go/agentfs/core/sync/synctest"
)

func syncServer(t *testing.T, token string) string {
	t.Helper()
	return synctest.Start(t, func(h http.Handler) http.Handler { return httpguard.Wrap(h, httpguard.Options{Token: token}) })
}

func TestSyncInitPushPull(t *testing.T) {
	url := syncServer(t, "tok")
	t.Setenv("TURSO_DB_AUTH_TOKEN", "tok")
	a, b := t.TempDir(), t.TempDir()
	t.Chdir(a)
	mustRun(t, "init", "w", "--sync-remote-url", url+"/w")
	mustRun(t, "fs", "w", "write", "/hello.txt", "hi there")
	mustRun(t, "kv", "w", "set", "k", `{"n":1}`)
	mustRun(t, "sync", "w", "push")
	if out := mustRun(t, "sync", "w", "stats"); !strings.Contains(out, `"cdc_operations":0`) || !strings.Contains(out, `"revision":"`) {
		t.Errorf("stats after push: %s", out)
	}
	t.Chdir(b)
	mustRun(t, "init", "w", "--sync-remote-url", url+"/w")
	checkOut(t, "cat", mustRun(t, "fs", "w", "cat", "/hello.txt"), "hi there")
	mustRun(t, "fs", "w", "write", "/back.txt", "from b")
	mustRun(t, "sync", "w", "push")
	mustRun(t, "sync", "w", "checkpoint")
	t.Chdir(a)
	mustRun(t, "sync", "w", "pull")
	checkOut(t, "cat", mustRun(t, "fs", "w", "cat", "/back.txt"), "from b")
	if out := mustRun(t, "fsck", "w"); !strings.Contains(out, "clean") {
		t.Errorf("fsck: %s", out)
	}
}

func TestSyncErrors(t *testing.T) {
	url := syncServer(t, "tok")
	t.Chdir(t.TempDir())
	t.Setenv("TURSO_DB_AUTH_TOKEN", "wrong")
	wantFail(t, 1, []string{"init", "w", "--sync-remote-url", url + "/w"}, "EACCES", "TURSO_DB_AUTH_TOKEN")
	if _, err := os.Stat(filepath.Join(".agentfs", "w.db")); err == nil {
		t.Error("a refused bootstrap left a database")
	}
	wantFail(t, 1, []string{"init", "w", "--sync-remote-url", url + "/w", "--sync-partial-prefetch"}, "needs a bootstrap", "--sync-partial-bootstrap-length")
	wantFail(t, 1, []string{"init", "w", "--sync-remote-url", url + "/w", "--sync-partial-bootstrap-length", "4096", "--sync-partial-bootstrap-query", "SELECT 1"}, "exclude each other", "EINVAL")
	wantFail(t, 2, []string{"serve", "sync", "--data", "d", "--history-mb", "0"}, "--history-mb")
	mustRun(t, "init", "plain")
	wantFail(t, 1, []string{"sync", "plain", "pull"}, "not set up for sync", "--sync-remote-url")
	wantFail(t, 2, []string{"sync", "plain", "merge"}, "unknown sync operation")
}

func TestServeSyncNeedsTokenOffLoopback(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("AGENTFS_TOKEN", "")
	wantFail(t, 2, []string{"serve", "sync", "--data", "d", "--listen", "0.0.0.0:0"}, "needs a token", "AGENTFS_TOKEN")
	wantFail(t, 2, []string{"serve", "sync", "--listen", "127.0.0.1:0"}, "--data")
}

// init --sync-remote-url and sync with encrypted local databases (a key
// per machine): the contents travel, no local file holds the plaintext,
// and a missing or wrong key is refused with the key's hint, nothing sent.
func TestSyncEncryptedCLI(t *testing.T) {
	url := syncServer(t, "tok")
	t.Setenv("TURSO_DB_AUTH_TOKEN", "tok")
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "k"), []byte(strings.Repeat("1f", 32)), 0o600)
	os.WriteFile(filepath.Join(b, "k"), []byte(strings.Repeat("2e", 16)), 0o600)
	t.Chdir(a)
	mustRun(t, "--key-file", "k", "init", "w", "--sync-remote-url", url+"/w")
	mustRun(t, "--key-file", "k", "fs", "w", "write", "/s.txt", "MARKER-CLI-SYNC-CRYPT")
	wantFail(t, 1, []string{"sync", "w", "push"}, "is encrypted", "--key-file")
	mustRun(t, "--key-file", "k", "sync", "w", "push")
	t.Chdir(b)
	mustRun(t, "--key-file", "k", "--cipher", "aes128gcm", "init", "w", "--sync-remote-url", url+"/w")
	checkOut(t, "cat", mustRun(t, "--key-file", "k", "fs", "w", "cat", "/s.txt"), "MARKER-CLI-SYNC-CRYPT")
	wantFail(t, 1, []string{"--key-file", "../" + filepath.Base(a) + "/k", "sync", "w", "pull"}, "")
	for _, dir := range []string{a, b} {
		files, _ := filepath.Glob(filepath.Join(dir, ".agentfs", "w.db*"))
		if len(files) < 3 {
			t.Fatalf("%s: %v", dir, files)
		}
		for _, f := range files {
			if data, _ := os.ReadFile(f); strings.Contains(string(data), "MARKER-CLI-SYNC-CRYPT") {
				t.Errorf("%s holds the plaintext", f)
			}
		}
	}
}

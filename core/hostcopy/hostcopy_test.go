//go:build linux

package hostcopy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/hostcopy"
)

// A host tree imported into an agent and exported again comes back with
// the same content, modes, symlinks and modification times; the agent's
// own database and special files are skipped with a warning.
func TestImportExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a, err := core.Open(context.Background(), filepath.Join(dir, "a.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	src := filepath.Join(dir, "src")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "sub"), 0o750))
	must(os.WriteFile(filepath.Join(src, "sub", "f.txt"), []byte("hello"), 0o640))
	must(os.WriteFile(filepath.Join(src, "big.bin"), make([]byte, 5<<20), 0o600)) // streamed
	must(os.Symlink("sub/f.txt", filepath.Join(src, "link")))
	must(syscall.Mkfifo(filepath.Join(src, "fifo"), 0o600))
	old := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	must(os.Chtimes(filepath.Join(src, "sub", "f.txt"), old, old))

	var warnings []string
	opts := hostcopy.Options{DBPath: a.Path(), Warn: func(m string) { warnings = append(warnings, m) }}
	st, err := hostcopy.Import(t.Context(), a.FS, src, "/in", opts)
	must(err)
	if st.Files != 2 || st.Dirs != 1 || st.Symlinks != 1 || st.Bytes != 5<<20+5 {
		t.Errorf("import stats %+v", st)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "fifo") {
		t.Errorf("warnings %q, want one for the fifo", warnings)
	}

	out := filepath.Join(dir, "out")
	_, err = hostcopy.Export(t.Context(), a.FS, "/in", out, opts)
	must(err)
	b, err := os.ReadFile(filepath.Join(out, "sub", "f.txt"))
	if err != nil || string(b) != "hello" {
		t.Fatalf("exported f.txt = %q, %v", b, err)
	}
	fi, err := os.Stat(filepath.Join(out, "sub", "f.txt"))
	must(err)
	if fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(old) {
		t.Errorf("exported f.txt mode %v mtime %v, want 0640 %v", fi.Mode(), fi.ModTime(), old)
	}
	if fi, err := os.Stat(filepath.Join(out, "sub")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("exported sub: %v %v, want 0750", fi.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(out, "link")); err != nil || target != "sub/f.txt" {
		t.Errorf("exported link -> %q, %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(out, "big.bin")); err != nil || fi.Size() != 5<<20 {
		t.Errorf("exported big.bin: %v", err)
	}
	// The database is never an export's target.
	if _, err := hostcopy.Export(t.Context(), a.FS, "/in/sub/f.txt", a.Path(), opts); err == nil || !strings.Contains(err.Error(), "agent database") {
		t.Errorf("export onto the database: %v, want a refusal", err)
	}
	// Host failures read as the host's.
	if _, err := hostcopy.Import(t.Context(), a.FS, filepath.Join(dir, "missing"), "/x", opts); err == nil || !strings.HasPrefix(err.Error(), "host: ") {
		t.Errorf("import of a missing host dir: %v, want a host: error", err)
	}
}

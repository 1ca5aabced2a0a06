package vfs_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

var ctx = context.Background()

// openAgent opens a fresh engine in a temporary directory.
func openAgent(t testing.TB) *core.Agent {
	t.Helper()
	return openAgentAt(t, filepath.Join(tempDir(t), "a.db"))
}

// tempDir is t.TempDir without "#" in the path. t.TempDir names the
// directory after the test, and subtests with equal names (fuzz seeds are
// "seed#1", "seed#2"...) get a "#"; the store passes the path to SQLite as
// a "file:" URI unescaped, where "#" starts a fragment, so two databases
// would silently share one file (reported; core/store is not ours).
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "vfs-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// openAgentAt opens (creating) the engine at path; it is closed at the
// end of the test.
func openAgentAt(t testing.TB, path string) *core.Agent {
	t.Helper()
	a, err := core.Open(ctx, path, core.Options{Create: true})
	if err != nil {
		t.Fatalf("core.Open(%q) = %v", path, err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// newFS is openAgent(t).FS.
func newFS(t testing.TB) *vfs.FS {
	t.Helper()
	return openAgent(t).FS
}

// errnoName renders an errno for messages: "ENOENT", or "ok" for 0.
func errnoName(e syscall.Errno) string {
	if e == 0 {
		return "ok"
	}
	for name, v := range errnoNames {
		if v == e {
			return name
		}
	}
	return e.Error()
}

var errnoNames = map[string]syscall.Errno{
	"EPERM": syscall.EPERM, "ENOENT": syscall.ENOENT, "EIO": syscall.EIO, "EBADF": syscall.EBADF,
	"EEXIST": syscall.EEXIST, "ENOTDIR": syscall.ENOTDIR, "EISDIR": syscall.EISDIR, "EINVAL": syscall.EINVAL,
	"ENOTEMPTY": syscall.ENOTEMPTY, "EBUSY": syscall.EBUSY, "ELOOP": syscall.ELOOP, "ENAMETOOLONG": syscall.ENAMETOOLONG,
	"ENODATA": syscall.ENODATA, "E2BIG": syscall.E2BIG, "ERANGE": syscall.ERANGE, "ESTALE": syscall.ESTALE,
	"EXDEV": syscall.EXDEV,
}

// wantErrno fails unless err carries errno want (0: err must be nil). Every
// error the engine returns for a filesystem condition must be a
// *fs.PathError wrapping a syscall.Errno.
func wantErrno(t testing.TB, what string, err error, want syscall.Errno) {
	t.Helper()
	got := vfs.Errno(err)
	if err != nil && got == 0 {
		t.Errorf("%s: got non-errno error %v, want %s", what, err, errnoName(want))
		return
	}
	if got != want {
		t.Errorf("%s: got %s (%v), want %s", what, errnoName(got), err, errnoName(want))
	}
}

// must fails the test at once on an error.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, f *vfs.FS, path, content string) {
	t.Helper()
	if err := f.WriteFile(ctx, path, []byte(content), vfs.WriteOptions{CreateParents: true}); err != nil {
		t.Fatalf("WriteFile(%q): %v", path, err)
	}
}

func readFile(t testing.TB, f *vfs.FS, path string) string {
	t.Helper()
	b, err := f.ReadFile(ctx, path)
	if err != nil {
		t.Fatalf("ReadFile(%q): %v", path, err)
	}
	return string(b)
}

func wantContent(t testing.TB, f *vfs.FS, path, want string) {
	t.Helper()
	b, err := f.ReadFile(ctx, path)
	if err != nil {
		t.Errorf("ReadFile(%q): %v", path, err)
		return
	}
	if got := string(b); got != want {
		t.Errorf("ReadFile(%q) = %s, want %s", path, short(got), short(want))
	}
}

// short abbreviates long contents in messages.
func short(s string) string {
	if len(s) <= 64 {
		return strings.ReplaceAll(strings.ReplaceAll(s, "\x00", `\0`), "\n", `\n`)
	}
	return short(s[:32]) + "..." + short(s[len(s)-16:]) + " (" + itoa(len(s)) + " bytes)"
}

func itoa(n int) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func lstat(t testing.TB, f *vfs.FS, path string) vfs.Stat {
	t.Helper()
	st, err := f.Lstat(ctx, path)
	if err != nil {
		t.Fatalf("Lstat(%q): %v", path, err)
	}
	return st
}

func readdir(t testing.TB, f *vfs.FS, path string) []string {
	t.Helper()
	names, err := f.Readdir(ctx, path)
	if err != nil {
		t.Fatalf("Readdir(%q): %v", path, err)
	}
	return names
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// queryInt runs a one-value SQL query on the engine's database.
func queryInt(t testing.TB, a *core.Agent, q string, args ...any) int64 {
	t.Helper()
	var n int64
	err := a.DB.Do(ctx, func(c *store.Conn) error { return c.QueryRow(q, args...).Scan(&n) })
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// pattern returns n bytes of a non-repeating-looking pattern starting at
// a given seed, so misplaced chunks are detected.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}

func wantBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := firstDiff(got, want)
		t.Errorf("%s: got %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
	}
}

// checkIntegrity verifies the invariants of the tables when no file is
// open: every inode but the root has exactly nlink directory entries,
// entries point to existing inodes inside directories, data rows belong to
// regular files and hold no byte beyond the size, symlink rows belong to
// symlinks, attributes to existing inodes.
func checkIntegrity(t testing.TB, a *core.Agent) {
	t.Helper()
	cs := int64(a.FS.ChunkSize())
	for _, c := range []struct{ what, q string }{
		{"inodes whose nlink differs from their entries", `SELECT COUNT(*) FROM fs_inode i WHERE i.ino != 1 AND
			i.nlink != (SELECT COUNT(*) FROM fs_dentry d WHERE d.ino = i.ino)`},
		{"inodes without entries", `SELECT COUNT(*) FROM fs_inode i WHERE i.ino != 1 AND
			NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino)`},
		{"entries to missing inodes", `SELECT COUNT(*) FROM fs_dentry d WHERE NOT EXISTS (SELECT 1 FROM fs_inode i WHERE i.ino = d.ino)`},
		{"entries in non-directories", `SELECT COUNT(*) FROM fs_dentry d LEFT JOIN fs_inode p ON p.ino = d.parent_ino
			WHERE p.ino IS NULL OR (p.mode & 61440) != 16384`},
		{"directories with several entries", `SELECT COUNT(*) FROM (SELECT d.ino FROM fs_dentry d JOIN fs_inode i ON i.ino = d.ino
			WHERE (i.mode & 61440) = 16384 GROUP BY d.ino HAVING COUNT(*) > 1)`},
		{"data rows of missing or non-regular inodes", `SELECT COUNT(*) FROM fs_data x LEFT JOIN fs_inode i ON i.ino = x.ino
			WHERE i.ino IS NULL OR (i.mode & 61440) != 32768`},
		{"data bytes beyond the size", `SELECT COUNT(*) FROM fs_data x JOIN fs_inode i ON i.ino = x.ino
			WHERE x.chunk_index * ?1 + length(x.data) > i.size`},
		{"chunks longer than the chunk size", `SELECT COUNT(*) FROM fs_data WHERE length(data) > ?1`},
		{"short chunks that are not the file's last", `SELECT COUNT(*) FROM fs_data x JOIN fs_inode i ON i.ino = x.ino
			WHERE length(x.data) < ?1 AND x.chunk_index < (i.size - 1) / ?1`},
		{"symlink rows of non-symlinks", `SELECT COUNT(*) FROM fs_symlink s LEFT JOIN fs_inode i ON i.ino = s.ino
			WHERE i.ino IS NULL OR (i.mode & 61440) != 40960`},
		{"symlinks without a target", `SELECT COUNT(*) FROM fs_inode i WHERE (i.mode & 61440) = 40960
			AND NOT EXISTS (SELECT 1 FROM fs_symlink s WHERE s.ino = i.ino)`},
		{"attributes of missing inodes", `SELECT COUNT(*) FROM fs_xattr x WHERE NOT EXISTS (SELECT 1 FROM fs_inode i WHERE i.ino = x.ino)`},
	} {
		var args []any // only to the queries that take the chunk size (drivers refuse extra arguments)
		if strings.Contains(c.q, "?1") {
			args = append(args, cs)
		}
		if n := queryInt(t, a, c.q, args...); n != 0 {
			t.Errorf("integrity: %d %s", n, c.what)
		}
	}
	// And the engine's own checker must agree.
	rep, err := a.Fsck(ctx, false)
	if err != nil {
		t.Fatalf("fsck: %v", err)
	}
	for _, p := range rep.Problems {
		t.Errorf("fsck: %s: %s", p.Rule, p.Detail)
	}
}

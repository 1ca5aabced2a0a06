package cmd

import (
	"crypto/rand"
	"github.com/agentfs-go/agentfs/core/hostcopy"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// smallFile is hostcopy's threshold: larger host files are streamed
// through a staging inode, smaller ones written in one transaction.
const smallFile = 4 << 20

func writeHostFile(t *testing.T, p, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // not subject to the umask
		t.Fatal(err)
	}
}

// hostEntry is what the round trip must keep of a host file.
type hostEntry struct {
	mode   fs.FileMode
	mtime  time.Time
	data   string // content, or symlink target
	isLink bool
}

func snapshotHost(t *testing.T, root string) map[string]hostEntry {
	t.Helper()
	out := map[string]hostEntry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := hostEntry{mode: fi.Mode(), mtime: fi.ModTime()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			e.isLink = true
			e.data, err = os.Readlink(p)
		case fi.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			e.data = string(b)
		}
		out[rel] = e
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportExportRoundTrip(t *testing.T) {
	newAgent(t)
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "sub", "private"), 0o755))
	writeHostFile(t, filepath.Join(src, "readme.md"), "# hello\n", 0o644)
	writeHostFile(t, filepath.Join(src, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	writeHostFile(t, filepath.Join(src, "sub", "secret.txt"), "s3cret", 0o600)
	writeHostFile(t, filepath.Join(src, "sub", "empty"), "", 0o640)
	big := make([]byte, smallFile+3*4096+17) // streamed through a staging inode
	rand.Read(big)
	writeHostFile(t, filepath.Join(src, "sub", "big.bin"), string(big), 0o644)
	must(os.Symlink("../readme.md", filepath.Join(src, "sub", "link")))
	must(os.Chmod(filepath.Join(src, "sub", "private"), 0o700))

	// Distinct times with nanoseconds on everything, directories last.
	base := time.Date(2021, 3, 4, 5, 6, 7, 123456789, time.UTC)
	var paths []string
	filepath.WalkDir(src, func(p string, _ fs.DirEntry, _ error) error { paths = append(paths, p); return nil })
	sort.Sort(sort.Reverse(sort.StringSlice(paths)))
	for i, p := range paths {
		mt := base.Add(time.Duration(i)*time.Hour + time.Duration(i*1111))
		at := mt.Add(time.Minute)
		fi, err := os.Lstat(p)
		must(err)
		if fi.Mode()&fs.ModeSymlink != 0 {
			must(hostcopy.Lchtimes(p, at, mt))
		} else {
			must(os.Chtimes(p, at, mt))
		}
	}
	want := snapshotHost(t, src)

	out := mustRun(t, "fs", "t", "import", src, "/work")
	wantSummary := "imported 5 files, 2 dirs, 1 symlinks, " + strconv.Itoa(len("# hello\n")+len("#!/bin/sh\necho hi\n")+len("s3cret")+len(big)) + " bytes\n"
	checkOut(t, "import summary", out, wantSummary)
	checkOut(t, "imported tree", mustRun(t, "fs", "t", "ls", "-R", "/work"),
		lines("f readme.md", "f run.sh", "d sub", "f sub/big.bin", "f sub/empty", "l sub/link", "d sub/private", "f sub/secret.txt"))
	checkOut(t, "cat through the imported symlink", mustRun(t, "fs", "t", "cat", "/work/sub/link"), "# hello\n")
	if st := mustRun(t, "fs", "t", "stat", "/work/sub/secret.txt"); !strings.Contains(st, "(0600/-rw-------)") ||
		!strings.Contains(st, "Modify: "+want[filepath.Join("sub", "secret.txt")].mtime.Local().Format(statTime)) {
		t.Errorf("stat of an imported file:\n%s\nwant mode 0600 and the host mtime %v", st, want[filepath.Join("sub", "secret.txt")].mtime)
	}

	dst := filepath.Join(t.TempDir(), "out")
	out = mustRun(t, "fs", "t", "export", "/work", dst)
	checkOut(t, "export summary", out, strings.Replace(wantSummary, "imported", "exported", 1))
	got := snapshotHost(t, dst)
	if len(got) != len(want) {
		t.Errorf("exported %d entries, want %d", len(got), len(want))
	}
	for rel, w := range want {
		g, ok := got[rel]
		if !ok {
			t.Errorf("%s missing after the round trip", rel)
			continue
		}
		if g.mode != w.mode {
			t.Errorf("%s: mode %v, want %v", rel, g.mode, w.mode)
		}
		if g.data != w.data || g.isLink != w.isLink {
			t.Errorf("%s: content or link target differs (link %v/%v, %d/%d bytes)", rel, g.isLink, w.isLink, len(g.data), len(w.data))
		}
		if w.isLink && runtime.GOOS != "linux" {
			continue // symlink times are kept on Linux only
		}
		if !g.mtime.Equal(w.mtime) {
			t.Errorf("%s: mtime %v, want %v", rel, g.mtime, w.mtime)
		}
	}

	// Importing again replaces files and merges directories; a file
	// changed in the agent filesystem is overwritten from the host.
	mustRun(t, "fs", "t", "write", "/work/readme.md", "changed")
	mustRun(t, "fs", "t", "import", src, "/work")
	checkOut(t, "re-import", mustRun(t, "fs", "t", "cat", "/work/readme.md"), "# hello\n")

	// Exporting again over the same directory replaces what is there,
	// even read-only files, and never writes through a symlink.
	outside := filepath.Join(t.TempDir(), "outside")
	writeHostFile(t, outside, "untouched", 0o644)
	must(os.Remove(filepath.Join(dst, "readme.md")))
	must(os.Symlink(outside, filepath.Join(dst, "readme.md")))
	mustRun(t, "fs", "t", "export", "/work", dst)
	if b, _ := os.ReadFile(outside); string(b) != "untouched" {
		t.Errorf("export wrote through a symlink: outside file now %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "readme.md")); string(b) != "# hello\n" {
		t.Errorf("re-export: readme.md = %q", b)
	}

	// A single file exports into an existing directory.
	one := t.TempDir()
	mustRun(t, "fs", "t", "export", "/work/sub/secret.txt", one)
	if b, err := os.ReadFile(filepath.Join(one, "secret.txt")); err != nil || string(b) != "s3cret" {
		t.Errorf("export of one file: %q, %v", b, err)
	}
}

func TestImportSkipsDatabaseAndReportsHostErrors(t *testing.T) {
	newAgent(t)
	writeHostFile(t, "notes.txt", "n", 0o644)
	r := run(t, "", "fs", "t", "import", ".", "/self")
	if r.code != 0 {
		t.Fatalf("import .: exit %d: %s", r.code, r.err)
	}
	if !strings.Contains(r.err, "it is the agent database") {
		t.Errorf("import . stderr %q, want a warning about skipping the database", r.err)
	}
	checkOut(t, "import . summary", r.out, "imported 1 files, 1 dirs, 0 symlinks, 1 bytes\n")
	checkOut(t, "import . tree", mustRun(t, "fs", "t", "ls", "-R", "/self"), lines("d .agentfs", "f notes.txt"))

	r = wantFail(t, 1, []string{"fs", "t", "import", "no-such-dir"}, "host: stat no-such-dir: no such file or directory (ENOENT)")
	if strings.Contains(r.err, "Try:") {
		t.Errorf("a host error got a hint meant for agent paths: %q", r.err)
	}
	wantFail(t, 1, []string{"fs", "t", "export", "/nope", t.TempDir()}, "ENOENT")
}

package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newOverlayAgent moves into a fresh directory with a host directory
// "base" (files as given) and the overlay agent "o" above it.
func newOverlayAgent(t *testing.T, files map[string]string) string {
	t.Helper()
	t.Chdir(t.TempDir())
	for p, c := range files {
		full := filepath.Join("base", p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, "", "init", "o", "--base", "base")
	if r.code != 0 || !strings.Contains(r.err, "Overlay over ") {
		t.Fatalf("init --base: %+v", r)
	}
	base, _ := filepath.Abs("base")
	return base
}

func TestInitBase_Errors(t *testing.T) {
	t.Chdir(t.TempDir())
	wantFail(t, 1, []string{"init", "x", "--base", "missing"}, "base directory missing", "Try:")
	os.WriteFile("file", nil, 0o644)
	wantFail(t, 1, []string{"init", "x", "--base", "file"}, "ENOTDIR", "Try:")
	mustRun(t, "init", "plain")
	wantFail(t, 1, []string{"diff", "plain"}, "not an overlay", "Try: create one over a host directory")
	wantFail(t, 1, []string{"commit", "plain"}, "not an overlay")
}

func TestDiffCommitCommands(t *testing.T) {
	base := newOverlayAgent(t, map[string]string{"keep.txt": "k", "edit.txt": "old", "gone.txt": "g", "d/x": "x"})
	checkOut(t, "fs cat", mustRun(t, "fs", "o", "cat", "/edit.txt"), "old")
	checkOut(t, "diff (clean)", mustRun(t, "diff", "o"), "")
	mustRun(t, "fs", "o", "write", "/edit.txt", "new")
	mustRun(t, "fs", "o", "rm", "/gone.txt")
	mustRun(t, "fs", "o", "mv", "/d", "/e")
	mustRun(t, "fs", "o", "ln", "-s", "keep.txt", "/link")
	want := lines(
		"D dir     /d",
		"A dir     /e",
		"A file    /e/x",
		"M file    /edit.txt",
		"D file    /gone.txt",
		"A symlink /link",
	)
	checkOut(t, "diff", mustRun(t, "diff", "o"), want)
	var js []map[string]string
	if err := json.Unmarshal([]byte(mustRun(t, "diff", "o", "--json")), &js); err != nil || len(js) != 6 || js[3]["op"] != "M" || js[3]["type"] != "file" || js[3]["path"] != "/edit.txt" {
		t.Fatalf("diff --json = %v, %v", js, err)
	}
	// The host is untouched until commit.
	if b, _ := os.ReadFile(filepath.Join(base, "edit.txt")); string(b) != "old" {
		t.Fatalf("host edit.txt = %q before commit", b)
	}
	out := mustRun(t, "commit", "o", "--dry-run")
	if !strings.Contains(out, "dry run: 6 change(s) would be applied") {
		t.Fatalf("commit --dry-run = %q", out)
	}
	if _, err := os.Stat(filepath.Join(base, "gone.txt")); err != nil {
		t.Fatalf("dry run deleted gone.txt: %v", err)
	}
	out = mustRun(t, "commit", "o")
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "committed 6 change(s) to "+base) {
		t.Fatalf("commit = %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "edit.txt")); string(b) != "new" {
		t.Fatalf("host edit.txt = %q after commit", b)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "e", "x")); string(b) != "x" {
		t.Fatalf("host e/x = %q after commit", b)
	}
	for _, p := range []string{"gone.txt", "d"} {
		if _, err := os.Stat(filepath.Join(base, p)); !os.IsNotExist(err) {
			t.Fatalf("host %s still there: %v", p, err)
		}
	}
	checkOut(t, "diff after commit", mustRun(t, "diff", "o"), "")
	checkOut(t, "commit again", mustRun(t, "commit", "o"), "nothing to commit: the overlay matches "+base+"\n")
}

func TestCommit_ConflictNeedsForce(t *testing.T) {
	base := newOverlayAgent(t, map[string]string{"f.txt": "one"})
	mustRun(t, "fs", "o", "write", "/f.txt", "agent")
	if err := os.WriteFile(filepath.Join(base, "f.txt"), []byte("host edit, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := wantFail(t, 1, []string{"commit", "o"}, "nothing committed", "/f.txt", "ESTALE", "Try:", "--force")
	_ = r
	if b, _ := os.ReadFile(filepath.Join(base, "f.txt")); string(b) != "host edit, longer" {
		t.Fatalf("refused commit wrote f.txt: %q", b)
	}
	out := mustRun(t, "commit", "o", "--force")
	if !strings.Contains(out, "overwrote host changes (--force): /f.txt") {
		t.Fatalf("commit --force = %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "f.txt")); string(b) != "agent" {
		t.Fatalf("forced commit: f.txt = %q", b)
	}
}

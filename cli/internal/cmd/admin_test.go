package cmd

import (
	"strings"
	"testing"
)

func TestSnapshot_CreateListRestore(t *testing.T) {
	t.Chdir(t.TempDir())
	mustRun(t, "init", "snap")
	mustRun(t, "fs", "snap", "write", "/f.txt", "one")
	if out := mustRun(t, "snapshot", "snap", "create", "s1"); !strings.Contains(out, "Created snapshot s1") {
		t.Fatalf("create output = %q", out)
	}
	mustRun(t, "fs", "snap", "write", "/f.txt", "two")
	if out := mustRun(t, "snapshot", "snap", "list"); !strings.Contains(out, "s1") {
		t.Fatalf("list output = %q, want s1", out)
	}
	mustRun(t, "snapshot", "snap", "restore", "s1")
	if got := mustRun(t, "fs", "snap", "cat", "/f.txt"); got != "one" {
		t.Fatalf("after restore cat = %q, want one", got)
	}
	wantFail(t, 1, []string{"snapshot", "snap", "restore", "nope"}, "snapshot not found", "Try: agentfs snapshot snap list")
}

func TestFsck_CleanAndJSON(t *testing.T) {
	t.Chdir(t.TempDir())
	mustRun(t, "init", "chk")
	mustRun(t, "fs", "chk", "write", "/a/b.txt", "x")
	if out := mustRun(t, "fsck", "chk"); !strings.Contains(out, "clean") {
		t.Fatalf("fsck output = %q, want clean", out)
	}
	if out := mustRun(t, "fsck", "chk", "--json"); !strings.Contains(out, `"problems"`) {
		t.Fatalf("fsck --json output = %q", out)
	}
}

func TestMigrate_UpToDate(t *testing.T) {
	t.Chdir(t.TempDir())
	mustRun(t, "init", "m")
	if out := mustRun(t, "migrate", "m", "--dry-run"); !strings.Contains(out, "up to date") {
		t.Fatalf("migrate output = %q", out)
	}
}

func TestRoot_UnknownCommandIsUsageError(t *testing.T) {
	wantFail(t, 2, []string{"bogus"}, "unknown command", "Try: agentfs --help")
}

func TestInit_PageSize(t *testing.T) {
	t.Chdir(t.TempDir())
	mustRun(t, "init", "p", "--page-size", "8192")
	if out := mustRun(t, "query", "p", "SELECT page_size FROM pragma_page_size", "--format", "csv"); !strings.Contains(out, "8192") {
		t.Fatalf("page size query = %q, want 8192", out)
	}
	wantFail(t, 1, []string{"init", "q", "--page-size", "3000"}, "power of two")
}

func TestInit_ForceDropsSnapshots(t *testing.T) {
	t.Chdir(t.TempDir())
	mustRun(t, "init", "f")
	mustRun(t, "snapshot", "f", "create", "one")
	mustRun(t, "init", "f", "--force")
	if out := mustRun(t, "snapshot", "f", "list"); !strings.Contains(out, "No snapshots") {
		t.Fatalf("snapshots after init --force: %q", out)
	}
	mustRun(t, "snapshot", "f", "create", "one")
}

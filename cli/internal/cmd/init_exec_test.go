package cmd

import (
	"strings"
	"testing"
)

// TestInitCommand: "agentfs init ID -c CMD" creates the database, runs CMD
// in it through a FUSE mount, unmounts and passes CMD's exit status on.
func TestInitCommand(t *testing.T) {
	canMount(t)
	t.Chdir(t.TempDir())
	r := run(t, "", "init", "built", "-c", `mkdir -p src && echo "int main(){}" > src/main.c && test "$PWD" = "$AGENTFS_MOUNT" && echo done`)
	if r.code != 0 || r.out != "done\n" || !strings.Contains(r.err, "Created agent filesystem") {
		t.Fatalf("init -c: code %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	checkOut(t, "file written by CMD", mustRun(t, "fs", "built", "cat", "/src/main.c"), "int main(){}\n")
	r = run(t, "", "init", "failing", "-c", "echo partial > f; exit 7")
	if r.code != 7 {
		t.Fatalf("init -c with exit 7: code %d, stderr %q", r.code, r.err)
	}
	// The database stays, with what CMD wrote before failing.
	checkOut(t, "after a failing CMD", mustRun(t, "fs", "failing", "cat", "/f"), "partial\n")
	if out := mustRun(t, "mount"); strings.Contains(out, "agentfs-exec-") {
		t.Errorf("left mounted: %s", out)
	}
}

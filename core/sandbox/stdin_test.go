package sandbox_test

import (
	"testing"

	"github.com/agentfs-go/agentfs/core/sandbox"
)

// A file read through "< f" is fed to the command by a goroutine, which
// closed the file on its own time: often after Exec had returned (7 runs
// in 50), so the next operation on the agent raced that Close. Exec must
// return with no handle of its own still open.
func TestStdinRedirect_ClosedWhenExecReturns(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	scripts := []string{
		"cat < sub/c.md > /dev/null",
		"head -c 1 < sub/c.md",                   // stops reading early
		"sleep 10 < sub/c.md & echo started",     // a background job stopped with the Exec
		"while read l; do :; done < sub/c.md",    // a compound command's redirection
		"sort < sub/c.md | head -1 > /dev/null",  // in a pipeline
		"diff <(sort < sub/c.md) sub/c.md; true", // in a process substitution
	}
	for _, script := range scripts {
		for i := 0; i < 40; i++ {
			res := run(t, sb, script)
			if open := a.FS.OpenInodes(); len(open) > 0 {
				t.Fatalf("%q (run %d, exit %d, stderr %q): inodes %v still open after Exec returned", script, i, res.ExitCode, res.Stderr, open)
			}
		}
	}
}

package sandbox_test

import (
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/sandbox"
)

// An attack found "echo x | sed 'w /nodir/f'" panicking inside sed (a nil
// file closed at the end). GNU sed opens every w file before reading
// input and stops with status 4 when one cannot be opened.
func TestAttack_Parse_SedWriteMissingDir(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	for _, script := range []string{
		`echo x | sed "w /nodir/f"`,
		`echo x | sed "s/x/y/w /nodir/f"`,
		`echo x | sed -n "/z/w /nodir/f"`, // never written: opened anyway
		`printf 'a\nb\n' | sed -e "w /nodir/f" -e "w /nodir/f"`,
	} {
		res := run(t, sb, script)
		if res.ExitCode != 4 || strings.Contains(res.Stderr, "internal error") ||
			!strings.Contains(res.Stderr, "sed: couldn't open file /nodir/f: No such file or directory") || res.Stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 4 and ENOENT", script, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
}

// The w command and the s///w flag write to the agent filesystem through
// the sandbox: the policy decides, the file is truncated at start, and a
// host file of the same name is never touched.
func TestAttack_Parse_SedWriteThroughSandbox(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{Policy: sandbox.Policy{Writable: []string{"/data/sub"}}})
	res := run(t, sb, `printf 'a\nb\n' > sub/w.txt; printf 'x\ny\n' | sed -n -e '/x/w sub/w.txt' -e 's/y/Y/w sub/w.txt'; cat sub/w.txt`)
	if res.ExitCode != 0 || res.Stdout != "x\nY\n" {
		t.Errorf("w into the agent fs: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if data, err := a.FS.ReadFile("/data/sub/w.txt"); err != nil || string(data) != "x\nY\n" {
		t.Errorf("agent file: %q, %v", data, err)
	}
	res = run(t, sb, `echo x | sed 'w /data/denied.txt'`)
	if res.ExitCode != 4 || res.Stdout != "" || !strings.Contains(res.Stderr, "couldn't open file /data/denied.txt: Permission denied") {
		t.Errorf("w outside the writable paths: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, err := a.FS.Stat("/data/denied.txt"); err == nil {
		t.Error("w created a file outside the writable paths")
	}
	res = run(t, sb, `echo x | sed 'w /dev/stderr'`)
	if res.ExitCode != 0 || res.Stdout != "x\n" || res.Stderr != "x\n" {
		t.Errorf("w /dev/stderr: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}

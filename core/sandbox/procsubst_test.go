package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
)

func TestProcSubst(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	cases := []struct{ script, want string }{
		{`cat <(echo hi)`, "hi\n"},
		{`diff <(echo a) <(echo b); echo rc=$?`, "1c1\n< a\n---\n> b\nrc=1\n"},
		{`diff <(sort a.txt) <(sort a.txt) && echo same`, "same\n"},
		{`comm -12 <(sort a.txt) <(sort other/x.txt)`, "apple\nbanana\ncherry\n"},
		{`paste <(seq 3) <(seq 4 6)`, "1\t4\n2\t5\n3\t6\n"},
		{`seq 5 | tee >(wc -l > n.txt) > /dev/null; wait; cat n.txt`, "5\n"},
		{`echo <(true) | grep -c '^/dev/fd/[0-9]*$'`, "1\n"},
		{`while read l; do echo "[$l]"; done < <(printf 'x\ny\n')`, "[x]\n[y]\n"},
		{`head -n 2 <(yes)`, "y\ny\n"},
		{`x=$(wc -l < <(seq 10)); echo $x`, "10\n"},
		{`eval 'cat <(echo ev)'`, "ev\n"},
		{`sh -c 'cat <(echo sh)'`, "sh\n"},
		{`bash <(echo 'echo from-script')`, "from-script\n"},
		{`source <(echo 'v=42'); echo $v`, "42\n"},
		{`echo 'cat <(echo src)' > s.sh; source s.sh`, "src\n"},
		{`cat <(cat <(echo nested))`, "nested\n"},
		{`for i in 1 2 3; do cat <(echo $i); done`, "1\n2\n3\n"},
		{`f() { cat <(echo "fn $1"); }; f x`, "fn x\n"},
		{`[ -p <(true) ] && echo fifo`, "fifo\n"},
		{`x=<(echo a); cat $x 2>/dev/null; echo rc=$?`, "rc=1\n"},
		{`cat <(echo one) <(echo two) | sort -r`, "two\none\n"},
		{`echo data | cat <(cat)`, "data\n"},
		{`! diff <(echo a) <(echo b) >/dev/null && echo differ`, "differ\n"},
		{`echo x > >(cat > out.txt); wait; cat out.txt`, "x\n"},
		{`wc -c <(printf abc) | cut -d' ' -f1`, "3\n"},
	}
	for _, c := range cases {
		res := run(t, sb, c.script)
		if res.Stdout != c.want {
			t.Errorf("%s:\n got %q (exit %d, stderr %q)\nwant %q", c.script, res.Stdout, res.ExitCode, res.Stderr, c.want)
		}
	}
}

// TestAttack_ProcSubst_NoHostFIFO: every way to reach a process
// substitution (script, eval, source, sh -c, trap, nested) runs in the
// engine; the interpreter's host FIFOs ("$TMPDIR/sh-interp-*") never
// appear and no host file is written.
func TestAttack_ProcSubst_NoHostFIFO(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "sh-interp-*"))
	for _, script := range []string{
		`cat <(echo hi)`,
		`eval 'cat <(echo hi)'`,
		`echo 'cat <(echo hi)' > s.sh; source s.sh`,
		`sh -c 'cat <(echo hi)'`,
		`trap 'cat <(echo hi)' EXIT`,
		`cat <(eval 'cat <(echo hi)')`,
		`echo 'cat <(echo hi)' | bash`,
		`bash <(echo 'cat <(echo hi)')`,
		`echo hi > >(cat); wait`,
	} {
		res := run(t, sb, script)
		if res.ExitCode != 0 || res.Stdout != "hi\n" {
			t.Errorf("%s: exit %d stdout %q stderr %q, want hi", script, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "sh-interp-*"))
	if len(after) > len(before) {
		t.Errorf("FIFOs appeared on the host: %v", after)
	}
	// The interpreter opens "$TMPDIR/sh-interp-*" directly on the host;
	// the sandbox points that directory below /dev/null, so such a name
	// in /tmp is an ordinary agent file.
	name := "/tmp/sh-interp-agentfs-test"
	res := run(t, sb, `mkdir -p /tmp && echo inside > `+name+` && cat `+name)
	if res.Stdout != "inside\n" {
		t.Errorf("got %q", res.Stdout)
	}
	if _, err := os.Stat(name); err == nil {
		os.Remove(name)
		t.Errorf("%s was written on the host", name)
	}
}

// TestAttack_ProcSubst_Names: /dev/fd/N names only the pipes of the
// running statement; other numbers, released pipes and the internal
// commands called by hand reach nothing (no file, no host).
func TestAttack_ProcSubst_Names(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	for _, c := range []struct{ script, want string }{
		{`cat /dev/fd/63; echo rc=$?`, "rc=1\n"},
		{`echo x > /dev/fd/70; echo rc=$?`, "rc=1\n"},
		{`x=<(echo secret); cat $x; echo rc=$?`, "rc=1\n"},
		{`agentfs:psub in; echo rc=$?`, "/dev/fd/63\nrc=0\n"},
		{`agentfs:psub bogus; echo rc=$?`, "rc=2\n"},
		{`agentfs:psub-release 7 /dev/fd/x ../../etc; echo rc=$?`, "rc=7\n"},
		// Pipes by hand past the cap: EMFILE, the run goes on.
		{`for i in $(seq 300); do agentfs:psub in >/dev/null || { echo full at $i; break; }; done`, "full at 257\n"},
		{`cat <(echo a) /dev/fd/64 2>/dev/null; echo rc=$?`, "a\nrc=1\n"},
	} {
		res := run(t, sb, c.script)
		if res.Stdout != c.want {
			t.Errorf("%s: got %q (stderr %q), want %q", c.script, res.Stdout, res.Stderr, c.want)
		}
	}
	if _, err := a.FS.Stat(ctx, "/dev/fd/70"); err == nil {
		t.Errorf("a write to /dev/fd/70 created an agent file")
	}
}

// TestAttack_ProcSubst_Limits: the substituted commands run under the
// Exec's limits, and a command nobody reads from stops instead of
// holding the run.
func TestAttack_ProcSubst_Limits(t *testing.T) {
	lim := sandbox.Hardened
	lim.MaxBackground = 4
	_, sb := newSandbox(t, sandbox.Options{Limits: lim})
	for _, c := range []struct {
		script string
		limits []string // any one of them
	}{
		// Output written into a pipe counts as stream bytes.
		{`cat <(yes) > /dev/null`, []string{"stream"}},
		// Each substitution is a background job.
		// (f opens none of them: all six wait on their pipes.)
		{`f() { sleep 30; }; f <(yes) <(yes) <(yes) <(yes) <(yes) <(yes)`, []string{"background jobs"}},
		// A loop of substitutions ends at the command budget, or at the
		// background jobs' when the substitutions' own "true" are slower
		// to end than the loop is to start them (a loaded machine: once
		// in CI).
		{`while :; do true <(true); done`, []string{"commands", "background jobs"}},
	} {
		res := run(t, sb, c.script)
		if res.Limit == nil || !slices.Contains(c.limits, res.Limit.Limit) {
			t.Errorf("%s: limit %v (exit %d, stderr %q), want one of %q", c.script, res.Limit, res.ExitCode, res.Stderr, c.limits)
		}
	}
	// What a reader keeps counts as memory.
	lim.MaxMemoryBytes = 4 << 20
	_, sb2 := newSandbox(t, sandbox.Options{Limits: lim})
	if res := run(t, sb2, `sort <(yes) > /dev/null`); res.Limit == nil || res.Limit.Limit != "memory" {
		t.Errorf("sort <(yes): limit %v, want memory", res.Limit)
	}
	// Never read: released after the statement, "yes" gets EPIPE and
	// the wait ends; nothing trips.
	res := run(t, sb, `true <(yes) >(cat); wait; echo done`)
	if res.Stdout != "done\n" || res.Limit != nil {
		t.Errorf("unread substitution: stdout %q limit %v stderr %q", res.Stdout, res.Limit, res.Stderr)
	}
}

// TestAttack_ProcSubst_Cancel: a substitution blocked on its pipe ends
// with the Exec when the caller cancels or the wall time passes.
func TestAttack_ProcSubst_Cancel(t *testing.T) {
	lim := sandbox.Hardened
	lim.WallTime = 300 * time.Millisecond
	_, sb := newSandbox(t, sandbox.Options{Limits: lim})
	res := run(t, sb, `cat <(sleep 100)`)
	if res.Limit == nil || res.Limit.Limit != "wall time" {
		t.Errorf("limit %v, want wall time", res.Limit)
	}
	c, cancel := context.WithCancel(ctx)
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	_, err := sb.Exec(c, `cat <(sleep 100)`, sandbox.ExecOptions{Dir: "/data"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Exec: err %v, want context.Canceled", err)
	}
	// The sandbox serves the next Exec.
	if res := run(t, sb, `cat <(echo again)`); res.Stdout != "again\n" {
		t.Errorf("after cancel: %q %q", res.Stdout, res.Stderr)
	}
}

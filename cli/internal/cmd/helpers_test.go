package cmd

import (
	"bytes"
	"strings"
	"testing"
)

// result is what one run of the CLI printed and returned.
type result struct {
	out, err string
	code     int
}

// run runs the CLI with args and stdin in the current directory.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return result{out.String(), errb.String(), code}
}

// mustRun runs the CLI and fails the test unless it exits with 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	r := run(t, "", args...)
	if r.code != 0 {
		t.Fatalf("agentfs %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.err)
	}
	return r.out
}

// wantFail runs the CLI and checks the exit code and that stderr holds
// every one of wantErr.
func wantFail(t *testing.T, code int, args []string, wantErr ...string) result {
	t.Helper()
	r := run(t, "", args...)
	if r.code != code {
		t.Fatalf("agentfs %s: exit %d, want %d; stdout %q, stderr %q", strings.Join(args, " "), r.code, code, r.out, r.err)
	}
	for _, w := range wantErr {
		if !strings.Contains(r.err, w) {
			t.Errorf("agentfs %s: stderr %q, want it to contain %q", strings.Join(args, " "), r.err, w)
		}
	}
	return r
}

// newAgent moves into a fresh directory holding the agent "t".
func newAgent(t *testing.T) {
	t.Helper()
	t.Chdir(t.TempDir())
	mustRun(t, "init", "t")
}

func checkOut(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", what, got, want)
	}
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }

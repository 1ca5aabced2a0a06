package jsnode_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

var ctx = context.Background()

// env is an agent, a sandbox over it, and files written into it.
type env struct {
	t  testing.TB
	a  *core.Agent
	sb *sandbox.Sandbox
}

func newEnv(t testing.TB, opts sandbox.Options) *env {
	t.Helper()
	dir, err := os.MkdirTemp("", "jsnode-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	a, err := core.Open(ctx, filepath.Join(dir, "a.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if opts.Limits == (sandbox.Limits{}) {
		opts.Limits = sandbox.Normal
	}
	sb, err := sandbox.New(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, a: a, sb: sb}
}

// write puts files into the agent filesystem: path -> content.
func (e *env) write(files map[string]string) {
	e.t.Helper()
	for p, c := range files {
		if err := e.a.FS.MkdirAll(ctx, filepath.Dir(p), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := e.a.FS.WriteFile(ctx, p, []byte(c), vfs.WriteOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
}

// run runs a shell script in the sandbox from dir.
func (e *env) run(dir, script string) sandbox.Result {
	e.t.Helper()
	res, err := e.sb.Exec(ctx, script, sandbox.ExecOptions{Dir: dir})
	if err != nil {
		e.t.Fatalf("exec %q: %v", script, err)
	}
	return res
}

// mustRun runs script and fails the test unless it exits 0.
func (e *env) mustRun(dir, script string) string {
	e.t.Helper()
	res := e.run(dir, script)
	if res.ExitCode != 0 {
		e.t.Fatalf("%q exited %d\nstdout: %s\nstderr: %s", script, res.ExitCode, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }

func sandboxOpts() sandbox.Options { return sandbox.Options{Limits: sandbox.Normal} }

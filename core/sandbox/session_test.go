package sandbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

func context_WithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func TestSession_StatePersists(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	sess, err := sb.NewSession("/data")
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct{ script, want string }{
		{`cd sub; x=42; greet() { echo "hi $1"; }`, ""},
		{`pwd; echo $x; greet you`, "/data/sub\n42\nhi you\n"},
		{`export Y=1; cd deep`, ""},
		{`printenv Y; pwd`, "1\n/data/sub/deep\n"},
	}
	for _, s := range steps {
		res, err := sess.Exec(ctx, s.script, sandbox.ExecOptions{})
		if err != nil || res.Stdout != s.want {
			t.Errorf("%s: got %q (err %v, stderr %q), want %q", s.script, res.Stdout, err, res.Stderr, s.want)
		}
	}
	if sess.Dir() != "/data/sub/deep" {
		t.Errorf("Dir() = %q", sess.Dir())
	}
	res, _ := sess.Exec(ctx, `exit 3`, sandbox.ExecOptions{})
	if !res.Exited || res.ExitCode != 3 {
		t.Errorf("exit: %+v", res)
	}
}

func TestSession_BadDir(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	if _, err := sb.NewSession("/nope"); err == nil {
		t.Error("NewSession(/nope) succeeded")
	}
	if _, err := sb.NewSession("/data/a.txt"); err == nil {
		t.Error("NewSession(file) succeeded")
	}
}

func TestExec_StdinEnvAndStreams(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	var out, errb strings.Builder
	res, err := sb.Exec(ctx, `cat; echo "$V" >&2; echo done`, sandbox.ExecOptions{
		Stdin: strings.NewReader("from stdin\n"), Env: map[string]string{"V": "val"}, Stdout: &out, Stderr: &errb,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if out.String() != "from stdin\ndone\n" || errb.String() != "val\n" || res.Stdout != "" {
		t.Errorf("stdout %q stderr %q result %q", out.String(), errb.String(), res.Stdout)
	}
}

func TestExec_SyntaxError(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	res := run(t, sb, `if then fi (`)
	if res.ExitCode != 2 || res.Stderr == "" {
		t.Errorf("syntax error: %+v", res)
	}
}

// Each Exec is a tool call named "exec" with the command, the working
// directory, the exit status and the output sizes.
func TestExec_Audit(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	run(t, sb, `echo hello`)
	run(t, sb, `echo oops >&2; exit 3`)
	calls, err := a.Tools.List(ctx, toolcalls.Filter{Name: "exec", Ascending: true})
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls %v, %v", calls, err)
	}
	var p struct {
		Command string `json:"command"`
		Cwd     string `json:"cwd"`
	}
	var r struct {
		ExitCode    int `json:"exit_code"`
		StdoutBytes int `json:"stdout_bytes"`
		StderrBytes int `json:"stderr_bytes"`
	}
	json.Unmarshal(calls[0].Parameters, &p)
	json.Unmarshal(calls[0].Result, &r)
	if p.Command != "echo hello" || p.Cwd != "/data" || r.ExitCode != 0 || r.StdoutBytes != 6 || r.StderrBytes != 0 || calls[0].Status != toolcalls.StatusSuccess {
		t.Errorf("first call: %+v %+v %+v", calls[0], p, r)
	}
	json.Unmarshal(calls[1].Result, &r)
	if calls[1].Status != toolcalls.StatusError || r.ExitCode != 3 || r.StderrBytes != 5 || calls[1].Error == nil {
		t.Errorf("second call: %+v %+v", calls[1], r)
	}
}

func TestExec_NoAudit(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{NoAudit: true})
	run(t, sb, `true`)
	if calls, _ := a.Tools.List(ctx, toolcalls.Filter{}); len(calls) != 0 {
		t.Errorf("NoAudit recorded %d calls", len(calls))
	}
}

func TestExec_Concurrent(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	done := make(chan string, 8)
	for i := 0; i < 8; i++ {
		go func() {
			res, _ := sb.Exec(ctx, `grep -c apple a.txt | tr -d '\n'; seq 3 | wc -l`, sandbox.ExecOptions{Dir: "/data"})
			done <- res.Stdout
		}()
	}
	for i := 0; i < 8; i++ {
		if got := <-done; got != "2      3\n" && got != "23\n" {
			t.Errorf("concurrent exec: %q", got)
		}
	}
}

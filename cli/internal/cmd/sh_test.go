package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestSh_Command(t *testing.T) {
	newAgent(t)
	mustRun(t, "fs", "t", "write", "/notes.md", "hello\nTODO: more\n")
	out := mustRun(t, "sh", "t", "-c", "grep -n TODO /notes.md; cd /; ls")
	checkOut(t, "sh -c", out, lines("2:TODO: more", "notes.md"))

	r := run(t, "", "sh", "t", "-c", "echo out; echo err >&2; exit 3")
	if r.code != 3 || r.out != "out\n" || r.err != "err\n" {
		t.Errorf("exit status: %+v", r)
	}
	r = run(t, "", "sh", "t", "-c", "nosuch")
	if r.code != 127 || !strings.Contains(r.err, "nosuch: command not found") {
		t.Errorf("unknown command: %+v", r)
	}
	r = run(t, "", "sh", "t", "-c", "cat /etc/passwd")
	if r.code != 1 || strings.Contains(r.out, "root:") {
		t.Errorf("host file: %+v", r)
	}
}

func TestSh_Options(t *testing.T) {
	newAgent(t)
	mustRun(t, "sh", "t", "-c", "mkdir -p /w/x")
	out := mustRun(t, "sh", "t", "--cwd", "/w", "--env", "A=1", "--env", "B=two", "-c", "pwd; echo $A $B")
	checkOut(t, "--cwd --env", out, lines("/w", "1 two"))

	r := run(t, "", "sh", "t", "--profile", "hardened", "-c", "while :; do :; done")
	if r.code != 124 || !strings.Contains(r.err, "sandbox limit exceeded") {
		t.Errorf("hardened limits: %+v", r)
	}
	wantFail(t, 2, []string{"sh", "t", "--profile", "lax", "-c", "true"}, "--profile")
	wantFail(t, 2, []string{"sh", "t", "--env", "novalue", "-c", "true"}, "NAME=VALUE")
	wantFail(t, 1, []string{"sh", "t", "--cwd", "/nope", "-c", "true"}, "working directory")
	wantFail(t, 1, []string{"sh", "missing", "-c", "true"}, "no agent database")
}

func TestSh_StdinScript(t *testing.T) {
	newAgent(t)
	r := run(t, "echo one\nx=2\necho $x\n", "sh", "t")
	if r.code != 0 || r.out != "one\n2\n" {
		t.Errorf("script from stdin: %+v", r)
	}
	// With -c, stdin is the script's standard input.
	r = run(t, "piped\n", "sh", "t", "-c", "cat")
	if r.out != "piped\n" {
		t.Errorf("stdin of -c: %+v", r)
	}
}

func TestSh_Interactive(t *testing.T) {
	newAgent(t)
	in := "mkdir /d\ncd /d\nv=7\nf() {\necho in f $v\n}\nf\npwd\nfalse\n"
	r := run(t, in, "sh", "t", "-i")
	want := "agentfs:/$ agentfs:/$ agentfs:/d$ agentfs:/d$ > > agentfs:/d$ in f 7\nagentfs:/d$ /d\nagentfs:/d$ agentfs:/d$ \n"
	if r.out != want || r.code != 1 {
		t.Errorf("interactive:\ngot  %q (exit %d, stderr %q)\nwant %q", r.out, r.code, r.err, want)
	}
	r = run(t, "echo a\nexit 5\necho never\n", "sh", "t", "-i")
	if r.code != 5 || strings.Contains(r.out, "never") {
		t.Errorf("exit in interactive: %+v", r)
	}
}

func TestSh_Audit(t *testing.T) {
	newAgent(t)
	mustRun(t, "sh", "t", "-c", "echo hi")
	run(t, "", "sh", "t", "-c", "exit 2")
	out := mustRun(t, "timeline", "t", "--format", "json")
	if !strings.Contains(out, `"name":"exec"`) && !strings.Contains(out, `"name": "exec"`) {
		t.Errorf("timeline has no exec call:\n%s", out)
	}
	if !strings.Contains(out, "echo hi") || !strings.Contains(out, `exit_code`) {
		t.Errorf("timeline lacks the command or result:\n%s", out)
	}
}

func TestSh_AllowNet(t *testing.T) {
	newAgent(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s\n", r.Method, r.URL.Path)
	}))
	defer srv.Close()
	r := run(t, "", "sh", "t", "-c", "curl -sS "+srv.URL+"/x")
	if r.code != 7 || !strings.Contains(r.err, "curl: (7) blocked by sandbox network policy") {
		t.Errorf("default deny: %+v", r)
	}
	// Loopback stays blocked without --allow-private.
	r = run(t, "", "sh", "t", "--allow-net", srv.URL+"/", "-c", "curl -sS "+srv.URL+"/x")
	if r.code != 7 || !strings.Contains(r.err, "loopback") {
		t.Errorf("loopback: %+v", r)
	}
	out := mustRun(t, "sh", "t", "--allow-net", srv.URL+"/", "--allow-private", "-c", "curl -sS "+srv.URL+"/x")
	checkOut(t, "--allow-net", out, lines("GET /x"))
	r = run(t, "", "sh", "t", "--allow-net", "GET:"+srv.URL+"/", "--allow-private", "-c", "curl -sS -X POST "+srv.URL+"/x")
	if r.code != 7 || !strings.Contains(r.err, "method POST is not allowed") {
		t.Errorf("method: %+v", r)
	}
	out = mustRun(t, "sh", "t", "--allow-net", "GET,POST:"+srv.URL+"/", "--allow-private", "-c", "curl -sS -d a=1 "+srv.URL+"/y")
	checkOut(t, "--allow-net METHODS:", out, lines("POST /y"))
	wantFail(t, 2, []string{"sh", "t", "--allow-net", "example.com", "-c", "true"}, "--allow-net")
	wantFail(t, 2, []string{"sh", "t", "--allow-private", "-c", "true"}, "--allow-private needs --allow-net")
}

// On a terminal the shell edits lines and recalls them with the Up arrow;
// `script` gives the binary a real pseudo-terminal.
func TestSh_TerminalLineEditingAndHistory(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("skipping: script(1) from util-linux is needed for a pseudo-terminal")
	}
	bin := buildAgentfs(t)
	newAgent(t)
	cmd := exec.Command(scriptBin, "-qec", bin+" sh t", "/dev/null")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Type slowly enough for each line to be read on its own.
	for _, keys := range []string{"echo one\n", "\x1b[A\n", "mkdir -p /d && cd /d && echo \"in $PWD\"\n", "exit 3\n"} {
		io.WriteString(stdin, keys)
		time.Sleep(300 * time.Millisecond)
	}
	stdin.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v; output %q", err, out.String())
	}
	got := strings.ReplaceAll(out.String(), "\r", "")
	if n := strings.Count(got, "\none\n"); n != 2 {
		t.Errorf("output has %d lines \"one\", want 2 (the Up arrow recalls the line): %q", n, got)
	}
	for _, want := range []string{"agentfs:/$ ", "in /d\n", "agentfs:/d$ "} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q: %q", want, got)
		}
	}
}

func TestSh_Policy(t *testing.T) {
	newAgent(t)
	mustRun(t, "sh", "t", "-c", "mkdir -p /src /out /priv && echo 'TODO x' > /src/a && echo s > /priv/s")
	// Default deny: only the listed paths and utilities.
	r := run(t, "", "sh", "t", "--default-deny", "--read", "/src", "--write", "/out", "--allow", "grep",
		"-c", "grep -h TODO /src/a > /out/todo && echo wrote")
	if r.code != 0 || r.out != "wrote\n" {
		t.Errorf("allowed: %+v", r)
	}
	for script, want := range map[string]string{
		"grep s /priv/s":               "Permission denied",
		"echo x > /src/b":              "Permission denied",
		"ls /src":                      "ls: command not allowed by the sandbox policy",
		"curl -sS http://127.0.0.1:9/": "curl: command not allowed",
	} {
		r := run(t, "", "sh", "t", "--default-deny", "--read", "/src", "--write", "/out", "--allow", "grep", "-c", script)
		if r.code == 0 || !strings.Contains(r.err, want) {
			t.Errorf("%s: %+v, want stderr with %q", script, r, want)
		}
	}
	// --read alone is read-only; --deny wins over everything.
	r = run(t, "", "sh", "t", "--read", "/", "-c", "cat /priv/s; echo y > /out/y")
	if r.out != "s\n" || !strings.Contains(r.err, "Permission denied") {
		t.Errorf("--read alone: %+v", r)
	}
	r = run(t, "", "sh", "t", "--deny", "cat", "-c", "cat /priv/s")
	if r.code != 126 {
		t.Errorf("--deny: %+v", r)
	}
	// The effective policy, without running anything.
	out := mustRun(t, "sh", "t", "--default-deny", "--read", "/src/", "--allow-net", "GET:https://api.example.com/", "--print-policy")
	for _, want := range []string{`"default_deny": true`, `"readable": [`, `"/src"`, `"restrict_commands": true`, `"prefix": "https://api.example.com/"`, `"limits_profile": "normal"`} {
		if !strings.Contains(out, want) {
			t.Errorf("--print-policy lacks %s:\n%s", want, out)
		}
	}
	// Hostile rules: a usage error naming the flag, nothing runs.
	for _, bad := range [][]string{{"--read", "src"}, {"--write", "/out/../priv"}, {"--read", "/src/*"}, {"--deny", "a/b"}} {
		wantFail(t, 2, append([]string{"sh", "t"}, append(bad, "-c", "echo ran > /out/ran")...), bad[0])
	}
	r = run(t, "", "sh", "t", "-c", "test -e /out/ran && echo ran || echo not-run")
	if r.out != "not-run\n" {
		t.Errorf("a refused policy ran the script: %+v", r)
	}
}

// TestSh_InPs: a running "agentfs sh" is listed by "agentfs ps" (kind sh,
// its pid, database and script) until it ends; killing that pid stops it
// with its background jobs.
func TestSh_InPs(t *testing.T) {
	newAgent(t)
	t.Setenv("AGENTFS_RUNTIME_DIR", t.TempDir())
	c, done := startKillable(t, nil, "sh", "t", "-c", "sleep 600 & wait")
	listed := func() *psRow {
		var rows []psRow
		if err := json.Unmarshal([]byte(mustRun(t, "ps", "--json")), &rows); err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			if r.Kind == "sh" && r.PID == c.Process.Pid {
				return &rows[i]
			}
		}
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	row := listed()
	for ; row == nil; row = listed() {
		if time.Now().After(deadline) {
			t.Fatal("agentfs ps never listed the running shell")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasSuffix(row.DB, "t.db") || row.Dir != "/" || strings.Join(row.Command, " ") != "sh -c sleep 600 & wait" {
		t.Errorf("the shell's row: %+v", *row)
	}
	c.Process.Kill()
	<-done
	if row := listed(); row != nil {
		t.Errorf("a killed shell is still listed: %+v", *row)
	}
}

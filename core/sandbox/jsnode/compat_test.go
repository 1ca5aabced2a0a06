package jsnode_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// compatCase is one script of testdata/compat/scripts run by the
// sandbox's node and by the host's node.
type compatCase struct {
	script string
	args   []string
	env    map[string]string
}

var compatCases = []compatCase{
	{script: "json_transform.js"},
	{script: "require_packages.js"},
	{script: "esm_import.mjs"},
	{script: "tla.mjs"},
	{script: "timers.js"},
	{script: "exit_code.js"},
	{script: "exit_throw.js"},
	{script: "exit_reject.js"},
	{script: "handlers.js"},
	{script: "buffers.js"},
	{script: "paths.js"},
	{script: "fs_errors.js"},
	{script: "fs_ops.js"},
	{script: "children.js"},
	{script: "inspect.js"},
	{script: "syntax.js"},
	{script: "events_util.js"},
	{script: "crypto_url.js"},
	{script: "argv_env.js", args: []string{"one", "two words"}, env: map[string]string{"GREETING": "hi"}},
}

// fixtureFiles walks testdata/compat: relative path -> content. The
// fixture's package directories are named "nm" in the repository (the
// repository ignores node_modules) and become node_modules here.
func fixtureFiles(t testing.TB) map[string][]byte {
	t.Helper()
	root := filepath.Join("testdata", "compat")
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		for i, s := range parts {
			if s == "nm" {
				parts[i] = "node_modules"
			}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.Join(parts, "/")] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sandboxRun copies the fixture to /proj and runs node there.
func sandboxRun(t *testing.T, c compatCase) (string, string, int) {
	e := newEnv(t, sandboxOpts())
	for rel, data := range fixtureFiles(t) {
		p := "/proj/" + rel
		if err := e.a.FS.MkdirAll(ctx, filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := e.a.FS.WriteFile(ctx, p, data, vfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	script := "node scripts/" + c.script
	for _, a := range c.args {
		script += " '" + a + "'"
	}
	res, err := e.sb.Exec(ctx, script, sandbox.ExecOptions{Dir: "/proj", Env: c.env})
	if err != nil {
		t.Fatal(err)
	}
	return res.Stdout, res.Stderr, res.ExitCode
}

// hostRun copies the fixture to a host directory and runs the host's
// node there.
func hostRun(t *testing.T, nodeBin string, c compatCase) (string, string, int) {
	dir := t.TempDir()
	for rel, data := range fixtureFiles(t) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(nodeBin, append([]string{"scripts/" + c.script}, c.args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C"}
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestCompat_HostNode runs every compat script with the sandbox's node
// and with the host's Node (v20) and compares stdout and exit status.
// It skips when the host has no node, unless AGENTFS_REQUIRE_COMPAT=1.
func TestCompat_HostNode(t *testing.T) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("AGENTFS_REQUIRE_COMPAT") == "1" {
			t.Fatal("node is not installed and AGENTFS_REQUIRE_COMPAT=1")
		}
		t.Skip("host node not found")
	}
	for _, c := range compatCases {
		t.Run(c.script, func(t *testing.T) {
			wantOut, wantErr, wantCode := hostRun(t, nodeBin, c)
			gotOut, gotErr, gotCode := sandboxRun(t, c)
			if gotOut != wantOut || gotCode != wantCode {
				t.Errorf("sandbox node differs from host node\n--- host (exit %d):\n%s\n--- sandbox (exit %d):\n%s\n--- sandbox stderr:\n%s\n--- host stderr:\n%s", wantCode, wantOut, gotCode, gotOut, gotErr, wantErr)
			}
			// A failing script says why on stderr in both.
			if wantCode != 0 && (strings.TrimSpace(gotErr) == "") != (strings.TrimSpace(wantErr) == "") {
				t.Errorf("stderr: host %q, sandbox %q", wantErr, gotErr)
			}
		})
	}
}

package sandbox_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Default deny: the allow-lists hold even empty, through every way a
// script reaches a file or a command (utilities, redirections, xargs,
// find -exec, symlinks, sh -c).
func TestPolicy_DefaultDeny(t *testing.T) {
	a, _ := newSandbox(t, sandbox.Options{})
	if err := a.FS.MkdirAll(ctx, "/pub", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/priv", "/out"} {
		if err := a.FS.MkdirAll(ctx, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a.FS.WriteFile(ctx, "/pub/a", []byte("pub\n"), vfs.WriteOptions{})
	a.FS.WriteFile(ctx, "/priv/s", []byte("secret\n"), vfs.WriteOptions{})
	if err := a.FS.Symlink(ctx, "/priv/s", "/pub/link"); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(a, sandbox.Options{Limits: sandbox.Normal, Policy: sandbox.Policy{
		DefaultDeny: true, Readable: []string{"/pub"}, Writable: []string{"/out"}, Allow: []string{"cat", "xargs", "find", "sh"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{
		"cat /priv/s", "cat < /priv/s", "cat /pub/link", "echo /priv/s | xargs cat",
		"find /pub -name a -exec cat /priv/s ';'", "sh -c 'cat /priv/s'", "read x < /priv/s; echo $x",
	} {
		if r := run(t, sb, script); strings.Contains(r.Stdout, "secret") || !strings.Contains(r.Stderr, "Permission denied") {
			t.Errorf("%s: read outside the allow-list: %+v", script, r)
		}
	}
	for _, script := range []string{"echo x > /pub/w", "echo x >> /priv/s", "cat /pub/a > /w"} {
		if r := run(t, sb, script); r.ExitCode == 0 {
			t.Errorf("%s: wrote outside the allow-list: %+v", script, r)
		}
	}
	for _, script := range []string{"ls /pub", "echo /pub/a | xargs head", "find /pub -exec grep p {} ';'", "sh -c 'ls /pub'"} {
		if r := run(t, sb, script); !strings.Contains(r.Stderr, "not allowed") && !strings.Contains(r.Stderr, "not found") {
			t.Errorf("%s: ran a utility outside the allow-list: %+v", script, r)
		}
	}
	if r := run(t, sb, "cat /pub/a > /out/c && cat /out/c; echo ok"); r.Stdout != "pub\nok\n" {
		t.Errorf("allowed paths: %+v", r)
	}
	// Nothing listed at all: builtins only, no file.
	sb, _ = sandbox.New(a, sandbox.Options{Limits: sandbox.Normal, Policy: sandbox.Policy{DefaultDeny: true}})
	if r := run(t, sb, "echo hi; cat /pub/a; [ -e /pub/a ] && echo visible"); r.Stdout != "hi\n" {
		t.Errorf("empty default deny: %+v", r)
	}
}

// A hostile policy is refused with EINVAL before anything runs, naming
// the entry.
func TestPolicy_Validate(t *testing.T) {
	many := make([]string, sandbox.MaxPolicyEntries+1)
	for i := range many {
		many[i] = fmt.Sprintf("/d%d", i)
	}
	for _, c := range []struct {
		p    sandbox.Policy
		want string
	}{
		{sandbox.Policy{Readable: []string{"work"}}, `readable[0] "work": not an absolute path`},
		{sandbox.Policy{Writable: []string{"/a", "/out/../etc"}}, `writable[1]`},
		{sandbox.Policy{Readable: []string{"/src/*.go"}}, "glob"},
		{sandbox.Policy{Readable: []string{""}}, "empty path"},
		{sandbox.Policy{Readable: []string{"/a\x00b"}}, "NUL"},
		{sandbox.Policy{Readable: []string{"/" + strings.Repeat("a", 5000)}}, "longer than"},
		{sandbox.Policy{Readable: many}, "more than 1024"},
		{sandbox.Policy{Allow: []string{"/bin/cat"}}, "allow[0]"},
		{sandbox.Policy{Deny: []string{"rm -rf"}}, "deny[0]"},
		{sandbox.Policy{Deny: []string{"c*"}}, "deny[0]"},
		{sandbox.Policy{Env: map[string]string{"1X": "y"}}, "not a variable name"},
		{sandbox.Policy{Env: map[string]string{"X": "a\x00b"}}, "NUL"},
		{sandbox.Policy{Net: []sandbox.NetRule{{Prefix: "ftp://x/"}}}, "net[0]"},
		{sandbox.Policy{Net: []sandbox.NetRule{{Prefix: "https://x/", Methods: []string{"get x"}}}}, "not an HTTP method"},
		{sandbox.Policy{Net: []sandbox.NetRule{{Prefix: "https://x/", Headers: map[string]string{"A": "b\nEvil: 1"}}}}, "CR, LF"},
		{sandbox.Policy{Net: []sandbox.NetRule{{Prefix: "https://x/", Headers: map[string]string{"A B": "v"}}}}, "not a header name"},
	} {
		err := c.p.Validate()
		var pe *sandbox.PolicyError
		if !errors.As(err, &pe) || !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want EINVAL with %q", c.p, err, c.want)
			continue
		}
		a := openAgent(t)
		if _, err := sandbox.New(a, sandbox.Options{Policy: c.p}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("New accepted %+v: %v", c.p, err)
		}
	}
	good := sandbox.Policy{Readable: []string{"/", "/a/b/"}, Writable: []string{"/out"}, Allow: []string{"[", "git-lfs", "cat"},
		Env: map[string]string{"_X1": "v"}, Net: []sandbox.NetRule{{Prefix: "https://api.example.com/v1/", Methods: []string{"GET"}, Headers: map[string]string{"Authorization": "Bearer x"}}}}
	if err := good.Validate(); err != nil {
		t.Errorf("a valid policy: %v", err)
	}
}

// Effective fills every default and cleans the prefixes.
func TestPolicy_Effective(t *testing.T) {
	p := sandbox.Policy{Readable: []string{"/pub/"}, DefaultDeny: true, Env: map[string]string{"HOME": "/home/a"}}
	e := p.Effective()
	if fmt.Sprint(e.Readable, e.Writable, e.Allow == nil) != "[/pub] [] false" {
		t.Errorf("lists: %q %q %v", e.Readable, e.Writable, e.Allow)
	}
	if e.User != "agent" || e.UID != 1000 || e.Hostname != "sandbox" || e.Umask != 0o022 || e.Env["HOME"] != "/home/a" || e.Env["PATH"] == "" {
		t.Errorf("defaults: %+v", e)
	}
	if z := (&sandbox.Policy{}).Effective(); z.Readable != nil || z.Writable != nil || z.Allow != nil {
		t.Errorf("zero policy restricts: %+v", z)
	}
}

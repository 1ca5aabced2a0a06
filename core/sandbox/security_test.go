package sandbox_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Attempts to reach the host must fail: the sandbox sees only the agent
// filesystem and runs only its own Go commands.
func TestSecurity_HostFilesUnreachable(t *testing.T) {
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("the host has no /etc/passwd to hide")
	}
	_, sb := newSandbox(t, sandbox.Options{})
	for _, script := range []string{
		`cat /etc/passwd`,
		`cat < /etc/passwd`,
		`head -1 /etc/hostname /etc/passwd`,
		`grep root /etc/passwd`,
		`ls /etc`,
		`[ -e /etc/passwd ] && echo EXISTS`,
		`test -r /etc/passwd && echo READABLE`,
		`cd /etc`,
		`source /etc/profile`,
		`. /etc/passwd`,
		`cat ../../../../../../etc/passwd`,
		`cat /data/../../../etc/passwd`,
		`cd ../../../../..; cat etc/passwd`,
		`cat /proc/self/environ`,
		`cat /proc/1/cmdline`,
		`ls /proc`,
		`cat /proc/self/maps`,
		`echo /etc/*`,
		`echo /proc/*`,
		`find /etc -name passwd`,
		`awk '{print}' /etc/passwd`,
		`sed p /etc/passwd`,
		`jq . /etc/passwd`,
		`cp /etc/passwd x && cat x`,
		`sed 'r /etc/passwd' a.txt | grep root`,
		`diff /etc/passwd a.txt`,
		`stat /etc/passwd`,
		`readlink -f /etc/passwd && cat "$(readlink -f /etc/passwd)"`,
	} {
		res := run(t, sb, script)
		if strings.Contains(res.Stdout, "root:") || strings.Contains(res.Stdout, "EXISTS") || strings.Contains(res.Stdout, "READABLE") {
			t.Errorf("%s: reached the host:\n%s", script, res.Stdout)
		}
		if res.ExitCode == 0 && strings.Contains(script, "passwd") && !strings.Contains(script, "readlink") && !strings.Contains(script, "&&") && !strings.Contains(script, "|") {
			t.Errorf("%s: exit 0, want a failure; stdout %q", script, res.Stdout)
		}
	}
}

func TestSecurity_AgentFileNotHostFile(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	if err := a.FS.WriteFile(ctx, "/etc/passwd", []byte("agent:x:1000:1000::/:/bin/sh\n"), vfs.WriteOptions{CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	res := run(t, sb, `cat /etc/passwd; cat ../../../../etc/passwd`)
	if res.Stdout != "agent:x:1000:1000::/:/bin/sh\nagent:x:1000:1000::/:/bin/sh\n" {
		t.Errorf("got %q, want the agent's /etc/passwd twice", res.Stdout)
	}
}

func TestSecurity_DotDotStaysAtRoot(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	res := run(t, sb, `cd ../../../../..; pwd; ls`)
	if res.Stdout != "/\ndata\n" {
		t.Errorf("got %q, want the agent's root", res.Stdout)
	}
}

func TestSecurity_SymlinksOutside(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	for _, script := range []string{
		`ln -s /etc/passwd l && cat l`,
		`ln -s ../../../../../../../etc e && cat e/passwd`,
		`ln -s /proc/self p && cat p/environ`,
		`ln -s /etc/passwd l && cp l copy && cat copy`,
	} {
		res := run(t, sb, script)
		if res.ExitCode == 0 || strings.Contains(res.Stdout, "root:") {
			t.Errorf("%s: exit %d stdout %q, want a failure", script, res.ExitCode, res.Stdout)
		}
	}
}

func TestSecurity_NoHostProcess(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	marker := filepath.Join(tempDir(t), "ran")
	for _, script := range []string{
		`id`,
		`python3 -c 'print(1)'`,
		`/usr/bin/id`,
		`/bin/sh -c "touch ` + marker + `"`,
		`exec /usr/bin/touch ` + marker,
		`exec id`,
		`eval 'id; uname -a'`,
		`eval "$(echo touch) ` + marker + `"`,
		`x=$(id -u); echo "[$x]"`,
		"x=`uname`; echo \"[$x]\"",
		`echo $(curl http://example.com)`,
		`command id`,
		`builtin id`,
		`env id`,
		`xargs id <<< x`,
		`find . -maxdepth 0 -exec id \;`,
		`nohup id`,
		`sudo id`,
		`touch ` + marker,
	} {
		res := run(t, sb, script)
		if strings.Contains(res.Stdout, "uid=") || strings.Contains(res.Stdout, "Linux") || strings.Contains(res.Stdout, "[0]") || strings.Contains(res.Stdout, "[Linux]") {
			t.Errorf("%s: a host process ran: %q", script, res.Stdout)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a script created %s on the host", marker)
	}
	res := run(t, sb, `id`)
	if res.ExitCode != 127 || !strings.Contains(res.Stderr, "id: command not found") {
		t.Errorf("id: exit %d stderr %q, want 127 and command not found", res.ExitCode, res.Stderr)
	}
	res = run(t, sb, `eval 'nosuch1'; echo "rc=$?"; x=$(nosuch2 2>&1); echo "$x"`)
	if res.Stdout != "rc=127\nnosuch2: command not found\n" {
		t.Errorf("eval and substitution of unknown commands: %q", res.Stdout)
	}
}

func TestSecurity_NoEnvLeak(t *testing.T) {
	t.Setenv("AGENTFS_TEST_SECRET", "s3cr3t-value")
	_, sb := newSandbox(t, sandbox.Options{Policy: sandbox.Policy{Env: map[string]string{"GIVEN": "yes"}}})
	res := run(t, sb, `env; printenv; set; declare -p; echo "$AGENTFS_TEST_SECRET"; awk 'BEGIN{for (k in ENVIRON) print k, ENVIRON[k]}'; jq -n env; echo ~ ~root; echo $HOME $USER $UID`)
	for _, leak := range []string{"s3cr3t-value", "AGENTFS_TEST_SECRET", "HOME=" + os.Getenv("HOME") + "\n"} {
		if leak != "HOME=/\n" && strings.Contains(res.Stdout, leak) {
			t.Errorf("host environment visible: %q in\n%s", leak, res.Stdout)
		}
	}
	if !strings.Contains(res.Stdout, "GIVEN=yes") {
		t.Errorf("the policy's variable is missing:\n%s", res.Stdout)
	}
	if !strings.Contains(res.Stdout, "/ /root\n/ agent 1000\n") {
		t.Errorf("home and identity are not the sandbox's:\n%s", res.Stdout)
	}
}

func TestSecurity_AwkSedJqCannotTouchHost(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	hostFile := filepath.Join(tempDir(t), "w.txt")
	run(t, sb, `mkdir -p `+filepath.Dir(hostFile))
	for _, script := range []string{
		`awk 'BEGIN { print "x" > "` + hostFile + `" }'`,
		`awk 'BEGIN { "id" | getline x; print x }'`,
		`awk 'BEGIN { system("touch ` + hostFile + `") }'`,
		`echo x | sed 'w ` + hostFile + `'`,
		`echo x | sed 's/x/y/w ` + hostFile + `'`,
		`echo x | sed 'e touch ` + hostFile + `'`,
	} {
		run(t, sb, script)
	}
	if _, err := os.Stat(hostFile); err == nil {
		t.Errorf("a script wrote %s on the host", hostFile)
	}
	// sed's w wrote the agent file of that name instead (each sed
	// truncates it, as GNU sed does).
	res := run(t, sb, `cat `+hostFile)
	if res.Stdout != "y\n" {
		t.Errorf("sed w into the agent filesystem: got %q", res.Stdout)
	}
}

func TestSecurity_Policy(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{Policy: sandbox.Policy{
		Readable: []string{"/data"},
		Writable: []string{"/data/sub"},
		Deny:     []string{"eval", "curl"},
	}})
	a.FS.WriteFile(ctx, "/secret.txt", []byte("top secret\n"), vfs.WriteOptions{})
	cases := []struct {
		script string
		code   int
		out    string
	}{
		{`cat a.txt | head -1`, 0, "apple\n"},
		{`cat /secret.txt`, 1, ""},
		{`ls /`, 2, ""},
		{`echo x > new.txt`, 1, ""},
		{`echo x > sub/new.txt && cat sub/new.txt`, 0, "x\n"},
		{`rm a.txt`, 1, ""},
		{`ln -s /secret.txt sub/s && cat sub/s`, 1, ""},
		{`eval echo hi`, 126, ""},
		{`curl http://x`, 126, ""},
		{`cp a.txt sub/ && cat sub/a.txt | wc -l`, 0, "4\n"},
		{`mv a.txt sub/`, 1, ""},
	}
	for _, c := range cases {
		res := run(t, sb, c.script)
		if res.ExitCode != c.code || res.Stdout != c.out {
			t.Errorf("%s: exit %d stdout %q, want %d %q (stderr %q)", c.script, res.ExitCode, res.Stdout, c.code, c.out, res.Stderr)
		}
	}
	_, sb2 := newSandbox(t, sandbox.Options{Policy: sandbox.Policy{Allow: []string{"cat", "grep"}}})
	res := run(t, sb2, `cat a.txt | grep cherry; echo ok; ls`)
	if res.Stdout != "cherry\nok\n" || res.ExitCode != 126 {
		t.Errorf("allow list: exit %d stdout %q", res.ExitCode, res.Stdout)
	}
}

// A fork-bomb-like script is stopped by the limits with a clear message
// and the limit exit status; nothing keeps running afterwards.
func TestLimits_ForkBomb(t *testing.T) {
	base := runtime.NumGoroutine()
	_, sb := newSandbox(t, sandbox.Options{Limits: sandbox.Hardened})
	for _, script := range []string{
		`bomb() { bomb | bomb & bomb; }; bomb`,
		`bomb() { bomb | bomb; }; bomb`,
		`while :; do (while :; do :; done) & done`,
		`f() { f; }; f`,
	} {
		res := run(t, sb, script)
		if res.ExitCode != sandbox.ExitLimit || res.Limit == nil || !strings.Contains(res.Stderr, "sandbox limit exceeded") {
			t.Errorf("%s: exit %d limit %v stderr %q", script, res.ExitCode, res.Limit, res.Stderr)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+20 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+20 {
		t.Errorf("%d goroutines still running after the scripts (%d before)", n, base)
	}
}

func TestLimits(t *testing.T) {
	small := sandbox.Limits{MaxCommands: 1000, MaxSteps: 10000, MaxCallDepth: 50, WallTime: 2 * time.Second,
		MaxOutputBytes: 4096, MaxStreamBytes: 1 << 20, MaxFSWriteBytes: 1 << 16}
	cases := []struct{ script, limit string }{
		{`while true; do :; done`, "commands"},
		{`while ((1)); do x=1; done`, "steps"},
		{`while ((1)); do x=$x$x$x; done`, "steps"},
		{`f() { f; }; f`, "call depth"},
		{`yes`, "output"},
		{`seq 100000`, "output"},
		{`while :; do echo aaaaaaaaaaaaaaaaaaaaaaaa; done`, "output"},
		{`x=$(yes); echo ${#x}`, "stream"},
		{`head -c 1000000 /dev/zero > big`, "filesystem writes"},
		{`for ((;;)); do echo 0123456789012345678901234567890123456789012345678901234567890123456789 >> f; done`, "filesystem writes"},
		{`sleep 10`, "wall time"},
	}
	for _, c := range cases {
		a, sb := newSandbox(t, sandbox.Options{Limits: small})
		res := run(t, sb, c.script)
		if res.Limit == nil || res.Limit.Limit != c.limit || res.ExitCode != sandbox.ExitLimit {
			t.Errorf("%s: exit %d limit %v, want the %s limit", c.script, res.ExitCode, res.Limit, c.limit)
			continue
		}
		if !strings.Contains(res.Stderr, "agentfs: sandbox limit exceeded") {
			t.Errorf("%s: stderr %q", c.script, res.Stderr)
		}
		if len(res.Stdout)+len(res.Stderr) > 4096+200 {
			t.Errorf("%s: %d bytes of output beyond the limit", c.script, len(res.Stdout)+len(res.Stderr))
		}
		// The filesystem stays consistent and usable.
		if _, err := a.FS.Paths(ctx); err != nil {
			t.Errorf("%s: filesystem: %v", c.script, err)
		}
		if c.limit == "filesystem writes" {
			st, err := a.FS.Stat(ctx, "/data/big")
			if err == nil && st.Size > 1<<16 {
				t.Errorf("%s: wrote %d bytes", c.script, st.Size)
			}
		}
	}
}

func TestLimits_Profiles(t *testing.T) {
	for _, name := range []string{"normal", "hardened"} {
		l, err := sandbox.Profile(name)
		if err != nil || l.MaxCommands == 0 || l.WallTime == 0 || l.MaxOutputBytes == 0 || l.MaxFSWriteBytes == 0 || l.MaxSteps == 0 || l.MaxCallDepth == 0 {
			t.Errorf("Profile(%q) = %+v, %v", name, l, err)
		}
	}
	if _, err := sandbox.Profile("lax"); err == nil {
		t.Error("Profile(lax) succeeded")
	}
}

func TestExec_CallerCancel(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	c, cancel := context_WithTimeout(50 * time.Millisecond)
	defer cancel()
	res, err := sb.Exec(c, `sleep 5`, sandbox.ExecOptions{})
	if err == nil || res.ExitCode == 0 {
		t.Errorf("cancelled Exec: exit %d err %v", res.ExitCode, err)
	}
}

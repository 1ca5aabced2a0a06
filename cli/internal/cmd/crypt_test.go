package cmd

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The key flags and environment, encrypt and decrypt, end to end through
// the CLI: the plaintext never reaches the file, every refusal is one
// line with a next step, and the key never appears in any output.
func TestCrypt_CLI(t *testing.T) {
	t.Chdir(t.TempDir())
	key := strings.Repeat("ab", 32)
	other := strings.Repeat("cd", 32)
	os.WriteFile("k", []byte(key+"\n"), 0o600)
	os.WriteFile("other", []byte(other), 0o600)
	mustRun(t, "init", "t", "--key-file", "k", "--cipher", "aes256gcm")
	mustRun(t, "--key-file", "k", "fs", "t", "write", "/s.txt", "MARKER-CLI-SECRET")
	checkOut(t, "cat", mustRun(t, "--key-file", "k", "fs", "t", "cat", "/s.txt"), "MARKER-CLI-SECRET")
	if out := mustRun(t, "--key-file", "k", "migrate", "t"); !strings.Contains(out, "is up to date") {
		t.Errorf("migrate with the key: %q", out)
	}
	wantFail(t, 1, []string{"migrate", "t"}, "is encrypted", "--key-file")
	t.Setenv("AGENTFS_KEY", key)
	checkOut(t, "cat with AGENTFS_KEY", mustRun(t, "fs", "t", "cat", "/s.txt"), "MARKER-CLI-SECRET")
	os.Unsetenv("AGENTFS_KEY")
	db, _ := os.ReadFile(".agentfs/t.db")
	if bytes.Contains(db, []byte("MARKER-CLI-SECRET")) || bytes.Contains(db, []byte("SQLite format 3")) {
		t.Fatal("the database file holds plaintext")
	}

	var outs []result
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fs", "t", "cat", "/s.txt"}, "is encrypted"},
		{[]string{"--key-file", "other", "fs", "t", "cat", "/s.txt"}, "wrong key"},
		{[]string{"--key", key, "--cipher", "aegis256", "fs", "t", "cat", "/s.txt"}, "--cipher aes256gcm"},
		{[]string{"--key", key[:30], "fs", "t", "cat", "/s.txt"}, "needs a 32-byte key"},
		{[]string{"--key", "zz" + key[2:], "fs", "t", "cat", "/s.txt"}, "not hexadecimal"},
		{[]string{"--cipher", "aes256gcm", "fs", "t", "cat", "/s.txt"}, "without a key"},
	} {
		before, _ := os.ReadFile(".agentfs/t.db")
		r := wantFail(t, 1, c.args, c.want)
		// One line that names the fix, or one and a "Try:" line.
		if lines := strings.Count(strings.TrimSpace(r.err), "\n"); lines > 1 || lines == 1 && !strings.Contains(r.err, "Try:") {
			t.Errorf("agentfs %s: %d lines of error:\n%s", strings.Join(c.args, " "), lines+1, r.err)
		}
		after, _ := os.ReadFile(".agentfs/t.db")
		if !bytes.Equal(before, after) {
			t.Errorf("agentfs %s changed the database", strings.Join(c.args, " "))
		}
		outs = append(outs, r)
	}

	// Decrypt, then the plain database refuses a key and opens without.
	mustRun(t, "--key-file", "k", "decrypt", "t")
	checkOut(t, "cat after decrypt", mustRun(t, "fs", "t", "cat", "/s.txt"), "MARKER-CLI-SECRET")
	outs = append(outs, wantFail(t, 1, []string{"--key-file", "k", "fs", "t", "cat", "/s.txt"}, "not encrypted", "agentfs encrypt t"))
	// Encrypt again, with the environment and another cipher.
	t.Setenv("AGENTFS_KEY", other)
	t.Setenv("AGENTFS_CIPHER", "aegis256")
	mustRun(t, "encrypt", "t")
	// Each agentfs process takes the key out of its environment once read.
	if _, ok := os.LookupEnv("AGENTFS_KEY"); ok {
		t.Error("AGENTFS_KEY is still in the environment after agentfs read it")
	}
	t.Setenv("AGENTFS_KEY", other)
	checkOut(t, "cat after encrypt", mustRun(t, "fs", "t", "cat", "/s.txt"), "MARKER-CLI-SECRET")
	os.Unsetenv("AGENTFS_KEY")
	os.Unsetenv("AGENTFS_CIPHER")
	outs = append(outs, wantFail(t, 1, []string{"fs", "t", "cat", "/s.txt"}, "cipher aegis256"))
	db, _ = os.ReadFile(".agentfs/t.db")
	if bytes.Contains(db, []byte("MARKER-CLI-SECRET")) {
		t.Fatal("the re-encrypted database holds plaintext")
	}

	help := mustRun(t, "fs", "--help")
	if !strings.Contains(help, "visible to other users") {
		t.Errorf("help does not warn that --key is visible to other users:\n%s", help)
	}
	for _, r := range outs {
		for _, k := range []string{key, other, key[:30]} {
			if strings.Contains(r.out+r.err, k) {
				t.Errorf("output shows a key: %q", r.err)
			}
		}
	}
}

// encrypt, decrypt and init --force replace the database file: while
// another process has it open they refuse, change nothing, and say which
// process and what to do; once it is closed they go through. (Before, the
// other process kept writing to the replaced file, and lost it.)
func TestReplacing_RefusedWhileOpenElsewhere(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("k", []byte(strings.Repeat("ab", 32)), 0o600)
	mustRun(t, "init", "t")
	mustRun(t, "fs", "t", "write", "/a.txt", "kept")

	// Another process: an agentfs shell on the agent.
	sh := startShell(t, "sh", "-i", "t")
	sh.say(t, "cat /a.txt; echo", "kept\n")

	namesHolder(t, wantFail(t, 1, []string{"--key-file", "k", "encrypt", "t"}, "open in another process", "unchanged", "agentfs encrypt t again"), sh.cmd.Process.Pid)
	namesHolder(t, wantFail(t, 1, []string{"init", "t", "--force"}, "open in another process", "unchanged", "agentfs init --force t again"), sh.cmd.Process.Pid)
	if db, _ := os.ReadFile(".agentfs/t.db"); !bytes.HasPrefix(db, []byte("SQLite format 3\x00")) {
		t.Fatal("the refused encrypt replaced the database")
	}
	// The shell still works on the same file, and its write is kept.
	sh.say(t, "echo more > /b.txt; echo done", "done\n")
	sh.close(t)

	mustRun(t, "--key-file", "k", "encrypt", "t")
	for _, s := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(".agentfs/t.db" + s); err == nil {
			t.Errorf("the original's t.db%s is left beside the encrypted database", s)
		}
	}
	checkOut(t, "b.txt after encrypt", mustRun(t, "--key-file", "k", "fs", "t", "cat", "/b.txt"), "more\n")

	// decrypt, the same way.
	sh2 := startShell(t, "--key-file", "k", "sh", "-i", "t")
	sh2.say(t, "cat /b.txt", "more\n")
	namesHolder(t, wantFail(t, 1, []string{"--key-file", "k", "decrypt", "t"}, "open in another process", "unchanged"), sh2.cmd.Process.Pid)
	sh2.close(t)
	mustRun(t, "--key-file", "k", "decrypt", "t")
	checkOut(t, "b.txt after decrypt", mustRun(t, "fs", "t", "cat", "/b.txt"), "more\n")
}

// namesHolder checks that a refusal names the process holding the
// database, when it names one: a POSIX lock (SQLite's, with cgo) says
// whose it is; an OFD lock (ncruces', the CGO-free build) does not.
func namesHolder(t *testing.T, r result, pid int) {
	t.Helper()
	if strings.Contains(r.err, "(pid ") && !strings.Contains(r.err, fmt.Sprintf("(pid %d)", pid)) {
		t.Errorf("the refusal names another process than %d: %s", pid, r.err)
	}
}

// heldShell is an agentfs shell in another process, which holds its
// agent open while it reads commands from a pipe.
type heldShell struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

// startShell starts this test binary as `agentfs ARGS...`.
func startShell(t *testing.T, args ...string) *heldShell {
	t.Helper()
	sh := &heldShell{cmd: exec.Command(os.Args[0], args...)}
	sh.cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	sh.cmd.Stderr = &sh.stderr
	var err error
	if sh.stdin, err = sh.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := sh.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.cmd.Process.Kill(); sh.cmd.Wait() })
	sh.out = bufio.NewReader(stdout)
	return sh
}

// say runs a command line and checks that its line of output (after
// -i's prompt) ends with want.
func (sh *heldShell) say(t *testing.T, line, want string) {
	t.Helper()
	fmt.Fprintln(sh.stdin, line)
	if got, err := sh.out.ReadString('\n'); !strings.HasSuffix(got, want) {
		t.Fatalf("the shell said %q (%v) to %q; stderr: %s", got, err, line, sh.stderr.String())
	}
}

// close ends the shell's input and waits for it to exit successfully.
func (sh *heldShell) close(t *testing.T) {
	t.Helper()
	sh.stdin.Close()
	if err := sh.cmd.Wait(); err != nil {
		t.Fatalf("the shell: %v; stderr: %s", err, sh.stderr.String())
	}
}

package cmd

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// needNFSCp skips when Debian's libnfs-utils are missing, unless
// AGENTFS_REQUIRE_COMPAT=1 (CI) makes that a failure.
func needNFSCp(t *testing.T) {
	t.Helper()
	for _, p := range []string{"nfs-ls", "nfs-cat", "nfs-cp"} {
		if _, err := exec.LookPath(p); err != nil {
			msg := p + " not found: install Debian's libnfs-utils (apt-get install libnfs-utils) to test agentfs serve nfs with a real client"
			if os.Getenv("AGENTFS_REQUIRE_COMPAT") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

var nfsURLLine = regexp.MustCompile(`libnfs URL:\s+nfs://([^/\s]+)/(\?\S+)`)

// serveNFS starts "agentfs serve nfs ARGS" and returns a function making
// the libnfs URL of a path, its stderr, and a function that stops it and
// checks that it ended cleanly.
func serveNFS(t *testing.T, args ...string) (url func(string) string, stderr *syncBuffer, stop func()) {
	t.Helper()
	stderr = &syncBuffer{}
	cancel, wait := startCLI(t, strings.NewReader(""), io.Discard, stderr, append([]string{"serve", "nfs"}, args...)...)
	deadline := time.Now().Add(10 * time.Second)
	var m []string
	for m == nil {
		if m = nfsURLLine.FindStringSubmatch(stderr.String()); m == nil {
			if time.Now().After(deadline) {
				t.Fatalf("no libnfs URL on stderr:\n%s", stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	host, query := m[1], m[2]
	url = func(p string) string { return "nfs://" + host + "/" + p + query }
	return url, stderr, func() {
		t.Helper()
		cancel()
		if err := wait(); err != nil {
			t.Errorf("serve nfs: %v; stderr:\n%s", err, stderr.String())
		}
	}
}

func nfsTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func TestServeNFSUsage(t *testing.T) {
	newAgent(t)
	wantFail(t, 2, []string{"serve", "nfs"}, "accepts 1 arg")
	wantFail(t, 2, []string{"serve", "nfs", "t", "--port", "70000"}, "--port")
	wantFail(t, 1, []string{"serve", "nfs", "t", "--bind", "no such host!", "--port", "0"}, "listen")
	if out := mustRun(t, "serve", "nfs", "--help"); !strings.Contains(out, "nfs-ls") || !strings.Contains(out, "--bind") {
		t.Errorf("help:\n%s", out)
	}
}

// TestServeNFS serves through the command and uses libnfs-utils: list,
// read, write, a 100 MiB round trip with checksums, then reads what NFS
// wrote through the CLI.
func TestServeNFS(t *testing.T) {
	needNFSCp(t)
	newAgent(t)
	mustRun(t, "fs", "t", "write", "/hello.txt", "hello from agentfs")
	url, stderr, stop := serveNFS(t, "t", "--port", "0")
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("warning for a loopback address:\n%s", stderr.String())
	}
	if out := nfsTool(t, "nfs-ls", url("")); !strings.Contains(out, "hello.txt") {
		t.Errorf("nfs-ls:\n%s", out)
	}
	if out := nfsTool(t, "nfs-cat", url("/hello.txt")); out != "hello from agentfs" {
		t.Errorf("nfs-cat = %q", out)
	}

	size := 100 << 20
	if testing.Short() {
		size = 4 << 20
	}
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{7}).Read(data)
	want := sha256.Sum256(data)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	data = nil
	start := time.Now()
	nfsTool(t, "nfs-cp", in, url("/big.bin"))
	up := time.Since(start)
	start = time.Now()
	nfsTool(t, "nfs-cp", url("/big.bin"), out)
	down := time.Since(start)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != want {
		t.Errorf("sha256 differs after the round trip (%d bytes back of %d)", len(got), size)
	}
	t.Logf("%d MiB: nfs-cp in %v, out %v", size>>20, up.Round(time.Millisecond), down.Round(time.Millisecond))
	stop()

	// What NFS wrote is in the database.
	if r := run(t, "", "fs", "t", "cat", "/big.bin"); r.code != 0 || sha256.Sum256([]byte(r.out)) != want {
		t.Errorf("fs cat /big.bin: exit %d, %d bytes, checksum differs; stderr %s", r.code, len(r.out), r.err)
	}
}

func TestServeNFSWarnsOffLoopback(t *testing.T) {
	newAgent(t)
	_, stderr, stop := serveNFS(t, "t", "--bind", "0.0.0.0", "--port", "0")
	stop()
	for _, w := range []string{"warning", "not a loopback address", "read and write", "nfs://HOST/"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
}

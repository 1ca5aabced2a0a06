//go:build linux

package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountedAgent makes agent "t" in a fresh directory with an empty mount
// point "mnt", and makes sure nothing stays mounted or running after the
// test.
func mountedAgent(t *testing.T) string {
	t.Helper()
	canMount(t)
	newAgent(t)
	wd, _ := os.Getwd()
	mnt := filepath.Join(wd, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if listed(t, mnt) {
			unmountDir(mnt, true)
		}
		waitServerGone(t, mnt)
	})
	return mnt
}

// listed reports whether "agentfs mount" lists dir.
func listed(t *testing.T, dir string) bool {
	t.Helper()
	out := mustRun(t, "mount")
	return strings.Contains(out, " on "+dir+"\n")
}

// serverPID finds the process serving dir (not a child of the test: it
// was started detached).
func serverPID(dir string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		hasDir, fg := false, false
		for _, a := range args {
			hasDir = hasDir || a == dir
			fg = fg || a == "--foreground"
		}
		if hasDir && fg {
			return pid
		}
	}
	return 0
}

// waitServerGone waits until no process serves dir any more.
func waitServerGone(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for serverPID(dir) != 0 {
		if time.Now().After(deadline) {
			t.Errorf("the server of %s is still running", dir)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMountUmount(t *testing.T) {
	mnt := mountedAgent(t)
	mustRun(t, "fs", "t", "write", "/before", "from the CLI")
	out := mustRun(t, "mount", "t", "mnt")
	if !strings.Contains(out, "Mounted ") || !strings.Contains(out, mnt) {
		t.Errorf("mount printed %q", out)
	}
	// Ready when the command returns.
	if b, err := os.ReadFile(filepath.Join(mnt, "before")); err != nil || string(b) != "from the CLI" {
		t.Fatalf("read through the mount: %q, %v", b, err)
	}
	if !listed(t, mnt) {
		t.Fatalf("agentfs mount does not list %s", mnt)
	}
	wantFail(t, 1, []string{"mount", "t", "mnt"}, "already an agentfs mount", "agentfs umount mnt")
	// Written through the mount, read by the CLI (another connection)
	// while mounted.
	if err := os.WriteFile(filepath.Join(mnt, "after"), []byte("through FUSE"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkOut(t, "fs cat", mustRun(t, "fs", "t", "cat", "/after"), "through FUSE")
	// A busy mount is refused, then unmounts once released.
	f, err := os.Open(filepath.Join(mnt, "after"))
	if err != nil {
		t.Fatal(err)
	}
	wantFail(t, 1, []string{"umount", "mnt"}, "in use", "--lazy")
	f.Close()
	mustRun(t, "umount", "mnt")
	if listed(t, mnt) {
		t.Errorf("still listed after umount")
	}
	waitServerGone(t, mnt)
	wantFail(t, 1, []string{"umount", "mnt"}, "not an agentfs mount")
	checkOut(t, "fs cat after unmount", mustRun(t, "fs", "t", "cat", "/after"), "through FUSE")
}

func TestMountUsage(t *testing.T) {
	newAgent(t)
	wantFail(t, 2, []string{"mount", "t"}, "ID_OR_PATH and DIR")
	wantFail(t, 2, []string{"mount", "t", "a", "b"}, "ID_OR_PATH and DIR")
	wantFail(t, 2, []string{"umount"})
	wantFail(t, 2, []string{"exec", "t"}, "exec takes")
	wantFail(t, 2, []string{"exec", "t", "ls"}, "exec takes") // no "--"
	if _, err := os.Stat("/dev/fuse"); err == nil {
		wantFail(t, 1, []string{"mount", "t", "missing-dir"}, "does not exist", "mkdir -p missing-dir")
		os.Mkdir("mnt", 0o755)
		wantFail(t, 1, []string{"mount", "nope", "mnt"}, `no agent database "nope"`, "agentfs init nope")
		wantFail(t, 2, []string{"mount", "t", "mnt", "--uid", "-5"}, "not a valid id")
	}
	wantFail(t, 1, []string{"umount", "."}, "not an agentfs mount")
}

func TestMountOptions(t *testing.T) {
	mnt := mountedAgent(t)
	mustRun(t, "fs", "t", "write", "/f", "x")
	mustRun(t, "mount", "t", "mnt", "--uid", "4242", "--gid", "4343")
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(mnt, "f"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 4242 || st.Gid != 4343 {
		t.Errorf("--uid/--gid: owner %d:%d", st.Uid, st.Gid)
	}
	mustRun(t, "umount", "mnt")
	waitServerGone(t, mnt)
}

// TestMountAutoUnmount kills the server with SIGKILL: --auto-unmount
// removes the dead mount.
func TestMountAutoUnmount(t *testing.T) {
	mnt := mountedAgent(t)
	mustRun(t, "mount", "t", "mnt", "--auto-unmount")
	pid := serverPID(mnt)
	if pid == 0 {
		t.Fatal("no server process found")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for listed(t, mnt) {
		if time.Now().After(deadline) {
			t.Fatal("the mount of a killed server is still there")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMountForeground serves in the foreground until SIGINT.
func TestMountForeground(t *testing.T) {
	mnt := mountedAgent(t)
	exe, _ := os.Executable()
	var stderr bytes.Buffer
	fg := exec.Command(exe, "mount", "t", "mnt", "-f")
	fg.Stderr = &stderr
	if err := fg.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !listed(t, mnt) {
		if time.Now().After(deadline) {
			fg.Process.Kill()
			t.Fatalf("foreground mount not listed; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(mnt, "fg"), []byte("x"), 0o644); err != nil {
		t.Error(err)
	}
	fg.Process.Signal(syscall.SIGINT)
	waited := make(chan error, 1)
	go func() { waited <- fg.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("foreground server: %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		fg.Process.Kill()
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		t.Fatalf("foreground server still running 30 s after SIGINT; stderr: %s", stderr.String())
	}
	if listed(t, mnt) {
		t.Errorf("still mounted after SIGINT")
	}
	if !strings.Contains(stderr.String(), "Mounted ") {
		t.Errorf("foreground stderr: %q", stderr.String())
	}
	checkOut(t, "fs cat", mustRun(t, "fs", "t", "cat", "/fg"), "x")
}

func TestExec(t *testing.T) {
	canMount(t)
	newAgent(t)
	mustRun(t, "fs", "t", "write", "/in", "input")
	r := run(t, "", "exec", "t", "--", "sh", "-c", `cat in; echo " out" > out; test "$PWD" = "$AGENTFS_MOUNT" && exit 3`)
	if r.code != 3 || r.out != "input" {
		t.Fatalf("exec: code %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	checkOut(t, "written by the command", mustRun(t, "fs", "t", "cat", "/out"), " out\n")
	r = run(t, "", "exec", "t", "--", "true")
	if r.code != 0 {
		t.Errorf("exec true: %d %q", r.code, r.err)
	}
	wantFail(t, 127, []string{"exec", "t", "--", "no-such-command-xyz"}, "command not found")
	r = run(t, "", "exec", "t", "--", "sh", "-c", "kill -TERM $$")
	if r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("command killed by SIGTERM: exit %d", r.code)
	}
	// Nothing stays mounted.
	if out := mustRun(t, "mount"); strings.Contains(out, "agentfs-exec-") {
		t.Errorf("left mounted: %s", out)
	}
}

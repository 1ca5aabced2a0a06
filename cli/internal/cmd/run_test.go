//go:build linux

package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// helperName is the name under which this test binary, linked into the
// directory a run overlays, acts as a small program for the sandbox (the
// sandbox's /tmp is private, so the binary where "go test" built it is
// out of reach).
const helperName = "agentfs-run-helper"

func init() {
	if filepath.Base(os.Args[0]) == helperName {
		os.Exit(runHelper(os.Args[1:]))
	}
}

// runHelper runs inside the sandbox:
//
//	write PATH...   writes each path, prints "PATH: ok" or its errno name
//	dial ADDR       prints "connected" or "error: ..."
//	net             prints the number of routes and of interfaces up
func runHelper(args []string) int {
	switch args[0] {
	case "write":
		for _, p := range args[1:] {
			err := os.WriteFile(p, []byte("x"), 0o644)
			var errno syscall.Errno
			switch {
			case err == nil:
				fmt.Printf("%s: ok\n", p)
			case errors.As(err, &errno):
				fmt.Printf("%s: %s\n", p, vfs.ErrnoName(errno))
			default:
				fmt.Printf("%s: %v\n", p, err)
			}
		}
	case "dial":
		c, err := net.DialTimeout("tcp", args[1], 5*time.Second)
		if err != nil {
			fmt.Println("error:", err)
			return 0
		}
		c.Close()
		fmt.Println("connected")
	case "net":
		b, err := os.ReadFile("/proc/net/route")
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		routes := 0
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			if strings.TrimSpace(l) != "" {
				routes++
			}
		}
		ifs, err := net.Interfaces()
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		up := 0
		for _, i := range ifs {
			if i.Flags&net.FlagUp != 0 {
				up++
			}
		}
		fmt.Printf("routes=%d up=%d\n", routes, up)
	case "escape":
		// Try to reach around the sandbox: args[1] is a host file
		// hidden by the private /tmp, args[2] a name to create,
		// args[3] the pid of "agentfs run", args[4:] pids of
		// bystanders on the host. Only those pids and the run's own
		// processes are tried: a sandbox that leaks must not litter
		// the working directories of the developer's other processes.
		err := syscall.Mount("", "/etc", "", syscall.MS_REMOUNT|syscall.MS_BIND, "")
		fmt.Println("remount rw:", errName(err))
		wd, _ := os.Getwd()
		fmt.Println("unmount the overlay:", errName(syscall.Unmount(wd, syscall.MNT_DETACH)))
		for _, pid := range args[4:] {
			if _, err := os.Stat("/proc/" + pid); err == nil {
				fmt.Println("sees host pid " + pid)
			}
		}
		for _, pid := range escapeTargets(args[3], args[4:]) {
			if _, err := os.ReadFile("/proc/" + pid + "/root" + args[1]); err == nil {
				fmt.Println("read the host through /proc/" + pid + "/root")
			}
			os.WriteFile("/proc/"+pid+"/cwd/"+args[2], []byte("x"), 0o644)
			os.WriteFile("/proc/"+pid+"/root"+wd+"/"+args[2], []byte("x"), 0o644)
		}
	case "probe":
		// Attack probes (run_attack_test.go): each prints one line.
		for _, a := range args[1:] {
			fmt.Println(probe(a))
		}
	case "nested-mount":
		// Started by the probe "nested-mount" in a new user and mount
		// namespace: a tmpfs mount there.
		fmt.Println(probeErr(syscall.Mount("tmpfs", "/tmp", "tmpfs", 0, "")))
	case "cli":
		// This test binary as the agentfs CLI.
		return Main(args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "bystander":
		// A host process that has nothing to do with the sandbox:
		// root without capabilities (an empty bounding set at exec), so
		// that the kernel's capability check does not hide it when the
		// sandbox's root (without a user namespace) tries its cwd:
		// only the PID namespace does.
		runtime.LockOSThread()
		for c := uintptr(0); c < 64; c++ {
			syscall.RawSyscall6(syscall.SYS_PRCTL, prCapbsetDrop, c, 0, 0, 0, 0)
		}
		path, err := exec.LookPath("sleep")
		if err == nil {
			err = syscall.Exec(path, []string{"sleep", "1000"}, os.Environ())
		}
		fmt.Println(err)
		return 1
	default:
		return 2
	}
	return 0
}

// escapeTargets lists the pids the escape helper tries: the given ones,
// and the run's own processes as far as this process sees them: itself,
// its ancestors up to (not beyond) the run's pid, and their children (the
// FUSE server is a child of an ancestor).
func escapeTargets(run string, given []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(pid string) {
		if pid != "" && pid != "0" && !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	for _, pid := range given {
		add(pid)
	}
	add(run)
	for pid := strconv.Itoa(os.Getpid()); pid != "" && pid != "0" && pid != run; pid = parentPID(pid) {
		add(pid)
		b, _ := os.ReadFile("/proc/" + pid + "/task/" + pid + "/children")
		for _, c := range strings.Fields(string(b)) {
			add(c)
		}
	}
	return out
}

// parentPID reads the PPid of pid from /proc ("" when unknown).
func parentPID(pid string) string {
	b, _ := os.ReadFile("/proc/" + pid + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PPid:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func errName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return vfs.ErrnoName(errno)
	}
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// sandboxProject makes a project directory with a few files, moves into
// it, gives the test its own registry, and links the helper in.
func sandboxProject(t *testing.T) string {
	t.Helper()
	canMount(t)
	if os.Geteuid() != 0 {
		t.Skip("skipping: the run tests run as root (CI does)")
	}
	t.Setenv("AGENTFS_RUNTIME_DIR", t.TempDir())
	dir := t.TempDir()
	for p, content := range map[string]string{
		"a.txt": "hello\n", "del.txt": "delete me\n", "old.txt": "rename me\n",
		"sub/s.txt": "in sub\n", "sub/deep/d.txt": "deep\n",
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(exe, filepath.Join(dir, helperName)); err != nil {
		copyFile(t, exe, filepath.Join(dir, helperName))
	}
	t.Chdir(dir)
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// hostTree describes every entry under dir except .agentfs: type, mode,
// content or link target.
func hostTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".agentfs" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if got[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %q, want %q", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: %q, not expected", k, v))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s:\n%s", what, strings.Join(diffs, "\n"))
	}
}

// noRunLeftovers checks that a finished run left no mount and no
// registry entry behind.
func noRunLeftovers(t *testing.T) {
	t.Helper()
	if out := mustRun(t, "mount"); strings.Contains(out, "agentfs-run-") {
		t.Errorf("a run left a mount on the host: %s", out)
	}
	if out := mustRun(t, "ps"); strings.Contains(out, " run ") {
		t.Errorf("agentfs ps after the run:\n%s", out)
	}
}

// TestRunOverlay: a run that writes, deletes and renames leaves the host
// directory as it was; the session keeps the changes for the next run.
func TestRunOverlay(t *testing.T) {
	dir := sandboxProject(t)
	before := hostTree(t, dir)
	r := run(t, "", "run", "--session", "s", "--", "sh", "-c", `
set -e
echo "$AGENTFS $AGENTFS_SANDBOX $AGENTFS_SESSION $PWD"
echo more >> a.txt
rm del.txt
mv old.txt new.txt
mkdir -p d/e && echo n > d/e/n.txt
ln -s a.txt link
chmod 600 sub/s.txt
rm -r sub/deep
cat a.txt new.txt`)
	if r.code != 0 {
		t.Fatalf("run: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	checkOut(t, "inside the sandbox", r.out, lines("1 linux-namespace s "+dir, "hello", "more", "rename me"))
	for _, want := range []string{"agentfs run --session s", "agentfs diff s", "agentfs commit s"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("the hints after the run lack %q:\n%s", want, r.err)
		}
	}
	sameTree(t, "the host directory after the run", hostTree(t, dir), before)
	if _, err := os.Stat(filepath.Join(dir, ".agentfs", "s.db")); err != nil {
		t.Errorf("session database: %v", err)
	}
	noRunLeftovers(t)

	// Resumed, the session shows the earlier changes.
	r = run(t, "", "run", "--session", "s", "--", "sh", "-c", `LC_ALL=C ls; cat a.txt d/e/n.txt; readlink link; stat -c %a sub/s.txt; ls sub`)
	if r.code != 0 {
		t.Fatalf("resume: exit %d, stderr %q", r.code, r.err)
	}
	checkOut(t, "the resumed session", r.out, lines("a.txt", helperName, "d", "link", "new.txt", "sub", "hello", "more", "n", "a.txt", "600", "s.txt"))
	sameTree(t, "the host directory after the resumed run", hostTree(t, dir), before)

	// The session databases are the host's, read-only, in the sandbox.
	r = run(t, "", "run", "--session", "s", "--", "./"+helperName, "write", ".agentfs/s.db", ".agentfs/new")
	checkOut(t, ".agentfs in the sandbox", r.out, lines(".agentfs/s.db: EROFS", ".agentfs/new: EROFS"))
}

// TestRunDiffCommit: "agentfs diff" lists what a run changed and
// "agentfs commit" makes the host directory what the run saw: the same
// script run natively on a copy gives the same tree.
func TestRunDiffCommit(t *testing.T) {
	dir := sandboxProject(t)
	native := t.TempDir()
	if out, err := exec.Command("cp", "-a", dir+"/.", native).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
	script := `set -e
echo more >> a.txt
rm del.txt
mv old.txt new.txt
mkdir -p d/e && echo n > d/e/n.txt
ln -s a.txt link
chmod 600 sub/s.txt
rm -r sub/deep`
	if r := run(t, "", "run", "--session", "c", "--", "sh", "-c", script); r.code != 0 {
		t.Fatalf("run: exit %d, stderr %q", r.code, r.err)
	}
	if out, err := exec.Command("sh", "-c", "cd "+native+" && "+script).CombinedOutput(); err != nil {
		t.Fatalf("the script natively: %v %s", err, out)
	}
	checkOut(t, "agentfs diff", mustRun(t, "diff", "c"), lines(
		"M file    /a.txt",
		"A dir     /d",
		"A dir     /d/e",
		"A file    /d/e/n.txt",
		"D file    /del.txt",
		"A symlink /link",
		"A file    /new.txt",
		"D file    /old.txt",
		"D dir     /sub/deep",
		"M file    /sub/s.txt"))
	mustRun(t, "commit", "c")
	sameTree(t, "the host directory after commit (against the script run natively)", hostTree(t, dir), hostTree(t, native))
	checkOut(t, "agentfs diff after commit", mustRun(t, "diff", "c"), "")
}

// TestRunReadOnly: outside the working directory, writes fail with EROFS
// except in --allow paths and in the private /tmp.
func TestRunReadOnly(t *testing.T) {
	dir := sandboxProject(t)
	// Paths outside /tmp (the sandbox's /tmp is its own) and inside it.
	varTmp, err := os.MkdirTemp("/var/tmp", "agentfs-run-test-")
	if err != nil {
		t.Skip("skipping: no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(varTmp) })
	allowedOut := filepath.Join(varTmp, "allowed")
	os.Mkdir(allowedOut, 0o755)
	allowedTmp := t.TempDir()
	// A mount below an allowed path is writable too.
	subMount := filepath.Join(allowedTmp, "mnt")
	os.Mkdir(subMount, 0o755)
	if err := syscall.Mount("tmpfs", subMount, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(subMount, syscall.MNT_DETACH) })
	hostTmpFile := filepath.Join(os.TempDir(), fmt.Sprintf("agentfs-run-test-%d", os.Getpid()))
	if err := os.WriteFile(hostTmpFile, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(hostTmpFile) })
	etc := fmt.Sprintf("/etc/agentfs-run-test-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(etc) })

	r := run(t, "", "run", "--allow", allowedOut, "--allow", allowedTmp, "--", "./"+helperName, "write",
		etc, filepath.Join(varTmp, "f"), filepath.Join(allowedOut, "f"), filepath.Join(allowedTmp, "f"),
		filepath.Join(subMount, "f"), "/tmp/private", filepath.Join(dir, "in-overlay"))
	if r.code != 0 {
		t.Fatalf("run: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	checkOut(t, "writes in the sandbox", r.out, lines(
		etc+": EROFS", filepath.Join(varTmp, "f")+": EROFS",
		filepath.Join(allowedOut, "f")+": ok", filepath.Join(allowedTmp, "f")+": ok",
		filepath.Join(subMount, "f")+": ok", "/tmp/private: ok", filepath.Join(dir, "in-overlay")+": ok"))
	for _, p := range []string{filepath.Join(allowedOut, "f"), filepath.Join(allowedTmp, "f"), filepath.Join(subMount, "f")} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "x" {
			t.Errorf("allowed write %s on the host: %q, %v", p, b, err)
		}
	}
	for _, p := range []string{etc, filepath.Join(varTmp, "f"), "/tmp/private", filepath.Join(dir, "in-overlay")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s reached the host", p)
		}
	}
	// The private /tmp does not show the host's.
	r = run(t, "", "run", "--", "sh", "-c", "test -e "+hostTmpFile+" && echo visible || echo hidden")
	checkOut(t, "host /tmp in the sandbox", r.out, "hidden\n")
	noRunLeftovers(t)
}

// TestRunWithoutUserNamespace: root in a container that forbids user
// namespaces gets the same sandbox from a mount namespace alone.
func TestRunWithoutUserNamespace(t *testing.T) {
	dir := sandboxProject(t)
	hostNS, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "run", "--", "readlink", "/proc/self/ns/user")
	if r.code != 0 || r.out == hostNS+"\n" {
		t.Errorf("by default the sandbox has its own user namespace: %q (host %s), %q", r.out, hostNS, r.err)
	}
	t.Setenv("AGENTFS_RUN_USERNS", "off")
	before := hostTree(t, dir)
	etc := fmt.Sprintf("/etc/agentfs-run-test-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(etc) })
	r = run(t, "", "run", "--", "sh", "-c", "rm del.txt && echo x >> a.txt && ./"+helperName+" write "+etc+" b.txt && readlink /proc/self/ns/user")
	if r.code != 0 {
		t.Fatalf("run: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	checkOut(t, "without a user namespace", r.out, lines(etc+": EROFS", "b.txt: ok", hostNS))
	sameTree(t, "the host directory", hostTree(t, dir), before)
}

// TestRunUnprivileged runs the sandbox as user nobody, where the kernel
// allows unprivileged user namespaces (the test opens /dev/fuse to all
// users if needed): the user keeps its uid, the host stays unchanged.
func TestRunUnprivileged(t *testing.T) {
	canMount(t)
	if os.Geteuid() != 0 {
		t.Skip("skipping: needs root to become another user")
	}
	fuseDev, err := os.Stat("/dev/fuse")
	if err != nil {
		t.Skip("skipping: no /dev/fuse")
	}
	if perm := fuseDev.Mode().Perm(); perm&0o006 != 0o006 {
		// Distributions create /dev/fuse with mode 0666; containers
		// often make it 0600. As root, open it to other users for this
		// test and put the mode back afterwards.
		if err := os.Chmod("/dev/fuse", 0o666); err != nil {
			t.Skipf("skipping: /dev/fuse is not open to other users and chmod failed: %v", err)
		}
		t.Cleanup(func() { os.Chmod("/dev/fuse", perm) })
	}
	const nobody = 65534
	// A directory tree user nobody can reach, with a copy of this binary.
	top, err := os.MkdirTemp("", "agentfs-run-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	os.Chmod(top, 0o755)
	exe, _ := os.Executable()
	bin := filepath.Join(top, "agentfs")
	copyFile(t, exe, bin)
	proj, reg := filepath.Join(top, "proj"), filepath.Join(top, "reg")
	for _, d := range []string{proj, reg} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{proj, reg, filepath.Join(proj, "a.txt")} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	c := exec.Command(bin, "run", "--session", "u", "--", "sh", "-c",
		`id -u; echo more >> a.txt; rm a.txt; echo new > b.txt; ls; echo t > /tmp/t && cat /tmp/t
grep CapEff /proc/self/status; (echo x > /var/tmp/agentfs-unpriv-$$) 2>&1 | grep -o "Read-only file system"`)
	c.Dir = proj
	c.Env = append(os.Environ(), "AGENTFS_RUNTIME_DIR="+reg, "HOME="+proj)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	err = c.Run()
	if strings.Contains(stderr.String(), "cannot create the sandbox's user namespace") {
		t.Skip("skipping: this kernel does not allow unprivileged user namespaces: " + stderr.String())
	}
	if err != nil {
		t.Fatalf("run as nobody: %v\nstdout %q\nstderr %q", err, stdout.String(), stderr.String())
	}
	checkOut(t, "run as nobody", stdout.String(), lines("65534", "b.txt", "t", "CapEff:\t0000000000000000", "Read-only file system"))
	// No way around the sandbox either.
	if err := os.Link(bin, filepath.Join(proj, helperName)); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(os.TempDir(), fmt.Sprintf("agentfs-run-marker-%d", os.Getpid()))
	if err := os.WriteFile(marker, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(marker) })
	// The helper tries this process's cwd too: make it the project.
	t.Chdir(proj)
	nobodyCred := &syscall.Credential{Uid: nobody, Gid: nobody}
	bystander, byDir := startBystander(t, nobodyCred)
	c = exec.Command(bin, "run", "--", "./"+helperName, "escape", marker, "escaped", strconv.Itoa(os.Getpid()), strconv.Itoa(bystander))
	c.Dir = proj
	c.Env = append(os.Environ(), "AGENTFS_RUNTIME_DIR="+reg, "HOME="+proj)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("escape attempts as nobody: %v", err)
	}
	checkOut(t, "escape attempts as nobody", string(out), lines("remount rw: EPERM", "unmount the overlay: EPERM"))
	if _, err := os.Stat(filepath.Join(proj, "escaped")); err == nil {
		t.Error("the sandbox of nobody wrote the host directory")
	}
	noBystanderWrites(t, "as nobody", byDir)
	if b, err := os.ReadFile(filepath.Join(proj, "a.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("host a.txt after the run: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(proj, "b.txt")); err == nil {
		t.Error("b.txt reached the host")
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(proj, ".agentfs", "u.db"), &st); err != nil || st.Uid != nobody {
		t.Errorf("session database: uid %d, %v", st.Uid, err)
	}
}

// TestRunNoEscape: root in the sandbox cannot remount, unmount the
// overlay, or reach the host through /proc/PID/root or cwd of the
// sandbox's own processes (init, the FUSE server), whose mount namespace
// shows the host writable, nor of any other process of the host: the
// sandbox has its own PID namespace and /proc, so a bystander (a process
// of the same user with its working directory on the host) is not even
// visible; with or without a user namespace.
func TestRunNoEscape(t *testing.T) {
	dir := sandboxProject(t)
	marker := filepath.Join(os.TempDir(), fmt.Sprintf("agentfs-run-marker-%d", os.Getpid()))
	if err := os.WriteFile(marker, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(marker) })
	bystander, byDir := startBystander(t, nil)
	for _, userns := range []string{"on", "off"} {
		t.Setenv("AGENTFS_RUN_USERNS", userns)
		r := run(t, "", "run", "--", "./"+helperName, "escape", marker, "escaped", strconv.Itoa(os.Getpid()), strconv.Itoa(bystander))
		checkOut(t, "escape attempts, user namespace "+userns, r.out, lines("remount rw: EPERM", "unmount the overlay: EPERM"))
		if _, err := os.Stat(filepath.Join(dir, "escaped")); err == nil {
			t.Errorf("user namespace %s: the sandbox wrote the host directory", userns)
			os.Remove(filepath.Join(dir, "escaped"))
		}
		noBystanderWrites(t, "user namespace "+userns, byDir)
	}
}

// startBystander starts a process on the host that has nothing to do
// with the sandbox, its working directory a fresh directory: a sandbox
// that can see it can write there through /proc/PID/cwd. It runs as
// cred's user, else as this one without capabilities (see the helper).
func startBystander(t *testing.T, cred *syscall.Credential) (pid int, dir string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "agentfs-bystander-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	c := exec.Command("sleep", "1000")
	if cred == nil {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		c = &exec.Cmd{Path: exe, Args: []string{helperName, "bystander"}}
	}
	c.Dir = dir
	c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c.Process.Pid, dir
}

// noBystanderWrites checks that nothing appeared in a bystander's
// working directory.
func noBystanderWrites(t *testing.T, what, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("%s: the sandbox wrote %s in the working directory of a host process", what, e.Name())
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// TestRunNoNetwork: --no-network leaves no route, even to the host's
// loopback; without it the host's network is there.
func TestRunNoNetwork(t *testing.T) {
	sandboxProject(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	r := run(t, "", "run", "--", "./"+helperName, "dial", addr)
	checkOut(t, "dial with the network", r.out, "connected\n")
	r = run(t, "", "run", "--no-network", "--", "./"+helperName, "dial", addr)
	if !strings.HasPrefix(r.out, "error:") || !strings.Contains(r.out, "unreachable") {
		t.Errorf("dial with --no-network: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	r = run(t, "", "run", "--no-network", "--", "./"+helperName, "net")
	checkOut(t, "routes and interfaces with --no-network", r.out, "routes=0 up=0\n")
}

// TestRunExitStatus: the command's status is agentfs's.
func TestRunExitStatus(t *testing.T) {
	sandboxProject(t)
	if r := run(t, "", "run", "--", "sh", "-c", "exit 7"); r.code != 7 {
		t.Errorf("exit 7: %d %q", r.code, r.err)
	}
	if r := run(t, "", "run", "--", "sh", "-c", "kill -TERM $$"); r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("killed by SIGTERM: %d %q", r.code, r.err)
	}
	wantFail(t, 127, []string{"run", "--session", "typo", "--", "no-such-command-xyz"}, "no-such-command-xyz: command not found")
	if _, err := os.Stat(".agentfs/typo.db"); err == nil {
		t.Error("a session whose command never ran was kept")
	}
	// Without "--" too, and the command's flags stay its own.
	r := run(t, "", "run", "sh", "-c", "echo $0", "x")
	if r.code != 0 || r.out != "x\n" {
		t.Errorf("run sh -c: %d %q %q", r.code, r.out, r.err)
	}
	noRunLeftovers(t)
}

// TestRunSignals: a signal sent to agentfs reaches the command, and ps
// lists the run meanwhile.
func TestRunSignals(t *testing.T) {
	sandboxProject(t)
	exe, _ := os.Executable()
	c := exec.Command(exe, "run", "--session", "sig", "--", "sh", "-c",
		`trap 'echo got TERM; exit 42' TERM; echo ready; while :; do sleep 0.05; done`)
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	br := bufio.NewReader(stdout)
	if line, err := br.ReadString('\n'); line != "ready\n" {
		t.Fatalf("first line %q, %v; stderr %s", line, err, stderr.String())
	}
	out := mustRun(t, "ps")
	if !strings.Contains(out, fmt.Sprintf("%d", c.Process.Pid)) || !strings.Contains(out, " sig ") || !strings.Contains(out, "trap") {
		t.Errorf("agentfs ps during the run:\n%s", out)
	}
	c.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(br)
	err = c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 42 {
		t.Errorf("exit after SIGTERM: %v, want status 42; stderr %s", err, stderr.String())
	}
	if string(rest) != "got TERM\n" {
		t.Errorf("after SIGTERM the command printed %q", rest)
	}
	noRunLeftovers(t)
}

// TestRunPsInside: "agentfs ps" in the sandbox, whose /proc shows none of
// the host's processes, lists the run it is in instead of calling it
// stale.
func TestRunPsInside(t *testing.T) {
	sandboxProject(t)
	// Outside /tmp, which the sandbox replaces with its own.
	reg, err := os.MkdirTemp("/var/tmp", "agentfs-run-reg-")
	if err != nil {
		t.Skip("skipping: no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(reg) })
	t.Setenv("AGENTFS_RUNTIME_DIR", reg)
	r := run(t, "", "run", "--session", "inside", "--", "./"+helperName, "cli", "ps")
	if r.code != 0 {
		t.Fatalf("agentfs ps in the sandbox: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if !strings.Contains(r.out, fmt.Sprintf("%d  run", os.Getpid())) || !strings.Contains(r.out, " inside ") || strings.Contains(r.out, "stale") || strings.Contains(r.err, "prune") {
		t.Errorf("agentfs ps in the sandbox:\n%s%s", r.out, r.err)
	}
}

// TestRunSessionErrors: bad names, missing --allow paths, a session of
// another directory.
func TestRunSessionErrors(t *testing.T) {
	dir := sandboxProject(t)
	wantFail(t, 1, []string{"run", "--session", "a/b", "--", "true"}, "invalid session name", "Try: agentfs run --session")
	wantFail(t, 1, []string{"run", "--allow", "missing-dir", "--", "true"}, "--allow missing-dir", "Try: mkdir -p missing-dir")
	mustRun(t, "init", "plain")
	wantFail(t, 1, []string{"run", "--session", "plain", "--", "true"}, "not a session", "Try:")
	if r := run(t, "", "run", "--session", "here", "--", "true"); r.code != 0 {
		t.Fatalf("run: %d %q", r.code, r.err)
	}
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, ".agentfs"), 0o755)
	copyFile(t, filepath.Join(dir, ".agentfs", "here.db"), filepath.Join(other, ".agentfs", "here.db"))
	t.Chdir(other)
	wantFail(t, 1, []string{"run", "--session", "here", "--", "true"}, "is an overlay of "+dir, "Try: cd "+dir)
}

// TestPsPrune: a mount whose server was killed is stale; prune
// unmounts it and drops its registry entry; live ones stay.
func TestPsPrune(t *testing.T) {
	mnt := mountedAgent(t)
	t.Setenv("AGENTFS_RUNTIME_DIR", t.TempDir())
	// Other tests' mounts may come and go meanwhile: only lines about
	// mnt count.
	mustRun(t, "mount", "t", "mnt")
	out := mustRun(t, "ps")
	pid := serverPID(mnt)
	if pid == 0 || !strings.Contains(out, fmt.Sprintf("%d  mount", pid)) || !strings.Contains(out, mnt) {
		t.Fatalf("agentfs ps with a mount (server %d):\n%s", pid, out)
	}
	if out := mustRun(t, "prune"); strings.Contains(out, mnt) {
		t.Errorf("prune with a live mount:\n%s", out)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(20 * time.Second)
	for !mountDead(mnt) || serverPID(mnt) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the mount of the killed server is not dead")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := run(t, "", "ps")
	if !strings.Contains(r.out, "mount (stale)") || !strings.Contains(r.err, "agentfs prune") {
		t.Errorf("agentfs ps with a dead server: %q %q", r.out, r.err)
	}
	out = mustRun(t, "prune", "--dry-run")
	if !strings.Contains(out, "would unmount "+mnt) || !strings.Contains(out, fmt.Sprintf("would remove the entry of mount pid %d", pid)) {
		t.Errorf("prune --dry-run:\n%s", out)
	}
	if !listed(t, mnt) {
		t.Fatal("prune --dry-run unmounted")
	}
	out = mustRun(t, "prune")
	if !strings.Contains(out, "unmount "+mnt) || !strings.Contains(out, fmt.Sprintf("remove the entry of mount pid %d", pid)) {
		t.Errorf("prune:\n%s", out)
	}
	if listed(t, mnt) {
		t.Error("still mounted after prune")
	}
	if out := mustRun(t, "ps"); strings.Contains(out, mnt) {
		t.Errorf("ps after prune:\n%s", out)
	}
	if out := mustRun(t, "prune"); strings.Contains(out, mnt) {
		t.Errorf("prune again:\n%s", out)
	}
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("skipping: no pseudo-terminals:", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal("unlockpt:", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal("ptsname:", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestRunTerminal: on a terminal the command's process group is the
// foreground one: ^C typed reaches it (and agentfs passes its status on),
// and agentfs gets the terminal back afterwards. ^Z stops the command and
// agentfs with it, as a shell's job; continued, the command gets the
// terminal back.
func TestRunTerminal(t *testing.T) {
	sandboxProject(t)
	master, slave := openPTY(t)
	defer master.Close()
	exe, _ := os.Executable()
	c := exec.Command(exe, "run", "--", "sh", "-c", `set -- $(cat /proc/$$/stat); [ "$5" = "$8" ] && echo foreground
trap 'set -- $(cat /proc/$$/stat); [ "$5" = "$8" ] && echo foreground again' CONT
trap 'echo got INT; exit 9' INT; sleep 1000 & echo ready; while :; do wait; done`)
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	// A session of its own with the terminal as controlling terminal,
	// as a login shell would have.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	defer c.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		br := bufio.NewReader(master)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				lines <- strings.TrimRight(l, "\r\n")
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	waitLine := func(want string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("terminal closed before %q", want)
				}
				if strings.Contains(l, want) {
					return
				}
			case <-timeout:
				t.Fatalf("no %q on the terminal", want)
			}
		}
	}
	// Field 5 of /proc/PID/stat is the process group, field 8 the
	// terminal's foreground group.
	waitLine("foreground")
	waitLine("ready")
	// ^Z: agentfs stops, as the job a shell would see stopped, and has
	// the terminal.
	master.Write([]byte{26})
	stopped := make(chan syscall.WaitStatus, 1)
	go func() {
		var ws syscall.WaitStatus
		syscall.Wait4(c.Process.Pid, &ws, syscall.WUNTRACED, nil)
		stopped <- ws
	}()
	select {
	case ws := <-stopped:
		if !ws.Stopped() {
			t.Fatalf("after ^Z agentfs is not stopped: %v", ws)
		}
	case <-time.After(30 * time.Second):
		out, _ := exec.Command("ps", "-o", "pid,ppid,pgid,tpgid,stat,wchan:20,args", "-s", fmt.Sprint(c.Process.Pid)).CombinedOutput()
		t.Fatalf("agentfs did not stop after ^Z\n%s", out)
	}
	var fg int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&fg))); e != 0 || int(fg) != c.Process.Pid {
		out, _ := exec.Command("ps", "-o", "pid,ppid,pgid,tpgid,stat,wchan:20,args", "-s", fmt.Sprint(c.Process.Pid)).CombinedOutput()
		t.Errorf("the terminal's foreground group while stopped: %d (%v), want agentfs's %d\n%s", fg, e, c.Process.Pid, out)
	}
	// "fg": continued, the command has the terminal again.
	syscall.Kill(-c.Process.Pid, syscall.SIGCONT)
	waitLine("foreground again")
	master.Write([]byte{3}) // ^C
	waitLine("got INT")
	err := c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 9 {
		t.Errorf("exit after ^C: %v, want status 9", err)
	}
}

// TestUsernsError: a refused user namespace is explained with the errno
// and a next step, not as a failed exec of agentfs.
func TestUsernsError(t *testing.T) {
	err := usernsError(&os.PathError{Op: "fork/exec", Path: "/usr/bin/agentfs", Err: syscall.ENOSPC})
	var ue userError
	if !errors.As(err, &ue) || !strings.Contains(ue.msg, "user namespace: no space left on device (ENOSPC)") || ue.hint == "" {
		t.Errorf("usernsError: %#v", err)
	}
}

// TestRunPackageInstall is the agent's usual first step: npm install in
// the project inside the sandbox. The host stays untouched until commit;
// after commit it holds what the same install makes natively. Needs the
// npm registry: without it the test skips, unless
// AGENTFS_REQUIRE_NETWORK=1 (CI).
func TestRunPackageInstall(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("skipping: npm is not installed")
	}
	if os.Getenv("AGENTFS_REQUIRE_NETWORK") != "1" {
		if err := exec.Command("npm", "view", "--silent", "semver@7.6.3", "version").Run(); err != nil {
			t.Skipf("skipping: the npm registry is not reachable (%v)", err)
		}
	}
	dir := sandboxProject(t)
	os.Remove(filepath.Join(dir, helperName))
	native := filepath.Join(t.TempDir(), filepath.Base(dir)) // npm init names the package after the directory
	if out, err := exec.Command("cp", "-a", dir, native).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
	before := hostTree(t, dir)
	// The sandbox's home is read-only: run points npm's cache at its
	// private /tmp (natively: a temporary directory).
	for _, v := range []string{"npm_config_cache", "XDG_CACHE_HOME"} {
		if old, ok := os.LookupEnv(v); ok {
			os.Unsetenv(v)
			t.Cleanup(func() { os.Setenv(v, old) })
		}
	}
	script := "npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error semver@7.6.3 && ./node_modules/.bin/semver -i minor 1.2.3"
	t.Setenv("npm_config_update_notifier", "false")
	r := run(t, "", "run", "--session", "npm", "--", "sh", "-c", script)
	if r.code != 0 || !strings.HasSuffix(r.out, "1.3.0\n") {
		t.Fatalf("npm install in the sandbox: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	sameTree(t, "the host directory after the sandboxed install", hostTree(t, dir), before)
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir, cmd.Env = native, append(os.Environ(), "npm_config_cache="+filepath.Join(t.TempDir(), "npm-cache"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install natively: %v %s", err, out)
	}
	diff := mustRun(t, "diff", "npm")
	for _, want := range []string{"A file    /package.json", "A dir     /node_modules/semver", "A symlink /node_modules/.bin/semver"} {
		if !strings.Contains(diff, want+"\n") {
			t.Errorf("agentfs diff lacks %q:\n%s", want, diff)
		}
	}
	mustRun(t, "commit", "npm")
	sameTree(t, "the host directory after commit (against the install run natively)", hostTree(t, dir), hostTree(t, native))
}

func TestRunCacheDefaults(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"npm_config_cache", "XDG_CACHE_HOME"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	cacheDefaults([]string{filepath.Join(home, ".npm")})
	if v, ok := os.LookupEnv("npm_config_cache"); ok {
		t.Errorf("npm_config_cache set to %q although ~/.npm is allowed", v)
	}
	if got := os.Getenv("XDG_CACHE_HOME"); got != "/tmp/.cache" {
		t.Errorf("XDG_CACHE_HOME = %q", got)
	}
	os.Unsetenv("npm_config_cache")
	os.Unsetenv("XDG_CACHE_HOME")
	cacheDefaults([]string{filepath.Join(home, ".cache", "go-build")})
	if v, ok := os.LookupEnv("XDG_CACHE_HOME"); ok {
		t.Errorf("XDG_CACHE_HOME set to %q although ~/.cache/go-build is allowed", v)
	}
	t.Setenv("XDG_CACHE_HOME", "/mine")
	cacheDefaults(nil)
	if got := os.Getenv("XDG_CACHE_HOME"); got != "/mine" {
		t.Errorf("a caller's XDG_CACHE_HOME was replaced: %q", got)
	}
	if got := os.Getenv("npm_config_cache"); got != "/tmp/.npm" {
		t.Errorf("npm_config_cache = %q", got)
	}
}

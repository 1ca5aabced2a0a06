//go:build linux

package mount_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/mount"
)

// The filesystem under test is served by a child process (this test
// binary, re-executed with AGENTFS_MOUNT_TEST_SERVE set): a process that
// touches a FUSE mount it serves itself can deadlock (page faults of mmap,
// fork/exec, the garbage collector stopping the world while a thread is
// blocked in the kernel on a request), and a separate server is what
// users run anyway. It runs with the race detector when the tests do.
func TestMain(m *testing.M) {
	if dir := os.Getenv("AGENTFS_MOUNT_TEST_SERVE"); dir != "" {
		os.Exit(serve(os.Getenv("AGENTFS_MOUNT_TEST_DB"), dir))
	}
	os.Exit(m.Run())
}

// serve mounts db on dir, says "ready" on stdout and serves until SIGTERM.
func serve(db, dir string) int {
	a, err := core.Open(context.Background(), db, core.Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer a.Close()
	opts := mount.Options{FsName: db}
	if os.Getenv("AGENTFS_MOUNT_TEST_DEBUG") != "" {
		opts.Debug = true
	}
	opts.AllowOther = os.Getenv("AGENTFS_MOUNT_TEST_ALLOW_OTHER") != ""
	srv, err := mount.Mount(dir, a.FS, opts)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		for i := 0; ; i++ {
			err := srv.Unmount()
			if err == nil {
				return
			}
			if i == 50 {
				fmt.Fprintln(os.Stderr, "unmount:", err, "- detaching")
				syscall.Unmount(dir, syscall.MNT_DETACH)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	if prof := os.Getenv("AGENTFS_MOUNT_TEST_CPUPROFILE"); prof != "" {
		pf, err := os.Create(prof)
		if err == nil {
			pprof.StartCPUProfile(pf)
			defer pprof.StopCPUProfile()
		}
	}
	fmt.Println("ready")
	srv.Wait()
	return 0
}

// canMount skips the test unless FUSE mounts can be made here.
func canMount(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		skipFUSE(t, "/dev/fuse is missing (FUSE tests need the fuse module and /dev/fuse)")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			skipFUSE(t, "FUSE tests run as root, or need fusermount3 (Debian fuse3)")
		}
	}
}

// skipFUSE skips a test that needs FUSE, or fails it when
// AGENTFS_REQUIRE_FUSE=1 (CI sets it, so a missing FUSE cannot hide the
// mount tests).
func skipFUSE(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("AGENTFS_REQUIRE_FUSE") == "1" {
		t.Fatalf("FUSE unavailable: %s (AGENTFS_REQUIRE_FUSE=1)", why)
	}
	t.Skip("skipping: " + why + "; set AGENTFS_REQUIRE_FUSE=1 to fail instead")
}

// fixture is a database mounted by a server process.
type fixture struct {
	db, dir string
	env     []string // extra environment of the server
	cmd     *exec.Cmd
	out     io.ReadCloser
}

// mountT creates a database and mounts it; everything is undone at the
// end of the test.
func mountT(t testing.TB, serverEnv ...string) *fixture {
	t.Helper()
	canMount(t)
	base, err := os.MkdirTemp("", "agentfs-mount-test-")
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{db: filepath.Join(base, "a.db"), dir: filepath.Join(base, "mnt"), env: serverEnv}
	if err := os.Mkdir(fx.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := core.Open(context.Background(), fx.db, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	fx.start(t)
	t.Cleanup(func() {
		fx.stop(t)
		os.RemoveAll(base)
	})
	return fx
}

func (fx *fixture) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AGENTFS_MOUNT_TEST_SERVE="+fx.dir, "AGENTFS_MOUNT_TEST_DB="+fx.db)
	cmd.Env = append(cmd.Env, fx.env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fx.cmd, fx.out = cmd, out
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line)
		io.Copy(os.Stdout, out)
	}()
	select {
	case line := <-ready:
		if line != "ready" {
			cmd.Wait()
			t.Fatalf("mount server: %q", line)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("mount server not ready after 60 s")
	}
}

// stop unmounts and waits for the server to exit.
func (fx *fixture) stop(t testing.TB) {
	if fx.cmd == nil {
		return
	}
	fx.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- fx.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("mount server: %v", err)
		}
	case <-time.After(30 * time.Second):
		fx.cmd.Process.Kill()
		syscall.Unmount(fx.dir, syscall.MNT_DETACH)
		t.Errorf("mount server did not exit after SIGTERM")
	}
	fx.cmd = nil
}

// p is the path of name inside the mount.
func (fx *fixture) p(name string) string { return filepath.Join(fx.dir, name) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantErrno fails unless err carries errno want (0: no error).
func wantErrno(t testing.TB, what string, err error, want syscall.Errno) {
	t.Helper()
	var got syscall.Errno
	if err != nil {
		var ok bool
		if got, ok = errnoOf(err); !ok {
			t.Errorf("%s: %v is not an errno, want %v", what, err, want)
			return
		}
	}
	if got != want {
		t.Errorf("%s: got %v (%d), want %v (%d)", what, err, int(got), want, int(want))
	}
}

func errnoOf(err error) (syscall.Errno, bool) {
	for err != nil {
		if e, ok := err.(syscall.Errno); ok {
			return e, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return 0, false
		}
		err = u.Unwrap()
	}
	return 0, false
}

// writeFile writes content into the mount.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// eventually retries cond until it holds or the deadline passes, and
// returns how long it took.
func eventually(t testing.TB, what string, within time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if cond() {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("%s: not true after %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

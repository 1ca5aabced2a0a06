package agentfs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

// needFUSE skips without FUSE, or fails when AGENTFS_REQUIRE_FUSE=1 (CI
// sets it, so a missing FUSE cannot hide the mount tests).
func needFUSE(t *testing.T) {
	t.Helper()
	why := ""
	if runtime.GOOS != "linux" {
		why = "FUSE mounts are Linux only"
	} else if _, err := os.Stat("/dev/fuse"); err != nil {
		why = "no /dev/fuse"
	} else if _, err := exec.LookPath("fusermount3"); err != nil && os.Geteuid() != 0 {
		why = "no fusermount3 (and not root)"
	}
	if why == "" {
		return
	}
	if os.Getenv("AGENTFS_REQUIRE_FUSE") == "1" {
		t.Fatalf("FUSE unavailable: %s (AGENTFS_REQUIRE_FUSE=1)", why)
	}
	t.Skip("skipping: " + why + "; set AGENTFS_REQUIRE_FUSE=1 to fail instead")
}

// MountSandbox hands the agent's files to real programs and back: git
// makes a repository and a commit over the mount, tar archives it, and
// after Unmount the agent holds all of it; mounted again, git reads the
// history it wrote.
func TestMountSandboxRealPrograms(t *testing.T) {
	needFUSE(t)
	for _, tool := range []string{"git", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed by this test: %v", tool, err)
		}
	}
	ctx := context.Background()
	a, err := agentfs.Open(ctx, agentfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.FS().WriteFile(ctx, "/src/hello.txt", []byte("hello\n"), agentfs.WriteOptions{CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	run := func(dir, script string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return string(out)
	}

	m, err := a.MountSandbox(agentfs.MountOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run(m.Path, "git init -q -b main && git add -A && git commit -qm first && tar cf snap.tar src")
	if st := run(m.Path, "git status --porcelain --untracked-files=no"); st != "" {
		t.Errorf("git status over the mount: %q", st)
	}
	if list := run(m.Path, "tar tf snap.tar"); list != "src/\nsrc/hello.txt\n" {
		t.Errorf("tar listing %q", list)
	}
	if err := m.Unmount(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.Path); !os.IsNotExist(err) {
		t.Errorf("the temporary mount point is left: %v", err)
	}
	if err := m.Unmount(); err != nil {
		t.Errorf("second Unmount: %v", err)
	}

	// Back in the agent: what the programs wrote.
	head, err := a.FS().ReadFile(ctx, "/.git/HEAD")
	if err != nil || string(head) != "ref: refs/heads/main\n" {
		t.Fatalf("/.git/HEAD in the agent: %q %v", head, err)
	}
	if st, err := a.FS().Stat(ctx, "/snap.tar"); err != nil || st.Size < 512 {
		t.Errorf("/snap.tar in the agent: %+v %v", st, err)
	}
	r, err := a.Exec(ctx, "ls /.git/refs/heads", agentfs.ExecOptions{})
	if err != nil || string(r.Stdout) != "main\n" {
		t.Errorf("the sandbox sees the branch: %q %v", r.Stdout, err)
	}

	// And out again, on a directory of the caller's: git reads its history.
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m2, err := a.MountSandbox(agentfs.MountOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if log := run(dir, "git log --format=%s && cat src/hello.txt"); log != "first\nhello\n" {
		t.Errorf("git log over the second mount: %q", log)
	}
	// Close unmounts what is still mounted; the caller's directory stays.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("%s after Close: %v %v (want an empty, unmounted directory)", dir, ents, err)
	}
	_ = m2 // unmounted by Close
}

//go:build linux

package mount_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/overlay"
)

// mountOverlayT creates a host directory with fill, an overlay database
// above it, and mounts the overlay like any agent.
func mountOverlayT(t *testing.T, fill func(base string)) (*fixture, string) {
	t.Helper()
	canMount(t)
	tmp, err := os.MkdirTemp("", "agentfs-overlay-mount-test-")
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(tmp, "base")
	must(t, os.Mkdir(base, 0o755))
	fill(base)
	fx := &fixture{db: filepath.Join(tmp, "delta.db"), dir: filepath.Join(tmp, "mnt")}
	must(t, os.Mkdir(fx.dir, 0o755))
	a, err := overlay.Create(context.Background(), fx.db, base, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	fx.start(t)
	t.Cleanup(func() {
		fx.stop(t)
		os.RemoveAll(tmp)
	})
	return fx, base
}

// hostState records every path under dir with type, mode, size, mtime and
// content digest, to show the base untouched.
func hostState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s := info.Mode().String() + " " + info.ModTime().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += " " + string(b)
		}
		out[strings.TrimPrefix(p, dir)] = s
		return nil
	}))
	return out
}

func TestOverlayMount_Programs(t *testing.T) {
	needTool(t, "git", "cp", "rm", "diff")
	fx, base := mountOverlayT(t, func(base string) {
		makeTree(t, filepath.Join(base, "tree"), 300)
		must(t, os.WriteFile(filepath.Join(base, "README"), []byte("hello\n"), 0o644))
		sh(t, base, "git init -q . && git add -A && git commit -q -m base")
	})
	before := hostState(t, base)

	// Reads fall through; git sees a clean work tree.
	if got := readFile(t, fx.p("README")); got != "hello\n" {
		t.Fatalf("README = %q", got)
	}
	if st := sh(t, fx.dir, "git status --porcelain"); st != "" {
		t.Fatalf("git status in a fresh overlay = %q, want clean", st)
	}
	// Inode numbers are the host's, and stay across a data copy-up.
	var st1, st2, hst syscall.Stat_t
	must(t, syscall.Stat(fx.p("README"), &st1))
	must(t, syscall.Stat(filepath.Join(base, "README"), &hst))
	if st1.Ino != hst.Ino || st1.Mtim != hst.Mtim || st1.Ctim != hst.Ctim {
		t.Fatalf("stat through the mount: ino %d mtime %v ctime %v; host: ino %d mtime %v ctime %v",
			st1.Ino, st1.Mtim, st1.Ctim, hst.Ino, hst.Mtim, hst.Ctim)
	}
	f, err := os.OpenFile(fx.p("README"), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("more\n")
	must(t, err)
	must(t, f.Close())
	must(t, syscall.Stat(fx.p("README"), &st2))
	if st1.Ino != st2.Ino {
		t.Fatalf("inode changed across copy-up: %d -> %d", st1.Ino, st2.Ino)
	}
	if got := sh(t, fx.dir, "git status --porcelain"); got != " M README\n" {
		t.Fatalf("git status = %q, want \" M README\"", got)
	}
	sh(t, fx.dir, "git commit -q -am 'in the overlay' && git log --oneline | wc -l | grep -qx 2")
	// cp -a of a base tree, compared with the original.
	sh(t, fx.dir, "cp -a tree tree-copy && diff -r tree tree-copy")
	// rm -rf of a base tree.
	sh(t, fx.dir, "rm -rf tree")
	if _, err := os.Stat(fx.p("tree")); !os.IsNotExist(err) {
		t.Fatalf("tree after rm -rf: %v", err)
	}
	if out := sh(t, fx.dir, "ls"); out != "README\ntree-copy\n" {
		t.Fatalf("ls = %q", out)
	}
	// The host directory is untouched.
	after := hostState(t, base)
	if len(after) != len(before) {
		t.Fatalf("host has %d paths, had %d", len(after), len(before))
	}
	for p, s := range before {
		if after[p] != s {
			t.Fatalf("host %s changed: %q -> %q", p, s, after[p])
		}
	}
	// What the mount did is the overlay's diff.
	fx.stop(t)
	a, err := core.Open(context.Background(), fx.db, core.Options{})
	must(t, err)
	defer a.Close()
	changes, err := overlay.Diff(t.Context(), a)
	must(t, err)
	seen := map[string]string{}
	for _, c := range changes {
		seen[c.Path] = string(c.Op) + " " + c.Type
	}
	for p, want := range map[string]string{"/README": "M file", "/tree": "D dir", "/tree-copy": "A dir", "/.git/index": "M file"} {
		if seen[p] != want {
			t.Errorf("diff %s = %q, want %q", p, seen[p], want)
		}
	}
}

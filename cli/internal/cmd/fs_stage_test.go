package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func openT(t *testing.T) *core.Agent {
	t.Helper()
	a, err := core.Open(context.Background(), filepath.Join(core.DefaultDir, "t.db"), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func stagingNames(t *testing.T, f *vfs.FS, dir string) []string {
	ctx := t.Context()
	t.Helper()
	names, err := f.Readdir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, vfs.StagePrefix) {
			out = append(out, n)
		}
	}
	return out
}

// TestAttack_Atomic_TreeCopyFailure: a tree copy to a new destination that
// fails midway leaves nothing (no destination, no staging directory); one
// that merges into an existing directory says what it wrote.
func TestAttack_Atomic_TreeCopyFailure(t *testing.T) {
	ctx := t.Context()
	newAgent(t)
	a := openT(t)
	f := a.FS
	boom := errors.New("disk on fire")
	build := func(target string) error {
		if err := f.MkdirAll(ctx, target+"/sub", 0o755); err != nil {
			return err
		}
		for i := 0; i < 2; i++ {
			if err := f.WriteFile(ctx, target+"/sub/f"+strconv.Itoa(i), []byte("x"), vfs.WriteOptions{}); err != nil {
				return err
			}
		}
		return boom
	}
	err := f.StageTree(ctx, "/p/new", build, func() string { return "2 files" })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "nothing was written to /p/new") {
		t.Fatalf("StageTree(new) = %v; want the failure and that nothing was written", err)
	}
	if ok, _ := f.Exists(ctx, "/p/new"); ok {
		t.Errorf("/p/new exists after a failed copy")
	}
	if s := stagingNames(t, f, "/p"); len(s) != 0 {
		t.Errorf("staging left in /p: %v", s)
	}
	// Merge into an existing directory: the error says what was written.
	if err := f.Mkdir(ctx, "/p/old", 0o755); err != nil {
		t.Fatal(err)
	}
	err = f.StageTree(ctx, "/p/old", build, func() string { return "2 files, 1 dirs" })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "2 files, 1 dirs were written into the existing /p/old") {
		t.Fatalf("StageTree(existing) = %v; want what was written", err)
	}
	// Through the CLI: cp -r of a tree onto itself's child fails before
	// anything is made.
	mustRun(t, "fs", "t", "write", "/src/a", "A")
	r := run(t, "", "fs", "t", "cp", "-r", "/src", "/src/inner")
	if r.code == 0 {
		t.Fatalf("cp -r into itself succeeded")
	}
	if ok, _ := f.Exists(ctx, "/src/inner"); ok {
		t.Errorf("/src/inner made by a failed cp -r")
	}
	if s := stagingNames(t, f, "/src"); len(s) != 0 {
		t.Errorf("staging left in /src: %v", s)
	}
}

// TestAttack_Atomic_StaleTreeStagingRemoved: the staging directory of a
// copy whose process is gone is removed by the next tree copy into the
// same directory; a live process's is kept.
func TestAttack_Atomic_StaleTreeStagingRemoved(t *testing.T) {
	ctx := t.Context()
	newAgent(t)
	a := openT(t)
	f := a.FS
	dead := vfs.StagePrefix + "999999999-abcdef"
	live := vfs.StagePrefix + strconv.Itoa(os.Getpid()) + "-abcdef"
	for _, d := range []string{dead, live} {
		if err := f.MkdirAll(ctx, "/p/"+d+"/partial", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !processGone(999999999) {
		t.Skip("pid 999999999 is not free here")
	}
	mustRun(t, "fs", "t", "write", "/src/a", "A")
	mustRun(t, "fs", "t", "cp", "-r", "/src", "/p/copy")
	if got := stagingNames(t, f, "/p"); len(got) != 1 || got[0] != live {
		t.Errorf("staging in /p after a copy: %v; want only the live process's %s", got, live)
	}
	if b, err := f.ReadFile(ctx, "/p/copy/a"); err != nil || string(b) != "A" {
		t.Errorf("/p/copy/a = %q, %v", b, err)
	}
}

// TestAttack_Atomic_CLIImportNewTreeKilled: `fs import` of a tree (a
// 64 MiB file among small ones) to a new destination, killed at random
// points: the destination is absent or whole, and the next import into
// the same directory removes the killed one's staging directory.
func TestAttack_Atomic_CLIImportNewTreeKilled(t *testing.T) {
	ctx := t.Context()
	if testing.Short() {
		t.Skip("crash test")
	}
	newAgent(t)
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "big.bin"), genData(7, atomicTestSize), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := os.MkdirAll(filepath.Join(host, "d"+strconv.Itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(host, "d"+strconv.Itoa(i), "s"), genData(7, 5000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mid := 0
	for round := 0; round < 3; round++ {
		dst := "/in/new" + strconv.Itoa(round)
		c, done := startKillable(t, nil, "fs", "t", "import", host, dst)
		finished := killAt(t, c, done, time.Duration(200+round*400)*time.Millisecond)
		a := openT(t)
		ok, err := a.FS.Exists(ctx, dst)
		if err != nil {
			t.Fatal(err)
		}
		if finished && !ok {
			t.Fatalf("round %d: import ended but %s is missing", round, dst)
		}
		if ok {
			for _, p := range []string{"/big.bin", "/d0/s", "/d1/s", "/d2/s"} {
				b, err := a.FS.ReadFile(ctx, dst+p)
				size := 5000
				if p == "/big.bin" {
					size = atomicTestSize
				}
				if err != nil {
					t.Fatalf("round %d: %s exists but %s%s: %v (half-made tree)", round, dst, dst, p, err)
				}
				oneOf(t, dst+p, b, size, 7)
			}
		} else {
			mid++
		}
		a.Close()
		t.Logf("round %d: killed=%v, %s present=%v", round, !finished, dst, ok)
	}
	// The next import into /in removes what killed imports left.
	mustRun(t, "fs", "t", "import", t.TempDir(), "/in/empty")
	a := openT(t)
	if s := stagingNames(t, a.FS, "/in"); len(s) != 0 {
		t.Errorf("staging left in /in after the next import: %v", s)
	}
	if mid == 0 {
		t.Errorf("no kill landed midway: nothing was checked")
	}
}

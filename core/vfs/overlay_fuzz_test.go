package vfs_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// overlaySetup is the base tree of the overlay differential test, as
// operations: they run on the model, and build the host directory below
// the overlay, so both start from the same tree.
const overlaySetup = `mkdir /a; write /a/b 1000 1 trunc; mkdir /a/c; write /a/c/d 5000 2 trunc; write /b 2048 3 trunc;
	symlink a /c; mkdir /d; symlink ../a /d/a; write /d/d 513 4 trunc; mkdir /d/b; write /d/b/a 7 5 trunc; mkdir /a/a`

// buildBase creates the tree of overlaySetup in the host directory dir.
func buildBase(t testing.TB, dir string) {
	t.Helper()
	for _, o := range decodeOps(script(overlaySetup)) {
		p := filepath.Join(dir, o.p1)
		switch o.kind {
		case opMkdir:
			must(t, os.Mkdir(p, 0o755))
		case opWrite:
			must(t, os.WriteFile(p, fuzzData(o.n, o.seed), 0o644))
		case opSymlink:
			must(t, os.Symlink(o.target, p))
		default:
			t.Fatalf("overlaySetup: unexpected %v", o)
		}
	}
}

// checkOverlayOps runs ops on the model (after the setup) and on an
// overlay over the same tree, and fails on the first difference; the host
// directory must not change.
func checkOverlayOps(t *testing.T, data []byte) {
	ops := decodeOps(data)
	if len(ops) == 0 {
		return
	}
	m := newModel()
	m.overlay = true
	if _, _, err := runOps(m, decodeOps(script(overlaySetup))); err != nil {
		t.Fatal(err)
	}
	dir := tempDir(t)
	base := filepath.Join(dir, "base")
	must(t, os.Mkdir(base, 0o755))
	buildBase(t, base)
	before := hostTree(t, base)
	a, err := core.Open(ctx, filepath.Join(dir, "delta.db"), core.Options{Create: true, ChunkSize: fuzzChunk, Base: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	e := &engine{a: a, f: a.FS}
	mres, mtree, err := runOps(m, ops)
	if err != nil {
		t.Fatalf("model: %v", err)
	}
	eres, etree, err := runOps(e, ops)
	if err != nil {
		t.Fatalf("overlay: %v\n%s", err, describe(ops, mres, eres))
	}
	for i := range ops {
		if mres[i] != eres[i] {
			t.Fatalf("operation %d differs:\n%s", i, describe(ops[:i+1], mres, eres))
		}
	}
	if d := diffLines(mtree, etree); d != "" {
		t.Fatalf("trees differ after\n%s\n%s", describe(ops, mres, eres), d)
	}
	checkIntegrity(t, a)
	if after := hostTree(t, base); diffLines(before, after) != "" {
		t.Fatalf("the base directory changed:\n%s", diffLines(before, after))
	}
	// Reopened, the overlay shows the same tree.
	a.Close()
	b, err := core.Open(ctx, filepath.Join(dir, "delta.db"), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	entries, err := (&engine{a: b, f: b.FS}).tree()
	if err != nil {
		t.Fatal(err)
	}
	if d := diffLines(mtree, treeLines(entries)); d != "" {
		t.Fatalf("after reopening, trees differ:\n%s", d)
	}
}

// hostTree describes a host directory as tree lines.
func hostTree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	must(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		line := p + " " + info.Mode().String() + " " + strconv.FormatInt(info.Size(), 10) + " " + info.ModTime().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + digest(b)
		}
		out = append(out, line)
		return nil
	}))
	return out
}

// TestOverlay_ModelSeeds runs the fuzz seed scripts on an overlay over
// the setup tree and on the model, with lookups that copy up a whole
// small directory and with lookups that copy up one name.
func TestOverlay_ModelSeeds(t *testing.T) {
	for _, whole := range []bool{true, false} {
		defer vfs.SetSmallDirEntries(vfs.SetSmallDirEntries(map[bool]int{true: 1024, false: 0}[whole]))
		for i, s := range seedScripts {
			in := script(s)
			if !t.Run(strconv.Itoa(i), func(t *testing.T) { checkOverlayOps(t, in) }) {
				t.Fatalf("seed %d (whole directories %v): %s", i, whole, s)
			}
		}
	}
}

// TestOverlay_ModelRandom runs random operation sequences on an overlay
// (every operation meets base entries: copy-up of metadata and of single
// chunks, whiteouts, renames of base directories) and on the model.
// AGENTFS_MODEL_N sets their number (default 150).
func TestOverlay_ModelRandom(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 20
	}
	if v := os.Getenv("AGENTFS_MODEL_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	rng := rand.New(rand.NewSource(int64(n) + 7))
	for i := 0; i < n; i++ {
		in := randomOps(rng, 10+rng.Intn(60))
		// Every other sequence copies up one name per lookup.
		old := vfs.SetSmallDirEntries([]int{1024, 0}[i%2])
		ok := t.Run("", func(t *testing.T) { checkOverlayOps(t, in) })
		vfs.SetSmallDirEntries(old)
		if !ok {
			t.Fatalf("input %d: %x", i, in)
		}
	}
}

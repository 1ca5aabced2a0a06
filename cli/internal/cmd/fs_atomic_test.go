package cmd

// `agentfs fs write -` and `agentfs fs import` killed with SIGKILL at
// random points leave each file with its old content or the new one,
// byte for byte, never a mix; the next writable open reclaims the staging
// inode and fsck is clean.

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
)

const atomicTestSize = 64 << 20

// genData is the content of generation gen: a 64 KiB block that depends
// on gen, repeated, with gen and the offset stamped every 4 KiB, so that
// two generations differ in every chunk.
func genData(gen uint64, size int) []byte {
	block := make([]byte, 64<<10)
	x := (gen + 1) * 0x9E3779B97F4A7C15
	for i := 0; i < len(block); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(block[i:], x)
	}
	b := make([]byte, size)
	for i := 0; i < size; i += copy(b[i:], block) {
	}
	for a := 0; a+16 <= size; a += 4096 {
		binary.LittleEndian.PutUint64(b[a:], gen)
		binary.LittleEndian.PutUint64(b[a+8:], uint64(a))
	}
	return b
}

// startCLI starts this test binary as the agentfs CLI (TestMain).
func startKillable(t *testing.T, stdin io.Reader, args ...string) (*exec.Cmd, chan error) {
	t.Helper()
	c := exec.Command(os.Args[0], args...)
	c.Env = append(os.Environ(), asCLIEnv+"=1")
	c.Stdin = stdin
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t.Cleanup(func() { c.Process.Kill() })
	return c, done
}

// killAt kills the process after delay unless it ended first, and
// reports whether it ended by itself (successfully).
func killAt(t *testing.T, c *exec.Cmd, done chan error, delay time.Duration) bool {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("agentfs ended by itself with %v", err)
		}
		return true
	case <-time.After(delay):
	}
	c.Process.Signal(syscall.SIGKILL)
	<-done
	return false
}

// checkAgent opens .agentfs/t.db read-only (staging inodes must stay),
// then writable (they must go), checks fsck, and returns the content of
// each path, and how many staging inodes the kill left.
func checkAgent(t *testing.T, paths ...string) (map[string][]byte, int64) {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(core.DefaultDir, "t.db")
	q := func(a *core.Agent, sql string) int64 {
		var n int64
		if err := a.DB.Do(ctx, func(c *store.Conn) error { return c.QueryRow(sql).Scan(&n) }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ro, err := core.Open(ctx, db, core.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	left := q(ro, `SELECT COUNT(*) FROM fs_xattr WHERE name = 'agentfs.staging'`)
	ro.Close()
	a, err := core.Open(ctx, db, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if n := q(a, `SELECT COUNT(*) FROM fs_inode i WHERE i.ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino)`); n != 0 {
		t.Errorf("%d nameless inodes after a writable open: staging not reclaimed", n)
	}
	rep, err := a.Fsck(ctx, false)
	if err != nil || !rep.Clean() {
		t.Errorf("fsck after the kill: %+v, %v", rep, err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := a.FS.ReadFile(ctx, p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		out[p] = b
	}
	return out, left
}

// oneOf fails unless got is exactly generation a or b of size bytes.
func oneOf(t *testing.T, what string, got []byte, size int, gens ...uint64) uint64 {
	t.Helper()
	for _, g := range gens {
		if bytes.Equal(got, genData(g, size)) {
			return g
		}
	}
	var head uint64
	if len(got) >= 8 {
		head = binary.LittleEndian.Uint64(got)
	}
	t.Fatalf("%s: %d bytes starting with generation %d: neither generation %v whole (a mix, or torn)", what, len(got), head, gens)
	return 0
}

// killSpan is the range of kill delays for an operation that took d when
// run whole: most of it, so that kills land mid-operation.
func killSpan(d time.Duration) time.Duration {
	return max(d*3/4, time.Millisecond)
}

// TestAttack_Atomic_CLIWriteKilled: `agentfs fs t write /big -` fed 64 MiB
// and killed at random points.
func TestAttack_Atomic_CLIWriteKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	newAgent(t)
	start := time.Now()
	if r := run(t, string(genData(1, atomicTestSize)), "fs", "t", "write", "/big", "-"); r.code != 0 {
		t.Fatalf("initial write: %d %s", r.code, r.err)
	}
	// Kills land within the time a whole write took, so most of them are
	// mid-write however fast this machine (and this build) writes.
	span := killSpan(time.Since(start))
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0xc11))
	cur, mid, reclaimed := uint64(1), 0, int64(0)
	for round := 1; round <= 4; round++ {
		gen := uint64(round + 1)
		pr, pw := io.Pipe()
		c, done := startKillable(t, pr, "fs", "t", "write", "/big", "-")
		go func() {
			_, err := pw.Write(genData(gen, atomicTestSize))
			pw.CloseWithError(err)
		}()
		delay := time.Duration(rng.Int64N(int64(span)))
		finished := killAt(t, c, done, delay)
		pr.CloseWithError(io.ErrClosedPipe)
		got, left := checkAgent(t, "/big")
		want := []uint64{cur, gen}
		if finished {
			want = []uint64{gen}
		} else {
			mid++
		}
		cur = oneOf(t, "/big", got["/big"], atomicTestSize, want...)
		reclaimed += left
		t.Logf("round %d: killed after %v (ended by itself: %v): /big at generation %d, %d staging inode(s) left", round, delay, finished, cur, left)
	}
	if mid == 0 {
		t.Errorf("no kill landed before the write ended: nothing was checked")
	}
	t.Logf("%d kills mid-write, %d staging inodes reclaimed", mid, reclaimed)
}

// TestAttack_Atomic_CLIImportKilled: `agentfs fs t import DIR /tree` of a
// tree with a 64 MiB file among small ones, killed at random points: the
// large file and every small one is old or new, whole.
func TestAttack_Atomic_CLIImportKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	newAgent(t)
	host := t.TempDir()
	write := func(gen uint64) {
		if err := os.WriteFile(filepath.Join(host, "big.bin"), genData(gen, atomicTestSize), 0o644); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if err := os.WriteFile(filepath.Join(host, "s"+string(rune('0'+i))), genData(gen, 8192+i), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	paths := []string{"/tree/big.bin", "/tree/s0", "/tree/s1", "/tree/s2"}
	write(1)
	start := time.Now()
	mustRun(t, "fs", "t", "import", host, "/tree")
	span := killSpan(time.Since(start))
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x1a9))
	cur := map[string]uint64{}
	for _, p := range paths {
		cur[p] = 1
	}
	mid := 0
	for round := 1; round <= 3; round++ {
		gen := uint64(round + 1)
		write(gen)
		c, done := startKillable(t, nil, "fs", "t", "import", host, "/tree")
		delay := time.Duration(rng.Int64N(int64(span)))
		finished := killAt(t, c, done, delay)
		if !finished {
			mid++
		}
		got, left := checkAgent(t, paths...)
		for i, p := range paths {
			size := atomicTestSize
			if i > 0 {
				size = 8192 + i - 1
			}
			want := []uint64{cur[p], gen}
			if finished {
				want = []uint64{gen}
			}
			cur[p] = oneOf(t, p, got[p], size, want...)
		}
		t.Logf("round %d: killed after %v (ended by itself: %v): generations %v, %d staging inode(s) left", round, delay, finished, cur, left)
	}
	if mid == 0 {
		t.Errorf("no kill landed before the import ended: nothing was checked")
	}
}

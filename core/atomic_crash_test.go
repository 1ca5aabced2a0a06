package core_test

// Streamed writes (vfs.AtomicFile, what `agentfs fs write -`, `fs import`
// and the shell's `cmd > f` use) killed with SIGKILL at random points must
// leave every file with one complete generation, and their staging inode
// must be reclaimed by the next writable open (not by a read-only one).

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/mcpserver"
	"github.com/agentfs-go/agentfs/core/rpc"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/vfs"
)

const (
	atomicMagic = "AGFSATOM"
	atomicSize  = 64 << 20
	atomicPath  = "/big/stream.bin"
)

// genReader yields the content of generation gen (size bytes) without
// holding it: a 64 KiB block that depends on gen, repeated, with gen and
// the offset stamped every 4 KiB and the magic and gen at the start, so
// that two generations differ in every chunk and a mix is detected.
type genReader struct {
	gen       uint64
	size, off int64
	block     []byte
}

func newGenReader(gen uint64, size int64) *genReader {
	r := &genReader{gen: gen, size: size, block: make([]byte, 64<<10)}
	x := (gen + 1) * 0x9E3779B97F4A7C15
	for i := 0; i < len(r.block); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(r.block[i:], x)
	}
	return r
}

func (r *genReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.size-r.off)]
	for i := 0; i < len(p); {
		i += copy(p[i:], r.block[(r.off+int64(i))%int64(len(r.block)):])
	}
	end := r.off + int64(len(p))
	for a := (r.off + 4095) / 4096 * 4096; a+16 <= end; a += 4096 {
		binary.LittleEndian.PutUint64(p[a-r.off:], r.gen)
		binary.LittleEndian.PutUint64(p[a-r.off+8:], uint64(a))
	}
	// The header (magic, gen) over the first 16 bytes.
	var hdr [16]byte
	copy(hdr[:], atomicMagic)
	binary.LittleEndian.PutUint64(hdr[8:], r.gen)
	if r.off < 16 {
		copy(p, hdr[r.off:])
	}
	r.off = end
	return len(p), nil
}

func genContent(gen uint64, size int64) []byte {
	b, _ := io.ReadAll(newGenReader(gen, size))
	return b
}

// genOf decodes the generation of a content written by genReader.
func genOf(b []byte) (uint64, bool) {
	if len(b) < 16 || string(b[:8]) != atomicMagic {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[8:]), true
}

// envDoor names the way in a helperAtomicWrite writes through.
const envDoor = "AGENTFS_TEST_DOOR"

// atomicDoors are the ways in of the crash test, with the size they
// write: the engine's stream API (CLI, import), the rpc service's
// WriteFile (SDKs over stdio, serve http), the shell's "cmd > f", and
// MCP's write_file (base64 in JSON, so a smaller file).
var atomicDoors = []struct {
	name string
	size int64
}{{"vfs", atomicSize}, {"rpc", atomicSize}, {"sh", atomicSize}, {"mcp", 16 << 20}}

func doorSize(name string) int64 {
	for _, d := range atomicDoors {
		if d.name == name {
			return d.size
		}
	}
	return 0
}

// helperAtomicWrite rewrites atomicPath through one door, forever.
func helperAtomicWrite() error {
	base, err := strconv.ParseUint(os.Getenv(envHelperN), 10, 64)
	if err != nil {
		return err
	}
	door := os.Getenv(envDoor)
	size := doorSize(door)
	ctx := context.Background()
	a, err := core.Open(ctx, os.Getenv(envHelperDB), core.Options{})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	var write func(gen uint64) error
	switch door {
	case "vfs":
		write = func(gen uint64) error {
			_, err := a.FS.WriteFileFrom(ctx, atomicPath, newGenReader(gen, size), vfs.WriteOptions{})
			return err
		}
	case "rpc":
		sctx := rpc.WithSession(ctx, rpc.NewSession(a, "t", nil))
		svc := &rpc.Service{}
		write = func(gen uint64) error {
			_, err := svc.WriteFile(sctx, &v1.WriteFileRequest{Path: atomicPath, Data: genContent(gen, size)})
			return err
		}
	case "sh":
		sb, err := sandbox.New(a, sandbox.Options{Limits: sandbox.Normal})
		if err != nil {
			return err
		}
		write = func(gen uint64) error {
			if _, err := a.FS.WriteFileFrom(ctx, "/big/src", newGenReader(gen, size), vfs.WriteOptions{}); err != nil {
				return err
			}
			res, err := sb.Exec(ctx, "cat /big/src > "+atomicPath, sandbox.ExecOptions{})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
			}
			return err
		}
	case "mcp":
		// Pipes with the frame cap `agentfs serve mcp` sets (64 MiB): the
		// SDK's in-memory transports keep its default 16 MiB, less than
		// one 16 MiB file in base64.
		sr, cw := io.Pipe()
		cr, sw := io.Pipe()
		st := &mcp.IOTransport{Reader: sr, Writer: sw, MaxLineLength: 64 << 20}
		ct := &mcp.IOTransport{Reader: cr, Writer: cw, MaxLineLength: 64 << 20}
		if _, err := mcpserver.New(a, mcpserver.Options{}).MCP().Connect(ctx, st, nil); err != nil {
			return err
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "crash", Version: "0"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			return err
		}
		write = func(gen uint64) error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{
				"path": atomicPath, "content": base64.StdEncoding.EncodeToString(genContent(gen, size)), "encoding": "base64"}})
			if err == nil && res.IsError {
				err = fmt.Errorf("write_file failed: %+v", res.Content)
			}
			return err
		}
	default:
		return fmt.Errorf("unknown door %q", door)
	}
	fmt.Println("open")
	for gen := base; ; gen++ {
		fmt.Printf("start %d\n", gen)
		if err := write(gen); err != nil {
			return fmt.Errorf("write gen %d: %w", gen, err)
		}
		fmt.Printf("done %d\n", gen)
	}
}

// killLog reads what a killed writer reported: the last generation done
// and the one in flight (0 when none), from "start N" / "done N" lines.
func killLog(lines []string) (done, inflight uint64) {
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "start":
			inflight = n
		case "done":
			done, inflight = n, 0
		}
	}
	return done, inflight
}

// checkAfterKill opens the database read-only (which must leave staging
// inodes alone), then writable (which must reclaim them), checks fsck and
// that path holds exactly generation want or inflight, and returns the
// generation found and how many staging inodes the kill left.
func checkAfterKill(t *testing.T, db, path string, size int64, want, inflight uint64) (uint64, int64) {
	t.Helper()
	ctx := context.Background()
	count := func(a *core.Agent, q string) int64 {
		var n int64
		if err := a.DB.Do(ctx, func(c *store.Conn) error { return c.QueryRow(q).Scan(&n) }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const staging = `SELECT COUNT(*) FROM fs_xattr WHERE name = 'agentfs.staging'`
	const nameless = `SELECT COUNT(*) FROM fs_inode i WHERE i.ino <> 1 AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = i.ino)`
	ro, err := core.Open(ctx, db, core.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open after the kill: %v", err)
	}
	left := count(ro, staging)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := core.Open(ctx, db, core.Options{})
	if err != nil {
		t.Fatalf("open after the kill: %v", err)
	}
	defer a.Close()
	if n := count(a, nameless); n != 0 {
		t.Errorf("%d nameless inodes after a writable open (staging not reclaimed; %d staging inodes before)", n, left)
	}
	requireClean(t, "after the kill", a)
	b, err := a.FS.ReadFile(ctx, path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	gen, ok := genOf(b)
	switch {
	case !ok:
		t.Fatalf("%s: no header (%d bytes): torn", path, len(b))
	case gen != want && (inflight == 0 || gen != inflight):
		t.Fatalf("%s holds generation %d; want %d (last done) or %d (in flight)", path, gen, want, inflight)
	case int64(len(b)) != size || !bytes.Equal(b, genContent(gen, size)):
		t.Fatalf("%s: %d bytes, header says generation %d but the bytes differ from it: a mix of old and new", path, len(b), gen)
	}
	return gen, left
}

// TestAttack_Atomic_KillDuringWrite kills a writer of a large file at
// random points, through each way in: old content or new, never a mix,
// fsck clean, and no staging inode left after the next writable open.
func TestAttack_Atomic_KillDuringWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test")
	}
	for _, door := range atomicDoors {
		t.Run(door.name, func(t *testing.T) { killDuringWrite(t, door.name, door.size) })
	}
}

func killDuringWrite(t *testing.T, door string, size int64) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "atomic.db")
	a, err := core.Open(ctx, db, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.FS.WriteFileFrom(ctx, atomicPath, newGenReader(1, size), vfs.WriteOptions{CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0xa70))
	committed := uint64(1)
	var midWrite, stagingLeft int
	const rounds = 3
	t.Setenv(envDoor, door)
	for round := 1; round <= rounds; round++ {
		base := uint64(round) << 32
		h := startHelper(t, "atomic-write", db, 0, int(base))
		h.expectLine(t, "open", time.Minute)
		// A random point in the first write or two (a 64 MiB write
		// takes from a fraction of a second to seconds here).
		delay := time.Duration(rng.IntN(2500)) * time.Millisecond
		select {
		case <-time.After(delay):
		case <-h.done:
			t.Fatalf("round %d: writer exited by itself (%v); stderr:\n%s", round, h.err, h.stderr.String())
		}
		if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-h.done
		done, inflight := killLog(h.stdout.Lines())
		if done != 0 {
			committed = done
		}
		if inflight != 0 {
			midWrite++
		}
		gen, left := checkAfterKill(t, db, atomicPath, size, committed, inflight)
		committed = gen
		stagingLeft += int(left)
		t.Logf("round %d: killed after %v, in flight %#x, file at %#x, %d staging inode(s) left by the kill", round, delay, inflight, gen, left)
	}
	t.Logf("%d of %d kills landed mid-write; %d staging inodes reclaimed", midWrite, rounds, stagingLeft)
	if midWrite == 0 {
		t.Errorf("no kill landed in the middle of a write: the test checked nothing")
	}
}

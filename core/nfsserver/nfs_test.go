package nfsserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/nfsserver"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// server is an agent served over NFS on a random loopback port.
type server struct {
	a    *core.Agent
	port int
}

// url is the libnfs URL of name ("" for the export's root).
func (s *server) url(name string) string {
	return fmt.Sprintf("nfs://127.0.0.1/%s?version=3&nfsport=%d&mountport=%d&auto-traverse-mounts=0", name, s.port, s.port)
}

func serve(t *testing.T) *server {
	t.Helper()
	a, err := core.Open(context.Background(), filepath.Join(t.TempDir(), "a.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- nfsserver.Serve(ctx, ln, a) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		a.Close()
	})
	return &server{a: a, port: ln.Addr().(*net.TCPAddr).Port}
}

// needLibnfs skips when Debian's libnfs-utils are missing, unless
// AGENTFS_REQUIRE_COMPAT=1 (CI) makes that a failure.
func needLibnfs(t *testing.T) {
	t.Helper()
	for _, p := range []string{"nfs-ls", "nfs-cat", "nfs-cp"} {
		if _, err := exec.LookPath(p); err != nil {
			msg := p + " not found: install Debian's libnfs-utils (apt-get install libnfs-utils) to test with a real NFS client"
			if os.Getenv("AGENTFS_REQUIRE_COMPAT") == "1" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func writeHost(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "host")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRead(t *testing.T, fsys *vfs.FS, p string) string {
	ctx := t.Context()
	t.Helper()
	b, err := fsys.ReadFile(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dial mounts the export with the Go NFS client, for the operations
// libnfs-utils have no command for (rename, symlink, readlink).
func dial(t *testing.T, s *server) *nfs.Target {
	t.Helper()
	c, err := rpc.DialTCP("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), false)
	if err != nil {
		t.Fatal(err)
	}
	m := &nfs.Mount{Client: c}
	target, err := m.Mount("/", rpc.AuthNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		target.Close()
		c.Close()
	})
	return target
}

func TestLibnfs(t *testing.T) {
	ctx := t.Context()
	needLibnfs(t)
	s := serve(t)
	fsys := s.a.FS
	if err := fsys.WriteFile(ctx, "/hello.txt", []byte("hello over nfs\n"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := fsys.MkdirAll(ctx, "/dir/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile(ctx, "/dir/sub/deep.txt", []byte("deep"), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("ls", func(t *testing.T) {
		out := run(t, "nfs-ls", s.url(""))
		for _, want := range []string{"hello.txt", "dir"} {
			if !strings.Contains(out, want) {
				t.Errorf("nfs-ls: no %q in\n%s", want, out)
			}
		}
		out = run(t, "nfs-ls", s.url("/dir/sub"))
		if !strings.Contains(out, "deep.txt") {
			t.Errorf("nfs-ls /dir/sub: no deep.txt in\n%s", out)
		}
	})

	t.Run("cat", func(t *testing.T) {
		if out := run(t, "nfs-cat", s.url("/hello.txt")); out != "hello over nfs\n" {
			t.Errorf("nfs-cat = %q", out)
		}
		if out := run(t, "nfs-cat", s.url("/dir/sub/deep.txt")); out != "deep" {
			t.Errorf("nfs-cat = %q", out)
		}
	})

	t.Run("write", func(t *testing.T) {
		run(t, "nfs-cp", writeHost(t, []byte("written by nfs-cp\n")), s.url("/dir/new.txt"))
		if got := mustRead(t, fsys, "/dir/new.txt"); got != "written by nfs-cp\n" {
			t.Errorf("engine reads %q", got)
		}
		if out := run(t, "nfs-cat", s.url("/dir/new.txt")); out != "written by nfs-cp\n" {
			t.Errorf("nfs-cat = %q", out)
		}
	})

	t.Run("truncate", func(t *testing.T) {
		long := strings.Repeat("0123456789", 1000)
		run(t, "nfs-cp", writeHost(t, []byte(long)), s.url("/t.txt"))
		if got := mustRead(t, fsys, "/t.txt"); got != long {
			t.Fatalf("engine reads %d bytes, want %d", len(got), len(long))
		}
		// libnfs-utils 4.0's nfs-cp creates GUARDED (it refuses to
		// overwrite): overwrite with a shorter file as a kernel client
		// does open(O_TRUNC) then write: SETATTR size 0, then WRITE.
		c := dial(t, s)
		if err := c.Setattr("/t.txt", nfs.Sattr3{Size: nfs.SetSize{SetIt: true, Size: 0}}); err != nil {
			t.Fatalf("setattr size 0: %v", err)
		}
		f, err := c.OpenFile("/t.txt", 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("short")); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, fsys, "/t.txt"); got != "short" {
			t.Errorf("after overwrite, engine reads %d bytes %.20q, want \"short\"", len(got), got)
		}
		if out := run(t, "nfs-cat", s.url("/t.txt")); out != "short" {
			t.Errorf("nfs-cat = %q", out)
		}
		// nfs-cp onto an existing file fails cleanly and changes nothing.
		if out, err := exec.Command("nfs-cp", writeHost(t, []byte("other")), s.url("/t.txt")).CombinedOutput(); err == nil {
			t.Errorf("nfs-cp over an existing file succeeded: %s", out)
		}
		if got := mustRead(t, fsys, "/t.txt"); got != "short" {
			t.Errorf("after refused nfs-cp, engine reads %q", got)
		}
		// SETATTR size: truncate to 2, then grow with zeros.
		for _, size := range []uint64{2, 8} {
			if err := c.Setattr("/t.txt", nfs.Sattr3{Size: nfs.SetSize{SetIt: true, Size: size}}); err != nil {
				t.Fatalf("setattr size %d: %v", size, err)
			}
			if got := mustRead(t, fsys, "/t.txt"); got != "sh"+strings.Repeat("\x00", int(size)-2) {
				t.Errorf("size %d: engine reads %q", size, got)
			}
		}
	})

	t.Run("rename", func(t *testing.T) {
		c := dial(t, s)
		if err := fsys.WriteFile(ctx, "/from.txt", []byte("moving"), vfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.Rename("/from.txt", "/dir/to.txt"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := fsys.Exists(ctx, "/from.txt"); ok {
			t.Error("/from.txt still exists")
		}
		if got := mustRead(t, fsys, "/dir/to.txt"); got != "moving" {
			t.Errorf("engine reads %q", got)
		}
		if out := run(t, "nfs-cat", s.url("/dir/to.txt")); out != "moving" {
			t.Errorf("nfs-cat = %q", out)
		}
		// Rename over an existing file replaces it.
		if err := c.Rename("/dir/to.txt", "/hello.txt"); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, fsys, "/hello.txt"); got != "moving" {
			t.Errorf("replaced file reads %q", got)
		}
	})

	t.Run("symlink", func(t *testing.T) {
		c := dial(t, s)
		if err := c.Symlink("dir/sub/deep.txt", "/link"); err != nil {
			t.Fatal(err)
		}
		target, err := fsys.Readlink(ctx, "/link")
		if err != nil || target != "dir/sub/deep.txt" {
			t.Fatalf("engine readlink = %q, %v", target, err)
		}
		if got := mustRead(t, fsys, "/link"); got != "deep" {
			t.Errorf("engine reads through link %q", got)
		}
		// A symlink made by the engine reads back through NFS.
		if err := fsys.Symlink(ctx, "/hello.txt", "/abs-link"); err != nil {
			t.Fatal(err)
		}
		f, err := c.Open("/abs-link")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if got, err := f.Readlink(); err != nil || got != "/hello.txt" {
			t.Errorf("nfs readlink = %q, %v", got, err)
		}
		ents, err := c.ReadDirPlus("/")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
			if e.Name() == "link" && e.Mode()&os.ModeSymlink == 0 {
				t.Errorf("link has mode %v", e.Mode())
			}
		}
		if !strings.Contains(strings.Join(names, " "), "link") {
			t.Errorf("readdirplus: %v", names)
		}
		if out := run(t, "nfs-ls", s.url("")); !strings.Contains(out, "link") {
			t.Errorf("nfs-ls: no link in\n%s", out)
		}
	})

	t.Run("mkdir-remove", func(t *testing.T) {
		c := dial(t, s)
		if _, err := c.Mkdir("/made", 0o750); err != nil {
			t.Fatal(err)
		}
		st, err := fsys.Stat(ctx, "/made")
		if err != nil || !st.IsDir() {
			t.Fatalf("engine stat /made: %+v, %v", st, err)
		}
		if err := c.Remove("/dir/new.txt"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := fsys.Exists(ctx, "/dir/new.txt"); ok {
			t.Error("/dir/new.txt still exists")
		}
		if err := c.RmDir("/made"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := fsys.Exists(ctx, "/made"); ok {
			t.Error("/made still exists")
		}
	})

	t.Run("handles-and-attrs", func(t *testing.T) {
		c := dial(t, s)
		fi, fh1, err := c.Lookup("/dir/sub/deep.txt")
		if err != nil {
			t.Fatal(err)
		}
		_, fh2, err := c.Lookup("/dir/sub/deep.txt")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fh1, fh2) {
			t.Errorf("two lookups of one path gave handles %x and %x", fh1, fh2)
		}
		st, err := fsys.Lstat(ctx, "/dir/sub/deep.txt")
		if err != nil {
			t.Fatal(err)
		}
		a := fi.(*nfs.Fattr)
		if a.Fileid != uint64(st.Ino) || a.Filesize != uint64(st.Size) || a.Nlink != st.Nlink || a.UID != st.UID || a.GID != st.GID {
			t.Errorf("NFS attributes %+v, engine %+v", a, st)
		}
		// Attributes the client sets reach the engine.
		mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := c.Setattr("/dir/sub/deep.txt", nfs.Sattr3{
			Mode:  nfs.SetMode{SetIt: true, Mode: 0o600},
			Mtime: nfs.SetTime{SetIt: 2, Time: nfs.NFS3Time{Seconds: uint32(mtime.Unix())}},
		}); err != nil {
			t.Fatalf("setattr mode+mtime: %v", err)
		}
		if st, _ := fsys.Lstat(ctx, "/dir/sub/deep.txt"); st.Perm() != 0o600 || !st.Mtime.Equal(mtime) {
			t.Errorf("after SETATTR: mode %o mtime %v, want 600 %v", st.Perm(), st.Mtime, mtime)
		}
	})

	t.Run("missing", func(t *testing.T) {
		cmd := exec.Command("nfs-cat", s.url("/nope"))
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("nfs-cat of a missing file succeeded: %s", out)
		}
	})
}

// TestLargeRoundTrip copies a 100 MiB file in and out with nfs-cp and
// compares checksums, on the host and through the engine.
func TestLargeRoundTrip(t *testing.T) {
	ctx := t.Context()
	needLibnfs(t)
	size := 100 << 20
	if testing.Short() {
		size = 8 << 20
	}
	s := serve(t)
	data := make([]byte, size)
	r := rand.NewChaCha8([32]byte{1, 2, 3})
	r.Read(data)
	want := sha256.Sum256(data)
	in := writeHost(t, data)
	data = nil

	start := time.Now()
	run(t, "nfs-cp", in, s.url("/big.bin"))
	up := time.Since(start)

	out := filepath.Join(t.TempDir(), "out")
	start = time.Now()
	run(t, "nfs-cp", s.url("/big.bin"), out)
	down := time.Since(start)

	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if n, err := io.Copy(h, f); err != nil || n != int64(size) {
		t.Fatalf("copied out %d bytes, %v; want %d", n, err, size)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
		t.Errorf("sha256 after round trip %s, want %s", hex.EncodeToString(got), hex.EncodeToString(want[:]))
	}
	b, err := s.a.FS.ReadFile(ctx, "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256.Sum256(b); got != want {
		t.Errorf("sha256 through the engine %x, want %x", got, want)
	}
	mib := float64(size) / (1 << 20)
	t.Logf("%.0f MiB: nfs-cp in %v (%.1f MiB/s), out %v (%.1f MiB/s); sha256 %x", mib, up.Round(time.Millisecond), mib/up.Seconds(), down.Round(time.Millisecond), mib/down.Seconds(), want[:8])
}

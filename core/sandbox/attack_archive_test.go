package sandbox_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

type zipEntry struct {
	name, data string
	link       bool
}

func zipOf(t *testing.T, entries ...zipEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.link {
			h.SetMode(os.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAttack_Zip_Slip: members named "../x" or "/x" land inside the
// extraction directory, and a member is never written through a link
// the same archive planted.
func TestAttack_Zip_Slip(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	cases := []struct {
		name    string
		archive []byte
		check   string // a path below /data/out and its expected content
		want    string
	}{
		{"dot-dot", zipOf(t, zipEntry{name: "../../a.txt", data: "pwned"}), "a.txt", "pwned"},
		{"absolute", zipOf(t, zipEntry{name: "/data/a.txt", data: "pwned"}), "data/a.txt", "pwned"},
		{"link then member below it", zipOf(t, zipEntry{name: "l", data: "/data", link: true}, zipEntry{name: "l/planted.txt", data: "x"}), "l/planted.txt", "x"},
		{"link then member of its name", zipOf(t, zipEntry{name: "f", data: "/data/a.txt", link: true}, zipEntry{name: "f", data: "pwned"}), "f", "->/data/a.txt"},
	}
	for _, c := range cases {
		if err := a.FS.WriteFile(ctx, "/data/in.zip", c.archive, vfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		res := run(t, sb, "rm -rf /data/out && mkdir /data/out && unzip -o -q in.zip -d out")
		if strings.Contains(res.Stderr, "internal error") {
			t.Fatalf("%s: %s", c.name, res.Stderr)
		}
		if data, _ := a.FS.ReadFile(ctx, "/data/a.txt"); string(data) != "apple\nbanana\ncherry\napple\n" {
			t.Errorf("%s: /data/a.txt became %q", c.name, data)
		}
		if _, err := a.FS.Lstat(ctx, "/data/planted.txt"); err == nil {
			t.Errorf("%s: /data/planted.txt was created", c.name)
		}
		got := ""
		if target, err := a.FS.Readlink(ctx, "/data/out/"+c.check); err == nil {
			got = "->" + target
		} else if data, err := a.FS.ReadFile(ctx, "/data/out/"+c.check); err == nil {
			got = string(data)
		}
		if got != c.want {
			t.Errorf("%s: out/%s is %q, want %q (exit %d, stderr %q)", c.name, c.check, got, c.want, res.ExitCode, res.Stderr)
		}
	}
}

// TestAttack_Zip_Bomb: a small archive that inflates past the write
// budget stops at the "filesystem writes" limit, streamed (never whole
// in memory); listing it costs nothing. The same for xz.
func TestAttack_Zip_Bomb(t *testing.T) {
	// Far past the budgets below, which are small so that the bombs
	// stop on bytes, never on time, even under -race on a loaded machine.
	const size = 24 << 20
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, err := zw.Create("zeros")
	if err != nil {
		t.Fatal(err)
	}
	io.CopyN(w, zeroReader{}, size)
	zw.Close()
	var x bytes.Buffer
	xw, err := xz.NewWriter(&x)
	if err != nil {
		t.Fatal(err)
	}
	io.CopyN(xw, zeroReader{}, size)
	xw.Close()
	lim := sandbox.Hardened
	lim.MaxFSWriteBytes, lim.MaxStreamBytes, lim.WallTime = 4<<20, 4<<20, 10*time.Minute
	a, sb := newSandbox(t, sandbox.Options{Limits: lim})
	if err := a.FS.WriteFile(ctx, "/data/bomb.zip", z.Bytes(), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.FS.WriteFile(ctx, "/data/bomb.xz", x.Bytes(), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{"unzip -q bomb.zip -d o", "unxz bomb.xz"} {
		res := run(t, sb, script)
		if res.ExitCode != sandbox.ExitLimit || res.Limit == nil || res.Limit.Limit != "filesystem writes" {
			t.Errorf("%s: exit %d limit %v stderr %q", script, res.ExitCode, res.Limit, res.Stderr)
		}
	}
	res := run(t, sb, "unzip -l bomb.zip | grep -c zeros")
	if res.Stdout != "1\n" {
		t.Errorf("listing: %q %q", res.Stdout, res.Stderr)
	}
	// To a pipe: the stream limit.
	res = run(t, sb, "unzip -p bomb.zip | wc -c; xzcat bomb.xz | wc -c")
	if res.Limit == nil || res.Limit.Limit != "stream" {
		t.Errorf("to a pipe: limit %v stderr %q", res.Limit, res.Stderr)
	}
}

package sandbox_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/sandbox/commands"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// An attack found "echo x | sed 'w /nodir/f'" panicking inside sed (a nil
// file closed at the end). GNU sed opens every w file before reading
// input and stops with status 4 when one cannot be opened.
func TestAttack_Parse_SedWriteMissingDir(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	for _, script := range []string{
		`echo x | sed "w /nodir/f"`,
		`echo x | sed "s/x/y/w /nodir/f"`,
		`echo x | sed -n "/z/w /nodir/f"`, // never written: opened anyway
		`printf 'a\nb\n' | sed -e "w /nodir/f" -e "w /nodir/f"`,
	} {
		res := run(t, sb, script)
		if res.ExitCode != 4 || strings.Contains(res.Stderr, "internal error") ||
			!strings.Contains(res.Stderr, "sed: couldn't open file /nodir/f: No such file or directory") || res.Stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 4 and ENOENT", script, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
}

// The w command and the s///w flag write to the agent filesystem through
// the sandbox: the policy decides, the file is truncated at start, and a
// host file of the same name is never touched.
func TestAttack_Parse_SedWriteThroughSandbox(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{Policy: sandbox.Policy{Writable: []string{"/data/sub"}}})
	res := run(t, sb, `printf 'a\nb\n' > sub/w.txt; printf 'x\ny\n' | sed -n -e '/x/w sub/w.txt' -e 's/y/Y/w sub/w.txt'; cat sub/w.txt`)
	if res.ExitCode != 0 || res.Stdout != "x\nY\n" {
		t.Errorf("w into the agent fs: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if data, err := a.FS.ReadFile(ctx, "/data/sub/w.txt"); err != nil || string(data) != "x\nY\n" {
		t.Errorf("agent file: %q, %v", data, err)
	}
	res = run(t, sb, `echo x | sed 'w /data/denied.txt'`)
	if res.ExitCode != 4 || res.Stdout != "" || !strings.Contains(res.Stderr, "couldn't open file /data/denied.txt: Permission denied") {
		t.Errorf("w outside the writable paths: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, err := a.FS.Stat(ctx, "/data/denied.txt"); err == nil {
		t.Error("w created a file outside the writable paths")
	}
	res = run(t, sb, `echo x | sed 'w /dev/stderr'`)
	if res.ExitCode != 0 || res.Stdout != "x\n" || res.Stderr != "x\n" {
		t.Errorf("w /dev/stderr: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// tarOf builds an archive of (name, type, link target, content) members.
func tarOf(t *testing.T, members ...[4]string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, m := range members {
		h := &tar.Header{Name: m[0], Typeflag: m[1][0], Linkname: m[2], Mode: 0o644, ModTime: time.Unix(1700000000, 0)}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(m[3]))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(m[3]))
	}
	tw.Close()
	return b.Bytes()
}

// An archive that plants a symbolic link and then writes a member
// through it ("l -> /data", then "l/x") would write outside the
// directory it is extracted in; as GNU tar, the links are created last,
// so the member lands in a real directory and the link, whose name is
// then taken, is not created (exit 2). A member written over a link (symbolic or hard) replaces it
// instead of writing through it.
func TestAttack_Parse_TarLinkPlanting(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	reg, sym, hard := string(tar.TypeReg), string(tar.TypeSymlink), string(tar.TypeLink)
	cases := []struct {
		name    string
		archive []byte
		check   string // a file of /data/out whose content is checked
		want    string
	}{
		{"symlink then member below it", tarOf(t, [4]string{"l", sym, "/data", ""}, [4]string{"l/planted.txt", reg, "", "x"}), "l/planted.txt", "x"},
		{"relative symlink up", tarOf(t, [4]string{"up", sym, "../../data", ""}, [4]string{"up/a.txt", reg, "", "pwned"}), "up/a.txt", "pwned"},
		{"symlink then member of its name", tarOf(t, [4]string{"f", sym, "/data/a.txt", ""}, [4]string{"f", reg, "", "pwned"}), "f", "pwned"},
		{"hard link then member of its name", tarOf(t, [4]string{"a.txt", reg, "", "inside"}, [4]string{"h", hard, "a.txt", ""}, [4]string{"h", reg, "", "new"}), "a.txt", "inside"},
	}
	for _, c := range cases {
		if err := a.FS.WriteFile(ctx, "/data/in.tar", c.archive, vfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		res := run(t, sb, "rm -rf /data/out && mkdir /data/out && tar -xf in.tar -C out")
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

// A panic inside a utility (a bug of ours or of goawk, gojq...) ends
// that command with status 2 and "internal error in NAME"; the rest of
// the pipeline and of the script go on, and the session stays usable.
func TestAttack_Parse_PanicContained(t *testing.T) {
	reg := commands.Default.Clone()
	reg.Register(commands.Command{Name: "boom", Run: func(c *commands.Cmd) int {
		io.Copy(io.Discard, c.Stdin)
		var m map[string]int
		//lint:ignore SA5000 the panic is what this test is about
		m["x"] = 1
		return 0
	}})
	_, sb := newSandbox(t, sandbox.Options{Registry: reg})
	sess, err := sb.NewSession("/data")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		res, err := sess.Exec(ctx, `set -o pipefail; echo a | boom | cat; echo "status $?"; boom </dev/null; echo $?`, sandbox.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 || res.Stdout != "status 2\n2\n" || strings.Count(res.Stderr, "boom: internal error in boom: assignment to entry in nil map") != 2 {
			t.Fatalf("run %d: exit %d stdout %q stderr %q", i, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
}

// Sizes written in a format or a set are the caller's: a field width or
// a repeat count of billions must not become an allocation of gigabytes
// (or a panic of strings.Repeat past the largest slice).
func TestAttack_Parse_WidthAndRepeatBombs(t *testing.T) {
	_, sb := newSandbox(t, sandbox.Options{})
	cases := []struct {
		script, out string
		code        int
	}{
		{`stat -c '%09223372036854775000n' a.txt`, "a.txt\n", 0},
		{`stat -c '%0999999999n|%-999999999n' a.txt`, "a.txt|a.txt\n", 0},
		{`echo abc | tr abc '[x*2147483647]'`, "", 1},
		{`echo abc | tr -d '[a*99999999999]'`, "", 1},
		{`echo abc | tr abc '[x*3]'`, "xxx\n", 0},
	}
	for _, c := range cases {
		res := run(t, sb, c.script)
		if res.ExitCode != c.code || res.Stdout != c.out || strings.Contains(res.Stderr, "internal error") {
			t.Errorf("%s: exit %d stdout %q stderr %q; want %d %q", c.script, res.ExitCode, res.Stdout, res.Stderr, c.code, c.out)
		}
	}
}

// File names in a patch are the patch author's: an absolute name or one
// with ".." is ignored (GNU patch 2.7.2+), so applying a patch in a
// directory cannot change a file elsewhere. Found by FuzzPatch.
func TestAttack_Parse_PatchDangerousNames(t *testing.T) {
	a, sb := newSandbox(t, sandbox.Options{})
	for _, p := range []string{
		"--- /data/a.txt\n+++ /data/a.txt\n@@ -1 +1 @@\n-apple\n+pwned\n",
		"--- a/../a.txt\n+++ b/../a.txt\n@@ -1 +1 @@\n-apple\n+pwned\n",
		"--- ../a.txt\n+++ ../a.txt\n@@ -1 +1 @@\n-apple\n+pwned\n",
		"--- /dev/null\n+++ /data/new.txt\n@@ -0,0 +1 @@\n+planted\n",
	} {
		for _, strip := range []string{"-p0", "-p1"} {
			res, err := sb.Exec(ctx, "patch "+strip, sandbox.ExecOptions{Dir: "/data/sub", Stdin: strings.NewReader(p)})
			if err != nil {
				t.Fatal(err)
			}
			if data, _ := a.FS.ReadFile(ctx, "/data/a.txt"); string(data) != "apple\nbanana\ncherry\napple\n" {
				t.Fatalf("patch %s %q changed /data/a.txt to %q", strip, p, data)
			}
			for _, f := range []string{"/data/new.txt", "/data/a.txt.orig", "/data/a.txt.rej", "/data/sub/a.txt"} {
				if _, err := a.FS.Lstat(ctx, f); err == nil {
					t.Fatalf("patch %s %q created %s", strip, p, f)
				}
			}
			// With -p1, "/data/new.txt" is "data/new.txt", below the
			// directory, and may be created there.
			if strip == "-p0" && res.ExitCode == 0 {
				t.Errorf("patch %s %q: exit 0, stdout %q", strip, p, res.Stdout)
			}
		}
	}
	// Named on the command line, the same file is patched.
	res, _ := sb.Exec(ctx, "patch /data/a.txt", sandbox.ExecOptions{Dir: "/data/sub", Stdin: strings.NewReader("--- /x\n+++ /x\n@@ -1 +1 @@\n-apple\n+APPLE\n")})
	if data, _ := a.FS.ReadFile(ctx, "/data/a.txt"); res.ExitCode != 0 || !strings.HasPrefix(string(data), "APPLE\n") {
		t.Errorf("explicit file: exit %d stderr %q content %q", res.ExitCode, res.Stderr, data)
	}
}

// A small archive that expands to far more (a gzip bomb) is extracted
// as a stream: the sandbox's limit on bytes written stops it, instead of
// the whole expansion being held in memory first.
func TestAttack_Parse_TarGzipBomb(t *testing.T) {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	const size = 96 << 20
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Size: size, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(tw, zeroReader{}, size); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	zw.Close()
	a, sb := newSandbox(t, sandbox.Options{Limits: sandbox.Hardened})
	if err := a.FS.WriteFile(ctx, "/data/bomb.tgz", z.Bytes(), vfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res := run(t, sb, "mkdir o && tar -xzf bomb.tgz -C o")
	if res.ExitCode != sandbox.ExitLimit || res.Limit == nil || res.Limit.Limit != "filesystem writes" {
		t.Fatalf("exit %d limit %v stderr %q (archive of %d bytes)", res.ExitCode, res.Limit, res.Stderr, z.Len())
	}
	res = run(t, sb, "tar -tzvf bomb.tgz")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, " zeros\n") {
		t.Fatalf("listing: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

package cmd

import (
	"bytes"
	"crypto/rand"
	"regexp"
	"strings"
	"testing"
)

func TestFSWriteCatLs(t *testing.T) {
	newAgent(t)
	if out := mustRun(t, "fs", "t", "write", "/a/b.txt", "hello"); out != "" {
		t.Errorf("write printed %q, want nothing", out)
	}
	checkOut(t, "cat", mustRun(t, "fs", "t", "cat", "/a/b.txt"), "hello")
	// Content after PATH is never a flag (the README's "- ship it").
	for _, content := range []string{"- ship it", "--help", "-x"} {
		mustRun(t, "fs", "t", "write", "/dash.md", content)
		checkOut(t, "cat "+content, mustRun(t, "fs", "t", "cat", "/dash.md"), content)
	}
	mustRun(t, "fs", "t", "rm", "/dash.md")
	// From standard input, with "-" and with CONTENT absent; a relative
	// path is taken from the root.
	if r := run(t, "line 1\nline 2\n", "fs", "t", "write", "notes.md", "-"); r.code != 0 {
		t.Fatalf("write -: exit %d: %s", r.code, r.err)
	}
	if r := run(t, "from stdin", "fs", "t", "write", "/a/c.txt"); r.code != 0 {
		t.Fatalf("write from stdin: exit %d: %s", r.code, r.err)
	}
	checkOut(t, "cat two files", mustRun(t, "fs", "t", "cat", "/notes.md", "a/c.txt"), "line 1\nline 2\nfrom stdin")

	checkOut(t, "ls", mustRun(t, "fs", "t", "ls"), lines("d a", "f notes.md"))
	checkOut(t, "ls /a", mustRun(t, "fs", "t", "ls", "/a"), lines("f b.txt", "f c.txt"))
	checkOut(t, "ls -R", mustRun(t, "fs", "t", "ls", "-R"), lines("d a", "f a/b.txt", "f a/c.txt", "f notes.md"))
	checkOut(t, "ls -R /a", mustRun(t, "fs", "t", "ls", "-R", "/a"), lines("f b.txt", "f c.txt"))
	checkOut(t, "ls of a file", mustRun(t, "fs", "t", "ls", "/a/b.txt"), lines("f /a/b.txt"))

	// ls -l: mode, links, uid, gid, size aligned, long-iso mtime, name.
	long := mustRun(t, "fs", "t", "ls", "-l", "-R", "/")
	re := regexp.MustCompile(`^(\S{10}) +(\d+) (\d+) (\d+) +(\d+) \d{4}-\d\d-\d\d \d\d:\d\d (.+)$`)
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(long, "\n"), "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("ls -l line %q does not look like ls -l", l)
		}
		got = append(got, m[1]+" "+m[5]+" "+m[6])
	}
	checkOut(t, "ls -l -R (mode size name)", strings.Join(got, "\n"), strings.Join([]string{
		"drwxr-xr-x 0 a",
		"-rw-r--r-- 5 a/b.txt",
		"-rw-r--r-- 10 a/c.txt",
		"-rw-r--r-- 14 notes.md",
	}, "\n"))

	wantFail(t, 1, []string{"fs", "t", "cat", "/missing"}, "open /missing: no such file or directory (ENOENT)", "Try:")
	wantFail(t, 1, []string{"fs", "t", "cat", "/a"}, "EISDIR")
	wantFail(t, 1, []string{"fs", "t", "ls", "/nope"}, "ENOENT")
}

func TestFSWriteLargeFromStdin(t *testing.T) {
	newAgent(t)
	// Larger than one staged batch: streamed through a staging inode.
	data := make([]byte, smallFile+12345)
	rand.Read(data)
	if r := run(t, string(data), "fs", "t", "write", "/deep/dir/big.bin"); r.code != 0 {
		t.Fatalf("write: exit %d: %s", r.code, r.err)
	}
	got := mustRun(t, "fs", "t", "cat", "/deep/dir/big.bin")
	if !bytes.Equal([]byte(got), data) {
		t.Fatalf("cat returned %d bytes, not the %d written", len(got), len(data))
	}
	// Rewriting with short content replaces it entirely.
	mustRun(t, "fs", "t", "write", "/deep/dir/big.bin", "short")
	checkOut(t, "cat after rewrite", mustRun(t, "fs", "t", "cat", "/deep/dir/big.bin"), "short")
}

func TestFSMkdirRm(t *testing.T) {
	newAgent(t)
	wantFail(t, 1, []string{"fs", "t", "mkdir", "/x/y/z"}, "ENOENT")
	mustRun(t, "fs", "t", "mkdir", "-p", "/x/y/z", "/w")
	mustRun(t, "fs", "t", "mkdir", "-p", "/x/y") // exists: fine with -p
	wantFail(t, 1, []string{"fs", "t", "mkdir", "/w"}, "mkdir /w: file exists (EEXIST)")
	mustRun(t, "fs", "t", "write", "/x/y/f", "1")
	checkOut(t, "ls -R", mustRun(t, "fs", "t", "ls", "-R"), lines("d w", "d x", "d x/y", "f x/y/f", "d x/y/z"))

	wantFail(t, 1, []string{"fs", "t", "rm", "/x"}, "rm /x: is a directory (EISDIR)", "Try: agentfs fs t rm -r /x")
	wantFail(t, 1, []string{"fs", "t", "rm", "/missing"}, "ENOENT")
	mustRun(t, "fs", "t", "rm", "-f", "/missing")
	mustRun(t, "fs", "t", "rm", "-r", "/x")
	mustRun(t, "fs", "t", "rm", "-rf", "/w", "/gone")
	checkOut(t, "ls after rm -r", mustRun(t, "fs", "t", "ls"), "")
}

func TestFSMvCpLn(t *testing.T) {
	newAgent(t)
	mustRun(t, "fs", "t", "write", "/f", "content")
	mustRun(t, "fs", "t", "mkdir", "/d")
	mustRun(t, "fs", "t", "mv", "/f", "/d") // into the directory, like mv
	checkOut(t, "after mv into dir", mustRun(t, "fs", "t", "ls", "-R"), lines("d d", "f d/f"))
	mustRun(t, "fs", "t", "mv", "/d/f", "/g") // rename
	checkOut(t, "after rename", mustRun(t, "fs", "t", "ls", "-R"), lines("d d", "f g"))
	wantFail(t, 1, []string{"fs", "t", "mv", "/nope", "/x"}, "ENOENT")

	mustRun(t, "fs", "t", "cp", "/g", "/h")
	checkOut(t, "cp", mustRun(t, "fs", "t", "cat", "/h"), "content")
	mustRun(t, "fs", "t", "cp", "/g", "/d") // into the directory
	checkOut(t, "cp into dir", mustRun(t, "fs", "t", "cat", "/d/g"), "content")

	// A tree with a symlink and a file whose mode is not the default
	// (import sets it from the host).
	mustRun(t, "fs", "t", "mkdir", "-p", "/src/sub")
	mustRun(t, "fs", "t", "write", "/src/sub/x", "x")
	mustRun(t, "fs", "t", "ln", "-s", "sub/x", "/src/link")
	host := t.TempDir() + "/exec.sh"
	writeHostFile(t, host, "#!/bin/sh\n", 0o750)
	mustRun(t, "fs", "t", "import", host, "/src/exec.sh")
	wantFail(t, 1, []string{"fs", "t", "cp", "/src", "/dst"}, "cp /src: is a directory (EISDIR)", "Try: agentfs fs t cp -r /src /dst")
	mustRun(t, "fs", "t", "cp", "-r", "/src", "/dst")
	checkOut(t, "cp -r tree", mustRun(t, "fs", "t", "ls", "-R", "/dst"), lines("f exec.sh", "l link", "d sub", "f sub/x"))
	long := mustRun(t, "fs", "t", "ls", "-l", "/dst")
	if !regexp.MustCompile(`(?m)^-rwxr-x--- .* exec\.sh$`).MatchString(long) {
		t.Errorf("ls -l /dst:\n%s\nwant exec.sh with mode -rwxr-x---", long)
	}
	if !regexp.MustCompile(`(?m)^lrwxrwxrwx .* link -> sub/x$`).MatchString(long) {
		t.Errorf("ls -l /dst:\n%s\nwant a line for link -> sub/x", long)
	}
	checkOut(t, "cat through the copied link", mustRun(t, "fs", "t", "cat", "/dst/link"), "x")
	// cp -r into an existing directory copies into it.
	mustRun(t, "fs", "t", "cp", "-r", "/src", "/d")
	checkOut(t, "cp -r into dir", mustRun(t, "fs", "t", "cat", "/d/src/sub/x"), "x")
	wantFail(t, 1, []string{"fs", "t", "cp", "-r", "/src", "/src/sub/inner"}, "cannot copy a directory into itself")

	// Links.
	mustRun(t, "fs", "t", "ln", "-s", "/g", "/lnk")
	checkOut(t, "cat via symlink", mustRun(t, "fs", "t", "cat", "/lnk"), "content")
	if !regexp.MustCompile(`(?m)^lrwxrwxrwx 1 0 0 2 \S+ \S+ /lnk -> /g$`).MatchString(mustRun(t, "fs", "t", "ls", "-l", "/lnk")) {
		t.Errorf("ls -l /lnk = %q, want the link itself", mustRun(t, "fs", "t", "ls", "-l", "/lnk"))
	}
	mustRun(t, "fs", "t", "ln", "/g", "/hard")
	if st := mustRun(t, "fs", "t", "stat", "/hard"); !strings.Contains(st, "Links: 2") {
		t.Errorf("stat of a hard link:\n%s\nwant Links: 2", st)
	}
	wantFail(t, 1, []string{"fs", "t", "ln", "-s", "/g", "/lnk"}, "EEXIST")
}

func TestFSStat(t *testing.T) {
	newAgent(t)
	mustRun(t, "fs", "t", "write", "/a.txt", "hello")
	mustRun(t, "fs", "t", "ln", "-s", "a.txt", "/l")
	out := mustRun(t, "fs", "t", "stat", "/a.txt")
	ts := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} [+-]\d{4}`
	want := regexp.MustCompile(`^  File: /a\.txt
  Size: 5 +Blocks: 8 +IO Block: 4096 +regular file
 Inode: \d+ +Links: 1
Access: \(0644/-rw-r--r--\)  Uid: \( +0\)   Gid: \( +0\)
Access: ` + ts + `
Modify: ` + ts + `
Change: ` + ts + `
$`)
	if !want.MatchString(out) {
		t.Errorf("stat /a.txt:\n%s\ndoes not match\n%s", out, want)
	}
	out = mustRun(t, "fs", "t", "stat", "/l", "/")
	for _, w := range []string{"  File: /l -> a.txt\n", "symbolic link", "(0777/lrwxrwxrwx)", "  File: /\n", "directory", "(0755/drwxr-xr-x)"} {
		if !strings.Contains(out, w) {
			t.Errorf("stat /l /:\n%s\nwant it to contain %q", out, w)
		}
	}
	wantFail(t, 1, []string{"fs", "t", "stat", "/nope"}, "lstat /nope: no such file or directory (ENOENT)")
}

func TestFSUsageErrors(t *testing.T) {
	newAgent(t)
	wantFail(t, 2, []string{"fs", "t", "ls", "--bogus"}, "unknown flag: --bogus", "Try: agentfs fs t ls --help")
	wantFail(t, 2, []string{"fs", "t"}, "missing command", "Try: agentfs fs t --help")
	wantFail(t, 2, []string{"fs"}, "missing ID_OR_PATH")
	wantFail(t, 2, []string{"fs", "t", "lss"}, `unknown command "lss"`, "did you mean ls")
	wantFail(t, 2, []string{"fs", "t", "cat"}, "requires at least 1 arg(s)", "Try: agentfs fs t cat --help")
	wantFail(t, 2, []string{"fs", "t", "mv", "/a"}, "accepts 2 arg(s)")
	wantFail(t, 2, []string{"fs", "--bogus", "t", "ls"}, "unknown flag --bogus")
	// Global flags are accepted before and after ID_OR_PATH.
	mustRun(t, "fs", "--durability", "full", "t", "write", "/x", "1")
	mustRun(t, "--durability=full", "fs", "t", "ls", "--durability", "normal")

	help := mustRun(t, "fs", "--help")
	for _, w := range []string{"agentfs fs ID_OR_PATH COMMAND", "import", "export", "stat"} {
		if !strings.Contains(help, w) {
			t.Errorf("fs --help does not mention %q:\n%s", w, help)
		}
	}
	if help := mustRun(t, "fs", "t", "ls", "--help"); !strings.Contains(help, "agentfs fs t ls [PATH]") {
		t.Errorf("fs t ls --help:\n%s\nwant the usage line agentfs fs t ls [PATH]", help)
	}
}

func TestMissingDatabase(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"fs", "nope", "ls"},
		{"kv", "nope", "get", "k"},
		{"tools", "nope", "start", "x"},
		{"timeline", "nope"},
		{"query", "nope", "SELECT 1"},
	} {
		wantFail(t, 1, args, `no agent database "nope"`, "Try: agentfs init nope")
	}
}

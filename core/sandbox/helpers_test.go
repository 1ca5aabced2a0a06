package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

var ctx = context.Background()

// fixedTime is the clock of the sandbox in tests and the mtime of the
// fixture files.
var fixedTime = time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	// ls, stat and date print local times; the host side of the
	// differential test runs with TZ=UTC.
	time.Local = time.UTC
	os.Exit(m.Run())
}

// tempDir is os.MkdirTemp, removed at the end of the test (t.TempDir
// names contain "#" for some subtests, which the store mishandles).
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// openAgent opens a fresh agent database.
func openAgent(t testing.TB) *core.Agent {
	t.Helper()
	a, err := core.Open(ctx, filepath.Join(tempDir(t), "a.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// newSandbox opens an agent and a sandbox over it with the normal
// limits, a fixed clock and the fixture tree in /data.
func newSandbox(t testing.TB, opts sandbox.Options) (*core.Agent, *sandbox.Sandbox) {
	t.Helper()
	a := openAgent(t)
	writeFixtureVFS(t, a.FS, "/data")
	if opts.Limits == (sandbox.Limits{}) {
		opts.Limits = sandbox.Normal
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedTime }
	}
	sb, err := sandbox.New(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, sb
}

// run runs script in /data and returns the result.
func run(t testing.TB, sb *sandbox.Sandbox, script string) sandbox.Result {
	t.Helper()
	res, err := sb.Exec(ctx, script, sandbox.ExecOptions{Dir: "/data"})
	if err != nil {
		t.Fatalf("Exec(%q): %v", script, err)
	}
	return res
}

type fixtureFile struct {
	path, content, link string
	mode                os.FileMode
	dir                 bool
}

// fixture is the tree the differential and unit tests run on.
var fixture = []fixtureFile{
	{path: "a.txt", content: "apple\nbanana\ncherry\napple\n"},
	{path: "b.txt", content: "line one\nline two\nline three\n"},
	{path: "nums.txt", content: "10\n2\n33\n4\n-5\n2\n1.5\n"},
	{path: "words.txt", content: "the quick brown fox\njumps over the lazy dog\nThe End\n"},
	{path: "csv.txt", content: "name,age,city\nalice,30,paris\nbob,25,london\ncarol,35,berlin\n"},
	{path: "dup.txt", content: "a\na\nb\nc\nc\nc\na\n"},
	{path: "empty.txt", content: ""},
	{path: "noeol.txt", content: "first\nno newline at end"},
	{path: "tabs.txt", content: "a\tb\tc\n1\t2\t3\n"},
	{path: "sizes.txt", content: "1K a\n10M b\n2G c\n500 d\n3K e\n"},
	{path: "data.json", content: `{"count":3,"items":[1,2,3],"name":"demo","nested":{"k":"v","n":null},"tags":["x","y"]}` + "\n"},
	{path: "users.json", content: `[{"age":30,"name":"alice"},{"age":25,"name":"bob"},{"age":35,"name":"carol"}]` + "\n"},
	{path: "code.go", content: "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n\t// TODO: more\n}\n"},
	{path: "sub", dir: true},
	{path: "sub/c.md", content: "# Title\nsome text\nTODO: fix this\n"},
	{path: "sub/d.log", content: "INFO start\nERROR bad thing\nINFO done\nERROR again\n"},
	{path: "sub/deep", dir: true},
	{path: "sub/deep/e.txt", content: "deep file\nTODO deep\n"},
	{path: "sub/.hidden", content: "secret-ish\n"},
	{path: "other", dir: true},
	{path: "other/x.txt", content: "apple\nbanana\ncherry\napple pie\n"},
	{path: "link", link: "a.txt"},
	{path: "script.sh", content: "#!/bin/sh\necho \"script says $1\"\n", mode: 0o755},
}

func writeFixtureVFS(t testing.TB, f *vfs.FS, root string) {
	t.Helper()
	if err := f.MkdirAll(ctx, root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, x := range fixture {
		p := root + "/" + x.path
		var err error
		switch {
		case x.dir:
			err = f.Mkdir(ctx, p, 0o755)
		case x.link != "":
			err = f.Symlink(ctx, x.link, p)
		default:
			mode := x.mode
			if mode == 0 {
				mode = 0o644
			}
			err = f.WriteFile(ctx, p, []byte(x.content), vfs.WriteOptions{Perm: uint32(mode)})
			if err == nil {
				err = f.Chmod(ctx, p, uint32(mode))
			}
		}
		if err != nil {
			t.Fatalf("fixture %s: %v", p, err)
		}
	}
	// Times last, directories after their contents.
	for i := len(fixture) - 1; i >= 0; i-- {
		tm := fixedTime
		if err := f.Utimens(ctx, root+"/"+fixture[i].path, &tm, &tm, false); err != nil {
			t.Fatal(err)
		}
	}
	tm := fixedTime
	f.Utimens(ctx, root, &tm, &tm, false)
}

func writeFixtureHost(t testing.TB, root string) {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, x := range fixture {
		p := filepath.Join(root, x.path)
		var err error
		switch {
		case x.dir:
			err = os.Mkdir(p, 0o755)
		case x.link != "":
			err = os.Symlink(x.link, p)
		default:
			mode := x.mode
			if mode == 0 {
				mode = 0o644
			}
			err = os.WriteFile(p, []byte(x.content), mode)
			if err == nil {
				err = os.Chmod(p, mode)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := len(fixture) - 1; i >= 0; i-- {
		p := filepath.Join(root, fixture[i].path)
		if fixture[i].link != "" {
			// os.Chtimes follows links; touch -h does not.
			exec.Command("touch", "-h", "-d", "@"+fmt.Sprint(fixedTime.Unix()), p).Run()
			continue
		}
		os.Chtimes(p, fixedTime, fixedTime)
	}
	os.Chtimes(root, fixedTime, fixedTime)
}

// treeVFS describes every entry below root: type, mode, content or
// target, one line each, sorted.
func treeVFS(t testing.TB, f *vfs.FS, root string) string {
	t.Helper()
	var lines []string
	err := f.Walk(ctx, root, func(p string, st vfs.Stat) error {
		rel := strings.TrimPrefix(p, root)
		if rel == "" {
			return nil
		}
		switch {
		case st.IsDir():
			lines = append(lines, "d "+rel)
		case st.IsSymlink():
			target, _ := f.Readlink(ctx, p)
			lines = append(lines, "l "+rel+" -> "+target)
		default:
			data, _ := f.ReadFile(ctx, p)
			lines = append(lines, "f "+rel+" "+modeBits(st.Perm())+" "+strings.ReplaceAll(string(data), "\n", `\n`))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func treeHost(t testing.TB, root string) string {
	t.Helper()
	var lines []string
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root)
		if rel == "" {
			return nil
		}
		switch {
		case info.IsDir():
			lines = append(lines, "d "+rel)
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, "l "+rel+" -> "+target)
		default:
			data, _ := os.ReadFile(p)
			lines = append(lines, "f "+rel+" "+modeBits(uint32(info.Mode().Perm()))+" "+strings.ReplaceAll(string(data), "\n", `\n`))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func modeBits(m uint32) string {
	return strings.TrimLeft(string(rune('0'+(m>>6)&7))+string(rune('0'+(m>>3)&7))+string(rune('0'+m&7)), "")
}

package agentfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/rpc"
	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

func Example() {
	ctx := context.Background()
	a, err := agentfs.Open(ctx, agentfs.Options{}) // a temporary database
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	if err := a.FS().WriteFile(ctx, "/notes/todo.md", []byte("- write tests\n"), agentfs.WriteOptions{CreateParents: true}); err != nil {
		log.Fatal(err)
	}
	data, _ := a.FS().ReadFile(ctx, "/notes/todo.md")
	fmt.Printf("%s", data)

	_ = a.KV().Set(ctx, "step", 3)
	var step int
	_ = a.KV().Get(ctx, "step", &step)
	fmt.Println("step", step)

	id, _ := a.Tools().Start(ctx, "search", map[string]string{"q": "agentfs"})
	_ = a.Tools().Success(ctx, id, map[string]int{"hits": 1})
	calls, _ := a.Tools().List(ctx, agentfs.ToolFilter{})
	fmt.Println(len(calls), calls[0].Name, calls[0].Status)
	// Output:
	// - write tests
	// step 3
	// 1 search success
}

// Open a database by path (or by id: .agentfs/ID.db, as agentfs-sdk).
// Closing and reopening keeps everything.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "my-agent.db")

	a, err := agentfs.Open(ctx, agentfs.Options{Path: path})
	if err != nil {
		log.Fatal(err)
	}
	_ = a.FS().WriteFile(ctx, "/hello.txt", []byte("hello"), agentfs.WriteOptions{})
	a.Close()

	a, err = agentfs.Open(ctx, agentfs.Options{Path: path})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	data, _ := a.FS().ReadFile(ctx, "/hello.txt")
	fmt.Println(string(data), filepath.Base(a.Path()))
	// Output: hello my-agent.db
}

// Files, directories, links and errors that errors.Is understands.
func Example_files() {
	ctx := context.Background()
	a, _ := agentfs.Open(ctx, agentfs.Options{})
	defer a.Close()
	f := a.FS()

	_ = f.MkdirAll(ctx, "/src/pkg", 0o755)
	_ = f.WriteFile(ctx, "/src/pkg/main.go", []byte("package main\n"), agentfs.WriteOptions{})
	_ = f.WriteFile(ctx, "/src/pkg/main.go", []byte("func main() {}\n"), agentfs.WriteOptions{Append: true})
	_ = f.Symlink(ctx, "pkg/main.go", "/src/main.go")
	_ = f.Chmod(ctx, "/src/pkg/main.go", 0o600)

	st, _ := f.Stat(ctx, "/src/main.go") // follows the link
	fmt.Printf("%d bytes, mode %o\n", st.Size, st.Perm())
	names, _ := f.Readdir(ctx, "/src")
	fmt.Println(names)

	err := f.Rmdir(ctx, "/src")
	fmt.Println(errors.Is(err, syscall.ENOTEMPTY), err)
	_, err = f.ReadFile(ctx, "/nope")
	fmt.Println(errors.Is(err, fs.ErrNotExist))

	_ = f.Remove(ctx, "/src", agentfs.RemoveOptions{Recursive: true})
	ok, _ := f.Exists(ctx, "/src")
	fmt.Println(ok)
	// Output:
	// 28 bytes, mode 600
	// [main.go pkg]
	// true rmdir /src: directory not empty
	// true
	// false
}

// Positional reads and writes through an open file.
func ExampleFileSystem_open() {
	ctx := context.Background()
	a, _ := agentfs.Open(ctx, agentfs.Options{})
	defer a.Close()

	h, err := a.FS().Open(ctx, "/data.bin", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	_, _ = h.WriteAt([]byte("0123456789"), 0)
	_, _ = h.WriteAt([]byte("abc"), 4)
	buf := make([]byte, 6)
	_, _ = h.ReadAt(buf, 2)
	st, _ := h.Stat()
	fmt.Println(string(buf), st.Size)
	// Output: 23abc7 10
}

// The key-value store holds JSON values.
func Example_kv() {
	ctx := context.Background()
	a, _ := agentfs.Open(ctx, agentfs.Options{})
	defer a.Close()
	kv := a.KV()

	type user struct {
		Name  string `json:"name"`
		Admin bool   `json:"admin"`
	}
	_ = kv.Set(ctx, "user:1", user{"ada", true})
	_ = kv.Set(ctx, "user:2", user{"bob", false})
	_ = kv.Set(ctx, "config", map[string]int{"retries": 3})

	var u user
	_ = kv.Get(ctx, "user:1", &u)
	fmt.Println(u.Name, u.Admin)

	entries, _ := kv.List(ctx, "user:")
	for _, e := range entries {
		fmt.Println(e.Key, string(e.Value))
	}
	_, _ = kv.Delete(ctx, "config")
	fmt.Println(errors.Is(kv.Get(ctx, "config", &u), agentfs.ErrNotFound))
	// Output:
	// ada true
	// user:1 {"name":"ada","admin":true}
	// user:2 {"name":"bob","admin":false}
	// true
}

// The tool-call log: start and finish, or record a finished call.
func Example_tools() {
	ctx := context.Background()
	a, _ := agentfs.Open(ctx, agentfs.Options{})
	defer a.Close()
	tools := a.Tools()

	id, _ := tools.Start(ctx, "fetch", map[string]string{"url": "https://example.com"})
	_ = tools.Error(ctx, id, "timeout")

	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	_, _ = tools.Record(ctx, agentfs.ToolRecord{
		Name: "search", StartedAt: start, CompletedAt: start.Add(1500 * time.Millisecond),
		Parameters: map[string]string{"q": "agentfs"}, Result: []string{"a", "b"},
	})

	c, _ := tools.Get(ctx, id)
	fmt.Println(c.Name, c.Status, *c.Error)
	stats, _ := tools.Stats(ctx)
	for _, s := range stats {
		fmt.Println(s.Name, s.TotalCalls, s.Successful, s.Failed)
	}
	// Output:
	// fetch error timeout
	// fetch 1 0 1
	// search 1 1 0
}

// The filesystem as an io/fs.FS for the standard library.
func ExampleNewIOFS() {
	ctx := context.Background()
	a, _ := agentfs.Open(ctx, agentfs.Options{})
	defer a.Close()
	for _, p := range []string{"/site/index.html", "/site/css/main.css", "/site/img/logo.svg"} {
		_ = a.FS().WriteFile(ctx, p, []byte("..."), agentfs.WriteOptions{CreateParents: true})
	}

	fsys := agentfs.NewIOFS(ctx, a.FS())
	_ = fs.WalkDir(fsys, "site", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fmt.Println(p)
		}
		return err
	})
	site, _ := fs.Sub(fsys, "site")
	css, _ := fs.Glob(site, "*/*.css")
	fmt.Println(css)
	// Output:
	// site/css/main.css
	// site/img/logo.svg
	// site/index.html
	// [css/main.css]
}

// A remote agent behind `agentfs serve http --data DIR`; here the server
// runs in the example. Code written against agentfs.Agent runs the same
// on a local or a remote agent.
func ExampleDial() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	agents, _ := rpc.NewAgentDir(dir, core.Options{})
	defer agents.Close()
	srv := httptest.NewServer(rpc.NewHTTPHandler(agents, rpc.HTTPOptions{Token: "s3cret"}))
	defer srv.Close()

	ctx := context.Background()
	var a agentfs.Agent
	a, err := agentfs.Dial(ctx, agentfs.RemoteOptions{URL: srv.URL, Agent: "worker-1", Token: "s3cret", Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	_ = a.FS().WriteFile(ctx, "/report.txt", []byte("done"), agentfs.WriteOptions{})
	data, _ := a.FS().ReadFile(ctx, "/report.txt")
	fmt.Println(string(data))
	_, err = a.FS().Stat(ctx, "/missing")
	fmt.Println(errors.Is(err, fs.ErrNotExist), err)

	_, err = agentfs.Dial(ctx, agentfs.RemoteOptions{URL: srv.URL, Agent: "worker-1", Token: "wrong"})
	fmt.Println(errors.Is(err, fs.ErrPermission))
	// Output:
	// done
	// true stat /missing: no such file or directory
	// true
}

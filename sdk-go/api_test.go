package agentfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	agentfs "github.com/agentfs-go/agentfs/sdk-go"
)

func openLocal(t *testing.T) agentfs.Agent {
	t.Helper()
	a, err := agentfs.Open(context.Background(), agentfs.Options{Path: filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestAPILocal(t *testing.T) { testAPI(t, openLocal) }

// testAPI checks the Agent interface beyond the vectors: errors, file
// handles, times, statfs, kv values and the tool-call lifecycle. Local and
// remote agents must pass it alike.
func testAPI(t *testing.T, open func(t *testing.T) agentfs.Agent) {
	ctx := context.Background()

	t.Run("errors", func(t *testing.T) {
		f := open(t).FS()
		_, err := f.Stat(ctx, "/missing")
		var pe *fs.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, syscall.ENOENT) || !errors.As(err, &pe) || pe.Path != "/missing" {
			t.Errorf("Stat(/missing) = %#v", err)
		}
		if err := f.Mkdir(ctx, "/d", 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Mkdir(ctx, "/d", 0); !errors.Is(err, fs.ErrExist) {
			t.Errorf("Mkdir twice = %v", err)
		}
		if err := f.WriteFile(ctx, "/d/f", []byte("x"), agentfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := f.Rmdir(ctx, "/d"); !errors.Is(err, syscall.ENOTEMPTY) {
			t.Errorf("Rmdir non-empty = %v", err)
		}
		if err := f.WriteFile(ctx, "/d/f", []byte("x"), agentfs.WriteOptions{Exclusive: true}); !errors.Is(err, fs.ErrExist) {
			t.Errorf("exclusive WriteFile = %v", err)
		}
		if err := f.WriteFile(ctx, "/p/q/r", []byte("deep"), agentfs.WriteOptions{CreateParents: true, Perm: 0o600}); err != nil {
			t.Fatal(err)
		}
		if st, err := f.Stat(ctx, "/p/q/r"); err != nil || st.Perm() != 0o600 || st.Size != 4 {
			t.Errorf("Stat(/p/q/r) = %+v, %v", st, err)
		}
		if err := f.RemoveAll(ctx, "/p"); err != nil {
			t.Fatal(err)
		}
		if err := f.RemoveAll(ctx, "/p"); err != nil {
			t.Errorf("RemoveAll missing = %v", err)
		}
	})

	t.Run("handles", func(t *testing.T) {
		f := open(t).FS()
		h, err := f.Open(ctx, "/h.bin", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Open(ctx, "/h.bin", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0); !errors.Is(err, fs.ErrExist) {
			t.Errorf("O_EXCL on an existing file = %v", err)
		}
		data := bytes.Repeat([]byte("0123456789abcdef"), 600) // 9600 bytes, 3 chunks
		if n, err := h.WriteAt(data, 100); err != nil || n != len(data) {
			t.Fatalf("WriteAt = %d, %v", n, err)
		}
		got := make([]byte, 50)
		if n, err := h.ReadAt(got, 4090); err != nil || n != 50 || !bytes.Equal(got, data[3990:4040]) {
			t.Errorf("ReadAt across a chunk = %d, %v", n, err)
		}
		if n, err := h.ReadAt(got, 9680); err != io.EOF || n != 20 {
			t.Errorf("ReadAt at the end = %d, %v; want 20, EOF", n, err)
		}
		if st, err := h.Stat(); err != nil || st.Size != 9700 || st.Perm() != 0o640 {
			t.Errorf("Stat = %+v, %v", st, err)
		}
		if off, err := h.Seek(-5, io.SeekEnd); err != nil || off != 9695 {
			t.Errorf("Seek = %d, %v", off, err)
		}
		rest, err := io.ReadAll(h)
		if err != nil || string(rest) != "bcdef" {
			t.Errorf("Read to the end = %q, %v", rest, err)
		}
		if _, err := h.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if n, err := h.Write([]byte("HEAD")); err != nil || n != 4 {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if err := h.Truncate(10); err != nil {
			t.Fatal(err)
		}
		if err := h.Sync(); err != nil {
			t.Fatal(err)
		}
		if b, err := f.ReadFile(ctx, "/h.bin"); err != nil || !bytes.Equal(b, append([]byte("HEAD"), make([]byte, 6)...)) {
			t.Errorf("ReadFile = %q, %v", b, err)
		}
		// The handle keeps an unlinked file readable.
		if err := f.Unlink(ctx, "/h.bin"); err != nil {
			t.Fatal(err)
		}
		if n, err := h.ReadAt(got[:4], 0); n != 4 || string(got[:4]) != "HEAD" {
			t.Errorf("ReadAt after unlink = %d, %v", n, err)
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		if err := h.Close(); err == nil {
			t.Error("second Close succeeded")
		}
		if _, err := f.Open(ctx, "/h.bin", os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open unlinked = %v", err)
		}

		a, err := f.Open(ctx, "/log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"one\n", "two\n"} {
			if _, err := a.Write([]byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		a.Close()
		if b, _ := f.ReadFile(ctx, "/log"); string(b) != "one\ntwo\n" {
			t.Errorf("appended = %q", b)
		}
	})

	t.Run("attributes", func(t *testing.T) {
		f := open(t).FS()
		if err := f.WriteFile(ctx, "/f", []byte("x"), agentfs.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		mtime := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
		atime := time.Date(2023, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := f.Utimes(ctx, "/f", atime, mtime); err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat(ctx, "/f")
		if err != nil || !st.Mtime.Equal(mtime) || !st.Atime.Equal(atime) {
			t.Errorf("times = %v %v, %v; want %v %v", st.Atime, st.Mtime, err, atime, mtime)
		}
		if err := f.Utimes(ctx, "/f", time.Time{}, mtime.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if st, _ := f.Stat(ctx, "/f"); !st.Atime.Equal(atime) || !st.Mtime.Equal(mtime.Add(time.Hour)) {
			t.Errorf("zero atime changed it: %v %v", st.Atime, st.Mtime)
		}
		if err := f.Chown(ctx, "/f", 1000, -1); err != nil {
			t.Fatal(err)
		}
		if err := f.Symlink(ctx, "/f", "/l"); err != nil {
			t.Fatal(err)
		}
		if err := f.Lchown(ctx, "/l", 7, 8); err != nil {
			t.Fatal(err)
		}
		if st, _ := f.Stat(ctx, "/f"); st.UID != 1000 {
			t.Errorf("uid = %d", st.UID)
		}
		if st, _ := f.Lstat(ctx, "/l"); st.UID != 7 || st.GID != 8 {
			t.Errorf("link owner = %d:%d", st.UID, st.GID)
		}
		es, err := f.ReaddirPlus(ctx, "/")
		if err != nil || len(es) != 2 || es[0].Name != "f" || !es[0].Stat.IsRegular() || es[1].Name != "l" || !es[1].Stat.IsSymlink() {
			t.Errorf("ReaddirPlus = %+v, %v", es, err)
		}
		sf, err := f.Statfs(ctx)
		if err != nil || sf.BlockSize != 4096 || sf.Files < 3 || sf.NameMax != 255 {
			t.Errorf("Statfs = %+v, %v", sf, err)
		}
		if err := f.Access(ctx, "/f", 4); err != nil {
			t.Errorf("Access = %v", err)
		}
	})

	t.Run("kv", func(t *testing.T) {
		kv := open(t).KV()
		type cfg struct {
			Model string   `json:"model"`
			Tags  []string `json:"tags"`
		}
		if err := kv.Set(ctx, "cfg", cfg{"m1", []string{"a", "b"}}); err != nil {
			t.Fatal(err)
		}
		var got cfg
		if err := kv.Get(ctx, "cfg", &got); err != nil || got.Model != "m1" || len(got.Tags) != 2 {
			t.Errorf("Get = %+v, %v", got, err)
		}
		if err := kv.Get(ctx, "nope", &got); !errors.Is(err, agentfs.ErrNotFound) {
			t.Errorf("Get missing = %v", err)
		}
		if err := kv.Set(ctx, "bad", func() {}); err == nil {
			t.Error("Set of a func succeeded")
		}
		es, err := kv.List(ctx, "")
		if err != nil || len(es) != 1 || string(es[0].Value) != `{"model":"m1","tags":["a","b"]}` || es[0].CreatedAt == 0 {
			t.Errorf("List = %+v, %v", es, err)
		}
		if ok, err := kv.Delete(ctx, "cfg"); !ok || err != nil {
			t.Errorf("Delete = %v, %v", ok, err)
		}
		if ok, err := kv.Delete(ctx, "cfg"); ok || err != nil {
			t.Errorf("Delete again = %v, %v", ok, err)
		}
	})

	t.Run("tools", func(t *testing.T) {
		tl := open(t).Tools()
		id, err := tl.Start(ctx, "search", map[string]string{"q": "x"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := tl.Get(ctx, id)
		if err != nil || c.Status != agentfs.StatusPending || string(c.Parameters) != `{"q":"x"}` || c.CompletedAt != nil {
			t.Errorf("Get pending = %+v, %v", c, err)
		}
		if err := tl.Success(ctx, id, []int{1, 2}); err != nil {
			t.Fatal(err)
		}
		if err := tl.Success(ctx, id, nil); !errors.Is(err, agentfs.ErrFinished) {
			t.Errorf("Success twice = %v, want ErrFinished", err)
		}
		if err := tl.Error(ctx, 999, "x"); !errors.Is(err, agentfs.ErrNotFound) {
			t.Errorf("Error(unknown) = %v, want ErrNotFound", err)
		}
		if _, err := tl.Get(ctx, 999); !errors.Is(err, agentfs.ErrNotFound) {
			t.Errorf("Get(unknown) = %v, want ErrNotFound", err)
		}
		id2, _ := tl.Start(ctx, "fetch", nil)
		if err := tl.Error(ctx, id2, "timeout"); err != nil {
			t.Fatal(err)
		}
		start := time.Unix(1700000000, 0)
		if _, err := tl.Record(ctx, agentfs.ToolRecord{Name: "fetch", StartedAt: start, CompletedAt: start.Add(2 * time.Second), Result: "ok"}); err != nil {
			t.Fatal(err)
		}
		all, err := tl.List(ctx, agentfs.ToolFilter{Ascending: true})
		if err != nil || len(all) != 3 {
			t.Fatalf("List = %d calls, %v", len(all), err)
		}
		if all[0].Name != "fetch" || all[0].StartedAt != 1700000000 || *all[0].DurationMs != 2000 || string(all[0].Result) != `"ok"` {
			t.Errorf("oldest = %+v", all[0])
		}
		c, _ = tl.Get(ctx, id)
		if c.Status != agentfs.StatusSuccess || string(c.Result) != "[1,2]" || c.CompletedAt == nil {
			t.Errorf("Get success = %+v", c)
		}
		failed, err := tl.List(ctx, agentfs.ToolFilter{Status: agentfs.StatusError})
		if err != nil || len(failed) != 1 || *failed[0].Error != "timeout" {
			t.Errorf("List errors = %+v, %v", failed, err)
		}
		named, err := tl.List(ctx, agentfs.ToolFilter{Name: "fetch", Since: start.Add(time.Hour), Limit: 5})
		if err != nil || len(named) != 1 || named[0].ID != id2 {
			t.Errorf("List fetch since = %+v, %v", named, err)
		}
		st, err := tl.Stats(ctx)
		if err != nil || len(st) != 2 || st[0].Name != "fetch" || st[0].TotalCalls != 2 || st[0].Failed != 1 || st[1].Successful != 1 {
			t.Errorf("Stats = %+v, %v", st, err)
		}
	})

	t.Run("canceled", func(t *testing.T) {
		a := open(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := a.FS().WriteFile(cctx, "/c", []byte("x"), agentfs.WriteOptions{}); !errors.Is(err, context.Canceled) {
			t.Errorf("WriteFile with a canceled context = %v", err)
		}
		if err := a.KV().Set(cctx, "k", 1); !errors.Is(err, context.Canceled) {
			t.Errorf("KV Set with a canceled context = %v", err)
		}
		if ok, err := a.FS().Exists(ctx, "/c"); ok || err != nil {
			t.Errorf("the canceled write happened: %v, %v", ok, err)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		a := open(t)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := fmt.Sprintf("/c%02d", i)
				for j := range 10 {
					want := fmt.Sprintf("%d-%d", i, j)
					if err := a.FS().WriteFile(ctx, p, []byte(want), agentfs.WriteOptions{}); err != nil {
						errs <- err
						return
					}
					if b, err := a.FS().ReadFile(ctx, p); err != nil || string(b) != want {
						errs <- fmt.Errorf("read %s = %q, %v", p, b, err)
						return
					}
					if err := a.KV().Set(ctx, p, j); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if names, err := a.FS().Readdir(ctx, "/"); err != nil || len(names) != 16 {
			t.Errorf("Readdir = %d names, %v", len(names), err)
		}
		if es, err := a.KV().List(ctx, "/c"); err != nil || len(es) != 16 || string(es[3].Value) != "9" {
			t.Errorf("KV List = %d, %v", len(es), err)
		}
	})
}

func TestOpenByID(t *testing.T) {
	ctx := context.Background()
	t.Chdir(t.TempDir())
	a, err := agentfs.Open(ctx, agentfs.Options{ID: "my-agent"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.FS().WriteFile(ctx, "/x", []byte("kept"), agentfs.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if filepath.Base(a.Path()) != "my-agent.db" || filepath.Base(filepath.Dir(a.Path())) != ".agentfs" {
		t.Errorf("Path = %s, want .agentfs/my-agent.db", a.Path())
	}
	a.Close()
	if _, err := os.Stat(".agentfs/my-agent.db"); err != nil {
		t.Fatal(err)
	}
	a, err = agentfs.Open(ctx, agentfs.Options{ID: "my-agent"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if b, err := a.FS().ReadFile(ctx, "/x"); err != nil || string(b) != "kept" {
		t.Errorf("reopened: %q, %v", b, err)
	}
	if _, err := agentfs.Open(ctx, agentfs.Options{ID: "../escape"}); err == nil {
		t.Error("Open with id ../escape succeeded")
	}

	// A temporary database is removed by Close.
	tmp, err := agentfs.Open(ctx, agentfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := tmp.Path()
	tmp.Close()
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary database %s left behind: %v", p, err)
	}
}

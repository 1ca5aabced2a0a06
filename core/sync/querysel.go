//go:build cgo

package sync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	gosync "sync"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"
)

// queryPages answers server_query_selector: the pages SQLite reads to run
// query (one read-only statement) over the database file, page 0 (the
// header and schema root) always included. The statement runs on a
// read-only, immutable connection of its own, through a VFS that records
// the offsets read.
func queryPages(ctx context.Context, path, query string) ([]uint32, error) {
	rec := &recordVFS{VFS: vfs.Find(""), pages: map[uint32]bool{0: true}}
	var b [8]byte
	rand.Read(b[:])
	name := "agentfs-qsel-" + hex.EncodeToString(b[:])
	vfs.Register(name, rec)
	defer vfs.Unregister(name)
	c, err := sqlite3.OpenFlags(fileURI(path, "mode=ro&immutable=1&vfs="+name), sqlite3.OPEN_READONLY|sqlite3.OPEN_URI)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	old := c.SetInterrupt(ctx)
	defer c.SetInterrupt(old)
	stmt, tail, err := c.Prepare(query)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	if tail != "" && tail != ";" {
		return nil, errors.New("one statement only (EINVAL)")
	}
	if !stmt.ReadOnly() {
		return nil, errors.New("the query must not write (EPERM)")
	}
	for stmt.Step() {
	}
	if err := stmt.Err(); err != nil {
		return nil, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]uint32, 0, len(rec.pages))
	for p := range rec.pages {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

type recordVFS struct {
	vfs.VFS
	mu    gosync.Mutex
	pages map[uint32]bool
}

func (v *recordVFS) Open(name string, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	return v.OpenFilename(nil, flags)
}

func (v *recordVFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpenFilename(v.VFS, name, flags)
	if err != nil || flags&vfs.OPEN_MAIN_DB == 0 {
		return f, flags, err
	}
	return &recordFile{File: f, v: v}, flags, nil
}

type recordFile struct {
	vfs.File
	v *recordVFS
}

func (f *recordFile) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > 0 {
		f.v.mu.Lock()
		for pg := off / PageSize; pg <= (off+int64(len(p))-1)/PageSize; pg++ {
			f.v.pages[uint32(pg)] = true
		}
		f.v.mu.Unlock()
	}
	return f.File.ReadAt(p, off)
}

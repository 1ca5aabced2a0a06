// Package nfsserver serves an agent's filesystem over NFSv3 with
// github.com/willscott/go-nfs.
//
// go-nfs speaks the protocol and asks a go-billy filesystem for every
// operation by path. FS is that filesystem: a thin translation of billy's
// calls onto the engine's path API (core/vfs), so the semantics (errors,
// permissions, unlinked-open files, symlinks) are the engine's own.
package nfsserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	nfsfile "github.com/willscott/go-nfs/file"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// FS adapts a *vfs.FS to billy.Filesystem and billy.Change. Paths are
// relative to root, which is "/" unless made by Chroot.
type FS struct {
	vfs  *vfs.FS
	root string
}

var (
	_ billy.Filesystem = (*FS)(nil)
	_ billy.Change     = (*FS)(nil)
)

// NewFS returns the billy view of fsys, rooted at its "/".
func NewFS(fsys *vfs.FS) *FS { return &FS{vfs: fsys, root: "/"} }

// abs maps a billy path ("", "a/b", "/a/b") to the engine's absolute path.
func (f *FS) abs(name string) string { return path.Join(f.root, "/", name) }

// Create creates or truncates name for reading and writing (billy: 0666
// before the engine's umask).
func (f *FS) Create(name string) (billy.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Open opens name read-only.
func (f *FS) Open(name string) (billy.File, error) { return f.OpenFile(name, os.O_RDONLY, 0) }

// OpenFile opens name with os.O_* flags. go-nfs truncates with
// O_WRONLY|O_EXCL and no O_CREATE: as open(2), the engine ignores O_EXCL
// without O_CREATE, so that opens the existing file.
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	h, err := f.vfs.Open(context.Background(), f.abs(name), flag, vfs.PosixPerm(perm))
	if err != nil {
		return nil, err
	}
	return &file{h: h, name: name}, nil
}

// Stat returns the attributes of name, following symlinks.
func (f *FS) Stat(name string) (os.FileInfo, error) {
	st, err := f.vfs.Stat(context.Background(), f.abs(name))
	if err != nil {
		return nil, err
	}
	return newInfo(path.Base(f.abs(name)), st), nil
}

// Lstat returns the attributes of name without following a final symlink.
func (f *FS) Lstat(name string) (os.FileInfo, error) {
	st, err := f.vfs.Lstat(context.Background(), f.abs(name))
	if err != nil {
		return nil, err
	}
	return newInfo(path.Base(f.abs(name)), st), nil
}

// Rename renames oldpath to newpath, replacing newpath as rename(2).
func (f *FS) Rename(oldpath, newpath string) error {
	return f.vfs.Rename(context.Background(), f.abs(oldpath), f.abs(newpath))
}

// Remove removes a file, a symlink or an empty directory.
func (f *FS) Remove(name string) error {
	p := f.abs(name)
	st, err := f.vfs.Lstat(context.Background(), p)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return f.vfs.Rmdir(context.Background(), p)
	}
	return f.vfs.Unlink(context.Background(), p)
}

// Join joins path elements.
func (f *FS) Join(elem ...string) string { return path.Join(elem...) }

// TempFile creates a new file with a unique name in dir.
func (f *FS) TempFile(dir, prefix string) (billy.File, error) {
	for range 100 {
		var b [8]byte
		rand.Read(b[:])
		name := path.Join(dir, prefix+hex.EncodeToString(b[:]))
		h, err := f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return h, err
	}
	return nil, &fs.PathError{Op: "tempfile", Path: dir, Err: syscall.EEXIST}
}

// ReadDir lists a directory with the attributes of its entries (not "."
// or ".."), sorted by name.
func (f *FS) ReadDir(name string) ([]os.FileInfo, error) {
	ents, err := f.vfs.ReaddirPlus(context.Background(), f.abs(name))
	if err != nil {
		return nil, err
	}
	out := make([]os.FileInfo, 0, len(ents))
	for _, e := range ents {
		out = append(out, newInfo(e.Name, e.Stat))
	}
	return out, nil
}

// MkdirAll creates a directory and its missing parents.
func (f *FS) MkdirAll(name string, perm os.FileMode) error {
	return f.vfs.MkdirAll(context.Background(), f.abs(name), vfs.PosixPerm(perm))
}

// Symlink makes link a symbolic link to target (stored as given).
func (f *FS) Symlink(target, link string) error {
	return f.vfs.Symlink(context.Background(), target, f.abs(link))
}

// Readlink returns the target of a symbolic link.
func (f *FS) Readlink(link string) (string, error) {
	return f.vfs.Readlink(context.Background(), f.abs(link))
}

// Chroot returns the filesystem below name.
func (f *FS) Chroot(name string) (billy.Filesystem, error) {
	p := f.abs(name)
	st, err := f.vfs.Stat(context.Background(), p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "chroot", Path: p, Err: syscall.ENOTDIR}
	}
	return &FS{vfs: f.vfs, root: p}, nil
}

// Root is the directory of the engine this filesystem starts at.
func (f *FS) Root() string { return f.root }

// Chmod sets the permission bits of name (following symlinks).
func (f *FS) Chmod(name string, mode os.FileMode) error {
	return f.vfs.Chmod(context.Background(), f.abs(name), vfs.PosixPerm(mode))
}

// Lchown sets the owner of name itself, not of a symlink's target.
func (f *FS) Lchown(name string, uid, gid int) error {
	return f.vfs.Chown(context.Background(), f.abs(name), int64(uid), int64(gid), false)
}

// Chown sets the owner of name, following symlinks.
func (f *FS) Chown(name string, uid, gid int) error {
	return f.vfs.Chown(context.Background(), f.abs(name), int64(uid), int64(gid), true)
}

// Chtimes sets the access and modification times of name.
func (f *FS) Chtimes(name string, atime, mtime time.Time) error {
	return f.vfs.Utimens(context.Background(), f.abs(name), &atime, &mtime, true)
}

// file is an open engine file as a billy.File.
type file struct {
	h    *vfs.File
	name string
}

func (h *file) Name() string                             { return h.name }
func (h *file) Read(p []byte) (int, error)               { return h.h.Read(p) }
func (h *file) ReadAt(p []byte, off int64) (int, error)  { return h.h.ReadAt(p, off) }
func (h *file) Write(p []byte) (int, error)              { return h.h.Write(p) }
func (h *file) WriteAt(p []byte, off int64) (int, error) { return h.h.WriteAt(p, off) }
func (h *file) Seek(off int64, whence int) (int64, error) {
	return h.h.Seek(off, whence)
}
func (h *file) Close() error              { return h.h.Close() }
func (h *file) Truncate(size int64) error { return h.h.Truncate(size) }

// Lock and Unlock are advisory locks, which NFSv3 leaves to the NLM
// protocol that go-nfs does not serve: they do nothing.
func (h *file) Lock() error   { return nil }
func (h *file) Unlock() error { return nil }

// info is an engine Stat as an os.FileInfo. Sys gives go-nfs the link
// count, owner, device numbers and the inode number, which becomes the
// NFS fileid: stable for the life of the file, as the engine's.
type info struct {
	name string
	st   vfs.Stat
}

func newInfo(name string, st vfs.Stat) *info { return &info{name: name, st: st} }

func (i *info) Name() string       { return i.name }
func (i *info) Size() int64        { return i.st.Size }
func (i *info) Mode() os.FileMode  { return i.st.FileMode() }
func (i *info) ModTime() time.Time { return i.st.Mtime }
func (i *info) IsDir() bool        { return i.st.IsDir() }
func (i *info) Sys() any {
	return nfsfile.FileInfo{
		Nlink:  i.st.Nlink,
		UID:    i.st.UID,
		GID:    i.st.GID,
		Major:  uint32((i.st.Rdev >> 8) & 0xfff),
		Minor:  uint32((i.st.Rdev & 0xff) | ((i.st.Rdev >> 12) & 0xfff00)),
		Fileid: uint64(i.st.Ino),
	}
}

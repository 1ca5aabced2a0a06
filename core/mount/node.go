//go:build linux

package mount

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// node is one inode as the kernel sees it: an inode number of the
// database. Every method is one call of the engine.
type node struct {
	fs.Inode
	s   *Server
	ino int64

	// Directories only: the listing being read (dirs.go), and the
	// attributes at rmdir for fstat(2) of the directory still open.
	listing atomic.Pointer[listing]
	removed atomic.Pointer[vfs.Stat]
}

var (
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeReadlinker     = (*node)(nil)
	_ fs.NodeStatfser       = (*node)(nil)
	_ fs.NodeGetxattrer     = (*node)(nil)
	_ fs.NodeSetxattrer     = (*node)(nil)
	_ fs.NodeListxattrer    = (*node)(nil)
	_ fs.NodeRemovexattrer  = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeOnForgetter    = (*node)(nil)
)

// caller is the owner of files created by the request's process.
func caller(ctx context.Context) vfs.Owner {
	if c, ok := fuse.FromContext(ctx); ok {
		return vfs.Owner{UID: c.Uid, GID: c.Gid}
	}
	return vfs.Owner{}
}

// fill converts engine attributes to the kernel's and records them for
// the watcher.
func (s *Server) fill(st vfs.Stat, out *fuse.Attr) {
	out.Ino = uint64(st.Ino)
	out.Mode = st.Mode
	out.Nlink = st.Nlink
	out.Size = uint64(st.Size)
	out.Blocks = uint64(st.Blocks())
	out.Blksize = uint32(st.Blksize)
	out.Rdev = uint32(st.Rdev)
	out.Uid, out.Gid = st.UID, st.GID
	if s.opts.UID != nil {
		out.Uid = *s.opts.UID
	}
	if s.opts.GID != nil {
		out.Gid = *s.opts.GID
	}
	out.Atime, out.Atimensec = uint64(st.Atime.Unix()), uint32(st.Atime.Nanosecond())
	out.Mtime, out.Mtimensec = uint64(st.Mtime.Unix()), uint32(st.Mtime.Nanosecond())
	out.Ctime, out.Ctimensec = uint64(st.Ctime.Unix()), uint32(st.Ctime.Nanosecond())
	s.told(st)
}

// newChild makes the kernel-side inode of st under n. go-fuse returns the
// existing one when the inode number is already known (hard links).
func (n *node) newChild(ctx context.Context, st vfs.Stat, out *fuse.EntryOut) *fs.Inode {
	n.s.fill(st, &out.Attr)
	return n.NewInode(ctx, &node{s: n.s, ino: st.Ino}, fs.StableAttr{Mode: st.Mode & syscall.S_IFMT, Ino: uint64(st.Ino)})
}

// OnForget: the kernel dropped the inode; so does the watcher's record.
func (n *node) OnForget() {
	n.s.seen.Delete(n.ino)
	n.listing.Store(nil)
	for _, name := range []string{"security.capability", "security.selinux"} {
		n.s.xattrNeg.Delete(xattrKey{n.ino, name})
	}
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	st, err := n.s.fs.Lookup(opCtx(ctx), n.ino, name)
	if err != nil {
		return nil, n.s.errno(err)
	}
	return n.newChild(ctx, st, out), 0
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	st, err := n.s.fs.StatIno(opCtx(ctx), n.ino)
	if err != nil {
		// fstat(2) of a directory removed while open: the engine keeps
		// no inode of it (open files only), so answer from the
		// attributes at rmdir, with no links left.
		if gone := n.removed.Load(); gone != nil && vfs.Errno(err) == syscall.ENOENT {
			st = *gone
			st.Nlink = 0
			n.s.fill(st, &out.Attr)
			return 0
		}
		return n.s.errno(err)
	}
	n.s.fill(st, &out.Attr)
	return 0
}

// Setattr is truncate, chmod, chown and utimens in one transaction.
func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	var a vfs.Setattr
	if m, ok := in.GetMode(); ok {
		a.Mode = &m
	}
	if u, ok := in.GetUID(); ok {
		a.UID = &u
	}
	if g, ok := in.GetGID(); ok {
		a.GID = &g
	}
	if sz, ok := in.GetSize(); ok {
		size := int64(sz)
		if size < 0 {
			return syscall.EFBIG
		}
		a.Size = &size
	}
	if t, ok := in.GetATime(); ok {
		a.Atime = &t
	}
	if t, ok := in.GetMTime(); ok {
		a.Mtime = &t
	}
	if t, ok := in.GetCTime(); ok {
		a.Ctime = &t
	}
	// chown, and a truncate by a caller without CAP_FSETID (the kernel
	// says so), clear the set-ID bits (CAP_HANDLE_KILLPRIV_V2).
	if a.UID != nil || a.GID != nil || (a.Size != nil && in.Valid&fuse.FATTR_KILL_SUIDGID != 0) {
		if errno := n.killPriv(ctx, &a); errno != 0 {
			return errno
		}
	}
	st, err := n.s.fs.SetattrIno(opCtx(ctx), n.ino, a)
	if err != nil {
		return n.s.errno(err)
	}
	n.s.fill(st, &out.Attr)
	out.SetTimeout(n.s.opts.Timeout) // go-fuse leaves it 0 after a setattr
	return 0
}

// killPriv adds to a the mode change that drops the set-user-ID bit and
// the set-group-ID bit of a group-executable file, as Linux does on
// chown(2) and on a write or truncate by an unprivileged process. With
// CAP_HANDLE_KILLPRIV_V2 the kernel leaves this to the server. An
// explicit mode in a wins.
func (n *node) killPriv(ctx context.Context, a *vfs.Setattr) syscall.Errno {
	if a.Mode != nil {
		return 0
	}
	st, err := n.s.fs.StatIno(opCtx(ctx), n.ino)
	if err != nil {
		return n.s.errno(err)
	}
	if m, ok := dropSetID(st); ok {
		a.Mode = &m
	}
	return 0
}

// dropSetID is the permission bits of st without the set-ID bits that a
// write or chown clears, and whether that changes anything.
func dropSetID(st vfs.Stat) (uint32, bool) {
	if st.IsDir() {
		return 0, false
	}
	drop := st.Mode & syscall.S_ISUID
	if st.Mode&syscall.S_IXGRP != 0 {
		drop |= st.Mode & syscall.S_ISGID
	}
	return st.Mode & 0o7777 &^ drop, drop != 0
}

// openFlags adapts open flags to the writeback cache: the kernel may read
// through a write-only descriptor to fill partial pages, and it computes
// the offset of O_APPEND writes itself.
func (s *Server) openFlags(flags uint32) int {
	fl := int(flags)
	if !s.opts.NoWriteback {
		if fl&syscall.O_ACCMODE == os.O_WRONLY {
			fl = fl&^syscall.O_ACCMODE | os.O_RDWR
		}
		fl &^= os.O_APPEND
	}
	return fl
}

// fopenFlags lets the kernel keep a file's page cache across opens; the
// watcher invalidates it when another process changes the file.
func (s *Server) fopenFlags() uint32 {
	if s.opts.PollInterval > 0 {
		return fuse.FOPEN_KEEP_CACHE
	}
	return 0
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	f, err := n.s.fs.OpenIno(opCtx(ctx), n.ino, n.s.openFlags(flags))
	if err != nil {
		return nil, 0, n.s.errno(err)
	}
	fl := n.s.fopenFlags()
	if flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		// Nothing to commit at close(2) of a read-only descriptor:
		// spare the FLUSH round trip (programs open many files to
		// read them).
		fl |= fuse.FOPEN_NOFLUSH
	}
	return &handle{s: n.s, f: f}, fl, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	f, st, err := n.s.fs.CreateAt(opCtx(ctx), n.ino, name, n.s.openFlags(flags), mode&0o7777, caller(ctx))
	if err != nil {
		return nil, nil, 0, n.s.errno(err)
	}
	return n.newChild(ctx, st, out), &handle{s: n.s, f: f}, n.s.fopenFlags(), 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	st, err := n.s.fs.MkdirAt(opCtx(ctx), n.ino, name, mode&0o7777, caller(ctx))
	if err != nil {
		return nil, n.s.errno(err)
	}
	return n.newChild(ctx, st, out), 0
}

func (n *node) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	st, err := n.s.fs.MknodAt(opCtx(ctx), n.ino, name, mode, uint64(dev), caller(ctx))
	if err != nil {
		return nil, n.s.errno(err)
	}
	return n.newChild(ctx, st, out), 0
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	st, err := n.s.fs.SymlinkAt(opCtx(ctx), n.ino, name, target, caller(ctx))
	if err != nil {
		return nil, n.s.errno(err)
	}
	return n.newChild(ctx, st, out), 0
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	t, ok := target.(*node)
	if !ok {
		return nil, syscall.EXDEV
	}
	st, err := n.s.fs.LinkAt(opCtx(ctx), t.ino, n.ino, name)
	if err != nil {
		return nil, n.s.errno(err)
	}
	return n.newChild(ctx, st, out), 0
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, err := n.s.fs.ReadlinkIno(opCtx(ctx), n.ino)
	if err != nil {
		return nil, n.s.errno(err)
	}
	return []byte(t), 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.s.errno(n.s.fs.UnlinkAt(opCtx(ctx), n.ino, name))
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	var child *node
	var st vfs.Stat
	if ch := n.GetChild(name); ch != nil {
		if c, ok := ch.Operations().(*node); ok {
			if s, err := n.s.fs.StatIno(opCtx(ctx), c.ino); err == nil {
				child, st = c, s
			}
		}
	}
	if err := n.s.fs.RmdirAt(opCtx(ctx), n.ino, name); err != nil {
		return n.s.errno(err)
	}
	if child != nil && child.ino == st.Ino {
		child.removed.Store(&st)
	}
	return 0
}

// Rename flags of renameat2(2); the engine uses the same values.
const (
	renameNoReplace = 1
	renameExchange  = 2
)

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	var fl int
	if flags&renameNoReplace != 0 {
		fl |= vfs.RenameNoReplace
	}
	if flags&renameExchange != 0 {
		fl |= vfs.RenameExchange
	}
	if flags&^(renameNoReplace|renameExchange) != 0 {
		return syscall.EINVAL // RENAME_WHITEOUT
	}
	return n.s.errno(n.s.fs.RenameAt(opCtx(ctx), n.ino, name, np.ino, newName, fl))
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	st, err := n.s.statfs(ctx)
	if err != nil {
		return n.s.errno(err)
	}
	out.Bsize = uint32(st.BlockSize)
	out.Frsize = uint32(st.BlockSize)
	out.Blocks = uint64(st.Blocks)
	out.Bfree = uint64(st.BlocksFree)
	out.Bavail = uint64(st.BlocksFree)
	out.Files = uint64(st.Files + st.FilesFree)
	out.Ffree = uint64(st.FilesFree)
	out.NameLen = uint32(st.NameMax)
	return 0
}

// The kernel is not asked to interpret POSIX ACLs (no CAP_POSIX_ACL):
// storing system.posix_acl_* as plain attributes would make them look
// applied while the mode says otherwise, so the "system." namespace is
// refused and programs such as cp -a fall back to chmod.
func systemAttr(name string) bool { return strings.HasPrefix(name, "system.") }

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if systemAttr(attr) {
		return 0, syscall.ENODATA
	}
	neg := strings.HasPrefix(attr, "security.")
	if neg && n.s.noXattr(n.ino, attr) {
		return 0, syscall.ENODATA
	}
	v, err := n.s.fs.GetxattrIno(opCtx(ctx), n.ino, attr)
	if err != nil {
		if neg && vfs.Errno(err) == syscall.ENODATA {
			n.s.xattrNeg.Store(xattrKey{n.ino, attr}, struct{}{})
		}
		return 0, n.s.errno(err)
	}
	if len(v) > len(dest) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if systemAttr(attr) {
		return syscall.EOPNOTSUPP
	}
	n.s.xattrNeg.Delete(xattrKey{n.ino, attr})
	return n.s.errno(n.s.fs.SetxattrIno(opCtx(ctx), n.ino, attr, data, int(flags)))
}

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if systemAttr(attr) {
		return syscall.EOPNOTSUPP
	}
	return n.s.errno(n.s.fs.RemovexattrIno(opCtx(ctx), n.ino, attr))
}

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	names, err := n.s.fs.ListxattrIno(opCtx(ctx), n.ino)
	if err != nil {
		return 0, n.s.errno(err)
	}
	size := 0
	for _, nm := range names {
		size += len(nm) + 1
	}
	if size > len(dest) {
		return uint32(size), syscall.ERANGE
	}
	off := 0
	for _, nm := range names {
		off += copy(dest[off:], nm)
		dest[off] = 0
		off++
	}
	return uint32(size), 0
}

// statfsTTL is how long a statfs answer is reused: counting the inodes
// reads the whole inode table (about 1 ms per 25,000 files), and some
// programs ask before every file they write.
const statfsTTL = time.Second

// statfs is the engine's Statfs, at most statfsTTL old.
func (s *Server) statfs(ctx context.Context) (vfs.FSStat, error) {
	s.statfsMu.Lock()
	defer s.statfsMu.Unlock()
	if !s.statfsAt.IsZero() && time.Since(s.statfsAt) < statfsTTL {
		return s.statfsLast, nil
	}
	st, err := s.fs.Statfs(opCtx(ctx))
	if err != nil {
		return st, err
	}
	s.statfsLast, s.statfsAt = st, time.Now()
	return st, nil
}

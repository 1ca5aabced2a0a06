package vfs

import (
	"context"
	"io"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// Atomic replacement of a file's content from a stream.
//
// WriteFile replaces a file in one transaction, but it needs the whole
// content in memory, and a transaction that lasts as long as its producer
// would hold the database's write lock for that long. An AtomicFile
// stages what is written to it in a fresh inode that has no directory
// entry, in transactions of stageBatch bytes (so memory stays bounded and
// other writers, a running mount among them, wait for one batch at most),
// and makes it the file's content in one last short transaction at
// Commit. Until then the file keeps its old content; a writer that fails,
// is cancelled or is killed leaves the old content and a nameless staging
// inode, which Abort, the next staged write or the next writable open
// deletes (ReclaimStaging).
//
// The last transaction links the staging inode under the name when the
// file is new (nothing is copied), and otherwise moves the staged chunks
// into the existing inode in place of its old ones, as WriteFile does: the
// file keeps its inode number, mode, owner, extended attributes and other
// hard links, and open handles read the new content, as after
// "cat new > file". The price of keeping those is that moving the chunks
// rewrites their rows (SQLite rewrites a row to change its key), so that
// transaction lasts in proportion to the file's size, not to the
// producer's speed. Swapping the entry to the staging inode would cost
// nothing, but would give the name a new inode and detach hard links and
// open handles from it (rename-over semantics), unlike every other write.
//
// Content that fits in one batch is never staged: Commit writes it with
// WriteFile's single transaction.

// stageBatch is the amount of data staged per transaction: with the
// chunk rows SQLite builds from it, what an AtomicFile holds in memory.
const stageBatch = 4 << 20

// stagingXattr marks a staging inode; its value names the writing process
// (ownerToken), whose death makes the inode garbage. The name has no
// namespace prefix, so no setxattr of a client can create it.
const stagingXattr = "agentfs.staging"

// AtomicFile is a file being written from a stream that becomes the
// content of its path at Commit, all at once, or never.
type AtomicFile struct {
	f *FS
	// ctx is CreateAtomic's context: every batch and the commit run under
	// it, so a cancelled writer stops at its next batch with the old
	// content intact.
	ctx  context.Context
	path string
	opts WriteOptions
	buf  []byte // bytes not yet staged; cap stageBatch
	ino  int64  // staging inode, 0 while everything fits in buf
	size int64  // bytes staged in ino
	done bool
	err  error // first failure: the content is lost, Commit refuses
}

// CreateAtomic starts an atomic replacement of path's content (created
// with opts.Perm if missing, parents too with opts.CreateParents). The
// checks of open(2) (ENOENT, EISDIR, EEXIST with Exclusive...) are made
// now and again at Commit. Append is not supported (EINVAL): an append
// from a stream is a sequence of writes.
func (f *FS) CreateAtomic(ctx context.Context, path string, opts WriteOptions) (*AtomicFile, error) {
	if opts.Append {
		return nil, pathErr("open", path, syscall.EINVAL)
	}
	if err := checkPath("open", path); err != nil {
		return nil, err
	}
	if opts.Perm == 0 && !opts.SetPerm {
		opts.Perm = 0o644
	}
	err := f.read(ctx, func(c *store.Conn) error {
		l, err := f.resolveCreate(c, path, opts.Exclusive, true)
		if err != nil {
			if opts.CreateParents && errnoOf(err) == syscall.ENOENT {
				return nil // the parents are made at Commit
			}
			return err
		}
		return f.checkWriteTarget(c, path, l, opts)
	})
	if err != nil {
		return nil, err
	}
	return &AtomicFile{f: f, ctx: ctx, path: path, opts: opts, buf: make([]byte, 0, stageBatch)}, nil
}

// checkWriteTarget checks that l, the resolution of path for a write that
// replaces or creates it, can be written with opts.
func (f *FS) checkWriteTarget(c *store.Conn, path string, l loc, opts WriteOptions) error {
	if l.ino == 0 {
		return f.creatable(c, "open", path, l)
	}
	switch {
	case opts.Exclusive:
		return pathErr("open", path, syscall.EEXIST)
	case l.st.IsDir():
		return pathErr("open", path, syscall.EISDIR)
	case !l.st.IsRegular():
		return pathErr("open", path, syscall.EINVAL)
	}
	return nil
}

// Name is the path the content is for.
func (a *AtomicFile) Name() string { return a.path }

// Size is the number of bytes written so far.
func (a *AtomicFile) Size() int64 { return a.size + int64(len(a.buf)) }

// Write appends p to the new content.
func (a *AtomicFile) Write(p []byte) (int, error) {
	if a.done {
		return 0, pathErr("write", a.path, syscall.EBADF)
	}
	if a.err != nil {
		return 0, a.err
	}
	n := 0
	for len(p) > 0 {
		k := copy(a.buf[len(a.buf):cap(a.buf)], p)
		a.buf = a.buf[:len(a.buf)+k]
		p, n = p[k:], n+k
		if len(a.buf) == cap(a.buf) {
			if err := a.stage(); err != nil {
				a.err = err
				return n, err
			}
		}
	}
	return n, nil
}

// ReadFrom copies r into the new content until EOF (io.Copy uses it), with
// no buffer besides the batch.
func (a *AtomicFile) ReadFrom(r io.Reader) (int64, error) {
	return a.readFrom(r)
}

func (a *AtomicFile) readFrom(r io.Reader) (int64, error) {
	ctx := a.ctx
	if a.done {
		return 0, pathErr("write", a.path, syscall.EBADF)
	}
	var total int64
	for {
		if a.err != nil {
			return total, a.err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := r.Read(a.buf[len(a.buf):cap(a.buf)])
		if n < 0 || n > cap(a.buf)-len(a.buf) {
			return total, pathErr("write", a.path, syscall.EIO)
		}
		a.buf = a.buf[:len(a.buf)+n]
		total += int64(n)
		if len(a.buf) == cap(a.buf) {
			if serr := a.stage(); serr != nil {
				a.err = serr
				return total, serr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// stage writes the full batch into the staging inode, creating it first.
func (a *AtomicFile) stage() error {
	f := a.f
	err := f.write(a.ctx, func(c *store.Conn) error {
		if a.ino == 0 {
			if _, err := f.reclaimStaging(c); err != nil {
				return err
			}
			ino, err := f.newStaging(c, a.opts.Perm)
			if err != nil {
				return err
			}
			a.ino = ino
		} else if err := f.checkStaging(c, a.ino, a.path); err != nil {
			return err
		}
		if err := f.insertChunks(c, a.ino, a.size, a.buf); err != nil {
			return err
		}
		_, err := c.Exec("UPDATE fs_inode SET size = ? WHERE ino = ?", a.size+int64(len(a.buf)), a.ino)
		return err
	})
	if err != nil {
		if a.ino != 0 && a.size == 0 {
			// The transaction that created the inode rolled back.
			f.unregisterStaging(a.ino)
			a.ino = 0
		}
		return err
	}
	a.size += int64(len(a.buf))
	a.buf = a.buf[:0]
	return nil
}

// newStaging inserts a nameless regular file marked as this process's
// staging inode, and registers it as alive.
func (f *FS) newStaging(c *store.Conn, perm uint32) (int64, error) {
	f.dirty()
	now := time.Now()
	s, ns := now.Unix(), now.Nanosecond()
	o := f.DefaultOwner()
	r, err := c.Exec(`INSERT INTO fs_inode (mode, nlink, uid, gid, size, atime, mtime, ctime, rdev, atime_nsec, mtime_nsec, ctime_nsec)
		VALUES (?, 0, ?, ?, 0, ?, ?, ?, 0, ?, ?, ?)`,
		int64(schema.ModeRegular|f.applyUmask(perm)), int64(o.UID), int64(o.GID), s, s, s, ns, ns, ns)
	if err != nil {
		return 0, err
	}
	ino, err := r.LastInsertId()
	if err != nil {
		return 0, err
	}
	if _, err := c.Exec("INSERT INTO fs_xattr (ino, name, value) VALUES (?, CAST(? AS TEXT), ?)", ino, []byte(stagingXattr), []byte(ownerToken())); err != nil {
		return 0, err
	}
	f.openMu.Lock()
	f.staging[ino] = struct{}{}
	f.openMu.Unlock()
	return ino, nil
}

func (f *FS) unregisterStaging(ino int64) {
	f.openMu.Lock()
	delete(f.staging, ino)
	f.openMu.Unlock()
}

// checkStaging fails with ESTALE when the staging inode is gone (an fsck
// repair or a reclaim of another process judged its writer dead).
func (f *FS) checkStaging(c *store.Conn, ino int64, path string) error {
	var one int
	err := c.QueryRow("SELECT 1 FROM fs_xattr WHERE ino = ? AND name = CAST(? AS TEXT)", ino, []byte(stagingXattr)).Scan(&one)
	if isNoRows(err) {
		return pathErr("write", path, syscall.ESTALE)
	}
	return err
}

// Commit makes what was written the content of the path, in one
// transaction; on failure the file keeps its old content and the staged
// data is discarded. The AtomicFile is finished either way.
func (a *AtomicFile) Commit() error {
	if a.done {
		return pathErr("close", a.path, syscall.EBADF)
	}
	if a.err != nil {
		err := a.err
		a.Abort()
		return err
	}
	f := a.f
	if a.ino == 0 {
		// Everything is in memory: WriteFile's single transaction.
		err := f.WriteFile(a.ctx, a.path, a.buf, a.opts)
		a.done, a.buf = true, nil
		return err
	}
	err := f.write(a.ctx, func(c *store.Conn) error {
		if err := f.checkStaging(c, a.ino, a.path); err != nil {
			return err
		}
		if err := f.insertChunks(c, a.ino, a.size, a.buf); err != nil {
			return err
		}
		size := a.size + int64(len(a.buf))
		now := time.Now()
		l, err := f.writeTarget(c, a.path, a.opts, now)
		if err != nil {
			return err
		}
		ino := a.ino
		if l.ino == 0 {
			if err := f.linkStaging(c, l, a.ino, size, now); err != nil {
				return err
			}
		} else {
			ino = l.ino
			if err := f.moveData(c, a.ino, l.ino, size, now); err != nil {
				return err
			}
		}
		if !a.opts.SetPerm && a.opts.Atime.IsZero() && a.opts.Mtime.IsZero() {
			return nil
		}
		return f.setModeTimes(c, ino, a.opts)
	})
	if err != nil {
		a.Abort()
		return err
	}
	f.unregisterStaging(a.ino)
	a.done, a.buf = true, nil
	return nil
}

// Close commits (io.WriteCloser); call Abort instead when the content is
// incomplete.
func (a *AtomicFile) Close() error { return a.Commit() }

// Abort discards what was written: the file keeps its old content. It is
// a no-op after Commit or Abort.
func (a *AtomicFile) Abort() error {
	if a.done {
		return nil
	}
	a.done, a.buf = true, nil
	if a.ino == 0 {
		return nil
	}
	ino := a.ino
	f := a.f
	// Cleanup runs even when the writer was cancelled.
	err := f.write(context.WithoutCancel(a.ctx), func(c *store.Conn) error {
		if err := f.checkStaging(c, ino, a.path); err != nil {
			return nil // already reclaimed
		}
		return f.purgeTyped(c, ino, schema.ModeRegular)
	})
	// Unregistered even when the purge failed: an inode of this process
	// that is not registered is garbage for the next reclaim.
	f.unregisterStaging(ino)
	return err
}

// writeTarget resolves path for a write that creates or replaces it,
// creating the parents with opts.CreateParents, and checks it.
func (f *FS) writeTarget(c *store.Conn, path string, opts WriteOptions, now time.Time) (loc, error) {
	if opts.CreateParents {
		if dir := parentPath(path); dir != "/" {
			if err := f.mkdirAll(c, dir, 0o755, now); err != nil {
				return loc{}, err
			}
		}
	}
	// Exclusive is O_CREAT|O_EXCL: a final symlink is not followed,
	// so an existing (even dangling) link fails with EEXIST.
	l, err := f.resolveCreate(c, path, opts.Exclusive, true)
	if err != nil {
		return l, err
	}
	return l, f.checkWriteTarget(c, path, l, opts)
}

// linkStaging gives the staging inode ino the missing entry l: it becomes
// an ordinary file.
func (f *FS) linkStaging(c *store.Conn, l loc, ino, size int64, now time.Time) error {
	f.dirty()
	delete(f.inodes, ino)
	if _, err := c.Exec("DELETE FROM fs_xattr WHERE ino = ? AND name = CAST(? AS TEXT)", ino, []byte(stagingXattr)); err != nil {
		return err
	}
	s, ns := now.Unix(), now.Nanosecond()
	if _, err := c.Exec("UPDATE fs_inode SET nlink = 1, size = ?, atime = ?, atime_nsec = ?, mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?",
		size, s, ns, s, ns, s, ns, ino); err != nil {
		return err
	}
	if _, err := c.Exec("INSERT INTO fs_dentry (name, parent_ino, ino) VALUES (CAST(? AS TEXT), ?, ?)", []byte(l.name), l.parent, ino); err != nil {
		return err
	}
	f.dentries[dentryKey{l.parent, l.name}] = ino
	return f.touchDir(c, l.parent, now)
}

// moveData makes the chunks of the staging inode from the content of the
// regular file ino (of the new size) and deletes the staging inode.
func (f *FS) moveData(c *store.Conn, from, ino, size int64, now time.Time) error {
	f.dirty()
	delete(f.inodes, ino)
	if err := f.ovTruncated(c, ino, 0); err != nil {
		return err
	}
	if _, err := c.Exec("DELETE FROM fs_data WHERE ino = ?", ino); err != nil {
		return err
	}
	if _, err := c.Exec("UPDATE fs_data SET ino = ? WHERE ino = ?", ino, from); err != nil {
		return err
	}
	if _, err := c.Exec("UPDATE fs_inode SET size = ?, mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?",
		size, now.Unix(), now.Nanosecond(), now.Unix(), now.Nanosecond(), ino); err != nil {
		return err
	}
	return f.purgeTyped(c, from, schema.ModeRegular)
}

// WriteFileFrom replaces (or creates) the content of path with what r
// yields until EOF, atomically whatever its size (see AtomicFile): if r
// fails, ctx is cancelled, or the process dies, the file keeps its old
// content. It returns the number of bytes written.
func (f *FS) WriteFileFrom(ctx context.Context, path string, r io.Reader, opts WriteOptions) (int64, error) {
	a, err := f.CreateAtomic(ctx, path, opts)
	if err != nil {
		return 0, err
	}
	n, err := a.readFrom(r)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		a.Abort()
		return n, err
	}
	return n, a.Commit()
}

// ReclaimStaging deletes the staging inodes whose writing process is gone
// (killed in the middle of an atomic write) and returns how many. It
// reads first and writes only when there is something to delete, so it
// costs one query when there is none; core.Open calls it on every
// writable open.
func (f *FS) ReclaimStaging(ctx context.Context) (int, error) {
	var dead []int64
	err := f.read(ctx, func(c *store.Conn) error {
		var err error
		dead, err = f.deadStaging(c)
		return err
	})
	if err != nil || len(dead) == 0 {
		return 0, err
	}
	n := 0
	err = f.write(ctx, func(c *store.Conn) error {
		var err error
		n, err = f.reclaimStaging(c)
		return err
	})
	return n, err
}

// reclaimStaging is ReclaimStaging inside a write transaction; it returns
// the number of staging inodes deleted.
func (f *FS) reclaimStaging(c *store.Conn) (int, error) {
	dead, err := f.deadStaging(c)
	if err != nil {
		return 0, err
	}
	for i, ino := range dead {
		if err := f.purgeTyped(c, ino, 0); err != nil {
			return i, err
		}
	}
	return len(dead), nil
}

// stagingInodes lists the nameless inodes marked as staging, with the
// token of their writer.
func (f *FS) stagingInodes(c *store.Conn) (map[int64]string, error) {
	rows, err := c.Query(`SELECT x.ino, CAST(x.value AS BLOB) FROM fs_xattr x WHERE x.name = CAST(? AS TEXT)
		AND NOT EXISTS (SELECT 1 FROM fs_dentry d WHERE d.ino = x.ino)`, []byte(stagingXattr))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var ino int64
		var tok []byte
		if err := rows.Scan(&ino, &tok); err != nil {
			return nil, err
		}
		out[ino] = string(tok)
	}
	return out, rows.Err()
}

// stagingAlive reports whether the staging inode ino of the writer tok
// may still be written to.
func (f *FS) stagingAlive(ino int64, tok string) bool {
	if tok == ownerToken() {
		f.openMu.Lock()
		_, ok := f.staging[ino]
		f.openMu.Unlock()
		return ok
	}
	return ownerAlive(tok)
}

func (f *FS) deadStaging(c *store.Conn) ([]int64, error) {
	all, err := f.stagingInodes(c)
	if err != nil {
		return nil, err
	}
	var dead []int64
	for ino, tok := range all {
		if !f.stagingAlive(ino, tok) {
			dead = append(dead, ino)
		}
	}
	return dead, nil
}

// LiveStagingInodes lists the staging inodes whose writer may still be
// running, in the transaction of c: they have no name, but are no
// orphans (fsck).
func (f *FS) LiveStagingInodes(c *store.Conn) ([]int64, error) {
	all, err := f.stagingInodes(c)
	if err != nil {
		return nil, err
	}
	var live []int64
	for ino, tok := range all {
		if f.stagingAlive(ino, tok) {
			live = append(live, ino)
		}
	}
	return live, nil
}

var (
	_ io.WriteCloser = (*AtomicFile)(nil)
	_ io.ReaderFrom  = (*AtomicFile)(nil)
)

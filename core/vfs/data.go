package vfs

import (
	"cmp"
	"context"
	"database/sql"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// The data of a regular file is stored in fs_data as chunks of chunkSize
// bytes: chunk i holds bytes [i*chunkSize, i*chunkSize+len(data)). Every
// chunk but the last is full when written here. Missing chunks, and the
// bytes between the end of a short chunk and the next chunk, read as
// zeros (sparse files; agentfs-sdk leaves such holes after truncate).

// maxZeroFill is the largest gap past the end of a file that a write fills
// with explicit zero chunks. agentfs-sdk 0.6.4 cannot read holes, so small
// gaps are materialised for it; larger ones stay sparse.
const maxZeroFill = 1 << 20

// rowsPerInsert bounds the number of chunks in one multi-row INSERT.
const rowsPerInsert = 64

// insertChunks stores data at offset off of a file that has no chunks in
// that range yet (a new file, or after deleting them).
func (f *FS) insertChunks(c *store.Conn, ino, off int64, data []byte) error {
	return f.writeChunks(c, ino, off, data, false)
}

// writeChunks stores data at offset off as whole chunks from the chunk
// holding off; with replace, rows already there are replaced.
func (f *FS) writeChunks(c *store.Conn, ino, off int64, data []byte, replace bool) error {
	if len(data) == 0 {
		return nil
	}
	f.dirty()
	cs := int64(f.chunkSize)
	type row struct {
		idx  int64
		data []byte
	}
	var batch []row
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var q strings.Builder
		if replace {
			q.WriteString("INSERT OR REPLACE INTO fs_data (ino, chunk_index, data) VALUES ")
		} else {
			// OR FAIL: a multi-row INSERT that may abort keeps a
			// statement journal, a copy of every page the cache spills
			// while it runs (in memory for an encrypted database, where
			// it doubled the memory copies of a 64 MiB write). Nothing
			// of a failed insert survives anyway: the operation's
			// transaction or savepoint is rolled back on any error.
			q.WriteString("INSERT OR FAIL INTO fs_data (ino, chunk_index, data) VALUES ")
		}
		args := make([]any, 0, 3*len(batch))
		for i, r := range batch {
			if i > 0 {
				q.WriteString(",")
			}
			q.WriteString("(?,?,?)")
			args = append(args, ino, r.idx, r.data)
		}
		batch = batch[:0]
		_, err := c.Exec(q.String(), args...)
		return err
	}
	for pos := int64(0); pos < int64(len(data)); {
		abs := off + pos
		idx := abs / cs
		n := min(cs-abs%cs, int64(len(data))-pos)
		batch = append(batch, row{idx, data[pos : pos+n]})
		pos += n
		if len(batch) == rowsPerInsert {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// replaceData makes data the whole content of ino.
func (f *FS) replaceData(c *store.Conn, ino int64, st Stat, data []byte, now time.Time) (err error) {
	oldSize := st.Size
	f.dirty()
	delete(f.inodes, ino)
	defer func() {
		// On success the cache learns the new size and times without
		// reading them back (as pwrite): the next read of the file needs
		// no stat query. A failed transaction drops the caches (write).
		if err == nil {
			st.Size = int64(len(data))
			t := time.Unix(now.Unix(), int64(now.Nanosecond())) // as read back
			st.Mtime, st.Ctime = t, t
			f.inodes[ino] = st
		}
	}()
	if err := f.ovTruncated(c, ino, 0); err != nil {
		return err
	}
	if oldSize > 0 {
		if _, err := c.Exec("DELETE FROM fs_data WHERE ino = ?", ino); err != nil {
			return err
		}
	} else if _, err := c.Exec("DELETE FROM fs_data WHERE ino = ?", ino); err != nil {
		// A zero-size file normally has no chunks, but one written by
		// another tool after a truncate may; the delete is cheap.
		return err
	}
	if err := f.insertChunks(c, ino, 0, data); err != nil {
		return err
	}
	_, err = c.Exec("UPDATE fs_inode SET size = ?, mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?",
		int64(len(data)), now.Unix(), now.Nanosecond(), now.Unix(), now.Nanosecond(), ino)
	return err
}

// pwrite writes data at offset off of ino and returns nothing but errors;
// the size grows as needed. Only the chunks touched are rewritten.
func (f *FS) pwrite(c *store.Conn, ino, off int64, data []byte, now time.Time) (err error) {
	f.dirty()
	st, ok, err := f.inode(c, ino)
	if err != nil {
		return err
	}
	if !ok {
		return errStale
	}
	size := st.Size
	if len(data) == 0 {
		return nil
	}
	cs := int64(f.chunkSize)
	if off > size && off-size > maxZeroFill && size%cs != 0 {
		// The gap stays a hole, but the chunk holding the old end must
		// be full: only a file's last chunk may be short (SPEC.md).
		if err := f.pwrite(c, ino, size, make([]byte, min(off, (size+cs-1)/cs*cs)-size), now); err != nil {
			return err
		}
		if st, ok, err = f.inode(c, ino); err != nil || !ok {
			return cmp.Or(err, error(errStale))
		}
		size = st.Size
	}
	delete(f.inodes, ino)
	defer func() {
		// On success the cache learns the new size and times without
		// reading them back.
		if err == nil {
			st.Size = max(st.Size, off+int64(len(data)))
			t := time.Unix(now.Unix(), int64(now.Nanosecond())) // as read back
			st.Mtime, st.Ctime = t, t
			f.inodes[ino] = st
		}
	}()
	if off > size && off-size <= maxZeroFill {
		// Fill the gap so that readers that cannot see holes read zeros.
		data = append(make([]byte, off-size), data...)
		off = size
	}
	end := off + int64(len(data))
	first, last := off/cs, (end-1)/cs
	// Partial chunks at either edge must be merged with what is stored.
	edge := map[int64][]byte{}
	for _, idx := range []int64{first, last} {
		if _, done := edge[idx]; done {
			continue
		}
		cstart := idx * cs
		if off <= cstart && end >= cstart+cs {
			continue // fully overwritten
		}
		if cstart >= size {
			continue // beyond the old end: nothing stored to merge
		}
		var old []byte
		err := c.QueryRow("SELECT data FROM fs_data WHERE ino = ? AND chunk_index = ?", ino, idx).Scan(&old)
		if isNoRows(err) {
			// In an overlay the chunk may still be in the base file:
			// this is the per-chunk copy-up.
			old, err = f.baseChunk(c, ino, idx)
		}
		if err != nil && !isNoRows(err) {
			return err
		}
		// Bytes stored beyond the old size are stale; never resurrect them.
		if keep := size - cstart; int64(len(old)) > keep {
			old = old[:keep]
		}
		edge[idx] = old
	}
	// Every chunk of [first, last] is rewritten below (INSERT OR
	// REPLACE), so nothing needs deleting first.
	// Build the new content of the chunk range [first, last].
	rangeStart := first * cs
	rangeEnd := max(end, min(size, (last+1)*cs))
	buf := make([]byte, rangeEnd-rangeStart)
	for idx, old := range edge {
		copy(buf[idx*cs-rangeStart:], old)
	}
	copy(buf[off-rangeStart:], data)
	if err := f.writeChunks(c, ino, rangeStart, buf, true); err != nil {
		return err
	}
	newSize := max(size, end)
	_, err = c.Exec("UPDATE fs_inode SET size = ?, mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?",
		newSize, now.Unix(), now.Nanosecond(), now.Unix(), now.Nanosecond(), ino)
	return err
}

// truncate changes the size of ino from oldSize to size.
func (f *FS) truncate(c *store.Conn, ino, oldSize, size int64, now time.Time) error {
	f.dirty()
	delete(f.inodes, ino)
	if err := f.ovTruncated(c, ino, size); err != nil {
		return err
	}
	cs := int64(f.chunkSize)
	if size < oldSize {
		if size == 0 {
			if _, err := c.Exec("DELETE FROM fs_data WHERE ino = ?", ino); err != nil {
				return err
			}
		} else {
			lastIdx := (size - 1) / cs
			if _, err := c.Exec("DELETE FROM fs_data WHERE ino = ? AND chunk_index > ?", ino, lastIdx); err != nil {
				return err
			}
			if keep := size - lastIdx*cs; keep < cs {
				if _, err := c.Exec("UPDATE fs_data SET data = substr(data, 1, ?) WHERE ino = ? AND chunk_index = ? AND length(data) > ?",
					keep, ino, lastIdx, keep); err != nil {
					return err
				}
			}
		}
	}
	if size > oldSize {
		// Only the last chunk of a file may be short (SPEC.md, writing
		// rule), so the chunk that held the old end is filled with zeros
		// up to the new size or its full length; a later write past it
		// would otherwise leave a short chunk in the middle. A gap up to
		// maxZeroFill is stored as zero chunks, as a write past the end
		// fills it, for readers that cannot see holes (agentfs-sdk
		// 0.6.4); a larger one stays a hole.
		fill := size
		if size-oldSize > maxZeroFill {
			fill = min(size, (oldSize+cs-1)/cs*cs)
		}
		if fill > oldSize {
			if err := f.pwrite(c, ino, oldSize, make([]byte, fill-oldSize), now); err != nil {
				return err
			}
			delete(f.inodes, ino) // pwrite cached the filled size, not the new one
		}
	}
	_, err := c.Exec("UPDATE fs_inode SET size = ?, mtime = ?, mtime_nsec = ?, ctime = ?, ctime_nsec = ? WHERE ino = ?",
		size, now.Unix(), now.Nanosecond(), now.Unix(), now.Nanosecond(), ino)
	return err
}

// readAt reads into p at offset off of ino with ONE statement on a reader
// connection: the inode's type and size and the chunks come from the
// same snapshot, so the read is consistent without a transaction, needs no
// cache, and runs in parallel with the writer and other readers. It is
// the path of every read through an open file (and of FUSE reads).
func (f *FS) readAt(ctx context.Context, ino int64, p []byte, off int64) (int, error) {
	return f.readAtBase(ctx, ino, p, off, false)
}

// readAtBase is readAt; with anyBase, bytes still in an overlay's base
// file are read even if that file changed since the copy-up (commit
// --force) instead of failing with ESTALE.
func (f *FS) readAtBase(ctx context.Context, ino int64, p []byte, off int64, anyBase bool) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	cs := int64(f.chunkSize)
	first, last := off/cs, (off+int64(len(p))-1)/cs
	n := 0
	var base *baseData // overlay: where chunks missing from fs_data come from
	var have map[int64]bool
	err := f.db.Query(ctx, func(c *store.Conn) error {
		q := `SELECT i.mode, i.size, d.chunk_index, d.data FROM fs_inode i
			LEFT JOIN fs_data d ON d.ino = i.ino AND d.chunk_index BETWEEN ? AND ?
			WHERE i.ino = ? ORDER BY d.chunk_index`
		if f.ov != nil {
			q = `SELECT i.mode, i.size, d.chunk_index, d.data` + overlayCols + ` FROM fs_inode i
			LEFT JOIN fs_data d ON d.ino = i.ino AND d.chunk_index BETWEEN ? AND ?` + overlayJoin + `
			WHERE i.ino = ? ORDER BY d.chunk_index`
		}
		rows, err := c.Query(q, first, last, ino)
		if err != nil {
			return err
		}
		defer rows.Close()
		found := false
		var size int64
		for rows.Next() {
			var mode int64
			var idx sql.NullInt64
			var data sql.RawBytes
			dest := []any{&mode, &size, &idx, &data}
			var b baseData
			var bpath []byte
			if f.ov != nil {
				dest = append(dest, &b.extent, &bpath, &b.ino, &b.size, &b.mtimeNs)
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			if !found && b.extent > 0 {
				b.path = string(bpath)
				base, have = &b, map[int64]bool{}
			}
			if have != nil && idx.Valid {
				have[idx.Int64] = true
			}
			if !found {
				found = true
				if uint32(mode)&schema.ModeType == schema.ModeDir {
					return syscall.EISDIR
				}
				if off >= size {
					return nil
				}
				n = int(min(int64(len(p)), size-off))
				clear(p[:n]) // holes read as zeros
			}
			if !idx.Valid {
				continue
			}
			start := idx.Int64 * cs
			lo, hi := max(start, off), min(start+int64(len(data)), off+int64(n))
			if lo < hi {
				copy(p[lo-off:hi-off], data[lo-start:hi-start])
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			return errStale
		}
		return nil
	})
	if err == nil && base != nil && n > 0 {
		base.anyBase = anyBase
		err = f.readBase(base, p[:n], off, have)
	}
	return n, err
}

// readWhole returns the content of ino with one statement on a reader
// connection (see readAt).
func (f *FS) readWhole(ctx context.Context, ino int64, alloc func(n int) []byte) ([]byte, error) {
	if alloc == nil {
		alloc = func(n int) []byte { return make([]byte, n) }
	}
	// alloc must return zeroed memory, or nil.
	cs := int64(f.chunkSize)
	var out []byte
	var base *baseData // overlay: where chunks missing from fs_data come from
	var have map[int64]bool
	err := f.db.Query(ctx, func(c *store.Conn) error {
		q := `SELECT i.mode, i.size, d.chunk_index, d.data FROM fs_inode i
			LEFT JOIN fs_data d ON d.ino = i.ino WHERE i.ino = ? ORDER BY d.chunk_index`
		if f.ov != nil {
			q = `SELECT i.mode, i.size, d.chunk_index, d.data` + overlayCols + ` FROM fs_inode i
			LEFT JOIN fs_data d ON d.ino = i.ino` + overlayJoin + ` WHERE i.ino = ? ORDER BY d.chunk_index`
		}
		rows, err := c.Query(q, ino)
		if err != nil {
			return err
		}
		defer rows.Close()
		var size int64
		// found, not out != nil: alloc may answer an empty file with nil.
		found := false
		for rows.Next() {
			var mode int64
			var idx sql.NullInt64
			var data sql.RawBytes
			dest := []any{&mode, &size, &idx, &data}
			var b baseData
			var bpath []byte
			if f.ov != nil {
				dest = append(dest, &b.extent, &bpath, &b.ino, &b.size, &b.mtimeNs)
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			if !found && b.extent > 0 {
				b.path = string(bpath)
				base, have = &b, map[int64]bool{}
			}
			if have != nil && idx.Valid {
				have[idx.Int64] = true
			}
			if !found {
				found = true
				if uint32(mode)&schema.ModeType == schema.ModeDir {
					return syscall.EISDIR
				}
				out = alloc(int(size)) // zeroed: holes read as zeros
				if out == nil || len(out) != int(size) {
					out = make([]byte, size)
				}
			}
			if !idx.Valid {
				continue
			}
			start := idx.Int64 * cs
			if start < size {
				copy(out[start:], data[:min(int64(len(data)), size-start)])
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			return errStale
		}
		return nil
	})
	if err == nil && base != nil && len(out) > 0 {
		err = f.readBase(base, out, 0, have)
	}
	return out, err
}

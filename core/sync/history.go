//go:build cgo

package sync

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// Page history of a served database (docs/SYNC.md, "Partial sync"). A
// partial client reads the pages it lacks at the revision it bootstrapped
// at, possibly long after later writes changed them, so before each
// write is checkpointed into DIR/ID.db the server saves the versions the
// write replaces in DIR/ID.db-history (SQLite):
//
//	pages(page, rev, data)  data = the page's content before revision
//	                        rev wrote it (NULL: the page did not exist)
//	revs(rev, db_size)      the database's size in pages at each revision
//	meta(k, v)              epoch, rev, oldest, fingerprint
//
// Page p at revision R is the data of p's first row with rev > R, or the
// file's page when there is none. History is bounded by bytes: the oldest
// revisions' rows are deleted first, and a revision older than "oldest"
// is no longer served (HTTP 410; the client must bootstrap again).
//
// The fingerprint (size and mtime of ID.db after the last checkpoint)
// detects a database changed while the server was stopped: then the
// history is dropped and a new epoch starts (clients' revisions of the
// old one get every page at their next pull).

const historySchema = `
CREATE TABLE IF NOT EXISTS pages (page INTEGER NOT NULL, rev INTEGER NOT NULL, data BLOB, PRIMARY KEY (page, rev));
CREATE INDEX IF NOT EXISTS pages_rev ON pages(rev);
CREATE TABLE IF NOT EXISTS revs (rev INTEGER PRIMARY KEY, db_size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);`

func openHistory(ctx context.Context, path string) (*sql.DB, error) {
	h, err := sql.Open(sqlite.DriverName, path)
	if err != nil {
		return nil, err
	}
	h.SetMaxOpenConns(1)
	for _, s := range []string{"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", historySchema} {
		if _, err := h.ExecContext(ctx, s); err != nil {
			h.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return h, nil
}

func fingerprint(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return strconv.FormatInt(st.Size(), 10) + ":" + strconv.FormatInt(st.ModTime().UnixNano(), 10)
}

func (d *database) metaGet(ctx context.Context, k string) string {
	var v string
	d.hist.QueryRowContext(ctx, "SELECT v FROM meta WHERE k = ?", k).Scan(&v)
	return v
}

func setMeta(ctx context.Context, ex interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if _, err := ex.ExecContext(ctx, "INSERT INTO meta(k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v", kv[i], kv[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// loadHistory resumes the epoch of the last run when the database file
// is as that run left it, else starts a new epoch with no history.
func (d *database) loadHistory(ctx context.Context, fp, newEpoch string) error {
	epoch := d.metaGet(ctx, "epoch")
	if epoch != "" && fp != "" && d.metaGet(ctx, "fingerprint") == fp {
		rev, err1 := strconv.ParseUint(d.metaGet(ctx, "rev"), 10, 64)
		oldest, err2 := strconv.ParseUint(d.metaGet(ctx, "oldest"), 10, 64)
		if err1 == nil && err2 == nil {
			d.epoch, d.rev, d.oldest = epoch, rev, oldest
			rows, err := d.hist.QueryContext(ctx, "SELECT page, max(rev) FROM pages GROUP BY page")
			if err != nil {
				return err
			}
			for rows.Next() {
				var p uint32
				var r uint64
				if err := rows.Scan(&p, &r); err != nil {
					rows.Close()
					return err
				}
				d.changed[p] = r
			}
			rows.Close()
			if err := d.hist.QueryRowContext(ctx, "SELECT coalesce(sum(length(data)), 0) FROM pages").Scan(&d.histBytes); err != nil {
				return err
			}
			return nil
		}
	}
	d.epoch, d.rev, d.oldest = newEpoch, 1, 1
	for _, s := range []string{"DELETE FROM pages", "DELETE FROM revs", "DELETE FROM meta"} {
		if _, err := d.hist.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	if _, err := d.hist.ExecContext(ctx, "INSERT INTO revs(rev, db_size) VALUES (1, ?)", d.fileSize()); err != nil {
		return err
	}
	return setMeta(ctx, d.hist, "epoch", d.epoch, "rev", "1", "oldest", "1", "fingerprint", fp)
}

func (d *database) fileSize() uint32 {
	st, err := os.Stat(d.path)
	if err != nil {
		return 0
	}
	return uint32(st.Size() / PageSize)
}

// saveHistory records the pages a write is about to checkpoint (and the
// pages a shrinking commit cuts off) under revision rev, with the
// contents they had before it: one transaction, before the checkpoint.
func (d *database) saveHistory(ctx context.Context, rev uint64, pages []uint32, newSize uint32) error {
	oldSize := d.fileSize()
	f, err := sqlite.OpenFile(d.path) // not os.Open: see sqlite.File
	if err != nil {
		return err
	}
	defer f.Close()
	tx, err := d.hist.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	seen := map[uint32]bool{}
	buf := make([]byte, PageSize)
	save := func(p uint32) error {
		if seen[p] {
			return nil
		}
		seen[p] = true
		var data any
		if p < oldSize {
			if _, err := f.ReadAt(buf, int64(p)*PageSize); err != nil {
				return err
			}
			data = buf
			d.histBytes += PageSize
		}
		_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO pages(page, rev, data) VALUES (?, ?, ?)", p, rev, data)
		return err
	}
	for _, p := range pages {
		if err := save(p); err != nil {
			return err
		}
	}
	if newSize > 0 {
		for p := newSize; p < oldSize; p++ {
			if err := save(p); err != nil {
				return err
			}
		}
	}
	if err := setMeta(ctx, tx, "rev", strconv.FormatUint(rev, 10)); err != nil {
		return err
	}
	return tx.Commit()
}

// afterCheckpoint records the size of revision rev and the file's new
// fingerprint, then drops the oldest revisions beyond the bound.
func (d *database) afterCheckpoint(ctx context.Context, rev uint64, limit int64) error {
	if _, err := d.hist.ExecContext(ctx, "INSERT OR REPLACE INTO revs(rev, db_size) VALUES (?, ?)", rev, d.fileSize()); err != nil {
		return err
	}
	if err := setMeta(ctx, d.hist, "fingerprint", fingerprint(d.path)); err != nil {
		return err
	}
	if d.histBytes <= limit {
		return nil
	}
	rows, err := d.hist.QueryContext(ctx, "SELECT rev, coalesce(sum(length(data)), 0) FROM pages GROUP BY rev ORDER BY rev")
	if err != nil {
		return err
	}
	cut, left := uint64(0), d.histBytes
	for rows.Next() {
		var r uint64
		var n int64
		if err := rows.Scan(&r, &n); err != nil {
			rows.Close()
			return err
		}
		if left <= limit {
			break
		}
		cut, left = r, left-n
	}
	rows.Close()
	if cut == 0 {
		return nil
	}
	// Revisions before cut lose the versions their reads need.
	tx, err := d.hist.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM pages WHERE rev <= ?", cut); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM revs WHERE rev < ?", cut); err != nil {
		return err
	}
	if err := setMeta(ctx, tx, "oldest", strconv.FormatUint(cut, 10)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	d.oldest, d.histBytes = cut, left
	return nil
}

// parseRev returns N of "EPOCH.N" when EPOCH is this run's.
func (d *database) parseRev(s string) (uint64, bool) {
	epoch, n, ok := strings.Cut(s, ".")
	v, err := strconv.ParseUint(n, 10, 64)
	return v, ok && err == nil && epoch == d.epoch && v <= d.rev
}

// sizeAt is the database's size in pages at revision rev.
func (d *database) sizeAt(ctx context.Context, rev uint64) (uint32, error) {
	if rev == d.rev {
		return d.fileSize(), nil
	}
	var n uint32
	err := d.hist.QueryRowContext(ctx, "SELECT db_size FROM revs WHERE rev <= ? ORDER BY rev DESC LIMIT 1", rev).Scan(&n)
	return n, err
}

// changedBetween lists the pages written by revisions in (since, at].
func (d *database) changedBetween(ctx context.Context, since, at uint64) ([]uint32, error) {
	rows, err := d.hist.QueryContext(ctx, "SELECT DISTINCT page FROM pages WHERE rev > ? AND rev <= ? ORDER BY page", since, at)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []uint32
	for rows.Next() {
		var p uint32
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// readPageAt reads page p as it was at revision rev into buf.
func (d *database) readPageAt(ctx context.Context, f io.ReaderAt, p uint32, rev uint64, buf []byte) error {
	if rev < d.rev && d.changed[p] > rev {
		var data []byte
		err := d.hist.QueryRowContext(ctx, "SELECT data FROM pages WHERE page = ? AND rev > ? ORDER BY rev LIMIT 1", p, rev).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("page %d at revision %d is not in the history", p, rev)
		}
		if err != nil {
			return err
		}
		if len(data) != PageSize {
			return fmt.Errorf("page %d did not exist at revision %d", p, rev)
		}
		copy(buf, data)
		return nil
	}
	_, err := f.ReadAt(buf, int64(p)*PageSize)
	return err
}

// walCommitSize is the database size (pages) of the WAL's last commit
// frame of the current salt, 0 when none.
func walCommitSize(path string) uint32 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	hdr := make([]byte, 32)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return 0
	}
	salt1, salt2 := binary.BigEndian.Uint32(hdr[16:]), binary.BigEndian.Uint32(hdr[20:])
	fh := make([]byte, 24)
	var size uint32
	for off := int64(32); ; off += 24 + PageSize {
		if _, err := f.ReadAt(fh, off); err != nil {
			break
		}
		if binary.BigEndian.Uint32(fh[8:]) != salt1 || binary.BigEndian.Uint32(fh[12:]) != salt2 {
			break
		}
		if n := binary.BigEndian.Uint32(fh[4:]); n != 0 {
			size = n
		}
	}
	return size
}

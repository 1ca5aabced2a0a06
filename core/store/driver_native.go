//go:build !js

package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// walMode: native builds keep the database in WAL mode (readers in
// parallel with the writer, other processes on the same file).
const walMode = true

// soleWriter: false, other connections and processes may commit.
const soleWriter = false

// dataSource resolves path to the absolute path of the database file and
// the driver's name for it, creating the directory for a writable open.
func dataSource(path string, opts Options) (abs, dsn string, err error) {
	if abs, err = filepath.Abs(path); err != nil {
		return "", "", err
	}
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return "", "", err
		}
	} else if _, err := os.Stat(abs); err != nil {
		return "", "", err
	}
	dsn = "file:" + uriPath(abs)
	if opts.ReadOnly {
		// Opened read-only by SQLite itself, not only refused writes by
		// query_only: a file on read-only media, or one we must not
		// change (a refused open, a probe), is never opened for writing.
		dsn += "?mode=ro"
	}
	return abs, dsn, nil
}

// Stat reports whether the database file path exists: nil, or an error
// (fs.ErrNotExist when it does not).
// A directory is EISDIR: SQLite would call it "not a database".
func Stat(path string) error {
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		return &fs.PathError{Op: "stat", Path: path, Err: syscall.EISDIR}
	}
	return err
}

// cantOpen reports SQLite's SQLITE_CANTOPEN (both drivers word it the same): for a read-only connection
// to a WAL-mode database, the -shm (or -wal) file could not be created.
func cantOpen(err error) bool {
	return err != nil && strings.Contains(err.Error(), "unable to open database file")
}

// immutable is the data source of a read-only open on read-only media,
// where SQLite cannot create the -shm file it reads a WAL-mode database
// through. immutable=1 makes SQLite read the database file alone,
// without locks and without the -wal: right when there is no -wal with
// committed pages in it (nobody can write a WAL database whose directory
// is read-only, so nothing changes under the reader either). With such a
// -wal the file alone is not the database: refuse rather than show old
// contents.
func immutable(abs, dsn string) (string, error) {
	if st, err := os.Stat(abs + "-wal"); err == nil && st.Size() > 0 {
		return "", fmt.Errorf("%w: its write-ahead log %s-wal holds changes that SQLite can only read through %s-shm, which cannot be created here (read-only directory); copy %s and %s-wal to a writable directory and open the copy",
			ErrCantRead, abs, abs, filepath.Base(abs), filepath.Base(abs))
	}
	return dsn + "&immutable=1", nil
}

// CreateFile makes a new database file at path atomically: build fills a
// database under a temporary name in the same directory, which then
// takes the name path whole, or is removed when build (or anything else)
// failed. When path exists already (another process made it meanwhile)
// the error wraps fs.ErrExist and path is left alone.
func CreateFile(ctx context.Context, path string, opts Options, build func(db *DB) error) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := newTemp(dir, "."+filepath.Base(abs)+".new-")
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(tmp + s)
		}
	}()
	opts.ReadOnly = false
	opts.Readers = 1
	opts.building = true
	db, err := Open(ctx, tmp, opts)
	if err != nil {
		return err
	}
	if err := build(db); err != nil {
		db.Close()
		return err
	}
	// The mode every open of the database expects, recorded in its
	// header; Close then removes the (empty) WAL: the file alone is the
	// database. Nothing was synced so far: one fsync makes the whole file
	// durable before it takes its name.
	if err := db.Raw(ctx, func(c *Conn) error { return db.ensureWAL(ctx, c.c) }); err != nil {
		db.Close()
		return fmt.Errorf("create %s: set WAL mode: %w", path, err)
	}
	if err := db.Close(); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	// A link, unlike a rename, never replaces a database that appeared
	// at path meanwhile.
	if err := os.Link(tmp, abs); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
		}
		// File systems without hard links (some FUSE and network ones):
		// a rename, after checking that path is still free.
		if _, serr := os.Lstat(abs); serr == nil {
			return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
		}
		if err := os.Rename(tmp, abs); err != nil {
			return err
		}
	}
	return syncFile(dir)
}

// newTemp creates an empty file named prefix+random in dir, with the
// permissions SQLite gives a new database (0644 less the umask).
func newTemp(dir, prefix string) (string, error) {
	for range 100 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		name := filepath.Join(dir, prefix+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, f.Close()
	}
	return "", fmt.Errorf("create a temporary file in %s: too many collisions", dir)
}

// syncFile fsyncs a file or directory, so a new database and its name
// survive a power loss once Open has returned.
func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		// EINVAL: a directory that cannot be synced (some file systems).
		return err
	}
	return nil
}

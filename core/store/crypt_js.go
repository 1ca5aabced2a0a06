//go:build js && !agentfs_workers

package store

import (
	"fmt"
	"io"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
	"github.com/ncruces/go-sqlite3/vfs"
)

// The WebAssembly build encrypts as native builds do (crypt.go), over
// the VFS its database is in: memdb's memory, or a host's files.

// sniffFile is crypt.Sniff of the database abs ("/NAME").
func sniffFile(abs string) (string, error) {
	r, done, err := openRaw(abs)
	if err != nil || r == nil {
		return "", err
	}
	defer done()
	return crypt.SniffReader(r), nil
}

// checkFile checks that the database abs opens with codec, and applies
// a write-ahead log that LoadMemoryWAL kept for the key.
func checkFile(abs string, codec *crypt.Codec) error {
	r, done, err := openRaw(abs)
	if err != nil || r == nil {
		return err
	}
	err = codec.CheckReader(r)
	done()
	if err != nil {
		return err
	}
	name := memoryName(abs)
	w, ok := pendingWAL.LoadAndDelete(name)
	if !ok {
		return nil
	}
	db, err := RawMemory(abs)
	if err != nil {
		return err
	}
	wal := w.([]byte)
	codec.AdoptWAL(wal) // a log Turso's engine wrote: SQLite's checksums
	out, err := applyWAL(db, wal, codec.Decrypt)
	if err != nil {
		return err
	}
	createMemory(name, out)
	return nil
}

// openRaw opens the stored bytes of the database abs, below any
// encryption: nil when there is none.
func openRaw(abs string) (io.ReaderAt, func(), error) {
	name := memoryName(abs)
	if a := attachedFiles(name); a != nil {
		return a.db, func() {}, nil
	}
	if _, ok := memories.Load(name); !ok {
		return nil, nil, nil
	}
	f, _, err := vfs.Find("memdb").Open("/"+name, vfs.OPEN_MAIN_DB|vfs.OPEN_READONLY)
	if err != nil {
		return nil, nil, fmt.Errorf("open the in-memory database %s: %w", name, err)
	}
	return f, func() { f.Close() }, nil
}

// RawMemory returns the stored bytes of the database path: for an
// encrypted database, the encrypted file (what the native engine opens
// with the key), read under a shared lock so that no commit is halfway.
func RawMemory(path string) ([]byte, error) {
	name := memoryName(path)
	var f vfs.File
	if a := attachedFiles(name); a != nil {
		f = &pageFile{f: a.db, db: a, main: true}
	} else if _, ok := memories.Load(name); ok {
		var err error
		if f, _, err = vfs.Find("memdb").Open("/"+name, vfs.OPEN_MAIN_DB|vfs.OPEN_READONLY); err != nil {
			return nil, err
		}
	} else {
		return nil, errNoMemory(path)
	}
	defer f.Close()
	if err := f.Lock(vfs.LOCK_SHARED); err != nil {
		return nil, fmt.Errorf("read the database %s: it is being written (%w)", path, err)
	}
	defer f.Unlock(vfs.LOCK_NONE)
	n, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	// memdb answers reads within one of its 64 KiB sectors only.
	const sector = 64 << 10
	for off := int64(0); off < n; off += sector {
		end := min(off+sector, n)
		if k, err := f.ReadAt(b[off:end], off); k < int(end-off) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return b, nil
}

// EncryptedMemory reports whether the database path (in memory or in
// attached files) is encrypted.
func EncryptedMemory(path string) bool {
	c, _ := sniffFile("/" + memoryName(path))
	return c != ""
}

// Encrypted reports whether the bytes of a database file are encrypted
// (Turso's page format): such a file cannot be read without its key.
func Encrypted(data []byte) bool {
	return crypt.SniffReader(bytesReader(data)) != ""
}

type bytesReader []byte

func (b bytesReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// SetPartialVFS: no partial sync in the browser build.
func SetPartialVFS(f func(abs string) (string, error)) {}

func (db *DB) setupPartial(abs, dsn string) (string, error) { return dsn, nil }

// syncedFile: the WebAssembly build's encrypted databases use ncruces'
// VFS in any case (see setupCrypt).
func syncedFile(string) bool { return false }

//go:build js && !agentfs_workers

package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"github.com/agentfs-go/agentfs/core/internal/crypt"
	"io/fs"
	"strings"
	"sync"

	"github.com/ncruces/go-sqlite3"
	sqlitedriver "github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/ext/serdes"
	"github.com/ncruces/go-sqlite3/vfs"
	"github.com/ncruces/go-sqlite3/vfs/memdb"
)

// In a WebAssembly build (the browser, a Cloudflare Worker) there is no
// file system and no other process: a database lives in memory (SQLite's
// memdb VFS, compiled to Go by ncruces/go-sqlite3), arrives as the bytes
// of a database file (LoadMemory) and leaves as them (Serialize). Without
// WAL, no background checkpoints either.
const walMode = false

// soleWriter: false, as memdb's database is shared by every connection
// of the program (two agents in one page may open the same name).
const soleWriter = false

// memoryName is memdb's name of the database called path. A "file:/NAME"
// URI opens memdb's database NAME, shared by every connection of the
// program (memdb.Create and Delete take NAME).
func memoryName(path string) string { return strings.TrimLeft(path, "/") }

// memories are the databases of this program, as a directory holds
// files: a name is there from its LoadMemory or first writable Open to
// its DropMemory.
var memories sync.Map // memoryName -> struct{}

func dataSource(path string, opts Options) (abs, dsn string, err error) {
	name := memoryName(path)
	if dsn, ok := attachedDSN(name); ok {
		return "/" + name, dsn, nil
	}
	if _, ok := memories.Load(name); !ok {
		if opts.ReadOnly {
			return "", "", &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		// Held by memdb until DropMemory, like a file until it is removed.
		memdb.Create(name, nil)
		memories.Store(name, struct{}{})
	}
	dsn = "file:/" + uriPath(name) + "?vfs=memdb"
	return "/" + name, dsn, nil
}

// Stat reports whether the in-memory database path exists (see Stat of
// native builds).
func Stat(path string) error {
	if a := attachedFiles(memoryName(path)); a != nil {
		// An empty host file is a database never written: none yet.
		if n, err := a.db.Size(); err != nil || n > 0 {
			return err
		}
		return &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
	}
	if _, ok := memories.Load(memoryName(path)); !ok {
		return &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
	}
	return nil
}

func openConnector(dsn string) (driver.Connector, error) {
	return (&sqlitedriver.SQLite{}).OpenConnector(dsn)
}

// LoadMemory makes data, the bytes of a database file, the database that
// Open(path) opens next. It keeps data (the caller must not reuse it)
// until DropMemory.
func LoadMemory(path string, data []byte) {
	createMemory(memoryName(path), data)
	memories.Store(memoryName(path), struct{}{})
}

// createMemory is memdb.Create, except for an encrypted file: memdb
// rewrites a WAL-mode header (bytes 18 and 19) to rollback mode in place,
// which for an encrypted file would change page 1's associated data, so
// that page 1 no longer decrypts. Those bytes are written below memdb's
// header conversion instead; the encrypting VFS shows them to SQLite in
// rollback mode (crypt's noWAL).
func createMemory(name string, data []byte) {
	if !Encrypted(data) {
		memdb.Create(name, data)
		return
	}
	memdb.Create(name, nil)
	f, _, err := vfs.Find("memdb").Open("/"+name, vfs.OPEN_MAIN_DB|vfs.OPEN_READWRITE)
	if err != nil {
		panic(err) // memdb opens a database it holds
	}
	defer f.Close()
	const sector = 64 << 10 // memdb writes within one sector at a time
	for off := 0; off < len(data); off += sector {
		if _, err := f.WriteAt(data[off:min(off+sector, len(data))], int64(off)); err != nil {
			panic(err) // memory
		}
	}
}

// LoadMemoryWAL is LoadMemory of an encrypted database file data whose
// write-ahead log wal (DB-wal's bytes) holds committed transactions: its
// pages are checksummed in the clear, so the log is applied when the
// database is opened with its key (checkFile).
func LoadMemoryWAL(path string, data, wal []byte) {
	LoadMemory(path, data)
	if len(wal) > 0 {
		pendingWAL.Store(memoryName(path), wal)
	}
}

var pendingWAL sync.Map // memoryName -> the -wal bytes of LoadMemoryWAL

func errNoMemory(path string) error {
	return &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
}

// DropMemory frees the in-memory database path once it is closed.
func DropMemory(path string) {
	memdb.Delete(memoryName(path))
	memories.Delete(memoryName(path))
	pendingWAL.Delete(memoryName(path))
}

// Serialize returns the bytes of the database file: what an engine of
// another platform opens (after committing an open group).
func (db *DB) Serialize(ctx context.Context) (out []byte, err error) {
	err = db.Raw(ctx, func(c *Conn) error {
		return c.c.Raw(func(dc any) error {
			raw, ok := dc.(interface{ Raw() *sqlite3.Conn })
			if !ok {
				return errors.New("store: driver connection has no SQLite handle")
			}
			out, err = serdes.Serialize(raw.Raw(), "main")
			return err
		})
	})
	return out, err
}

// cantOpen: memdb has no -shm to create.
func cantOpen(error) bool { return false }

func immutable(abs, dsn string) (string, error) { return dsn, nil }

// CreateFile makes a new in-memory database (see CreateFile of native
// builds): one program owns memory, so building in place and dropping the
// name on failure leaves nothing behind either.
func CreateFile(ctx context.Context, path string, opts Options, build func(db *DB) error) error {
	if Stat(path) == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	opts.ReadOnly = false
	db, err := Open(ctx, path, opts)
	if err != nil {
		DropMemory(path)
		return err
	}
	if err := build(db); err != nil {
		db.Close()
		if a := attachedFiles(memoryName(path)); a != nil {
			// A host file is emptied instead: empty reads as no database.
			_ = a.db.Truncate(0)
			_ = a.journal.Truncate(0)
		}
		DropMemory(path)
		return err
	}
	return db.Close()
}

// DriverName names the SQLite under the engine, for benchmarks and
// diagnostics.
const DriverName = "ncruces-memdb"

// registerCgoCrypt: none here (the WebAssembly build has no C SQLite); encrypted
// databases use ncruces' VFS (crypt.Register).
func registerCgoCrypt(*crypt.Codec) (string, func(), error) { return "", nil, nil }

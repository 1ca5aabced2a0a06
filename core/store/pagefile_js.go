//go:build js && !agentfs_workers

package store

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/serdes"
	"github.com/ncruces/go-sqlite3/vfs"
)

// A database can also live in files the host hands over (a browser's
// OPFS synchronous access handles in a dedicated worker): SQLite then
// reads and writes pages in place, and commits with a rollback journal in
// a second host file, the database's "-journal". SQLite writes the old
// pages to the journal and flushes it before it overwrites them in the
// database, and empties the journal (our xDelete) only after the database
// is flushed: a program that dies in the middle of a commit leaves a hot
// journal, which the next open rolls back. So the file always holds the
// last committed transaction.

// PageFile is a host file under a database: a browser's
// FileSystemSyncAccessHandle in a dedicated worker, or bytes in memory.
// ReadAt answers io.EOF past the end like os.File.
type PageFile interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Size() (int64, error)
	Sync() error
}

// pageVFS is the SQLite VFS over attached PageFiles.
const pageVFS = "agentfs-pages"

func init() { vfs.Register(pageVFS, pageFS{}) }

// attached is a database and its journal, as a host gave them.
type attached struct {
	db, journal PageFile
	lock        lockState
}

// lockState is SQLite's five-level file lock among this program's
// connections to one database (other programs are kept out by the host:
// a browser's Web Lock and its handles' own exclusivity).
type lockState struct {
	mu       sync.Mutex
	shared   int
	reserved bool
	pending  bool
}

var (
	attachedMu sync.Mutex
	attachedDB = map[string]*attached{} // memoryName -> files
)

// AttachFiles makes path's database the host file db, with journal as its
// rollback journal (empty: none), until DetachFiles. Open(path) then reads
// and writes db in place.
func AttachFiles(path string, db, journal PageFile) {
	attachedMu.Lock()
	defer attachedMu.Unlock()
	attachedDB[memoryName(path)] = &attached{db: db, journal: journal}
}

// DetachFiles forgets path's host files (its connections must be closed).
func DetachFiles(path string) {
	attachedMu.Lock()
	defer attachedMu.Unlock()
	delete(attachedDB, memoryName(path))
}

func attachedFiles(name string) *attached {
	attachedMu.Lock()
	defer attachedMu.Unlock()
	return attachedDB[name]
}

// RollBack returns the database whose file holds db and whose rollback
// journal holds journal, with the journal's transaction undone, as SQLite
// does when it opens a database with a hot journal: for a host that reads
// a database's bytes whole (a browser page, which has no synchronous file
// handles) after a program that wrote it in place died mid-commit. An
// encrypted database (and its journal, whose pages are encrypted too)
// needs its key e; the result is then encrypted as db was.
func RollBack(db, journal []byte, e *Encryption) ([]byte, error) {
	if len(journal) == 0 {
		return db, nil
	}
	const name = "rollback/db"
	df := &MemFile{Data: db}
	AttachFiles(name, df, &MemFile{Data: journal})
	defer DetachFiles(name)
	vfsName := pageVFS
	if e != nil {
		codec, err := codecFor(e, crypt.SniffReader(df))
		if err != nil {
			return nil, err
		}
		if err := codec.CheckReader(df); err != nil {
			return nil, err
		}
		n, unregister, err := crypt.RegisterOver(pageVFS, codec)
		if err != nil {
			return nil, err
		}
		defer unregister()
		vfsName = n
	} else if c := crypt.SniffReader(df); c != "" {
		return nil, fmt.Errorf("%w (cipher %s)", ErrNeedKey, c)
	}
	c, err := sqlite3.Open("file:/" + name + "?vfs=" + vfsName)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// The first read takes a shared lock, finds the hot journal and
	// plays it back.
	if err := c.Exec("SELECT count(*) FROM sqlite_master"); err != nil {
		return nil, err
	}
	if e != nil {
		// The file as stored (encrypted), not SQLite's plain pages.
		return bytes.Clone(df.Data), nil
	}
	return serdes.Serialize(c, "main")
}

type pageFS struct{}

func (pageFS) Open(name string, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	if flags&(vfs.OPEN_MAIN_DB|vfs.OPEN_MAIN_JOURNAL) == 0 {
		// Statement journals, temporary tables, sorters: scratch space
		// in memory, gone when closed.
		return &pageFile{f: &MemFile{}, mem: true}, flags | vfs.OPEN_MEMORY, nil
	}
	key, journal := strings.CutSuffix(strings.TrimLeft(name, "/"), "-journal")
	a := attachedFiles(key)
	if a == nil {
		return nil, flags, sqlite3.CANTOPEN
	}
	if journal {
		return &pageFile{f: a.journal, db: a}, flags, nil
	}
	return &pageFile{f: a.db, db: a, main: true}, flags, nil
}

// Delete empties the journal: a host file cannot be removed while its
// handle is open, and SQLite reads an empty journal as none.
func (pageFS) Delete(name string, _ bool) error {
	key, journal := strings.CutSuffix(strings.TrimLeft(name, "/"), "-journal")
	a := attachedFiles(key)
	if a == nil || !journal {
		return sqlite3.IOERR_DELETE_NOENT
	}
	if err := a.journal.Truncate(0); err != nil {
		return err
	}
	return a.journal.Sync()
}

func (pageFS) Access(name string, _ vfs.AccessFlag) (bool, error) {
	key, journal := strings.CutSuffix(strings.TrimLeft(name, "/"), "-journal")
	a := attachedFiles(key)
	if a == nil {
		return false, nil
	}
	if !journal {
		return true, nil
	}
	n, err := a.journal.Size()
	return n > 0, err
}

func (pageFS) FullPathname(name string) (string, error) { return name, nil }

// pageFile is one connection's open file.
type pageFile struct {
	f    PageFile
	db   *attached // nil for scratch files
	main bool      // the database (locks apply), not its journal
	mem  bool
	lock vfs.LockLevel
}

func (p *pageFile) Close() error                                    { return p.Unlock(vfs.LOCK_NONE) }
func (p *pageFile) ReadAt(b []byte, off int64) (int, error)         { return p.f.ReadAt(b, off) }
func (p *pageFile) WriteAt(b []byte, off int64) (int, error)        { return p.f.WriteAt(b, off) }
func (p *pageFile) Truncate(size int64) error                       { return p.f.Truncate(size) }
func (p *pageFile) Size() (int64, error)                            { return p.f.Size() }
func (p *pageFile) SectorSize() int                                 { return 4096 }
func (p *pageFile) DeviceCharacteristics() vfs.DeviceCharacteristic { return 0 }

func (p *pageFile) Sync(vfs.SyncFlag) error {
	if p.mem {
		return nil
	}
	return p.f.Sync()
}

// Lock and Unlock follow SQLite's locking protocol among the connections
// of this program: many SHARED, one RESERVED beside them, and EXCLUSIVE
// once the other SHARED ones are gone (PENDING keeps new ones out until
// then). Contention answers BUSY at once; SQLite's busy handler retries.
func (p *pageFile) Lock(level vfs.LockLevel) error {
	if !p.main || p.lock >= level {
		p.lock = max(p.lock, level)
		return nil
	}
	l := &p.db.lock
	l.mu.Lock()
	defer l.mu.Unlock()
	switch level {
	case vfs.LOCK_SHARED:
		if l.pending {
			return sqlite3.BUSY
		}
		l.shared++
	case vfs.LOCK_RESERVED:
		if l.reserved {
			return sqlite3.BUSY
		}
		l.reserved = true
	case vfs.LOCK_EXCLUSIVE:
		if p.lock < vfs.LOCK_PENDING {
			l.pending = true
			p.lock = vfs.LOCK_PENDING
		}
		if l.shared > 1 {
			return sqlite3.BUSY
		}
	}
	p.lock = level
	return nil
}

func (p *pageFile) Unlock(level vfs.LockLevel) error {
	if !p.main || p.lock <= level {
		p.lock = min(p.lock, level)
		return nil
	}
	l := &p.db.lock
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.lock >= vfs.LOCK_RESERVED {
		l.reserved = false
	}
	if p.lock >= vfs.LOCK_PENDING {
		l.pending = false
	}
	if level < vfs.LOCK_SHARED && p.lock >= vfs.LOCK_SHARED {
		l.shared--
	}
	p.lock = level
	return nil
}

func (p *pageFile) CheckReservedLock() (bool, error) {
	if !p.main {
		return false, nil
	}
	if p.lock >= vfs.LOCK_RESERVED {
		return true, nil
	}
	p.db.lock.mu.Lock()
	defer p.db.lock.mu.Unlock()
	return p.db.lock.reserved, nil
}

func (p *pageFile) LockState() vfs.LockLevel { return p.lock }

var _ vfs.FileLockState = (*pageFile)(nil)

// MemFile is a PageFile in memory.
type MemFile struct {
	mu   sync.Mutex
	Data []byte
}

func (m *MemFile) ReadAt(b []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if off >= int64(len(m.Data)) {
		return 0, io.EOF
	}
	n := copy(b, m.Data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (m *MemFile) WriteAt(b []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if end := off + int64(len(b)); end > int64(len(m.Data)) {
		m.Data = append(m.Data, make([]byte, end-int64(len(m.Data)))...)
	}
	return copy(m.Data[off:], b), nil
}

func (m *MemFile) Truncate(size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size < 0 {
		return fs.ErrInvalid
	}
	if size <= int64(len(m.Data)) {
		m.Data = m.Data[:size]
	} else {
		m.Data = append(m.Data, make([]byte, size-int64(len(m.Data)))...)
	}
	return nil
}

func (m *MemFile) Size() (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.Data)), nil
}

func (m *MemFile) Sync() error { return nil }

// attachedDSN is the data source of path if its files are attached.
func attachedDSN(name string) (string, bool) {
	if attachedFiles(name) == nil {
		return "", false
	}
	return "file:/" + uriPath(name) + "?vfs=" + pageVFS, true
}

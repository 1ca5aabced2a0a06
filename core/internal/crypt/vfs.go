package crypt

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"sync"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"
)

// Register makes a VFS that encrypts every database and WAL it opens
// with codec, and returns its name (for "?vfs=NAME") and a function that
// unregisters it. One VFS per open database keeps the key out of URIs,
// and makes VACUUM INTO (snapshots) write encrypted copies too.
func Register(codec *Codec) (name string, unregister func()) {
	return register(&cryptVFS{VFS: vfs.Find(""), codec: codec})
}

// RegisterConvert is Register, except that the database file at plain
// (an absolute path) and its WAL are read and written in the clear: to
// encrypt a plain database (open plain, VACUUM INTO an encrypted copy) or
// decrypt one (open encrypted, VACUUM INTO plain).
func RegisterConvert(codec *Codec, plain string) (name string, unregister func()) {
	return register(&cryptVFS{VFS: vfs.Find(""), codec: codec, plain: plain})
}

// RegisterOver is Register over the VFS called base instead of the
// operating system's: the WebAssembly build's databases in memory
// ("memdb") or in a host's files.
func RegisterOver(base string, codec *Codec) (name string, unregister func(), err error) {
	b := vfs.Find(base)
	if b == nil {
		return "", nil, fmt.Errorf("crypt: no SQLite VFS %q", base)
	}
	name, unregister = register(&cryptVFS{VFS: b, codec: codec})
	return name, unregister, nil
}

func register(v *cryptVFS) (string, func()) {
	var b [8]byte
	rand.Read(b[:])
	name := "agentfs-crypt-" + hex.EncodeToString(b[:])
	vfs.Register(name, v)
	return name, func() { vfs.Unregister(name) }
}

type cryptVFS struct {
	vfs.VFS
	codec      *Codec
	plain      string
	sealed     func(name string) bool // RegisterSync's sealed files
	sealedPage int
}

func (v *cryptVFS) Open(name string, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	return v.OpenFilename(nil, flags)
}

func (v *cryptVFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpenFilename(v.VFS, name, flags)
	if err != nil {
		return f, flags, err
	}
	if v.plain != "" && name != nil && name.String() != "" {
		if n := name.String(); n == v.plain || n == v.plain+"-wal" || n == v.plain+"-journal" {
			return f, flags, nil
		}
	}
	switch {
	case flags&vfs.OPEN_MAIN_DB != 0 && v.sealed != nil && name != nil && v.sealed(name.String()):
		return &sealedFile{File: f, codec: v.codec, ps: v.sealedPage}, flags, nil
	case flags&vfs.OPEN_MAIN_DB != 0:
		// As SQLite (ncruces' VFS glue) decides whether a file has WAL's
		// shared memory.
		sm, ok := f.(vfs.FileSharedMemory)
		wal := ok && sm.SharedMemory() != nil
		return &dbFile{File: f, codec: v.codec, noWAL: !wal}, flags, nil
	case flags&vfs.OPEN_WAL != 0:
		return &walFile{File: f, codec: v.codec}, flags, nil
	case flags&vfs.OPEN_MAIN_JOURNAL != 0 && flags&vfs.OPEN_MEMORY == 0:
		return &journalFile{File: f, codec: v.codec}, flags, nil
	}
	// Temporary files hold page images in the clear: the store keeps
	// temporary data in memory (temp_store=MEMORY), and a VFS that
	// answers OPEN_MEMORY keeps its journals there too.
	return f, flags, nil
}

// dbFile is the database file: pages at (pgno-1)*size.
type dbFile struct {
	vfs.File
	codec *Codec
	// noWAL: the file below has no shared memory (the WebAssembly build's
	// memory and host files), so SQLite must not see a WAL-mode database
	// (header bytes 18 and 19 at 2), which it would refuse to open there.
	// Such a header, as native builds leave it, reads as rollback mode
	// (as memdb.Create does for plain files); it stays as stored, since it
	// is page 1's associated data, until SQLite writes page 1.
	noWAL bool
}

// rollbackMode shows the header bytes of page 1 in p, read at off, in
// rollback-journal mode (see noWAL).
func rollbackMode(p []byte, off int64) {
	for i := int64(18); i < 20; i++ {
		if j := i - off; j >= 0 && j < int64(len(p)) && p[j] == 2 {
			p[j] = 1
		}
	}
}

// isPage: see IsPage.
func isPage(n int, off int64) bool {
	return n >= 512 && n <= 65536 && n&(n-1) == 0 && off%int64(n) == 0
}

func (f *dbFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if n == 0 || n < len(p) && !IsHeader(len(p), off) {
		return n, err // a short read at the end of the file
	}
	if e := f.codec.ReadDB(p, off, 0, f.noWAL, func(b []byte, at int64) error {
		_, err := f.File.ReadAt(b, at)
		return err
	}); e != nil {
		return 0, ioErr(e)
	}
	return n, err
}

// ioErr is SQLite's code for an error of ReadDB, WriteDB or WriteWAL.
func ioErr(err error) error {
	switch err {
	case ErrNotADB:
		return sqlite3.NOTADB
	case ErrIOWrite:
		return sqlite3.IOERR_WRITE
	}
	return sqlite3.IOERR_READ
}

func (f *dbFile) WriteAt(p []byte, off int64) (int, error) {
	buf := getBuf(len(p))
	defer putBuf(buf)
	if err := f.codec.WriteDB(*buf, p, off); err != nil {
		return 0, sqlite3.IOERR_WRITE
	}
	return f.File.WriteAt(*buf, off)
}

// bufs holds the encrypted copies of pages on their way to disk (SQLite's
// own buffer is never changed), so that writing a page allocates nothing.
var bufs sync.Pool

func getBuf(n int) *[]byte {
	if b, ok := bufs.Get().(*[]byte); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n)
	return &b
}

func putBuf(b *[]byte) { bufs.Put(b) }

// No memory mapping: SQLite must read pages through ReadAt.
func (f *dbFile) DeviceCharacteristics() vfs.DeviceCharacteristic {
	return f.File.DeviceCharacteristics() & (vfs.IOCAP_IMMUTABLE | vfs.IOCAP_SEQUENTIAL |
		vfs.IOCAP_POWERSAFE_OVERWRITE | vfs.IOCAP_UNDELETABLE_WHEN_OPEN | vfs.IOCAP_SAFE_APPEND)
}

// The optional interfaces SQLite's WAL mode and locking need, passed on.
func (f *dbFile) Unwrap() vfs.File                   { return f.File }
func (f *dbFile) SharedMemory() vfs.SharedMemory     { return vfsutil.WrapSharedMemory(f.File) }
func (f *dbFile) LockState() vfs.LockLevel           { return vfsutil.WrapLockState(f.File) }
func (f *dbFile) PersistWAL() bool                   { return vfsutil.WrapPersistWAL(f.File) }
func (f *dbFile) SetPersistWAL(keep bool)            { vfsutil.WrapSetPersistWAL(f.File, keep) }
func (f *dbFile) HasMoved() (bool, error)            { return vfsutil.WrapHasMoved(f.File) }
func (f *dbFile) Overwrite() error                   { return vfsutil.WrapOverwrite(f.File) }
func (f *dbFile) CheckpointStart()                   { vfsutil.WrapCheckpointStart(f.File) }
func (f *dbFile) CheckpointDone()                    { vfsutil.WrapCheckpointDone(f.File) }
func (f *dbFile) BusyHandler(handler func() bool)    { vfsutil.WrapBusyHandler(f.File, handler) }
func (f *dbFile) SizeHint(size int64) error          { return vfsutil.WrapSizeHint(f.File, size) }
func (f *dbFile) ChunkSize(size int)                 { vfsutil.WrapChunkSize(f.File, size) }
func (f *dbFile) Pragma(n, v string) (string, error) { return vfsutil.WrapPragma(f.File, n, v) }

// walFile is the write-ahead log: a 32-byte header (page size at 8..12),
// then frames of a 24-byte header (page number at 0..4) and a page.
// Frame headers stay in the clear; pages are encrypted as in the
// database file. The frame checksums are SQLite's, over the plain page.
type walFile struct {
	vfs.File
	codec *Codec
	mu    sync.Mutex
	size  int // page size; 0 until known
	// The frame header this connection wrote last (its offset, and the
	// page number in it): SQLite writes a frame as its header, then the
	// page, so the page's number is known without reading it back.
	lastHdr  int64
	lastPgno int64
}

const (
	walHeader   = 32
	frameHeader = 24
)

func (f *walFile) pageSize() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.size == 0 {
		var h [walHeader]byte
		if n, _ := f.File.ReadAt(h[:], 0); n == walHeader {
			f.size = WALPageSize(h[:])
		}
	}
	return f.size
}

// pgnoAt reads the page number of the frame whose header is at hdr.
func (f *walFile) pgnoAt(hdr int64) (int64, error) {
	var pg [4]byte
	if _, err := f.File.ReadAt(pg[:], hdr); err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint32(pg[:])), nil
}

func (f *walFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if off == 0 && n >= walHeader {
		f.mu.Lock()
		f.size = WALPageSize(p)
		f.mu.Unlock()
	}
	f.codec.ReadWAL(p[:n], off, f.pageSize())
	return n, err
}

func (f *walFile) WriteAt(p []byte, off int64) (int, error) {
	if off == 0 && len(p) >= walHeader {
		f.mu.Lock()
		f.size = WALPageSize(p)
		f.mu.Unlock()
	} else if off >= walHeader && f.pageSize() == 0 {
		return 0, sqlite3.IOERR_WRITE // a frame before its log's header: never in the clear
	}
	ps := f.pageSize()
	if WALFrameHeader(len(p), off, ps) {
		f.mu.Lock()
		f.lastHdr, f.lastPgno = off, int64(binary.BigEndian.Uint32(p[:4]))
		f.mu.Unlock()
		return f.File.WriteAt(p, off)
	}
	buf := getBuf(len(p))
	defer putBuf(buf)
	enc, err := f.codec.WriteWAL(*buf, p, off, ps, func(hdr int64) (int64, error) {
		f.mu.Lock()
		last, pgno := f.lastHdr, f.lastPgno
		f.mu.Unlock()
		if last == hdr && hdr != 0 {
			return pgno, nil
		}
		return f.pgnoAt(hdr)
	})
	if err != nil {
		return 0, sqlite3.IOERR_WRITE
	}
	if !enc {
		return f.File.WriteAt(p, off)
	}
	return f.File.WriteAt(*buf, off)
}

func (f *walFile) DeviceCharacteristics() vfs.DeviceCharacteristic {
	return f.File.DeviceCharacteristics() & (vfs.IOCAP_SEQUENTIAL | vfs.IOCAP_POWERSAFE_OVERWRITE |
		vfs.IOCAP_UNDELETABLE_WHEN_OPEN | vfs.IOCAP_SAFE_APPEND)
}

func (f *walFile) Unwrap() vfs.File         { return f.File }
func (f *walFile) SizeHint(s int64) error   { return vfsutil.WrapSizeHint(f.File, s) }
func (f *walFile) ChunkSize(size int)       { vfsutil.WrapChunkSize(f.File, size) }
func (f *walFile) LockState() vfs.LockLevel { return vfsutil.WrapLockState(f.File) }

var _ io.ReaderAt = (*walFile)(nil)

// journalFile is a rollback journal in a file (the WebAssembly build's
// databases in a browser's OPFS commit with one; native databases are in
// WAL mode): a header of one sector, which holds the page size at 24..28,
// then records of a page number (4 bytes), the page as it was, and a
// checksum (4 bytes). Its pages are encrypted as pages other than page 1
// are (the reserved bytes are free on every page), so the old contents
// of a changed page never reach the file in the clear. The checksum is
// SQLite's over the plain page, which ReadAt gives back for a playback.
type journalFile struct {
	vfs.File
	codec *Codec
	mu    sync.Mutex
	size  int // page size; 0 until known
}

// journalPgno: how journal pages are sealed (see journalFile).
const journalPgno = 2

func (f *journalFile) pageSize() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.size == 0 {
		var h [28]byte
		if n, _ := f.File.ReadAt(h[:], 0); n == len(h) {
			f.size = JournalPageSize(h[:])
		}
	}
	return f.size
}

func (f *journalFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if n == len(p) && IsJournalRecord(len(p), off, f.pageSize()) {
		f.codec.ReadJournal(p)
	}
	return n, err
}

func (f *journalFile) WriteAt(p []byte, off int64) (int, error) {
	if off == 0 && len(p) >= 28 {
		f.mu.Lock()
		f.size = JournalPageSize(p)
		f.mu.Unlock()
	}
	if !IsJournalRecord(len(p), off, f.pageSize()) {
		return f.File.WriteAt(p, off)
	}
	buf := getBuf(len(p))
	defer putBuf(buf)
	if err := f.codec.WriteJournal(*buf, p); err != nil {
		return 0, sqlite3.IOERR_WRITE
	}
	return f.File.WriteAt(*buf, off)
}

func (f *journalFile) Truncate(size int64) error {
	if size == 0 {
		f.mu.Lock()
		f.size = 0
		f.mu.Unlock()
	}
	return f.File.Truncate(size)
}

func (f *journalFile) Unwrap() vfs.File         { return f.File }
func (f *journalFile) SizeHint(s int64) error   { return vfsutil.WrapSizeHint(f.File, s) }
func (f *journalFile) ChunkSize(size int)       { vfsutil.WrapChunkSize(f.File, size) }
func (f *journalFile) LockState() vfs.LockLevel { return vfsutil.WrapLockState(f.File) }

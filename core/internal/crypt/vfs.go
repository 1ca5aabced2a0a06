package crypt

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
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
		if n := name.String(); n == v.plain || n == v.plain+"-wal" {
			return f, flags, nil
		}
	}
	switch {
	case flags&vfs.OPEN_MAIN_DB != 0 && v.sealed != nil && name != nil && v.sealed(name.String()):
		return &sealedFile{File: f, codec: v.codec, ps: v.sealedPage}, flags, nil
	case flags&vfs.OPEN_MAIN_DB != 0:
		return &dbFile{File: f, codec: v.codec}, flags, nil
	case flags&vfs.OPEN_WAL != 0:
		return &walFile{File: f, codec: v.codec}, flags, nil
	}
	// Journals and temporary files hold page images in the clear: the
	// store keeps temporary data in memory (temp_store=MEMORY) and the
	// database in WAL mode, which writes no rollback journal.
	return f, flags, nil
}

// dbFile is the database file: pages at (pgno-1)*size.
type dbFile struct {
	vfs.File
	codec *Codec
}

// isPage reports whether a read or write of n bytes at off is one whole
// page (SQLite reads and writes the database file a page at a time; its
// only smaller accesses are to the 100-byte header).
func isPage(n int, off int64) bool {
	return n >= 512 && n <= 65536 && n&(n-1) == 0 && off%int64(n) == 0
}

func (f *dbFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if n == 0 {
		return n, err
	}
	switch {
	case isPage(len(p), off) && n == len(p):
		if derr := f.codec.decrypt(p, off/int64(len(p))+1); derr != nil {
			return 0, sqlite3.IOERR_READ
		}
	case off+int64(len(p)) <= headerSize:
		// The clear part of the header; its first 16 bytes read as
		// SQLite's magic once the codec recognizes them.
		if off < tursoHeader {
			var h [tursoHeader]byte
			if _, err := f.File.ReadAt(h[:], 0); err != nil {
				return 0, sqlite3.IOERR_READ
			}
			if string(h[:]) != string(f.codec.header()) {
				return 0, sqlite3.NOTADB
			}
			copy(p, sqliteMagic[off:])
		}
	case n < len(p):
		return n, err // a short read at the end of the file
	default:
		return 0, sqlite3.IOERR_READ
	}
	return n, err
}

func (f *dbFile) WriteAt(p []byte, off int64) (int, error) {
	if !isPage(len(p), off) {
		return 0, sqlite3.IOERR_WRITE
	}
	buf := getBuf(len(p))
	defer putBuf(buf)
	if err := f.codec.encrypt(*buf, p, off/int64(len(p))+1); err != nil {
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
			f.size = int(binary.BigEndian.Uint32(h[8:12]))
		}
	}
	return f.size
}

// frames calls fn for each whole page inside [off, off+n): its offset in
// p, the offset of its frame header in the file, and its page number if
// that header is in p too (else 0).
func (f *walFile) frames(p []byte, off int64, fn func(at int, hdr, pgno int64) error) error {
	ps := f.pageSize()
	if ps == 0 {
		return nil
	}
	frame := int64(frameHeader + ps)
	for k := max(0, (off-walHeader)/frame); ; k++ {
		body := walHeader + k*frame + frameHeader
		if body >= off+int64(len(p)) {
			return nil
		}
		if body < off || body+int64(ps) > off+int64(len(p)) {
			continue // not whole here: a header-only access
		}
		at, pgno := int(body-off), int64(0)
		if at >= frameHeader {
			pgno = int64(binary.BigEndian.Uint32(p[at-frameHeader:]))
		}
		if err := fn(at, body-frameHeader, pgno); err != nil {
			return err
		}
	}
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
		f.size = int(binary.BigEndian.Uint32(p[8:12]))
		f.mu.Unlock()
	}
	if derr := f.frames(p[:n], off, func(at int, hdr, pgno int64) error {
		page := p[at : at+f.size]
		if pgno != 0 {
			return f.codec.decrypt(page, pgno)
		}
		// SQLite reads a frame's page without its header. Only page 1
		// decrypts differently from the others, and a page 1 frame
		// does not authenticate as another page: try "not page 1"
		// first, and read the header only when that fails.
		saved := getBuf(len(page))
		defer putBuf(saved)
		copy(*saved, page)
		if f.codec.decrypt(page, 2) == nil {
			return nil
		}
		copy(page, *saved)
		pgno, err := f.pgnoAt(hdr)
		if err != nil {
			return err
		}
		return f.codec.decrypt(page, pgno)
	}); derr != nil {
		// A frame that does not decrypt reads as the end of the log, as
		// a torn frame does: SQLite's checksum check stops there.
		clear(p[:n])
		return n, err
	}
	return n, err
}

func (f *walFile) WriteAt(p []byte, off int64) (int, error) {
	if off == 0 && len(p) >= walHeader {
		f.mu.Lock()
		f.size = int(binary.BigEndian.Uint32(p[8:12]))
		f.mu.Unlock()
	} else if off >= walHeader && f.pageSize() == 0 {
		return 0, sqlite3.IOERR_WRITE // a frame before its log's header: never in the clear
	}
	if ps := f.pageSize(); len(p) == frameHeader && off >= walHeader && ps != 0 && (off-walHeader)%int64(frameHeader+ps) == 0 {
		f.mu.Lock()
		f.lastHdr, f.lastPgno = off, int64(binary.BigEndian.Uint32(p[:4]))
		f.mu.Unlock()
		return f.File.WriteAt(p, off)
	}
	var buf *[]byte
	err := f.frames(p, off, func(at int, hdr, pgno int64) error {
		if pgno == 0 {
			f.mu.Lock()
			if f.lastHdr == hdr && hdr != 0 {
				pgno = f.lastPgno
			}
			f.mu.Unlock()
		}
		if pgno == 0 {
			var err error
			if pgno, err = f.pgnoAt(hdr); err != nil {
				return err
			}
		}
		if buf == nil {
			buf = getBuf(len(p))
			copy(*buf, p)
		}
		return f.codec.encrypt((*buf)[at:at+f.size], p[at:at+f.size], pgno)
	})
	if buf != nil {
		defer putBuf(buf)
	}
	if err != nil {
		return 0, sqlite3.IOERR_WRITE
	}
	if buf == nil {
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

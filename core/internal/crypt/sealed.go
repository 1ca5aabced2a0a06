package crypt

import (
	"crypto/rand"
	"encoding/binary"
	"io"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/vfs"
)

// Sealed files hold a plain SQLite database encrypted at rest in a layout
// of their own: page N of the plain database is slot N-1 of the file,
// nonce || ciphertext || tag, with N as associated data. The sync client
// keeps its copy of the remote database (whose pages arrive plain, with no
// bytes reserved for a nonce and tag, so Turso's page format cannot hold
// them) this way when the local database is encrypted. SQLite reads a
// sealed file through RegisterSync's VFS, read-only.

// SlotSize is the size of one sealed page of pageSize bytes.
func (k *Codec) SlotSize(pageSize int) int { return pageSize + k.c.Meta() }

func pageAD(pgno int64) []byte {
	var ad [8]byte
	binary.BigEndian.PutUint64(ad[:], uint64(pgno))
	return ad[:]
}

// SealPage returns the slot of plain page pgno (1-based).
func (k *Codec) SealPage(page []byte, pgno int64) ([]byte, error) {
	ns := k.c.nonce
	out := make([]byte, ns, ns+len(page)+tagSize)
	if _, err := rand.Read(out); err != nil {
		return nil, err
	}
	return k.aead.Seal(out, out[:ns], page, pageAD(pgno)), nil
}

// OpenPage returns the plain page of slot (page pgno, 1-based).
func (k *Codec) OpenPage(slot []byte, pgno int64) ([]byte, error) {
	ns := k.c.nonce
	if len(slot) < ns+tagSize {
		return nil, errAuth
	}
	p, err := k.aead.Open(nil, slot[:ns], slot[ns:], pageAD(pgno))
	if err != nil {
		return nil, errAuth
	}
	return p, nil
}

// RegisterSync is Register, except that the database files for which
// sealed(name) holds are sealed files of pageSize-byte pages, read-only.
func RegisterSync(codec *Codec, pageSize int, sealed func(name string) bool) (name string, unregister func()) {
	return register(&cryptVFS{VFS: vfs.Find(""), codec: codec, sealed: sealed, sealedPage: pageSize})
}

// sealedFile is a sealed file as SQLite sees it: plain pages, read-only.
type sealedFile struct {
	vfs.File
	codec *Codec
	ps    int
}

func (f *sealedFile) ReadAt(p []byte, off int64) (int, error) {
	slot := int64(f.codec.SlotSize(f.ps))
	buf := make([]byte, slot)
	n := 0
	for n < len(p) {
		at := off + int64(n)
		pg, in := at/int64(f.ps), at%int64(f.ps)
		m, err := f.File.ReadAt(buf, pg*slot)
		if int64(m) < slot {
			if err == nil || err == io.EOF {
				return n, io.EOF // past the end: SQLite zero-fills
			}
			return n, err
		}
		plain, err := f.codec.OpenPage(buf, pg+1)
		if err != nil {
			return 0, sqlite3.IOERR_READ
		}
		n += copy(p[n:], plain[in:])
	}
	return n, nil
}

func (f *sealedFile) Size() (int64, error) {
	s, err := f.File.Size()
	return s / int64(f.codec.SlotSize(f.ps)) * int64(f.ps), err
}

func (f *sealedFile) WriteAt([]byte, int64) (int, error) { return 0, sqlite3.READONLY }
func (f *sealedFile) Truncate(int64) error               { return sqlite3.READONLY }

func (f *sealedFile) DeviceCharacteristics() vfs.DeviceCharacteristic {
	return vfs.IOCAP_IMMUTABLE
}

func (f *sealedFile) Unwrap() vfs.File { return f.File }

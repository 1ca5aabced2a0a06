package crypt

import (
	"encoding/binary"
	"errors"
)

// The offset-to-page logic of the files SQLite keeps a database in (the
// database file, its write-ahead log, a rollback journal): which bytes of
// a read or write are a page, which page, and how it is sealed. Both
// encrypting VFSes call these, ncruces' (vfs.go, a Go VFS) and the cgo
// driver's (internal/sqlite/cryptvfs.c, a C VFS over SQLite's own), so
// the format has one implementation. They work on buffers only; reading
// more of the file, when a page's number or the page size is not in the
// buffer, is the caller's.

// Errors of a read or write, each VFS answers with SQLite's code.
var (
	ErrIORead  = errors.New("crypt: read is not a page, or does not decrypt") // SQLITE_IOERR_READ
	ErrIOWrite = errors.New("crypt: write is not a page")                     // SQLITE_IOERR_WRITE
	ErrNotADB  = errors.New("crypt: not a database of this cipher")           // SQLITE_NOTADB
)

// IsPage reports whether a read or write of n bytes at off is one whole
// page (SQLite reads and writes the database file a page at a time; its
// only smaller accesses are to the 100-byte header).
func IsPage(n int, off int64) bool { return isPage(n, off) }

// IsHeader reports whether a read of n bytes at off lies inside the
// database header (the clear part of page 1).
func IsHeader(n int, off int64) bool { return off+int64(n) <= headerSize }

// ReadDB turns p, read from the database file at off, into what SQLite
// sees: a whole page, a part of the header, or (SQLite 3.45's direct
// overflow reads, which a VFS cannot turn off before 3.48's
// SQLITE_IOCAP_SUBPAGE_READ) a part of a page, for which the whole page
// of ps bytes (0: read from the header) is read and opened. below reads
// the stored file. noWAL: see dbFile.
func (k *Codec) ReadDB(p []byte, off int64, ps int, noWAL bool, below func(p []byte, off int64) error) error {
	switch {
	case isPage(len(p), off):
		if k.decrypt(p, off/int64(len(p))+1) != nil {
			return ErrIORead
		}
		if off == 0 && noWAL {
			rollbackMode(p, 0)
		}
	case IsHeader(len(p), off):
		// The clear part of the header; its first 16 bytes read as
		// SQLite's magic once the codec recognizes them.
		if off < tursoHeader {
			var h [tursoHeader]byte
			if below(h[:], 0) != nil {
				return ErrIORead
			}
			if h != k.hdr {
				return ErrNotADB
			}
			copy(p, sqliteMagic[off:])
		}
		if noWAL {
			rollbackMode(p, off)
		}
	default:
		if ps == 0 {
			var h [2]byte // the page size, at 16 in the clear part
			if below(h[:], 16) != nil {
				return ErrIORead
			}
			if ps = int(binary.BigEndian.Uint16(h[:])); ps == 1 {
				ps = 65536
			}
		}
		start := off / int64(ps) * int64(ps)
		if !isPage(ps, start) || off+int64(len(p)) > start+int64(ps) {
			return ErrIORead // across pages: SQLite never reads so
		}
		buf := getBuf(ps)
		defer putBuf(buf)
		page := *buf
		if below(page, start) != nil || k.decrypt(page, start/int64(ps)+1) != nil {
			return ErrIORead
		}
		copy(p, page[off-start:])
	}
	return nil
}

// WriteDB writes page p, to be written to the database file at off,
// encrypted into out (of the same length).
func (k *Codec) WriteDB(out, p []byte, off int64) error {
	if !isPage(len(p), off) || k.encrypt(out, p, off/int64(len(p))+1) != nil {
		return ErrIOWrite
	}
	return nil
}

// WALPageSize is the page size in a write-ahead log's header h (its
// first 32 bytes); 0 when h is shorter.
func WALPageSize(h []byte) int {
	if len(h) < walHeader {
		return 0
	}
	return int(binary.BigEndian.Uint32(h[8:12]))
}

// WALFrameHeader reports whether a write of n bytes at off to a log of
// ps-byte pages is a frame's header alone, and the offset of that
// frame's page: SQLite writes a frame as its header, then the page.
func WALFrameHeader(n int, off int64, ps int) bool {
	return n == frameHeader && off >= walHeader && ps != 0 && (off-walHeader)%int64(frameHeader+ps) == 0
}

// storedPage1 reports whether page, as stored, is page 1 (the only one
// whose stored form depends on where it is: see ReadWAL).
func (k *Codec) storedPage1(page []byte) bool {
	return len(page) >= tursoHeader && string(page[:tursoHeader]) == string(k.hdr[:])
}

// DecryptWALPage is DecryptPage of a page read from a log without its
// frame header, so without its number: see ReadWAL.
func (k *Codec) DecryptWALPage(dst, src []byte) error {
	if k.storedPage1(src) {
		return k.DecryptPage(dst, src, 1)
	}
	return k.DecryptPage(dst, src, 2)
}

// walFrames calls fn for each whole page inside p, read from or written
// to a log of ps-byte pages at off: its offset in p, the offset of its
// frame header in the file, and its page number if that header is in p
// too (else 0).
func walFrames(p []byte, off int64, ps int, fn func(at int, hdr, pgno int64) error) error {
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

// ReadWAL decrypts, in place, every whole page in p, read from a log of
// ps-byte pages at off. On an error (a frame that does not decrypt) p is
// cleared: it reads as the end of the log, as a torn frame does (SQLite's
// checksum check stops there).
func (k *Codec) ReadWAL(p []byte, off int64, ps int) error {
	err := walFrames(p, off, ps, func(at int, hdr, pgno int64) error {
		page := p[at : at+ps]
		if pgno != 0 {
			return k.decrypt(page, pgno)
		}
		// SQLite reads a frame's page without its header. Only page 1
		// decrypts differently from the others, and only page 1 starts
		// with the codec's clear header as stored (ciphertext of another
		// page does with probability 2^-128): no header to read, no
		// trial decryption.
		if k.storedPage1(page) {
			return k.decrypt(page, 1)
		}
		return k.decrypt(page, 2)
	})
	if err != nil {
		clear(p)
	}
	return err
}

// WriteWAL encrypts p, to be written to a log of ps-byte pages at off,
// into out (of the same length): every whole page sealed, the rest (frame
// headers) copied. pgnoAt answers the page number of the frame whose
// header is at hdr in the file, for a page written without its header.
// It reports whether p held a page; when not, out is untouched and p is
// written as it is.
func (k *Codec) WriteWAL(out, p []byte, off int64, ps int, pgnoAt func(hdr int64) (int64, error)) (bool, error) {
	any := false
	err := walFrames(p, off, ps, func(at int, hdr, pgno int64) error {
		if pgno == 0 {
			var err error
			if pgno, err = pgnoAt(hdr); err != nil {
				return err
			}
		}
		if !any {
			// Frame headers go out as they are; a page alone (SQLite
			// writes a frame as its header, then its page) is all sealed.
			if len(p) != ps {
				copy(out, p)
			}
			any = true
		}
		return k.encrypt(out[at:at+ps], p[at:at+ps], pgno)
	})
	if err != nil {
		return false, ErrIOWrite
	}
	return any, nil
}

// JournalPageSize is the page size in a rollback journal's header h (at
// least its first 28 bytes); 0 when h is shorter.
func JournalPageSize(h []byte) int {
	if len(h) < 28 {
		return 0
	}
	return int(binary.BigEndian.Uint32(h[24:28]))
}

// IsJournalRecord reports whether an access of n bytes at off to a
// journal of ps-byte pages is a record's page: the header is whole
// sectors (at least 512 bytes) and a record 8 bytes longer than a page,
// so a page is at 4 mod 8, and nothing else SQLite reads or writes there
// is a page long.
func IsJournalRecord(n int, off int64, ps int) bool {
	return off%8 == 4 && isPage(n, 0) && n == ps
}

// ReadJournal decrypts a record's page in place. A page that does not
// decrypt is cleared: it fails its record's checksum, which ends the
// playback as a torn record does.
func (k *Codec) ReadJournal(p []byte) {
	if k.decrypt(p, journalPgno) != nil {
		clear(p)
	}
}

// WriteJournal encrypts a record's page p into out.
func (k *Codec) WriteJournal(out, p []byte) error {
	if k.encrypt(out, p, journalPgno) != nil {
		return ErrIOWrite
	}
	return nil
}

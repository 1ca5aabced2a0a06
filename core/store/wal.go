package store

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ApplyWAL returns the database file db with the committed transactions of
// its write-ahead log wal (the bytes of DB-wal) copied in, as a checkpoint
// would: what SQLite reads from the pair, as one file. It is for places
// without SQLite's file locking (the WebAssembly build loads a database
// from bytes); nothing may write the pair meanwhile.
//
// The log's format is SQLite's (https://sqlite.org/fileformat2.html#walformat):
// a 32-byte header (magic, version, page size, checkpoint sequence, two
// salts, a checksum), then frames of a 24-byte header (page number, the
// database size in pages after a commit frame or 0, the salts, a
// cumulative checksum) and one page. Frames count from the start up to the
// first that does not belong (other salts, a wrong checksum: left over
// from an earlier use of the file); of those, the frames up to the last
// commit frame are applied, later ones are a transaction that never
// committed. An empty or invalid log leaves db as it is.
func ApplyWAL(db, wal []byte) ([]byte, error) { return applyWAL(db, wal, nil) }

// applyWAL is ApplyWAL; with decrypt, the pages are encrypted (frames
// and file alike, internal/crypt): the checksums are over the plain pages
// that decrypt writes into its first argument, and a frame that does not
// decrypt ends the log as a wrong checksum does. The encrypted pages are
// copied, as they are.
func applyWAL(db, wal []byte, decrypt func(dst, page []byte, pgno int64) error) ([]byte, error) {
	const hdr, fhdr = 32, 24
	if len(wal) < hdr {
		return db, nil
	}
	magic := binary.BigEndian.Uint32(wal[0:])
	if magic&^1 != 0x377f0682 {
		return db, nil // not a log: SQLite ignores it too
	}
	bigEndian := magic&1 == 1 // the byte order of the checksums' words
	pageSize := int(binary.BigEndian.Uint32(wal[8:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return nil, fmt.Errorf("write-ahead log: page size %d", pageSize)
	}
	s0, s1 := walChecksum(bigEndian, wal[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(wal[24:]) || s1 != binary.BigEndian.Uint32(wal[28:]) {
		return db, nil // a header SQLite would not trust: the log is empty
	}
	salt1, salt2 := binary.BigEndian.Uint32(wal[16:]), binary.BigEndian.Uint32(wal[20:])

	type frame struct{ pgno, off int }
	var pending, committed []frame
	size := 0 // database size in pages at the last commit
	var plain []byte
	if decrypt != nil {
		plain = make([]byte, pageSize)
	}
	for off := hdr; off+fhdr+pageSize <= len(wal); off += fhdr + pageSize {
		h := wal[off : off+fhdr]
		if binary.BigEndian.Uint32(h[8:]) != salt1 || binary.BigEndian.Uint32(h[12:]) != salt2 {
			break
		}
		page := wal[off+fhdr : off+fhdr+pageSize]
		if decrypt != nil {
			if decrypt(plain, page, int64(binary.BigEndian.Uint32(h[0:]))) != nil {
				break
			}
			page = plain
		}
		s0, s1 = walChecksum(bigEndian, h[:8], s0, s1)
		s0, s1 = walChecksum(bigEndian, page, s0, s1)
		if s0 != binary.BigEndian.Uint32(h[16:]) || s1 != binary.BigEndian.Uint32(h[20:]) {
			break
		}
		pgno := int(binary.BigEndian.Uint32(h[0:]))
		if pgno == 0 {
			return nil, errors.New("write-ahead log: frame of page 0")
		}
		pending = append(pending, frame{pgno, off + fhdr})
		if commit := int(binary.BigEndian.Uint32(h[4:])); commit != 0 {
			committed = append(committed, pending...)
			pending = pending[:0]
			size = commit
		}
	}
	if len(committed) == 0 {
		return db, nil
	}
	if len(db) != 0 && len(db)%pageSize != 0 {
		return nil, fmt.Errorf("write-ahead log: database of %d bytes is not whole pages of %d", len(db), pageSize)
	}
	// A commit frame states the database size; SQLite writes every page
	// a transaction adds to the log, so the size can exceed the database
	// file by at most the pages of the committed frames. A larger claim
	// is a corrupt log, and must not become an allocation of up to
	// 2^32 pages.
	if size > len(db)/pageSize+len(committed) {
		return nil, fmt.Errorf("write-ahead log: commit of %d pages beyond a database of %d pages and %d logged pages", size, len(db)/pageSize, len(committed))
	}
	out := make([]byte, size*pageSize)
	copy(out, db)
	for _, f := range committed { // later frames of a page win
		if f.pgno <= size {
			copy(out[(f.pgno-1)*pageSize:f.pgno*pageSize], wal[f.off:f.off+pageSize])
		}
	}
	return out, nil
}

// walChecksum continues SQLite's WAL checksum (s0, s1) over b, whose
// length is a multiple of 8, read as 32-bit words in the log's byte order.
func walChecksum(bigEndian bool, b []byte, s0, s1 uint32) (uint32, uint32) {
	var order binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		order = binary.BigEndian
	}
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

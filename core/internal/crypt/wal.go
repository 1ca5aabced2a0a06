package crypt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// SQLite checksums WAL frames over the page as SQLite sees it (plain,
// below our VFS); Turso's engine over the page as stored (encrypted).
// A log that Turso's engine left behind (it keeps data in the -wal until
// a checkpoint) would read to SQLite as ending at its first frame. CheckWAL
// rewrites such a log's frame checksums, in place, to SQLite's: the pages
// stay as they are, and SQLite then recovers every committed frame. It
// must run before any connection opens the database.

func walSum(bigEndian bool, b []byte, s1, s2 uint32) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		var x0, x1 uint32
		if bigEndian {
			x0, x1 = binary.BigEndian.Uint32(b[i:]), binary.BigEndian.Uint32(b[i+4:])
		} else {
			x0, x1 = binary.LittleEndian.Uint32(b[i:]), binary.LittleEndian.Uint32(b[i+4:])
		}
		s1 += x0 + s2
		s2 += x1 + s1
	}
	return s1, s2
}

// CheckWAL converts a log at path written by Turso's engine (see above);
// a missing, empty or SQLite-checksummed log is left alone.
func CheckWAL(path string, k *Codec) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	end := k.AdoptWAL(data)
	if end == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("adopt the write-ahead log of Turso's engine: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data[:end], 0); err != nil {
		return err
	}
	return f.Sync()
}

// AdoptWAL is CheckWAL of a log's bytes, rewritten in place: it answers
// the length of the part it changed (0: none, the log is SQLite's own,
// empty or invalid).
func (k *Codec) AdoptWAL(data []byte) int {
	if len(data) < walHeader {
		return 0
	}
	magic := binary.BigEndian.Uint32(data[0:4])
	if magic&^1 != 0x377f0682 {
		return 0
	}
	be := magic&1 == 1
	ps := int(binary.BigEndian.Uint32(data[8:12]))
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return 0
	}
	s1, s2 := walSum(be, data[:24], 0, 0)
	if s1 != binary.BigEndian.Uint32(data[24:28]) || s2 != binary.BigEndian.Uint32(data[28:32]) {
		return 0 // an invalid header: SQLite ignores the log
	}
	salt := data[16:24]
	disk1, disk2 := s1, s2 // Turso's chain (stored pages)
	plain1, plain2 := s1, s2
	frame := frameHeader + ps
	converted, end := 0, 0
	page := make([]byte, ps)
	for off := walHeader; off+frame <= len(data); off += frame {
		h := data[off : off+frameHeader]
		body := data[off+frameHeader : off+frame]
		if string(h[8:16]) != string(salt) {
			break
		}
		c1, c2 := binary.BigEndian.Uint32(h[16:20]), binary.BigEndian.Uint32(h[20:24])
		d1, d2 := walSum(be, h[:8], disk1, disk2)
		d1, d2 = walSum(be, body, d1, d2)
		copy(page, body)
		if k.decrypt(page, int64(binary.BigEndian.Uint32(h[0:4]))) != nil {
			break
		}
		p1, p2 := walSum(be, h[:8], plain1, plain2)
		p1, p2 = walSum(be, page, p1, p2)
		switch {
		case c1 == p1 && c2 == p2:
			if converted == 0 {
				return 0 // SQLite's own log
			}
		case c1 == d1 && c2 == d2:
			binary.BigEndian.PutUint32(h[16:20], p1)
			binary.BigEndian.PutUint32(h[20:24], p2)
			converted++
			end = off + frame
		default:
			off = len(data) // the end of the valid frames
			continue
		}
		disk1, disk2, plain1, plain2 = d1, d2, p1, p2
	}
	if converted == 0 {
		return 0
	}
	return end
}

// Decrypt writes the plain page pgno of the stored page into dst (of the
// same length), for code that reads a log or a file without SQLite.
func (k *Codec) Decrypt(dst, page []byte, pgno int64) error {
	copy(dst, page)
	return k.decrypt(dst[:len(page)], pgno)
}

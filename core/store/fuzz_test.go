package store_test

import (
	"encoding/binary"
	"testing"

	"github.com/agentfs-go/agentfs/core/store"
)

// walSum is SQLite's WAL checksum, as store's (kept separate so that the
// test checks the format rather than the code under test).
func walSum(big bool, b []byte, s0, s1 uint32) (uint32, uint32) {
	var order binary.ByteOrder = binary.LittleEndian
	if big {
		order = binary.BigEndian
	}
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

// sealWAL makes random bytes pass the checks a log must pass before its
// frames are read: the magic, a valid page size, the header checksum,
// and in every whole frame the header's salts and a correct cumulative
// checksum. What is left random is what ApplyWAL must judge: page
// numbers, commit sizes, the database, and the bytes of the pages.
func sealWAL(wal []byte, pageShift uint8) []byte {
	const hdr, fhdr = 32, 24
	if len(wal) < hdr {
		return wal
	}
	w := append([]byte(nil), wal...)
	binary.BigEndian.PutUint32(w[0:], 0x377f0682|uint32(w[3]&1))
	pageSize := 512 << (pageShift % 8) // 512 .. 65536
	binary.BigEndian.PutUint32(w[8:], uint32(pageSize))
	big := w[3]&1 == 1
	s0, s1 := walSum(big, w[:24], 0, 0)
	binary.BigEndian.PutUint32(w[24:], s0)
	binary.BigEndian.PutUint32(w[28:], s1)
	for off := hdr; off+fhdr+pageSize <= len(w); off += fhdr + pageSize {
		h := w[off : off+fhdr]
		copy(h[8:16], w[16:24])
		s0, s1 = walSum(big, h[:8], s0, s1)
		s0, s1 = walSum(big, w[off+fhdr:off+fhdr+pageSize], s0, s1)
		binary.BigEndian.PutUint32(h[16:], s0)
		binary.BigEndian.PutUint32(h[20:], s1)
	}
	return w
}

// FuzzApplyWAL: a corrupted or hostile log gives an error or is ignored,
// never a panic, an index out of range, or an allocation beyond what the
// database and the log hold.
func FuzzApplyWAL(f *testing.F) {
	frame := func(pgno, commit uint32, fill byte) []byte {
		b := make([]byte, 24+512)
		binary.BigEndian.PutUint32(b[0:], pgno)
		binary.BigEndian.PutUint32(b[4:], commit)
		for i := 24; i < len(b); i++ {
			b[i] = fill
		}
		return b
	}
	hdr := make([]byte, 32)
	oneCommit := append(append(append([]byte(nil), hdr...), frame(1, 0, 1)...), frame(2, 2, 2)...)
	f.Add([]byte{}, []byte{}, uint8(0), true)
	f.Add(make([]byte, 512), hdr, uint8(0), true)
	f.Add(make([]byte, 1024), oneCommit, uint8(0), true)
	f.Add(make([]byte, 1000), oneCommit, uint8(0), true)                                             // db not whole pages
	f.Add([]byte{}, append(append([]byte(nil), hdr...), frame(3, 0xffffffff, 3)...), uint8(0), true) // huge commit size
	f.Add([]byte{}, append(append([]byte(nil), hdr...), frame(0, 1, 3)...), uint8(0), true)          // page 0
	f.Add(make([]byte, 512), oneCommit, uint8(7), true)                                              // 64 KiB pages, frames cut short
	f.Add(make([]byte, 512), oneCommit, uint8(0), false)
	f.Fuzz(func(t *testing.T, db, wal []byte, pageShift uint8, seal bool) {
		if seal {
			wal = sealWAL(wal, pageShift)
		}
		out, err := store.ApplyWAL(db, wal)
		if err != nil {
			if out != nil {
				t.Fatalf("error %v with %d bytes", err, len(out))
			}
			return
		}
		if limit := len(db) + len(wal); len(out) > limit {
			t.Fatalf("%d bytes out of a %d-byte database and a %d-byte log", len(out), len(db), len(wal))
		}
	})
}

// A commit frame claiming 2^32-1 pages is a corrupt log, refused
// without trying to allocate 256 TiB.
func TestAttack_Parse_WALHugeCommitSize(t *testing.T) {
	w := make([]byte, 32+24+512)
	binary.BigEndian.PutUint32(w[32:], 1)
	binary.BigEndian.PutUint32(w[36:], 0xffffffff)
	w = sealWAL(w, 0) // 512-byte pages
	out, err := store.ApplyWAL(make([]byte, 512), w)
	if err == nil || out != nil {
		t.Fatalf("ApplyWAL = %d bytes, %v; want an error", len(out), err)
	}
}

package sqlite

/*
#include <stdlib.h>
#include "cryptvfs.h"

static int64_t noteHits(void) { return __atomic_load_n(&agentfs_crypt_note_hits, __ATOMIC_RELAXED); }
*/
import "C"

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"runtime/cgo"
	"sync"
	"unsafe"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
)

// Encryption at rest on this driver: cryptvfs.c is a VFS over SQLite's
// own (the operating system's files, locks and WAL index) that passes
// the page data of a database, its write-ahead log and its rollback
// journal through internal/crypt's codec, the implementation of Turso's
// page format that ncruces' Go VFS (crypt.Register) uses too, so a file
// written by either opens in the other and in Turso's engine.

// SQLite's result codes the VFS answers with.
const (
	sqliteIOErrRead  = 10 | 1<<8 // SQLITE_IOERR_READ
	sqliteIOErrWrite = 10 | 3<<8 // SQLITE_IOERR_WRITE
	sqliteNotADB     = 26        // SQLITE_NOTADB
)

// RegisterCrypt registers a VFS that encrypts every database, WAL and
// rollback journal it opens with codec, and returns its name (for
// "?vfs=NAME") and a function that unregisters it, to call once no
// connection uses it. A VFS per database keeps the key out of URIs (a
// name that says nothing about it), and makes VACUUM INTO (snapshots)
// write encrypted copies too.
func RegisterCrypt(codec *crypt.Codec) (name string, unregister func(), err error) {
	// Registering a VFS initializes SQLite, after which go-libsql could
	// no longer configure it (see libsqlReady).
	libsqlReady()
	walVFS() // the VFS it wraps, when there is one
	var b [8]byte
	rand.Read(b[:])
	name = "agentfs-cgocrypt-" + hex.EncodeToString(b[:])
	h := cgo.NewHandle(codec)
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	v := C.agentfs_crypt_register(cname, C.uintptr_t(h))
	if v == nil {
		h.Delete()
		return "", nil, errors.New("sqlite: cannot register the encrypting VFS (out of memory)")
	}
	var once sync.Once
	return name, func() {
		once.Do(func() {
			C.agentfs_crypt_unregister(v)
			h.Delete()
		})
	}, nil
}

// CryptNoteHits is how many whole frames of encrypted logs this process
// answered from the VFS's notes instead of decrypting them (cryptvfs.c's
// frameNote): for tests that must see that path taken.
func CryptNoteHits() int64 { return int64(C.noteHits()) }

// fileState is agentfs_state of cryptvfs.h: per open file.
type fileState struct {
	size, lastHdr, lastPgno int64
}

// readBelow reads len(p) bytes at off from the root VFS's file.
func readBelow(file C.uintptr_t, p []byte, off int64) error {
	if C.agentfs_crypt_read(file, unsafe.Pointer(&p[0]), C.int(len(p)), C.sqlite3_int64(off)) != sqliteOK {
		return errors.New("sqlite: short read")
	}
	return nil
}

// pageSize is the page size of a log or journal, read from its header
// on the file when not known yet (0: no header yet).
func (st *fileState) pageSize(kind C.int, file C.uintptr_t) int {
	if st.size == 0 {
		var h [32]byte
		if kind == C.AGENTFS_WAL {
			if readBelow(file, h[:32], 0) == nil {
				st.size = int64(crypt.WALPageSize(h[:32]))
			}
		} else if readBelow(file, h[:28], 0) == nil {
			st.size = int64(crypt.JournalPageSize(h[:28]))
		}
	}
	return int(st.size)
}

// agentfsCryptRead transforms the n bytes at p that the root VFS read at
// off with result rc (SQLITE_OK, or a short read zero-filled): it answers
// the read's result.
//
//export agentfsCryptRead
func agentfsCryptRead(codec C.uintptr_t, kind C.int, cst *C.agentfs_state, file C.uintptr_t, p unsafe.Pointer, n C.int, off C.sqlite3_int64, rc C.int) C.int {
	k := cgo.Handle(codec).Value().(*crypt.Codec)
	st := (*fileState)(unsafe.Pointer(cst))
	b := unsafe.Slice((*byte)(p), int(n))
	o := int64(off)
	switch kind {
	case C.AGENTFS_DB:
		if rc != sqliteOK {
			return rc // a short read at the end of the file (or of an empty one)
		}
		if crypt.IsPage(len(b), o) {
			st.size = int64(len(b)) // for a direct overflow read (see ReadDB)
		}
		if err := k.ReadDB(b, o, int(st.size), false, func(b []byte, at int64) error { return readBelow(file, b, at) }); err != nil {
			if err == crypt.ErrNotADB {
				return sqliteNotADB
			}
			return sqliteIOErrRead
		}
	case C.AGENTFS_WAL:
		if rc != sqliteOK {
			// Past the end of the log: nothing of it reads as a frame.
			clear(b)
			return rc
		}
		if o == 0 && len(b) >= 32 {
			st.size = int64(crypt.WALPageSize(b))
		}
		// A frame that does not decrypt reads as the end of the log.
		k.ReadWAL(b, o, st.pageSize(kind, file))
	case C.AGENTFS_JOURNAL:
		if rc == sqliteOK && crypt.IsJournalRecord(len(b), o, st.pageSize(kind, file)) {
			k.ReadJournal(b)
		}
	}
	return rc
}

// agentfsCryptOpenPage opens page pgno of n bytes (0: a page of a log
// read without its frame header), stored at src (a mapping of the file:
// read only), into dst: it answers SQLITE_OK or SQLITE_IOERR_READ.
//
//export agentfsCryptOpenPage
func agentfsCryptOpenPage(codec C.uintptr_t, dst, src unsafe.Pointer, n C.int, pgno C.sqlite3_int64) C.int {
	k := cgo.Handle(codec).Value().(*crypt.Codec)
	d, s := unsafe.Slice((*byte)(dst), int(n)), unsafe.Slice((*byte)(src), int(n))
	var err error
	if pgno <= 0 {
		err = k.DecryptWALPage(d, s)
	} else {
		err = k.DecryptPage(d, s, int64(pgno))
	}
	if err != nil {
		return sqliteIOErrRead
	}
	return sqliteOK
}

// agentfsCryptWrite encrypts the n bytes at p, to be written at off,
// into out: it answers 0 (write out), -1 (write p: no page in it) or
// SQLite's error code.
//
//export agentfsCryptWrite
func agentfsCryptWrite(codec C.uintptr_t, kind C.int, cst *C.agentfs_state, file C.uintptr_t, p, out unsafe.Pointer, n C.int, off C.sqlite3_int64) C.int {
	k := cgo.Handle(codec).Value().(*crypt.Codec)
	st := (*fileState)(unsafe.Pointer(cst))
	b := unsafe.Slice((*byte)(p), int(n))
	dst := unsafe.Slice((*byte)(out), int(n))
	o := int64(off)
	switch kind {
	case C.AGENTFS_DB:
		st.size = int64(len(b))
		if k.WriteDB(dst, b, o) != nil {
			return sqliteIOErrWrite
		}
		return 0
	case C.AGENTFS_WAL:
		if o == 0 && len(b) >= 32 {
			st.size = int64(crypt.WALPageSize(b))
		} else if o >= 32 && st.pageSize(kind, file) == 0 {
			return sqliteIOErrWrite // a frame before its log's header: never in the clear
		}
		ps := int(st.size)
		if crypt.WALFrameHeader(len(b), o, ps) {
			// SQLite writes a frame as its header, then the page: the
			// page's number is known without reading it back.
			st.lastHdr, st.lastPgno = o, int64(binary.BigEndian.Uint32(b[:4]))
			return -1
		}
		enc, err := k.WriteWAL(dst, b, o, ps, func(hdr int64) (int64, error) {
			if hdr == st.lastHdr && hdr != 0 {
				return st.lastPgno, nil
			}
			var pg [4]byte
			if err := readBelow(file, pg[:], hdr); err != nil {
				return 0, err
			}
			return int64(binary.BigEndian.Uint32(pg[:])), nil
		})
		switch {
		case err != nil:
			return sqliteIOErrWrite
		case !enc:
			return -1
		}
		return 0
	case C.AGENTFS_JOURNAL:
		if o == 0 && len(b) >= 28 {
			st.size = int64(crypt.JournalPageSize(b))
		}
		if !crypt.IsJournalRecord(len(b), o, st.pageSize(kind, file)) {
			return -1
		}
		if k.WriteJournal(dst, b) != nil {
			return sqliteIOErrWrite
		}
		return 0
	}
	return -1
}

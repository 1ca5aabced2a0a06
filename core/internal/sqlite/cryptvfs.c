// An encrypting VFS for the cgo driver: it wraps SQLite's default VFS (the
// operating system's: its locking, shared memory and WAL index stay
// SQLite's own) and hands the page data of the main database, its
// write-ahead log and rollback journal to Go (cryptvfs.go), which seals
// and opens pages with internal/crypt's codec: the same implementation of
// Turso's page format as ncruces' Go VFS uses. One call into Go per read
// or write (a page, or a whole frame), never per byte range: a cgo
// callback costs about as much as a small memcpy of a page.

#include <stdlib.h>
#include <string.h>

#include "cryptvfs.h"
#include "_cgo_export.h"

int sqlite3_vfs_register(sqlite3_vfs *, int makeDflt);
int sqlite3_vfs_unregister(sqlite3_vfs *);
sqlite3_vfs *sqlite3_vfs_find(const char *);
sqlite3_file *sqlite3_database_file_object(const char *);

#define SQLITE_OK 0
#define SQLITE_NOMEM 7
#define SQLITE_IOERR_SHORT_READ (10 | (2 << 8))
#define SQLITE_OPEN_MAIN_DB 0x00000100
#define SQLITE_OPEN_MAIN_JOURNAL 0x00000800
#define SQLITE_OPEN_WAL 0x00080000
#define SQLITE_OPEN_MEMORY 0x00000080
#define SQLITE_FCNTL_MMAP_SIZE 18
#define SQLITE_SHM_UNLOCK 1
#define SQLITE_SHM_LOCK 2
#define SQLITE_SHM_EXCLUSIVE 8
#define WAL_CKPT_LOCK 1

// The device characteristics passed on: none that lets SQLite bypass
// xWrite's whole pages (atomic and batch-atomic writes).
#define KEPT_IOCAP (0x200 | 0x400 | 0x800 | 0x1000 | 0x2000)

typedef struct {
	sqlite3_vfs base;
	sqlite3_vfs *root;
	uintptr_t codec;
} cvfs;

typedef struct cfile cfile;
struct cfile {
	sqlite3_file base;
	sqlite3_file *real; // the root VFS's file, allocated after this one
	uintptr_t codec;
	int kind;
	agentfs_state st;
	unsigned char *buf; // the encrypted copy of a write
	int cap;
	// A checkpoint copies pages from the log into the database file: it
	// reads a frame's page (opened on its way in) and writes it at once.
	// The page is sealed in the log as it would be in the file (Turso's
	// format binds no page number but page 1's), so the database file's
	// write can take the stored bytes instead of sealing the page again:
	// one AEAD pass per page less. The log's file keeps the database's
	// (db); the database's keeps, while its connection holds the
	// checkpoint lock (ckpt), the last page read from the log both as
	// stored and as opened (slot: 2*slotN bytes, slotOK when valid). A
	// write takes the stored bytes only if it is that page byte for byte.
	cfile *db;
	int ckpt;
	unsigned char *slot;
	int slotN, slotCap, slotOK;
};

#define ROUND8(n) (((n) + 7) & ~7)
#define REAL(f) (((cfile *)(f))->real)
#define ROOT(v) (((cvfs *)(v))->root)

static int cClose(sqlite3_file *f) {
	cfile *c = (cfile *)f;
	int rc = SQLITE_OK;
	if (c->real->pMethods) rc = c->real->pMethods->xClose(c->real);
	c->real->pMethods = 0;
	free(c->buf);
	c->buf = 0;
	free(c->slot);
	c->slot = 0;
	c->slotOK = 0;
	return rc;
}

static int cRead(sqlite3_file *f, void *p, int n, sqlite3_int64 off) {
	cfile *c = (cfile *)f;
	int rc = c->real->pMethods->xRead(c->real, p, n, off);
	if (c->kind == 0 || (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)) return rc;
	cfile *db = c->kind == AGENTFS_WAL && rc == SQLITE_OK ? c->db : 0;
	if (db && db->ckpt) {
		db->slotOK = 0;
		if (db->slotCap < n) {
			unsigned char *b = realloc(db->slot, 2 * (size_t)n);
			if (b) {
				db->slot = b;
				db->slotCap = n;
			}
		}
		if (db->slotCap >= n) memcpy(db->slot + n, p, n); // as stored
	}
	c->st.whole = 0;
	rc = agentfsCryptRead(c->codec, c->kind, &c->st, (uintptr_t)c->real, p, n, off, rc);
	if (db && db->ckpt && rc == SQLITE_OK && c->st.whole && db->slotCap >= n) {
		memcpy(db->slot, p, n); // as opened
		db->slotN = n;
		db->slotOK = 1;
	}
	return rc;
}

static int cWrite(sqlite3_file *f, const void *p, int n, sqlite3_int64 off) {
	cfile *c = (cfile *)f;
	if (c->kind == 0) return c->real->pMethods->xWrite(c->real, p, n, off);
	if (c->kind == AGENTFS_DB && c->slotOK) {
		c->slotOK = 0;
		if (n == c->slotN && off != 0 && memcmp(c->slot, p, n) == 0) {
			return c->real->pMethods->xWrite(c->real, c->slot + n, n, off);
		}
	}
	if (c->cap < n) {
		unsigned char *b = realloc(c->buf, n);
		if (!b) return SQLITE_NOMEM;
		c->buf = b;
		c->cap = n;
	}
	// Go answers -1 (write p as it is), 0 (write the encrypted copy) or
	// SQLite's error code.
	int rc = agentfsCryptWrite(c->codec, c->kind, &c->st, (uintptr_t)c->real, (void *)p, c->buf, n, off);
	if (rc < 0) return c->real->pMethods->xWrite(c->real, p, n, off);
	if (rc > 0) return rc;
	return c->real->pMethods->xWrite(c->real, c->buf, n, off);
}

static int cTruncate(sqlite3_file *f, sqlite3_int64 size) {
	cfile *c = (cfile *)f;
	if (c->kind == AGENTFS_JOURNAL && size == 0) c->st.size = 0;
	return c->real->pMethods->xTruncate(c->real, size);
}

static int cSync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int cFileSize(sqlite3_file *f, sqlite3_int64 *s) { return REAL(f)->pMethods->xFileSize(REAL(f), s); }
static int cLock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int cUnlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int cCheckReservedLock(sqlite3_file *f, int *r) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }

static int cFileControl(sqlite3_file *f, int op, void *arg) {
	cfile *c = (cfile *)f;
	if (op == SQLITE_FCNTL_MMAP_SIZE && c->kind != 0) {
		// No memory mapping: SQLite must read pages through xRead.
		*(sqlite3_int64 *)arg = 0;
		return SQLITE_OK;
	}
	return c->real->pMethods->xFileControl(c->real, op, arg);
}

static int cSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }

static int cDeviceCharacteristics(sqlite3_file *f) {
	cfile *c = (cfile *)f;
	int d = c->real->pMethods->xDeviceCharacteristics(c->real);
	return c->kind == 0 ? d : d & KEPT_IOCAP;
}

static int cShmMap(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp) {
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, pp);
}
static int cShmLock(sqlite3_file *f, int off, int n, int flags) {
	cfile *c = (cfile *)f;
	int rc = c->real->pMethods->xShmLock(c->real, off, n, flags);
	if (c->kind == AGENTFS_DB && off <= WAL_CKPT_LOCK && off + n > WAL_CKPT_LOCK) {
		if (flags & SQLITE_SHM_UNLOCK) {
			c->ckpt = 0;
			c->slotOK = 0;
		} else if (rc == SQLITE_OK && (flags & SQLITE_SHM_LOCK) && (flags & SQLITE_SHM_EXCLUSIVE)) {
			c->ckpt = 1;
		}
	}
	return rc;
}
static void cShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int cShmUnmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }

// Version 2: shared memory for WAL mode, no xFetch (memory mapping would
// hand SQLite stored, encrypted pages).
static const sqlite3_io_methods cMethods = {
	2, cClose, cRead, cWrite, cTruncate, cSync, cFileSize, cLock, cUnlock,
	cCheckReservedLock, cFileControl, cSectorSize, cDeviceCharacteristics,
	cShmMap, cShmLock, cShmBarrier, cShmUnmap, 0, 0,
};

// Version 1, for a file of the root VFS without shared memory.
static const sqlite3_io_methods cMethods1 = {
	1, cClose, cRead, cWrite, cTruncate, cSync, cFileSize, cLock, cUnlock,
	cCheckReservedLock, cFileControl, cSectorSize, cDeviceCharacteristics,
	0, 0, 0, 0, 0, 0,
};

static int cOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out) {
	cvfs *v = (cvfs *)vfs;
	cfile *c = (cfile *)f;
	memset(c, 0, sizeof *c);
	c->real = (sqlite3_file *)((char *)f + ROUND8(sizeof(cfile)));
	c->real->pMethods = 0;
	c->codec = v->codec;
	if (flags & SQLITE_OPEN_MAIN_DB) {
		c->kind = AGENTFS_DB;
	} else if (flags & SQLITE_OPEN_WAL) {
		c->kind = AGENTFS_WAL;
	} else if ((flags & SQLITE_OPEN_MAIN_JOURNAL) && !(flags & SQLITE_OPEN_MEMORY)) {
		c->kind = AGENTFS_JOURNAL;
	}
	// Other files (temporary databases and journals, statement journals)
	// pass through: the store keeps temporary data in memory
	// (temp_store=MEMORY).
	int rc = v->root->xOpen(v->root, name, c->real, flags, out);
	const sqlite3_io_methods *m = c->real->pMethods;
	f->pMethods = !m ? 0 : m->iVersion >= 2 ? &cMethods : &cMethods1;
	if (c->kind == AGENTFS_WAL && name) {
		// The database file this log belongs to, when it is one of ours
		// (of this VFS: the same codec).
		cfile *db = (cfile *)sqlite3_database_file_object(name);
		if (db && db->base.pMethods == &cMethods && db->kind == AGENTFS_DB && db->codec == c->codec) c->db = db;
	}
	return rc;
}

static int cDelete(sqlite3_vfs *v, const char *n, int s) { return ROOT(v)->xDelete(ROOT(v), n, s); }
static int cAccess(sqlite3_vfs *v, const char *n, int fl, int *r) { return ROOT(v)->xAccess(ROOT(v), n, fl, r); }
static int cFullPathname(sqlite3_vfs *v, const char *n, int k, char *o) {
	return ROOT(v)->xFullPathname(ROOT(v), n, k, o);
}
static void *cDlOpen(sqlite3_vfs *v, const char *n) { return ROOT(v)->xDlOpen(ROOT(v), n); }
static void cDlError(sqlite3_vfs *v, int k, char *m) { ROOT(v)->xDlError(ROOT(v), k, m); }
static void (*cDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { return ROOT(v)->xDlSym(ROOT(v), h, s); }
static void cDlClose(sqlite3_vfs *v, void *h) { ROOT(v)->xDlClose(ROOT(v), h); }
static int cRandomness(sqlite3_vfs *v, int k, char *o) { return ROOT(v)->xRandomness(ROOT(v), k, o); }
static int cSleep(sqlite3_vfs *v, int us) { return ROOT(v)->xSleep(ROOT(v), us); }
static int cCurrentTime(sqlite3_vfs *v, double *t) { return ROOT(v)->xCurrentTime(ROOT(v), t); }
static int cGetLastError(sqlite3_vfs *v, int k, char *m) { return ROOT(v)->xGetLastError(ROOT(v), k, m); }
static int cCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *t) { return ROOT(v)->xCurrentTimeInt64(ROOT(v), t); }
static int cSetSystemCall(sqlite3_vfs *v, const char *n, sqlite3_syscall_ptr p) {
	return ROOT(v)->xSetSystemCall(ROOT(v), n, p);
}
static sqlite3_syscall_ptr cGetSystemCall(sqlite3_vfs *v, const char *n) { return ROOT(v)->xGetSystemCall(ROOT(v), n); }
static const char *cNextSystemCall(sqlite3_vfs *v, const char *n) { return ROOT(v)->xNextSystemCall(ROOT(v), n); }

sqlite3_vfs *agentfs_crypt_register(const char *name, uintptr_t codec) {
	sqlite3_vfs *root = sqlite3_vfs_find(0);
	if (!root) return 0;
	cvfs *v = calloc(1, sizeof *v);
	if (!v) return 0;
	char *n = strdup(name);
	if (!n) {
		free(v);
		return 0;
	}
	v->root = root;
	v->codec = codec;
	sqlite3_vfs *b = &v->base;
	b->iVersion = root->iVersion < 3 ? root->iVersion : 3;
	b->szOsFile = ROUND8(sizeof(cfile)) + root->szOsFile;
	b->mxPathname = root->mxPathname;
	b->zName = n;
	b->xOpen = cOpen;
	b->xDelete = cDelete;
	b->xAccess = cAccess;
	b->xFullPathname = cFullPathname;
	b->xDlOpen = cDlOpen;
	b->xDlError = cDlError;
	b->xDlSym = cDlSym;
	b->xDlClose = cDlClose;
	b->xRandomness = cRandomness;
	b->xSleep = cSleep;
	b->xCurrentTime = cCurrentTime;
	b->xGetLastError = cGetLastError;
	if (b->iVersion >= 2) b->xCurrentTimeInt64 = cCurrentTimeInt64;
	if (b->iVersion >= 3) {
		b->xSetSystemCall = cSetSystemCall;
		b->xGetSystemCall = cGetSystemCall;
		b->xNextSystemCall = cNextSystemCall;
	}
	if (sqlite3_vfs_register(b, 0) != SQLITE_OK) {
		free(n);
		free(v);
		return 0;
	}
	return b;
}

void agentfs_crypt_unregister(sqlite3_vfs *b) {
	sqlite3_vfs_unregister(b);
	free((char *)b->zName);
	free(b);
}

int agentfs_crypt_read(uintptr_t file, void *p, int n, sqlite3_int64 off) {
	sqlite3_file *f = (sqlite3_file *)file;
	return f->pMethods->xRead(f, p, n, off);
}

// A VFS over SQLite's "unix" VFS that writes the frames a transaction
// appends to the write-ahead log with one system call instead of two per
// frame.
//
// SQLite writes a WAL frame as its 24-byte header, then its page, with a
// pwrite each (walWriteOneFrame), and a commit's frames one after the
// other. A small commit (tools.record: 4 pages) thus made 8 pwrites, and
// a pwrite costs about as much whatever its size here (~0.5 us for 24
// bytes on ext4, ~1 us for a 4 KiB page): one write of the 16 KiB
// instead saves a third of a small commit's time in SQLite.
//
// How: a 24-byte write to the log that follows a write is held back (not
// one that follows a read: walRewriteChecksums reads a frame before it
// rewrites its header), and so are the page that comes right after it
// and the frames that follow them without a gap, up to the commit frame
// (the one whose header holds the database's size): that write sends all
// of them, in one pwrite, before SQLite publishes the transaction in the
// WAL index. Anything else done with the file (a read, a write elsewhere,
// a sync, a size, a close) first writes what is held, as it was asked,
// and so does the end of the write transaction (the database file's
// unlock of the log's write lock in the -shm, for a transaction that
// rolled back after spilling pages into the log) and any change SQLite
// publishes in the WAL index (xShmBarrier). So what is held is always
// frames of a write transaction in progress, which nobody else can see
// yet and a crash would lose anyway; the bytes and their order in the
// file are SQLite's own. A log whose database file is not one of this
// VFS's (sqlite3_database_file_object) holds a header until its page
// only. The database file is the unix VFS's with those two calls
// watched; other files (its -shm, which the unix VFS opens itself,
// journals) are the unix VFS's own objects.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// sqlite3.h's layouts (a stable ABI; go-libsql ships no header), shared
// with the encrypting VFS.
#include "cryptvfs.h"

int sqlite3_vfs_register(sqlite3_vfs *, int makeDflt);
sqlite3_vfs *sqlite3_vfs_find(const char *);
sqlite3_file *sqlite3_database_file_object(const char *);

#define SQLITE_OK 0
#define SQLITE_NOMEM 7
#define SQLITE_CANTOPEN 14
#define SQLITE_OPEN_MAIN_DB 0x00000100
#define SQLITE_OPEN_WAL 0x00080000
#define SQLITE_SHM_UNLOCK 1
#define WAL_WRITE_LOCK 0 // the -shm lock a writer of the log holds
#define WAL_HDR 32       // the log's own header
#define FRAME_HDR 24     // a frame's header
#define MAX_PAGE 65536   // SQLite's largest page
// Bytes of frames held back before another header joins them (past it,
// those held so far are written first): a large transaction's frames go
// out in writes of 64 to 128 KiB. The unix VFS writes less than 128 KiB
// in one call (its seekAndWrite keeps the low 17 bits of the size, and a
// short write is SQLITE_FULL): BATCH_MAX + a header + the largest page
// stays below that.
#define BATCH_MAX (0x1ffff - FRAME_HDR - MAX_PAGE)

#define ROUND8(n) (((n) + 7) & ~7)

typedef struct wfile wfile;

// A database file: the unix VFS's, and the log of the same connection
// (SQLite opens it after the database and closes it before).
typedef struct {
	sqlite3_file base;
	sqlite3_file *real; // the unix VFS's file, right after this struct
	wfile *wal;
} dfile;

struct wfile {
	sqlite3_file base;
	sqlite3_file *real; // the unix VFS's file, right after this struct
	dfile *db;          // its database's file; NULL: frames are not held past their page
	int afterWrite;     // the last thing done with the file was a write
	// The frames held back: len bytes for offset off, whole frames and,
	// when hdrOnly, a last header whose page has not come yet.
	unsigned char *buf;
	int cap, len, hdrOnly;
	sqlite3_int64 off;
};

// Frame headers that left alone (held, then followed by anything but
// their page): 0 unless SQLite writes its log in a way this file does not
// expect. Read by the tests.
static long unmerged;

long agentfs_wal_unmerged(void) { return __atomic_load_n(&unmerged, __ATOMIC_RELAXED); }

// Bytes held by all log files: 0 outside of write transactions. Read by
// the tests.
static long held;

long agentfs_wal_held(void) { return __atomic_load_n(&held, __ATOMIC_RELAXED); }

static void holding(wfile *w, int len) {
	__atomic_fetch_add(&held, (long)(len - w->len), __ATOMIC_RELAXED);
	w->len = len;
}

// release writes the held frames as SQLite asked for them.
static int release(wfile *w) {
	if (w->len == 0) return SQLITE_OK;
	if (w->hdrOnly) __atomic_fetch_add(&unmerged, 1, __ATOMIC_RELAXED);
	int n = w->len;
	holding(w, 0);
	w->hdrOnly = 0;
	return w->real->pMethods->xWrite(w->real, w->buf, n, w->off);
}

// room makes buf hold at least n bytes.
static int room(wfile *w, int n) {
	if (n <= w->cap) return 1;
	int c = w->cap ? w->cap : 4 * (FRAME_HDR + 4096);
	while (c < n) c *= 2;
	unsigned char *b = realloc(w->buf, c);
	if (!b) return 0;
	w->buf = b;
	w->cap = c;
	return 1;
}

static int wClose(sqlite3_file *f) {
	wfile *w = (wfile *)f;
	int rc = release(w);
	if (w->db) w->db->wal = 0;
	w->db = 0;
	int rc2 = w->real->pMethods->xClose(w->real);
	free(w->buf);
	w->buf = 0;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wRead(sqlite3_file *f, void *p, int n, sqlite3_int64 off) {
	wfile *w = (wfile *)f;
	int rc = release(w);
	if (rc != SQLITE_OK) return rc;
	w->afterWrite = 0;
	return w->real->pMethods->xRead(w->real, p, n, off);
}

static int wWrite(sqlite3_file *f, const void *p, int n, sqlite3_int64 off) {
	wfile *w = (wfile *)f;
	if (w->len) {
		sqlite3_int64 end = w->off + w->len;
		if (w->hdrOnly && off == end && n > 0 && n <= MAX_PAGE && room(w, w->len + n)) {
			// The page of the last header held.
			const unsigned char *h = w->buf + w->len - FRAME_HDR;
			memcpy(w->buf + w->len, p, n);
			holding(w, w->len + n);
			w->hdrOnly = 0;
			// Bytes 4-7 of a commit frame's header are the database's
			// size in pages, 0 in other frames: the transaction's
			// frames leave now, together, before SQLite publishes them.
			if (h[4] | h[5] | h[6] | h[7] || !w->db) return release(w);
			return SQLITE_OK;
		}
		if (!w->hdrOnly && n == FRAME_HDR && off == end && w->len < BATCH_MAX && w->db && room(w, w->len + FRAME_HDR)) {
			// The next frame's header.
			memcpy(w->buf + w->len, p, FRAME_HDR);
			holding(w, w->len + FRAME_HDR);
			w->hdrOnly = 1;
			return SQLITE_OK;
		}
		int rc = release(w);
		if (rc != SQLITE_OK) return rc;
	}
	if (n == FRAME_HDR && off >= WAL_HDR && w->afterWrite && room(w, FRAME_HDR)) {
		memcpy(w->buf, p, FRAME_HDR);
		holding(w, FRAME_HDR);
		w->hdrOnly = 1;
		w->off = off;
		return SQLITE_OK;
	}
	w->afterWrite = 1;
	return w->real->pMethods->xWrite(w->real, p, n, off);
}

static int wTruncate(sqlite3_file *f, sqlite3_int64 size) {
	wfile *w = (wfile *)f;
	int rc = release(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xTruncate(w->real, size);
}

static int wSync(sqlite3_file *f, int flags) {
	wfile *w = (wfile *)f;
	int rc = release(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xSync(w->real, flags);
}

static int wFileSize(sqlite3_file *f, sqlite3_int64 *size) {
	wfile *w = (wfile *)f;
	int rc = release(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xFileSize(w->real, size);
}

static int wLock(sqlite3_file *f, int l) {
	wfile *w = (wfile *)f;
	int rc = release(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xLock(w->real, l);
}

static int wUnlock(sqlite3_file *f, int l) {
	wfile *w = (wfile *)f;
	int rc = release(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xUnlock(w->real, l);
}

static int wCheckReservedLock(sqlite3_file *f, int *out) {
	wfile *w = (wfile *)f;
	return w->real->pMethods->xCheckReservedLock(w->real, out);
}

static int wFileControl(sqlite3_file *f, int op, void *arg) {
	wfile *w = (wfile *)f;
	int rc = release(w);
	return rc != SQLITE_OK ? rc : w->real->pMethods->xFileControl(w->real, op, arg);
}

static int wSectorSize(sqlite3_file *f) {
	wfile *w = (wfile *)f;
	return w->real->pMethods->xSectorSize(w->real);
}

static int wDeviceCharacteristics(sqlite3_file *f) {
	wfile *w = (wfile *)f;
	return w->real->pMethods->xDeviceCharacteristics(w->real);
}

// Version 1: a log file has no shared memory and is not mapped.
static const sqlite3_io_methods wMethods = {
	1, wClose, wRead, wWrite, wTruncate, wSync, wFileSize, wLock, wUnlock,
	wCheckReservedLock, wFileControl, wSectorSize, wDeviceCharacteristics,
};

// The database file's methods: the unix VFS's, and what a log of the
// connection holds is written before the write lock of the log is
// released (a transaction that ended without its commit frame: rolled
// back after spilling pages into the log), or the WAL index is changed
// (xShmBarrier: SQLite publishing frames; its commit frame has already
// sent them): nothing is ever held outside of a write transaction.
#define REAL(f) (((dfile *)(f))->real)
static int dClose(sqlite3_file *f) {
	dfile *d = (dfile *)f;
	if (d->wal) d->wal->db = 0;
	d->wal = 0;
	return d->real->pMethods->xClose(d->real);
}
static int dRead(sqlite3_file *f, void *p, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), p, n, o); }
static int dWrite(sqlite3_file *f, const void *p, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xWrite(REAL(f), p, n, o); }
static int dTruncate(sqlite3_file *f, sqlite3_int64 n) { return REAL(f)->pMethods->xTruncate(REAL(f), n); }
static int dSync(sqlite3_file *f, int fl) { return REAL(f)->pMethods->xSync(REAL(f), fl); }
static int dFileSize(sqlite3_file *f, sqlite3_int64 *n) { return REAL(f)->pMethods->xFileSize(REAL(f), n); }
static int dLock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int dUnlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int dCheckReservedLock(sqlite3_file *f, int *r) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
static int dFileControl(sqlite3_file *f, int op, void *a) { return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int dSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int dDeviceCharacteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int dShmMap(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp) {
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, pp);
}
static int dShmLock(sqlite3_file *f, int off, int n, int flags) {
	dfile *d = (dfile *)f;
	int rc = SQLITE_OK;
	if (d->wal && (flags & SQLITE_SHM_UNLOCK) && off <= WAL_WRITE_LOCK && off + n > WAL_WRITE_LOCK) rc = release(d->wal);
	int rc2 = d->real->pMethods->xShmLock(d->real, off, n, flags);
	return rc != SQLITE_OK ? rc : rc2;
}
static void dShmBarrier(sqlite3_file *f) {
	dfile *d = (dfile *)f;
	if (d->wal) release(d->wal); // a failed write shows at the next one, or the recovery of a crash
	d->real->pMethods->xShmBarrier(d->real);
}
static int dShmUnmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }
static int dFetch(sqlite3_file *f, sqlite3_int64 o, int n, void **pp) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, pp); }
static int dUnfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static const sqlite3_io_methods dMethods = {
	3, dClose, dRead, dWrite, dTruncate, dSync, dFileSize, dLock, dUnlock,
	dCheckReservedLock, dFileControl, dSectorSize, dDeviceCharacteristics,
	dShmMap, dShmLock, dShmBarrier, dShmUnmap, dFetch, dUnfetch,
};

static sqlite3_vfs *root;

// For a VFS over this one (cryptvfs.c): agentfs_wal_flush writes what the
// log file f (of this VFS) holds, before a read that does not go through
// it (a mapping of the file); agentfs_wal_link tells the log wal of this
// VFS which database file of this VFS is its connection's, when that
// VFS's database file wraps it (sqlite3_database_file_object finds the
// wrapper, not this VFS's file). Both ignore files of other VFSes.
int agentfs_wal_flush(sqlite3_file *f) {
	if (!f || f->pMethods != &wMethods) return SQLITE_OK;
	wfile *w = (wfile *)f;
	w->afterWrite = 0; // a read follows, as wRead's
	return release(w);
}

void agentfs_wal_link(sqlite3_file *wal, sqlite3_file *db) {
	if (!wal || !db || wal->pMethods != &wMethods || db->pMethods != &dMethods) return;
	wfile *w = (wfile *)wal;
	dfile *d = (dfile *)db;
	d->wal = w;
	w->db = d;
}

static int wOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out) {
	(void)vfs;
	if (flags & SQLITE_OPEN_MAIN_DB) {
		dfile *d = (dfile *)f;
		memset(d, 0, sizeof *d);
		d->real = (sqlite3_file *)((char *)f + ROUND8(sizeof(dfile)));
		d->real->pMethods = 0;
		int rc = root->xOpen(root, name, d->real, flags, out);
		const sqlite3_io_methods *m = d->real->pMethods;
		if (m && (m->iVersion < 3 || !m->xShmLock)) {
			// Not the unix VFS this file passes calls to (its database
			// files have shared memory and mappings: version 3).
			m->xClose(d->real);
			f->pMethods = 0;
			return SQLITE_CANTOPEN;
		}
		f->pMethods = m ? &dMethods : 0;
		return rc;
	}
	if (!(flags & SQLITE_OPEN_WAL)) {
		// Neither a database nor a log: the unix VFS's file itself, in
		// the same memory.
		return root->xOpen(root, name, f, flags, out);
	}
	wfile *w = (wfile *)f;
	memset(w, 0, sizeof *w);
	w->real = (sqlite3_file *)((char *)f + ROUND8(sizeof(wfile)));
	w->real->pMethods = 0;
	w->afterWrite = 1;
	int rc = root->xOpen(root, name, w->real, flags, out);
	// SQLite calls xClose only on a file whose pMethods is set, which the
	// unix VFS leaves unset when its open fails.
	f->pMethods = w->real->pMethods ? &wMethods : 0;
	if (f->pMethods && name) {
		// The connection's database file, when it is one of ours: it
		// writes what is held before the transaction ends.
		dfile *d = (dfile *)sqlite3_database_file_object(name);
		if (d && d->base.pMethods == &dMethods) {
			d->wal = w;
			w->db = d;
		}
	}
	return rc;
}

static int wDelete(sqlite3_vfs *v, const char *n, int s) { return root->xDelete(root, n, s); }
static int wAccess(sqlite3_vfs *v, const char *n, int fl, int *r) { return root->xAccess(root, n, fl, r); }
static int wFullPathname(sqlite3_vfs *v, const char *n, int k, char *o) { return root->xFullPathname(root, n, k, o); }
static void *wDlOpen(sqlite3_vfs *v, const char *n) { return root->xDlOpen(root, n); }
static void wDlError(sqlite3_vfs *v, int k, char *m) { root->xDlError(root, k, m); }
static void (*wDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { return root->xDlSym(root, h, s); }
static void wDlClose(sqlite3_vfs *v, void *h) { root->xDlClose(root, h); }
static int wRandomness(sqlite3_vfs *v, int k, char *o) { return root->xRandomness(root, k, o); }
static int wSleep(sqlite3_vfs *v, int us) { return root->xSleep(root, us); }
static int wCurrentTime(sqlite3_vfs *v, double *t) { return root->xCurrentTime(root, t); }
static int wGetLastError(sqlite3_vfs *v, int k, char *m) { return root->xGetLastError(root, k, m); }
static int wCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *t) { return root->xCurrentTimeInt64(root, t); }

static sqlite3_vfs walVFS;

// agentfs_wal_register registers the VFS (not as the default) and returns
// its name, or NULL when SQLite has no "unix" VFS to build it on. Called
// once.
const char *agentfs_wal_register(void) {
	root = sqlite3_vfs_find("unix");
	if (!root || root->iVersion < 2) return 0;
	sqlite3_vfs *b = &walVFS;
	b->iVersion = 2; // no system call overrides (version 3): they would be the unix VFS's
	int hdr = ROUND8(sizeof(wfile)) > ROUND8(sizeof(dfile)) ? ROUND8(sizeof(wfile)) : ROUND8(sizeof(dfile));
	int sz = hdr + root->szOsFile;
	b->szOsFile = sz > root->szOsFile ? sz : root->szOsFile;
	b->mxPathname = root->mxPathname;
	b->zName = "agentfs-unix";
	b->xOpen = wOpen;
	b->xDelete = wDelete;
	b->xAccess = wAccess;
	b->xFullPathname = wFullPathname;
	b->xDlOpen = wDlOpen;
	b->xDlError = wDlError;
	b->xDlSym = wDlSym;
	b->xDlClose = wDlClose;
	b->xRandomness = wRandomness;
	b->xSleep = wSleep;
	b->xCurrentTime = wCurrentTime;
	b->xGetLastError = wGetLastError;
	b->xCurrentTimeInt64 = wCurrentTimeInt64;
	if (sqlite3_vfs_register(b, 0) != SQLITE_OK) return 0;
	return b->zName;
}

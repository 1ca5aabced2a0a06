// An encrypting VFS for the cgo driver: it wraps SQLite's default VFS (the
// operating system's: its locking, shared memory and WAL index stay
// SQLite's own) and hands the page data of the main database, its
// write-ahead log and rollback journal to Go (cryptvfs.go), which seals
// and opens pages with internal/crypt's codec: the same implementation of
// Turso's page format as ncruces' Go VFS uses. One call into Go per read
// or write (a page, or a whole frame), never per byte range: a cgo
// callback costs about as much as a small memcpy of a page.
//
// Two things keep an encrypted database close to a plain one's speed
// (bench/crypt.sh, issue 14):
//   - a checkpoint copies pages from the log into the database file as
//     they are stored, without opening and sealing them (see cfile.pass);
//   - pages of the database file are opened straight from the root VFS's
//     memory mapping of it (its xFetch), and pages of the log from this
//     VFS's own mapping of it, not read with a pread(2) each first: the
//     system call and its copy cost about as much as the decryption
//     itself (see cFetch, walMap).

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
#define SQLITE_IOERR_READ (10 | (1 << 8))
#define SQLITE_FCNTL_MMAP_SIZE 18
#define SQLITE_FCNTL_CKPT_DONE 37
#define SQLITE_FCNTL_CKPT_START 39
#define SQLITE_SHM_UNLOCK 1
#define SQLITE_SHM_LOCK 2
#define SQLITE_SHM_EXCLUSIVE 8
#define WAL_WRITE_LOCK 0
#define WAL_CKPT_LOCK 1

// How much of a database file the root VFS may map (SQLite's default
// ceiling, SQLITE_MAX_MMAP_SIZE, as the store asks of a plain database).
#define MAP_LIMIT 0x7fff0000LL

// The device characteristics passed on: none that lets SQLite bypass
// xWrite's whole pages (atomic and batch-atomic writes).
#define KEPT_IOCAP (0x200 | 0x400 | 0x800 | 0x1000 | 0x2000)

typedef struct {
	sqlite3_vfs base;
	sqlite3_vfs *root;
	uintptr_t codec;
} cvfs;

// A log's frame checksums are SQLite's, over the plain page (see
// crypt/wal.go). When a transaction rewrites a page it had already put in
// the log (a page spilled from the cache and changed again), SQLite
// recomputes, at commit, the checksum chain of every frame from that one
// on: it reads each frame whole and writes its header back
// (walRewriteChecksums). On an encrypted log that read costs a decryption
// per frame: 13,900 of them in a 64 MiB write, about a tenth of its time
// (bench/crypt.sh, issue 14).
//
// SQLite's checksum is linear: over n 8-byte words, from the running
// pair s, it ends at M^n s + t, where M = [[1,1],[1,2]] (mod 2^32) and
// the frame's own term t depends only on its bytes (header's first 8 and
// page). SQLite reads a whole frame only to recompute its checksum, here
// and in recovery, never for the page itself (a page is read alone,
// without its header). So this VFS notes each frame's term as it writes
// it (from the checksum SQLite put in its header and the one before, or
// from the page when SQLite rewrites it in place), and answers such a read
// with the frame's header and a page of zeros whose last word gives the
// same term: SQLite computes the same checksums it would have from the
// plain page, without a decryption.
//
// Notes are trusted only while this connection holds the log's write
// lock, as it did when it wrote them: no other connection writes the log
// meanwhile, so the header noted is the one stored, and the term that of
// the page stored. Such a read touches neither the file nor a mapping of
// it. Anything else reads the frame as before.
typedef struct {
	unsigned epoch;   // the database file's wepoch when noted (0: never)
	unsigned gen;     // the log's gen when noted
	uint32_t t[2];    // the frame's term
	unsigned char hdr[24];   // the frame's header as stored
	int sealed;       // its page as stored was sealed (its write came after the header's)
	int summed;       // t is the term of the frame as stored
	int fromHdr;      // t came from the header just written (its page not yet)
} frameNote;

typedef struct {
	frameNote *notes; // by frame number - 1
	int cap;
	unsigned gen;     // bumped when the log restarts or is cut short
	int be;           // checksums over big-endian words (the log's magic)
	int ps;           // the page size the matrices are for
	uint32_t a[4];    // M^(1 + ps/8): a frame's words
	uint32_t w[4];    // M^(ps/8): a page's words
	uint32_t z[4];    // M^(ps/8 - 1): a page's words but its last
	uint32_t q[4];    // M^(ps/32): a quarter page's words
	unsigned readyEpoch;   // the write lock for which be, ps and the matrices were read
	sqlite3_int64 pending; // the frame whose header was just written, its page not yet
	sqlite3_int64 chain;   // the frame whose header was written last (0: the log's header; -1: none)
	unsigned chainEpoch;
	uint32_t chainSum[2];  // the checksum in that header
} frameLog;

typedef struct cfile cfile;
struct cfile {
	sqlite3_file base;
	sqlite3_file *real; // the root VFS's file, allocated after this one
	uintptr_t codec;
	int kind;
	agentfs_state st;
	unsigned char *buf; // the encrypted copy of a write; a page opened for a part of it
	int cap;
	// A checkpoint copies pages from the log into the database file:
	// between SQLITE_FCNTL_CKPT_START and SQLITE_FCNTL_CKPT_DONE on the
	// database file (copying), SQLite's checkpoint reads each frame's page
	// from the log into one buffer and writes that buffer to the file at
	// once, and does nothing else with it (wal.c's walCheckpoint). A page
	// is sealed in the log exactly as in the file (Turso's format binds no
	// page number into a page; page 1's associated data is its own stored
	// header, the same in both), so such a read hands SQLite the page as
	// stored (pass, passN) and the database file's next write, when it is
	// that buffer, stores it unchanged: a checkpoint costs no cipher work
	// at all, as a plain database's. The log's file keeps its database's
	// (db).
	cfile *db;
	int copying;
	const void *pass;
	int passN;
	// fetch: the root file can map the database file (xFetch), mapped:
	// its size when it was last mapped (see cFetch).
	int fetch;
	sqlite3_int64 mapped;
	// The log mapped for reading (see walMap): its name, a descriptor of
	// this VFS's own (-1 until opened, -2 when mapping failed), the
	// mapping and its length, and the file's size when last looked at.
	const char *name;
	int wfd;
	unsigned char *wmap;
	size_t wlen;
	sqlite3_int64 wsize;
	// Of a database file: whether this connection holds the log's write
	// lock, and how many times it took it (see frameNote).
	int writer;
	unsigned wepoch;
	// Of a log: what this connection wrote into it under the write lock
	// it holds now (see frameNote).
	frameLog fl;
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
	c->pass = 0;
	if (c->wmap) munmap(c->wmap, c->wlen);
	c->wmap = 0;
	c->wlen = 0;
	if (c->wfd >= 0) close(c->wfd);
	c->wfd = -1;
	free(c->fl.notes);
	c->fl.notes = 0;
	c->fl.cap = 0;
	return rc;
}

// isPage: a read or write of n bytes at off is one whole page (as
// crypt.IsPage).
static int isPage(int n, sqlite3_int64 off) {
	return n >= 512 && n <= 65536 && (n & (n - 1)) == 0 && off % n == 0;
}

// grow makes c->buf at least n bytes.
static int grow(cfile *c, int n) {
	if (c->cap >= n) return SQLITE_OK;
	unsigned char *b = realloc(c->buf, n);
	if (!b) return SQLITE_NOMEM;
	c->buf = b;
	c->cap = n;
	return SQLITE_OK;
}

// cFetch answers the root VFS's mapping of the n bytes at off of the
// database file (to release with xUnfetch), or NULL: then the caller
// reads them. The root VFS maps the file once, at its size then, and
// SQLite's pager, which remaps it when it changes, only does so for a
// VFS that offers xFetch itself (this one does not: SQLite would take
// pages as stored). So a page past the mapping remaps the file once it
// has grown; a page that still does not map after that (mapping refused
// or limited) stops the mapping of this file.
static const void *cFetch(cfile *c, sqlite3_int64 off, int n) {
	sqlite3_file *r = c->real;
	void *m = 0;
	if (!c->fetch || off + n > MAP_LIMIT) return 0;
	if (r->pMethods->xFetch(r, off, n, &m) != SQLITE_OK) return 0;
	if (m) return m;
	sqlite3_int64 size = 0;
	if (r->pMethods->xFileSize(r, &size) != SQLITE_OK || off + n > size || size == c->mapped) return 0;
	r->pMethods->xUnfetch(r, 0, 0);
	c->mapped = size;
	if (r->pMethods->xFetch(r, off, n, &m) != SQLITE_OK) return 0;
	// The root VFS may keep the last bytes of a file unmapped (SQLite
	// 3.46 keeps 256); anything before them must map.
	if (!m && off + n + 65536 <= size) c->fetch = 0;
	return m;
}

// readMapped opens the n bytes at off of the database file from its
// mapping into p: a whole page, or part of a page of ps bytes (SQLite
// 3.45's direct reads of overflow pages). It answers -1 when the bytes
// are not mapped (the caller reads them), else SQLite's result.
static int readMapped(cfile *c, void *p, int n, sqlite3_int64 off) {
	if (isPage(n, off)) {
		const void *m = cFetch(c, off, n);
		if (!m) return -1;
		int rc = agentfsCryptOpenPage(c->codec, p, (void *)m, n, off / n + 1);
		c->real->pMethods->xUnfetch(c->real, off, (void *)m);
		if (rc == SQLITE_OK) c->st.size = n;
		return rc;
	}
	int ps = (int)c->st.size;
	if (ps == 0 || off < 100) return -1; // the header: read in the clear
	sqlite3_int64 start = off / ps * ps;
	if (off + n > start + ps || grow(c, ps) != SQLITE_OK) return -1;
	const void *m = cFetch(c, start, ps);
	if (!m) return -1;
	int rc = agentfsCryptOpenPage(c->codec, c->buf, (void *)m, ps, start / ps + 1);
	c->real->pMethods->xUnfetch(c->real, start, (void *)m);
	if (rc == SQLITE_OK) memcpy(p, c->buf + (off - start), n);
	return rc;
}

// walPage: a read of n bytes at off from a log of c->st.size-byte pages
// is one frame's page without its header (SQLite reads a page so).
static int walPage(cfile *c, int n, sqlite3_int64 off) {
	sqlite3_int64 ps = c->st.size;
	return ps != 0 && n == ps && off >= 32 + 24 && (off - 32) % (24 + ps) == 24;
}

// walMap answers the n bytes at off of the log from this VFS's mapping
// of it, or NULL (the caller reads them). The log has no POSIX locks (a
// WAL's are on the -shm file), so a descriptor of this VFS's own, opened
// read only, is safe to open and close beside SQLite's. SQLite reads only
// frames that are in the file: those of its snapshot, or its own just
// written; the log is cut short (a TRUNCATE checkpoint, a restart past
// journal_size_limit) only once no reader uses the frames cut, and frames
// written after that are in the file again. So the mapping, made at the
// file's size when a read went past it, is read only where the file is.
static const unsigned char *walMap(cfile *c, sqlite3_int64 off, int n) {
	if (c->wfd == -2 || !c->name || off + n > MAP_LIMIT) return 0;
	if (off + n <= c->wsize && off + n <= (sqlite3_int64)c->wlen) return c->wmap + off;
	if (c->wfd == -1) {
		c->wfd = open(c->name, O_RDONLY | O_CLOEXEC);
		if (c->wfd < 0) {
			c->wfd = -2;
			return 0;
		}
	}
	struct stat st;
	if (fstat(c->wfd, &st) != 0) return 0;
	c->wsize = st.st_size;
	if (off + n > c->wsize) return 0;
	if (off + n > (sqlite3_int64)c->wlen) {
		if (c->wmap) munmap(c->wmap, c->wlen);
		c->wmap = 0;
		c->wlen = 0;
		size_t len = (size_t)(c->wsize < MAP_LIMIT ? c->wsize : MAP_LIMIT);
		void *m = mmap(0, len, PROT_READ, MAP_SHARED, c->wfd, 0);
		if (m == MAP_FAILED) {
			close(c->wfd);
			c->wfd = -2;
			return 0;
		}
		c->wmap = m;
		c->wlen = len;
	}
	return c->wmap + off;
}

// Frame notes (see frameNote).

// Frames answered from notes, in this process (for tests).
int64_t agentfs_crypt_note_hits;

// At most this many frames are noted: 1 GiB of log at 4 KiB pages, in
// 12 MiB of notes; frames past it are read as before.
#define MAX_NOTES (1 << 18)

static inline __attribute__((always_inline)) uint32_t get32(const unsigned char *p, int be) {
	uint32_t v;
	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return be ? __builtin_bswap32(v) : v;
#else
	return be ? v : __builtin_bswap32(v);
#endif
}

static void put32(unsigned char *p, uint32_t v, int be) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (be) v = __builtin_bswap32(v);
#else
	if (!be) v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}

// walSum runs SQLite's log checksum over n bytes (a multiple of 8) from s.
static void walSum(const unsigned char *b, int n, int be, uint32_t s[2]) {
	uint32_t s1 = s[0], s2 = s[1];
	for (int i = 0; i + 8 <= n; i += 8) {
		s1 += get32(b + i, be) + s2;
		s2 += get32(b + i + 4, be) + s1;
	}
	s[0] = s1;
	s[1] = s2;
}

// 2x2 matrices mod 2^32, row by row.
static void matMul(uint32_t r[4], const uint32_t x[4], const uint32_t y[4]) {
	uint32_t t[4] = {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2],
	                 x[2] * y[1] + x[3] * y[3]};
	memcpy(r, t, sizeof t);
}

// matPow sets r to M^k: a checksum step over a word of zeros.
static void matPow(uint32_t r[4], unsigned k) {
	uint32_t b[4] = {1, 1, 1, 2}, acc[4] = {1, 0, 0, 1};
	for (; k; k >>= 1) {
		if (k & 1) matMul(acc, acc, b);
		matMul(b, b, b);
	}
	memcpy(r, acc, sizeof acc);
}

static void matApply(uint32_t out[2], const uint32_t m[4], const uint32_t s[2]) {
	uint32_t a = m[0] * s[0] + m[1] * s[1], b = m[2] * s[0] + m[3] * s[1];
	out[0] = a;
	out[1] = b;
}

// pageTerm sets t to the term of a page of fl->ps bytes: the checksum
// over it from (0, 0). One running checksum is a chain of dependent
// additions; four over the page's quarters run side by side, and their
// terms combine as the matrices carry each over the quarters after it.
#define LANES(BE)                                                                                      \
	for (int i = 0; i < q; i += 8) {                                                               \
		a1 += get32(p + i, BE) + a2;                                                           \
		a2 += get32(p + i + 4, BE) + a1;                                                       \
		b1 += get32(p + q + i, BE) + b2;                                                       \
		b2 += get32(p + q + i + 4, BE) + b1;                                                   \
		c1 += get32(p + 2 * q + i, BE) + c2;                                                   \
		c2 += get32(p + 2 * q + i + 4, BE) + c1;                                               \
		d1 += get32(p + 3 * q + i, BE) + d2;                                                   \
		d2 += get32(p + 3 * q + i + 4, BE) + d1;                                               \
	}

static void pageTerm(const frameLog *fl, const unsigned char *p, uint32_t t[2]) {
	int q = fl->ps / 4;
	uint32_t a1 = 0, a2 = 0, b1 = 0, b2 = 0, c1 = 0, c2 = 0, d1 = 0, d2 = 0;
	// One loop per byte order, so that neither tests it per word.
	if (fl->be) {
		LANES(1)
	} else {
		LANES(0)
	}
	uint32_t x[2] = {a1, a2}, y[2];
	matApply(x, fl->q, x);
	y[0] = x[0] + b1;
	y[1] = x[1] + b2;
	matApply(y, fl->q, y);
	x[0] = y[0] + c1;
	x[1] = y[1] + c2;
	matApply(x, fl->q, x);
	t[0] = x[0] + d1;
	t[1] = x[1] + d2;
}

// frameTerm sets t to the term of a frame: its header's first 8 bytes
// and its page p.
static void frameTerm(const frameLog *fl, const unsigned char *hdr, const unsigned char *p, uint32_t t[2]) {
	uint32_t h[2] = {0, 0}, pt[2];
	walSum(hdr, 8, fl->be, h);
	matApply(h, fl->w, h);
	pageTerm(fl, p, pt);
	t[0] = h[0] + pt[0];
	t[1] = h[1] + pt[1];
}

// walEpoch: the write lock this connection holds on its log, 0 when none
// (or the database file is not one of ours).
static unsigned walEpoch(cfile *c) { return c->db && c->db->writer ? c->db->wepoch : 0; }

// walFrameNo: the frame whose header (hdr) or page is at off, 0 when
// none or past MAX_NOTES.
static sqlite3_int64 walFrameNo(cfile *c, sqlite3_int64 off, int hdr) {
	sqlite3_int64 ps = c->st.size;
	if (ps == 0 || off < 32 || (off - 32) % (24 + ps) != (hdr ? 0 : 24)) return 0;
	sqlite3_int64 i = (off - 32) / (24 + ps) + 1;
	return i <= MAX_NOTES ? i : 0;
}

// walHeader reads the log's 32-byte header into h: with this VFS's own
// descriptor (see walMap) when it has one, which leaves what walvfs.c
// holds of the frames that follow it held (the header itself is never
// held); else through the file.
static int walHeader(cfile *c, unsigned char h[32]) {
	if (c->wfd == -1 && c->name) {
		c->wfd = open(c->name, O_RDONLY | O_CLOEXEC);
		if (c->wfd < 0) c->wfd = -2;
	}
	if (c->wfd >= 0 && pread(c->wfd, h, 32, 0) == 32) return SQLITE_OK;
	return c->real->pMethods->xRead(c->real, h, 32, 0);
}

// flReady reads the log's header once per write lock: the byte order of
// its checksums, and the page size the matrices are for. It answers 0
// when that fails (nothing is noted).
static int flReady(cfile *c, unsigned ep) {
	frameLog *fl = &c->fl;
	if (fl->readyEpoch == ep && fl->ps == c->st.size) return 1;
	unsigned char h[32];
	if (walHeader(c, h) != SQLITE_OK) return 0;
	int ps = (int)get32(h + 8, 1);
	if (ps != c->st.size || ps < 512) return 0;
	fl->be = h[3] & 1;
	if (fl->ps != ps) {
		fl->ps = ps;
		matPow(fl->a, 1 + ps / 8);
		matPow(fl->w, ps / 8);
		matPow(fl->z, ps / 8 - 1);
		matPow(fl->q, ps / 32);
		fl->gen++; // notes of another page size mean nothing
	}
	fl->readyEpoch = ep;
	return 1;
}

static frameNote *flNote(frameLog *fl, sqlite3_int64 i) {
	if (i < 1 || i > MAX_NOTES) return 0;
	if (i > fl->cap) {
		int cap = fl->cap ? fl->cap : 1024;
		while (cap < i) cap *= 2;
		if (cap > MAX_NOTES) cap = MAX_NOTES;
		frameNote *n = realloc(fl->notes, (size_t)cap * sizeof *n);
		if (!n) return 0;
		memset(n + fl->cap, 0, (size_t)(cap - fl->cap) * sizeof *n);
		fl->notes = n;
		fl->cap = cap;
	}
	return &fl->notes[i - 1];
}

static int noteValid(const frameLog *fl, const frameNote *nt, unsigned ep) {
	return ep && nt->epoch == ep && nt->gen == fl->gen;
}

// walNoteWrite notes what a write of n bytes at off did to the log: p the
// bytes SQLite gave, stored those written (p, or the sealed page when
// sealed).
static void walNoteWrite(cfile *c, const unsigned char *p, const unsigned char *stored, int n, sqlite3_int64 off, int sealed) {
	frameLog *fl = &c->fl;
	unsigned ep = walEpoch(c);
	sqlite3_int64 i;
	if (off < 32) { // the log's header: a restart (or a write no frame starts at)
		fl->gen++;
		fl->chain = -1;
		fl->readyEpoch = 0; // a new header: its byte order is read again
		if (off == 0 && n >= 32 && ep && flReady(c, ep)) {
			fl->chain = 0;
			fl->chainEpoch = ep;
			fl->chainSum[0] = get32(stored + 24, 1);
			fl->chainSum[1] = get32(stored + 28, 1);
		}
		return;
	}
	if (!ep || !flReady(c, ep)) {
		fl->chain = -1;
		fl->pending = 0;
		return;
	}
	int ps = fl->ps;
	if (n == 24 && (i = walFrameNo(c, off, 1))) {
		// A frame's header: its term is its checksum less the previous
		// frame's carried over its words, when that one is known (the
		// header written just before). Once a transaction has rewritten a
		// frame in place, SQLite appends frames with salts and checksum
		// zero, to be set at commit: such a header gives no term. Either
		// way the term then comes from the page (a read of the previous
		// checksum would cost a system call, and make walvfs.c write the
		// header alone).
		static const unsigned char zeros[16];
		uint32_t s[2] = {get32(stored + 16, 1), get32(stored + 20, 1)};
		int chained = memcmp(stored + 8, zeros, 16) != 0;
		uint32_t prev[2] = {fl->chainSum[0], fl->chainSum[1]};
		int summed = chained && fl->chain == i - 1 && fl->chainEpoch == ep;
		fl->chain = chained ? i : -1;
		fl->chainEpoch = ep;
		fl->chainSum[0] = s[0];
		fl->chainSum[1] = s[1];
		fl->pending = i; // its page comes next, unless this rewrites a checksum alone
		frameNote *nt = flNote(fl, i);
		if (!nt) return;
		// A header written again with the same page number and size
		// leaves its page as it was (SQLite setting checksums at commit;
		// if its page follows, the page sets the term).
		int same = noteValid(fl, nt, ep) && memcmp(nt->hdr, stored, 8) == 0;
		if (!same) nt->sealed = 0;
		if (summed) {
			uint32_t carried[2];
			matApply(carried, fl->a, prev);
			nt->t[0] = s[0] - carried[0];
			nt->t[1] = s[1] - carried[1];
			nt->summed = 1;
		} else if (!same) {
			nt->summed = 0;
		}
		nt->fromHdr = summed;
		memcpy(nt->hdr, stored, 24);
		nt->epoch = ep;
		nt->gen = fl->gen;
		return;
	}
	if (n == ps && (i = walFrameNo(c, off, 0))) {
		frameNote *nt = i <= fl->cap ? &fl->notes[i - 1] : 0;
		int appended = fl->pending == i;
		fl->pending = 0;
		if (!nt || !noteValid(fl, nt, ep)) return;
		if (!sealed) {
			nt->epoch = 0;
			return;
		}
		if (!appended || !nt->fromHdr) {
			// Rewritten in place (the header stays), or appended after a
			// header that gave no term: the term from the header's words
			// and this page's.
			frameTerm(fl, nt->hdr, p, nt->t);
			nt->summed = 1;
		}
		nt->fromHdr = 0;
		nt->sealed = 1;
		return;
	}
	// A write of another shape: nothing noted is trusted after it.
	fl->gen++;
	fl->chain = -1;
	fl->pending = 0;
}

// walFromNotes answers a read of the frame whose header is at off, whole,
// from its note into p: its header and a page of zeros whose last word
// gives the frame's term (see frameNote). It answers 0 when there is no
// note to trust.
static int walFromNotes(cfile *c, unsigned char *p, sqlite3_int64 off) {
	frameLog *fl = &c->fl;
	unsigned ep = walEpoch(c);
	sqlite3_int64 i = walFrameNo(c, off, 1);
	int ps = (int)c->st.size;
	if (!i || i > fl->cap || ps != fl->ps || fl->readyEpoch != ep) return 0;
	frameNote *nt = &fl->notes[i - 1];
	if (!noteValid(fl, nt, ep) || !nt->sealed || !nt->summed) return 0;
	memcpy(p, nt->hdr, 24);
	// From the header's words the zeros carry the sum to g; the last word
	// (x0, x1) then takes it to (g0 + x0 + g1, g1 + x1 + that), which must
	// be the term.
	uint32_t g[2] = {0, 0};
	walSum(nt->hdr, 8, fl->be, g);
	matApply(g, fl->z, g);
	unsigned char *page = p + 24;
	memset(page, 0, ps - 8);
	put32(page + ps - 8, nt->t[0] - g[0] - g[1], fl->be);
	put32(page + ps - 4, nt->t[1] - g[1] - nt->t[0], fl->be);
	__atomic_fetch_add(&agentfs_crypt_note_hits, 1, __ATOMIC_RELAXED);
	return 1;
}

// readWALMapped reads the n bytes at off of the log from its mapping into
// p, opened: one frame's page alone (its number unknown: only page 1's
// stored form differs), or one whole frame (header and page). It answers
// -1 when they are not mapped (the caller reads them), else SQLITE_OK: a
// frame that does not decrypt reads as zeros, the end of the log, as in
// crypt.ReadWAL. A checkpoint's copy is left to the caller (see cfile).
static int readWALMapped(cfile *c, void *p, int n, sqlite3_int64 off) {
	sqlite3_int64 ps = c->st.size;
	if (ps == 0) return -1;
	// Frames walvfs.c holds back are not in the file (nor in the mapping)
	// yet: they go out first.
	if (agentfs_wal_flush(c->real) != SQLITE_OK) return -1;
	if (walPage(c, n, off)) {
		// A checkpoint's copy reads pages as stored: pread(2) does that
		// as fast as a copy from the mapping would, without faulting in
		// the mapping of frames nothing else reads (see cRead).
		if (c->db && c->db->copying) return -1;
		const unsigned char *m = walMap(c, off, n);
		if (!m) return -1;
		if (agentfsCryptOpenPage(c->codec, p, (void *)m, n, 0) != SQLITE_OK) memset(p, 0, n);
		return SQLITE_OK;
	}
	if (n == 24 + ps && off >= 32 && (off - 32) % (24 + ps) == 0) {
		if (walFromNotes(c, p, off)) return SQLITE_OK;
		const unsigned char *m = walMap(c, off, n);
		if (!m) return -1;
		memcpy(p, m, 24);
		sqlite3_int64 pgno = (sqlite3_int64)m[0] << 24 | m[1] << 16 | m[2] << 8 | m[3];
		if (pgno == 0 || agentfsCryptOpenPage(c->codec, (char *)p + 24, (void *)(m + 24), (int)ps, pgno) != SQLITE_OK) {
			memset(p, 0, n);
		}
		return SQLITE_OK;
	}
	return -1;
}

static int cRead(sqlite3_file *f, void *p, int n, sqlite3_int64 off) {
	cfile *c = (cfile *)f;
	if (c->kind == AGENTFS_DB) {
		int rc = readMapped(c, p, n, off);
		if (rc >= 0) return rc;
	} else if (c->kind == AGENTFS_WAL) {
		if (c->db) c->db->pass = 0;
		int rc = readWALMapped(c, p, n, off);
		if (rc >= 0) return rc;
	}
	int rc = c->real->pMethods->xRead(c->real, p, n, off);
	if (c->kind == 0 || (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)) return rc;
	if (c->kind == AGENTFS_WAL && c->db && c->db->copying && rc == SQLITE_OK && walPage(c, n, off)) {
		c->db->pass = p; // as stored: see cfile
		c->db->passN = n;
		return rc;
	}
	return agentfsCryptRead(c->codec, c->kind, &c->st, (uintptr_t)c->real, p, n, off, rc);
}

static int cWrite(sqlite3_file *f, const void *p, int n, sqlite3_int64 off) {
	cfile *c = (cfile *)f;
	if (c->kind == 0) return c->real->pMethods->xWrite(c->real, p, n, off);
	if (c->kind == AGENTFS_DB && c->pass) {
		int stored = c->pass == p && c->passN == n && isPage(n, off);
		c->pass = 0;
		if (stored) return c->real->pMethods->xWrite(c->real, p, n, off);
	}
	if (grow(c, n) != SQLITE_OK) return SQLITE_NOMEM;
	int rc;
	sqlite3_int64 ps = c->st.size;
	if (c->kind == AGENTFS_WAL && n == 24 && ps != 0 && off >= 32 && (off - 32) % (24 + ps) == 0) {
		// A frame's header goes out as it is (as agentfsCryptWrite
		// would answer, without a call into Go per frame): SQLite
		// writes its page next, sealed with the page number noted here.
		const unsigned char *h = p;
		c->st.lastHdr = off;
		c->st.lastPgno = (sqlite3_int64)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];
		rc = -1;
	} else {
		// Go answers -1 (write p as it is), 0 (write the encrypted
		// copy) or SQLite's error code.
		rc = agentfsCryptWrite(c->codec, c->kind, &c->st, (uintptr_t)c->real, (void *)p, c->buf, n, off);
	}
	if (rc > 0) return rc;
	const unsigned char *stored = rc < 0 ? p : c->buf;
	int wrc = c->real->pMethods->xWrite(c->real, stored, n, off);
	if (c->kind == AGENTFS_WAL) {
		if (wrc == SQLITE_OK) {
			walNoteWrite(c, p, stored, n, off, rc == 0);
		} else {
			c->fl.gen++;
			c->fl.chain = -1;
		}
	}
	return wrc;
}

static int cTruncate(sqlite3_file *f, sqlite3_int64 size) {
	cfile *c = (cfile *)f;
	if (c->kind == AGENTFS_JOURNAL && size == 0) c->st.size = 0;
	if (c->kind == AGENTFS_WAL) {
		c->fl.gen++;
		c->fl.chain = -1;
	}
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
		// No memory mapping for SQLite: it must read pages through
		// xRead (the VFS maps the database file for itself: cFetch).
		*(sqlite3_int64 *)arg = 0;
		return SQLITE_OK;
	}
	if (c->kind == AGENTFS_DB && (op == SQLITE_FCNTL_CKPT_START || op == SQLITE_FCNTL_CKPT_DONE)) {
		c->copying = op == SQLITE_FCNTL_CKPT_START;
		c->pass = 0;
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
	int writeLock = c->kind == AGENTFS_DB && off <= WAL_WRITE_LOCK && off + n > WAL_WRITE_LOCK;
	if (writeLock && (flags & SQLITE_SHM_UNLOCK)) c->writer = 0;
	if (c->kind == AGENTFS_DB && (flags & SQLITE_SHM_UNLOCK) && off <= WAL_CKPT_LOCK && off + n > WAL_CKPT_LOCK) {
		// A checkpoint's copy runs under the checkpoint lock: whatever
		// happens to SQLITE_FCNTL_CKPT_DONE, none goes on past it.
		c->copying = 0;
		c->pass = 0;
	}
	int rc = c->real->pMethods->xShmLock(c->real, off, n, flags);
	if (writeLock && rc == SQLITE_OK && (flags & SQLITE_SHM_LOCK) && (flags & SQLITE_SHM_EXCLUSIVE)) {
		c->writer = 1;
		c->wepoch++;
		if (c->wepoch == 0) c->wepoch = 1; // 0 means none
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
	c->wfd = -1;
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
	if (m && c->kind == AGENTFS_DB && m->iVersion >= 3 && m->xFetch && m->xUnfetch) {
		// The root file maps the database for cFetch (SQLite's pager
		// never asks this VFS: its methods are version 2).
		sqlite3_int64 limit = MAP_LIMIT;
		c->fetch = m->xFileControl(c->real, SQLITE_FCNTL_MMAP_SIZE, &limit) == SQLITE_OK;
	}
	if (c->kind == AGENTFS_WAL) {
		c->fl.chain = -1;
		c->fl.gen = 1;
	}
	if (c->kind == AGENTFS_WAL && name) {
		c->name = name; // SQLite keeps it until xClose
		// The database file this log belongs to, when it is one of ours
		// (of this VFS: the same codec).
		cfile *db = (cfile *)sqlite3_database_file_object(name);
		if (db && db->base.pMethods == &cMethods && db->kind == AGENTFS_DB && db->codec == c->codec) {
			c->db = db;
			agentfs_wal_link(c->real, db->real);
		}
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
	// walvfs.c's VFS when registered (a transaction's log frames leave in
	// few writes, as a plain database's), else SQLite's default.
	sqlite3_vfs *root = sqlite3_vfs_find("agentfs-unix");
	if (!root) root = sqlite3_vfs_find(0);
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

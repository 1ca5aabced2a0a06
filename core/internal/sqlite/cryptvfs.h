// The parts of SQLite's VFS interface (sqlite3.h, a stable ABI) that the
// encrypting VFS (cryptvfs.c) and walvfs.c use: go-libsql links SQLite but
// ships no header.
#ifndef AGENTFS_CRYPTVFS_H
#define AGENTFS_CRYPTVFS_H

#include <stdint.h>

typedef int64_t sqlite3_int64;
typedef struct sqlite3_file sqlite3_file;
typedef struct sqlite3_io_methods sqlite3_io_methods;
typedef struct sqlite3_vfs sqlite3_vfs;
typedef void (*sqlite3_syscall_ptr)(void);

struct sqlite3_file {
	const sqlite3_io_methods *pMethods;
};

struct sqlite3_io_methods {
	int iVersion;
	int (*xClose)(sqlite3_file *);
	int (*xRead)(sqlite3_file *, void *, int iAmt, sqlite3_int64 iOfst);
	int (*xWrite)(sqlite3_file *, const void *, int iAmt, sqlite3_int64 iOfst);
	int (*xTruncate)(sqlite3_file *, sqlite3_int64 size);
	int (*xSync)(sqlite3_file *, int flags);
	int (*xFileSize)(sqlite3_file *, sqlite3_int64 *pSize);
	int (*xLock)(sqlite3_file *, int);
	int (*xUnlock)(sqlite3_file *, int);
	int (*xCheckReservedLock)(sqlite3_file *, int *pResOut);
	int (*xFileControl)(sqlite3_file *, int op, void *pArg);
	int (*xSectorSize)(sqlite3_file *);
	int (*xDeviceCharacteristics)(sqlite3_file *);
	int (*xShmMap)(sqlite3_file *, int iPg, int pgsz, int, void volatile **);
	int (*xShmLock)(sqlite3_file *, int offset, int n, int flags);
	void (*xShmBarrier)(sqlite3_file *);
	int (*xShmUnmap)(sqlite3_file *, int deleteFlag);
	int (*xFetch)(sqlite3_file *, sqlite3_int64 iOfst, int iAmt, void **pp);
	int (*xUnfetch)(sqlite3_file *, sqlite3_int64 iOfst, void *p);
};

struct sqlite3_vfs {
	int iVersion;
	int szOsFile;
	int mxPathname;
	sqlite3_vfs *pNext;
	const char *zName;
	void *pAppData;
	int (*xOpen)(sqlite3_vfs *, const char *zName, sqlite3_file *, int flags, int *pOutFlags);
	int (*xDelete)(sqlite3_vfs *, const char *zName, int syncDir);
	int (*xAccess)(sqlite3_vfs *, const char *zName, int flags, int *pResOut);
	int (*xFullPathname)(sqlite3_vfs *, const char *zName, int nOut, char *zOut);
	void *(*xDlOpen)(sqlite3_vfs *, const char *zFilename);
	void (*xDlError)(sqlite3_vfs *, int nByte, char *zErrMsg);
	void (*(*xDlSym)(sqlite3_vfs *, void *, const char *zSymbol))(void);
	void (*xDlClose)(sqlite3_vfs *, void *);
	int (*xRandomness)(sqlite3_vfs *, int nByte, char *zOut);
	int (*xSleep)(sqlite3_vfs *, int microseconds);
	int (*xCurrentTime)(sqlite3_vfs *, double *);
	int (*xGetLastError)(sqlite3_vfs *, int, char *);
	int (*xCurrentTimeInt64)(sqlite3_vfs *, sqlite3_int64 *);
	int (*xSetSystemCall)(sqlite3_vfs *, const char *zName, sqlite3_syscall_ptr);
	sqlite3_syscall_ptr (*xGetSystemCall)(sqlite3_vfs *, const char *zName);
	const char *(*xNextSystemCall)(sqlite3_vfs *, const char *zName);
};

// The kinds of file the encrypting VFS transforms (0: passed through).
enum { AGENTFS_DB = 1, AGENTFS_WAL = 2, AGENTFS_JOURNAL = 3 };

// The state Go keeps per open file (see cryptvfs.go's fileState).
typedef struct {
	int64_t size;     // page size (of a database file: of its last page read or written); 0 until known
	int64_t lastHdr;  // offset of the frame header written last
	int64_t lastPgno; // and the page number in it
} agentfs_state;

// Registers an encrypting VFS named name over SQLite's default VFS, whose
// files call Go with codec (a cgo.Handle); NULL when SQLite refused.
sqlite3_vfs *agentfs_crypt_register(const char *name, uintptr_t codec);
void agentfs_crypt_unregister(sqlite3_vfs *vfs);
// Whole frames of logs answered from the VFS's notes (see cryptvfs.c's
// frameNote), in this process: for tests.
extern int64_t agentfs_crypt_note_hits;
// walvfs.c's calls for a VFS over it (see there).
int agentfs_wal_flush(sqlite3_file *f);
void agentfs_wal_link(sqlite3_file *wal, sqlite3_file *db);
// Reads n bytes at off from a file below the VFS (for Go).
int agentfs_crypt_read(uintptr_t file, void *p, int n, sqlite3_int64 off);

#endif

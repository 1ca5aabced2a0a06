// Reading a database file from Go without dropping this process's locks.
//
// SQLite's unix VFS locks database files with POSIX advisory locks, which
// belong to the process and the file: closing any descriptor of the file
// in this process releases all of them, the locks of every open connection
// included (sqlite.org/howtocorrupt.html, 2.2). Another process may then
// take the database for its last connection, checkpoint it and delete the
// WAL under this one. The unix VFS avoids that for its own files by not
// closing a descriptor while the file has locks (it keeps it for reuse);
// agentfs_file_open reads through that VFS so Go's reads of a database
// (sniffing its header, checking a key) get the same care.
#include <errno.h>
#include <stdlib.h>

#include "cryptvfs.h"

sqlite3_vfs *sqlite3_vfs_find(const char *);
const char *sqlite3_create_filename(const char *, const char *, const char *, int, const char **);
void sqlite3_free_filename(const char *);

#define OPEN_READONLY 0x00000001
#define OPEN_MAIN_DB 0x00000100

typedef struct {
	const char *name; // SQLite's copy, alive as long as the file (unixFile keeps it)
	sqlite3_file file; // the unix VFS's, szOsFile bytes from here
} agentfs_dbfile;

// agentfs_file_open opens path read only through the unix VFS; NULL with
// *err set to errno (or EIO) when it cannot, or to -1 when SQLite has no
// unix VFS (Windows, whose locks belong to handles).
agentfs_dbfile *agentfs_file_open(const char *path, int *err) {
	sqlite3_vfs *v = sqlite3_vfs_find("unix");
	if (!v) {
		*err = -1;
		return 0;
	}
	agentfs_dbfile *d = calloc(1, sizeof(agentfs_dbfile) + v->szOsFile);
	if (!d) {
		*err = ENOMEM;
		return 0;
	}
	d->name = sqlite3_create_filename(path, "", "", 0, 0);
	if (!d->name) {
		free(d);
		*err = ENOMEM;
		return 0;
	}
	int out = 0;
	errno = 0;
	if (v->xOpen(v, d->name, &d->file, OPEN_READONLY | OPEN_MAIN_DB, &out) != 0) {
		*err = errno ? errno : EIO;
		if (d->file.pMethods) d->file.pMethods->xClose(&d->file);
		sqlite3_free_filename(d->name);
		free(d);
		return 0;
	}
	return d;
}

// agentfs_file_size answers the file's size, -1 when it cannot.
sqlite3_int64 agentfs_file_size(agentfs_dbfile *d) {
	sqlite3_int64 n = 0;
	if (d->file.pMethods->xFileSize(&d->file, &n) != 0) return -1;
	return n;
}

// agentfs_file_read reads n bytes at off, all within the file (the caller
// checks): SQLite's result code.
int agentfs_file_read(agentfs_dbfile *d, void *p, int n, sqlite3_int64 off) {
	return d->file.pMethods->xRead(&d->file, p, n, off);
}

// agentfs_file_close closes the file as the unix VFS does: its descriptor
// stays open, unused, while a connection of this process holds a lock on
// the file, and closes with the last lock.
void agentfs_file_close(agentfs_dbfile *d) {
	d->file.pMethods->xClose(&d->file);
	sqlite3_free_filename(d->name);
	free(d);
}

package sqlite

/*
const char *agentfs_wal_register(void);
long agentfs_wal_unmerged(void);
long agentfs_wal_held(void);
*/
import "C"

import "sync"

// walVFS is the name of walvfs.c's VFS, which every connection opens
// through unless its URI names another ("vfs=", as encrypted and
// partially synced databases do): the unix VFS, with the frames of a
// transaction written to the WAL by one pwrite instead of two per frame.
// nil when SQLite has no unix VFS to build it on (then SQLite's default
// VFS serves).
var walVFS = sync.OnceValue(func() *C.char {
	libsqlReady() // registering initializes SQLite
	return C.agentfs_wal_register()
})

// walUnmerged counts the WAL frame headers walvfs.c held back and then
// had to write alone: 0 while SQLite writes its log as that file expects.
func walUnmerged() int64 { return int64(C.agentfs_wal_unmerged()) }

// walHeld is how many bytes of WAL frames walvfs.c holds back in all:
// 0 outside of write transactions.
func walHeld() int64 { return int64(C.agentfs_wal_held()) }

// walVFSName is walVFS as a Go string ("" when not in use).
func walVFSName() string {
	if p := walVFS(); p != nil {
		return C.GoString(p)
	}
	return ""
}

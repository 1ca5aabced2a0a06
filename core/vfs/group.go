package vfs

import "time"

// SetGroupCommit lets consecutive write operations share one transaction
// that commits at most maxDelay after it began (0 turns it off and
// commits). Each operation stays atomic on its own; other connections see
// its changes up to maxDelay late, and a crash loses the uncommitted
// group. Reads through open files, Sync and Close commit first. The FUSE
// mount turns it on: it receives many small operations in a row. See
// store.DB.SetGroupCommit.
func (f *FS) SetGroupCommit(maxDelay time.Duration) { f.db.SetGroupCommit(maxDelay) }

// CommitGroup commits the open group of SetGroupCommit now, if any.
func (f *FS) CommitGroup() error { return f.db.Flush() }

// OnGroupLost sets fn to hear of each group of SetGroupCommit that was
// rolled back after its operations had returned success (its COMMIT
// failed); the next CommitGroup or Sync also reports it. fn runs under
// the database's lock and must not use the FS.
func (f *FS) OnGroupLost(fn func(error)) { f.db.OnGroupLost(fn) }

package store

// SetWALLimit lowers walLimit for a test and returns the old value.
func SetWALLimit(n int64) (old int64) {
	old, walLimit = walLimit, n
	return old
}

// RestartAsked reports whether a background pass has asked the next write
// to restart the WAL.
func (db *DB) RestartAsked() bool { return db.ckpt != nil && db.ckpt.ready.Load() }

// CryptOnCgo reports whether the database is encrypted in the cgo
// driver's VFS (not ncruces').
func (db *DB) CryptOnCgo() bool { return db.cryptCgo }

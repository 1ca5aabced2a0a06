//go:build cgo

package sqlite

// For the tests of walvfs.c.
var (
	WALUnmerged = walUnmerged
	WALHeld     = walHeld
	WALVFSName  = walVFSName
)

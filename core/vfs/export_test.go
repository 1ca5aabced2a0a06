package vfs

// SetSmallDirEntries sets the size up to which an overlay lookup copies a
// whole base directory up, and returns the previous one.
func SetSmallDirEntries(n int) int {
	old := smallDirEntries
	smallDirEntries = n
	return old
}

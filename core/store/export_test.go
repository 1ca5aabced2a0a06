package store

// SetWALLimit lowers walLimit for a test and returns the old value.
func SetWALLimit(n int64) (old int64) {
	old, walLimit = walLimit, n
	return old
}

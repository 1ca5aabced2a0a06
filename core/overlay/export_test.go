//go:build unix

package overlay

// SetHostChangeHook replaces the hook run before each host change of a
// commit and returns a function that puts the old one back.
func SetHostChangeHook(fn func(path string) error) (restore func()) {
	old := hostChange
	hostChange = fn
	return func() { hostChange = old }
}

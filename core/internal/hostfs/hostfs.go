// Package hostfs is what the engine asks of the host's file system (an
// overlay's base directory and host tree, the free space under the
// database) where Unix and the WebAssembly build differ: on GOOS=js the
// host file system, when there is one (Node.js), is reached through Go's
// syscall/js layer, which has no extended attributes, O_NOFOLLOW or statfs
// and other names for a stat's times.
package hostfs

// Xattr is one extended attribute of a host file.
type Xattr struct {
	Name  string
	Value []byte
}

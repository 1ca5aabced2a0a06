package vfs

import (
	"io/fs"
	"time"

	"github.com/agentfs-go/agentfs/core/schema"
)

// Stat holds the attributes of an inode.
type Stat struct {
	Ino     int64
	Mode    uint32 // file type and permission bits, as in st_mode
	Nlink   uint32 // a directory: 2 + its subdirectories, computed (nlink.go); the database keeps 1
	UID     uint32
	GID     uint32
	Size    int64
	Rdev    uint64
	Atime   time.Time
	Mtime   time.Time
	Ctime   time.Time
	Blksize int64 // the chunk size
}

// Type returns the S_IFMT bits.
func (s Stat) Type() uint32 { return s.Mode & schema.ModeType }

// IsDir reports whether the inode is a directory.
func (s Stat) IsDir() bool { return s.Type() == schema.ModeDir }

// IsRegular reports whether the inode is a regular file.
func (s Stat) IsRegular() bool { return s.Type() == schema.ModeRegular }

// IsSymlink reports whether the inode is a symbolic link.
func (s Stat) IsSymlink() bool { return s.Type() == schema.ModeSymlink }

// Perm returns the permission bits including setuid, setgid and sticky.
func (s Stat) Perm() uint32 { return s.Mode & 0o7777 }

// Blocks is st_blocks: the 512-byte blocks the file would occupy on a
// disk with 4 KiB blocks (what du, ls -s and stat -c %b show on a usual
// Linux filesystem): size rounded up to 4 KiB, a directory one block
// (4096 bytes) at least, a symbolic link none (its target fits in the
// inode). Every way in (mount, API, CLI, sandbox) reports this one value.
func (s Stat) Blocks() int64 {
	if s.IsSymlink() {
		return 0
	}
	size := s.Size
	if s.IsDir() && size < 4096 {
		size = 4096
	}
	return (size + 4095) / 4096 * 8
}

// FileMode converts the POSIX mode to an io/fs mode.
func (s Stat) FileMode() fs.FileMode {
	m := fs.FileMode(s.Mode & 0o777)
	if s.Mode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if s.Mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if s.Mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	switch s.Type() {
	case schema.ModeDir:
		m |= fs.ModeDir
	case schema.ModeSymlink:
		m |= fs.ModeSymlink
	case schema.ModeFIFO:
		m |= fs.ModeNamedPipe
	case schema.ModeChar:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case schema.ModeBlock:
		m |= fs.ModeDevice
	case schema.ModeSocket:
		m |= fs.ModeSocket
	}
	return m
}

// PosixPerm converts the permission bits of an io/fs mode (with setuid,
// setgid and sticky) to POSIX mode bits: the inverse of FileMode's
// permission part, for modes that come from the host or from io/fs
// callers (NFS, host import).
func PosixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// TypeLetter is the one-letter type used in listings: f, d, l, p, c, b, s.
func (s Stat) TypeLetter() string {
	switch s.Type() {
	case schema.ModeDir:
		return "d"
	case schema.ModeSymlink:
		return "l"
	case schema.ModeFIFO:
		return "p"
	case schema.ModeChar:
		return "c"
	case schema.ModeBlock:
		return "b"
	case schema.ModeSocket:
		return "s"
	}
	return "f"
}

// DirEntry is one entry of a directory listing with its attributes.
type DirEntry struct {
	Name string
	Stat Stat
}

// FSStat describes the filesystem as statfs does.
type FSStat struct {
	BlockSize   int64 // the chunk size
	Blocks      int64 // total blocks (used plus free)
	BlocksFree  int64
	Files       int64 // inodes in use
	FilesFree   int64
	NameMax     int64
	DataBytes   int64 // bytes of file data stored
	DBFileBytes int64 // size of the database file
}

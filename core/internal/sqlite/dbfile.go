package sqlite

/*
#include <stdint.h>
#include <stdlib.h>
typedef struct agentfs_dbfile agentfs_dbfile;
agentfs_dbfile *agentfs_file_open(const char *path, int *err);
int64_t agentfs_file_size(agentfs_dbfile *d);
int agentfs_file_read(agentfs_dbfile *d, void *p, int n, int64_t off);
void agentfs_file_close(agentfs_dbfile *d);
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"syscall"
	"unsafe"

	"github.com/agentfs-go/agentfs/core/internal/crypt"
)

// File is a database file open for reading through SQLite's unix VFS
// (dbfile.c): closing it never releases the POSIX locks that this
// process's connections hold on the same file, as closing an *os.File
// of it would. Read a database that may be open in this process (its
// header, its pages) through this, not os.Open.
type File struct {
	mu   sync.Mutex
	p    *C.agentfs_dbfile
	path string
}

// Sniffing and key checks of database files (internal/crypt) read through
// File in every process that links this package.
func init() {
	osOpen := crypt.OpenFile
	crypt.OpenFile = func(path string) (crypt.File, error) {
		f, err := OpenFile(path)
		if errors.Is(err, errNoUnixVFS) {
			return osOpen(path)
		}
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

// errNoUnixVFS: SQLite has no unix VFS here (Windows: its locks belong to
// a handle, so closing another handle of the file is harmless).
var errNoUnixVFS = errors.New("sqlite: no unix VFS")

// OpenFile opens the database file at path for reading. A missing file is
// an error matching fs.ErrNotExist.
func OpenFile(path string) (*File, error) {
	libsqlReady() // finding a VFS initializes SQLite
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var errno C.int
	p := C.agentfs_file_open(cpath, &errno)
	if p == nil {
		if errno < 0 {
			return nil, errNoUnixVFS
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.Errno(errno)}
	}
	return &File{p: p, path: path}, nil
}

// Size is the file's size now.
func (f *File) Size() (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.p == nil {
		return 0, fs.ErrClosed
	}
	n := int64(C.agentfs_file_size(f.p))
	if n < 0 {
		return 0, &fs.PathError{Op: "stat", Path: f.path, Err: syscall.EIO}
	}
	return n, nil
}

// ReadAt reads as io.ReaderAt does: fewer bytes than asked only at the
// end of the file, with io.EOF.
func (f *File) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.path, Err: syscall.EINVAL}
	}
	size, err := f.Size()
	if err != nil {
		return 0, err
	}
	n := len(b)
	if rest := size - off; rest < int64(n) {
		n = int(max(rest, 0))
	}
	for done := 0; done < n; {
		chunk := min(n-done, 1<<30)
		f.mu.Lock()
		if f.p == nil {
			f.mu.Unlock()
			return done, fs.ErrClosed
		}
		rc := C.agentfs_file_read(f.p, unsafe.Pointer(&b[done]), C.int(chunk), C.int64_t(off+int64(done)))
		f.mu.Unlock()
		if rc != 0 {
			return done, &fs.PathError{Op: "read", Path: f.path, Err: fmt.Errorf("SQLite I/O error %d", int(rc))}
		}
		done += chunk
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// Close closes the file (see File). Closing twice is an error.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.p == nil {
		return fs.ErrClosed
	}
	C.agentfs_file_close(f.p)
	f.p = nil
	return nil
}

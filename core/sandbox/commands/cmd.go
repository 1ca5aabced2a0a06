package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// FS is the filesystem a command works on. Paths are absolute, inside the
// agent filesystem; the sandbox checks its policy and counts the bytes
// written before passing a call to the engine.
type FS interface {
	Stat(p string) (vfs.Stat, error)
	Lstat(p string) (vfs.Stat, error)
	ReadFile(p string) ([]byte, error)
	WriteFile(p string, data []byte, opts vfs.WriteOptions) error
	Open(p string, flags int, perm uint32) (File, error)
	ReaddirPlus(p string) ([]vfs.DirEntry, error)
	Mkdir(p string, perm uint32) error
	MkdirAll(p string, perm uint32) error
	Unlink(p string) error
	Rmdir(p string) error
	RemoveAll(p string) error
	Rename(oldp, newp string) error
	Link(oldp, newp string) error
	Symlink(target, linkp string) error
	Readlink(p string) (string, error)
	Chmod(p string, perm uint32) error
	// Chown sets owner and group (-1 keeps one); follow false acts on
	// a symlink itself.
	Chown(p string, uid, gid int64, follow bool) error
	Utimens(p string, atime, mtime *time.Time, follow bool) error
	Truncate(p string, size int64) error
	CopyFile(src, dst string) error
	Statfs() (vfs.FSStat, error)
}

// File is an open file of an FS.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	Stat() (vfs.Stat, error)
}

// Runner runs another command (xargs, find -exec, env) with the
// sandbox's limits and policy and returns its exit status.
type Runner func(ctx context.Context, inv Invocation) int

// Invocation is a command run by another command.
type Invocation struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Env replaces the environment ("K=V") when not nil.
	Env []string
	// Dir is the working directory ("" keeps the caller's).
	Dir string
}

// Identity is who the sandbox says the user is (whoami, ls -l, $UID).
type Identity struct {
	User     string
	UID, GID uint32
	Hostname string
}

// Cmd is one invocation of a command.
type Cmd struct {
	Ctx     context.Context
	Args    []string // Args[0] is the command name
	Dir     string   // working directory, absolute in the agent filesystem
	Env     func(name string) (string, bool)
	Environ func() []string // "K=V" of the exported variables, sorted
	Stdin   io.Reader       // never nil
	Stdout  io.Writer
	Stderr  io.Writer
	FS      FS
	Exec    Runner
	ID      Identity
	// Lookup reports whether a command name is known (which, type).
	Lookup func(name string) bool
	// Now is the clock (date, touch); tests may fix it.
	Now func() time.Time
	// Net is the network curl may use under the sandbox's policy; nil
	// means none.
	Net *Net
	// Mem is the run's memory budget (nil: none); see Reserve.
	Mem *Mem
	// Umask is the sandbox's file creation mask (chmod +w honours it).
	Umask uint32

	held int64 // bytes of Mem this command reserved
}

// Name is the command's name as invoked.
func (c *Cmd) Name() string { return c.Args[0] }

// Abs makes p absolute against the working directory, cleaned.
func (c *Cmd) Abs(p string) string {
	if p == "" {
		return ""
	}
	if !strings.HasPrefix(p, "/") {
		p = c.Dir + "/" + p
	}
	cleaned := path.Clean(p)
	if strings.HasSuffix(p, "/") && cleaned != "/" {
		// Keep a trailing slash: it means "must be a directory".
		cleaned += "/"
	}
	return cleaned
}

// Getenv returns a variable of the shell's environment.
func (c *Cmd) Getenv(name string) string {
	if c.Env == nil {
		return ""
	}
	v, _ := c.Env(name)
	return v
}

// Errorf prints "NAME: message" on stderr.
func (c *Cmd) Errorf(format string, a ...any) {
	fmt.Fprintf(c.Stderr, "%s: %s\n", c.Name(), fmt.Sprintf(format, a...))
}

// Fail prints "NAME: message" and returns status 1.
func (c *Cmd) Fail(format string, a ...any) int {
	c.Errorf(format, a...)
	return 1
}

// Usage prints a usage error and returns status 2 (1 for utilities whose
// GNU version uses 1 for everything).
func (c *Cmd) Usage(code int, format string, a ...any) int {
	c.Errorf(format, a...)
	fmt.Fprintf(c.Stderr, "Try '%s --help' for more information.\n", c.Name())
	return code
}

// PathError prints a GNU-style message for a filesystem error on name:
// "cat: name: No such file or directory".
func (c *Cmd) PathError(name string, err error) {
	c.Errorf("%s: %s", name, ErrText(err))
}

// Cancelled reports whether the run was cancelled or stopped by a limit.
// It looks at Done only, so calling it in a loop is cheap.
func (c *Cmd) Cancelled() bool {
	select {
	case <-c.Ctx.Done():
		return true
	default:
		return false
	}
}

// ErrText is strerror(3) for an error: "No such file or directory".
func ErrText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return strerror(errno)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return capitalize(pe.Err.Error())
	}
	return err.Error()
}

func strerror(e syscall.Errno) string {
	switch e {
	case syscall.ENOENT:
		return "No such file or directory"
	case syscall.EACCES:
		return "Permission denied"
	case syscall.EPERM:
		return "Operation not permitted"
	case syscall.EISDIR:
		return "Is a directory"
	case syscall.ENOTDIR:
		return "Not a directory"
	case syscall.EEXIST:
		return "File exists"
	case syscall.ENOTEMPTY:
		return "Directory not empty"
	case syscall.ELOOP:
		return "Too many levels of symbolic links"
	case syscall.EINVAL:
		return "Invalid argument"
	case syscall.ENAMETOOLONG:
		return "File name too long"
	case syscall.EROFS:
		return "Read-only file system"
	case syscall.ENOSPC:
		return "No space left on device"
	case syscall.EFBIG:
		return "File too large"
	case syscall.EBUSY:
		return "Device or resource busy"
	case syscall.EXDEV:
		return "Invalid cross-device link"
	}
	return capitalize(e.Error())
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Errno extracts the errno of err, or 0.
func Errno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// nopCloser adapts the standard streams for OpenPath.
type stream struct {
	r io.Reader
	w io.Writer
}

func (s stream) Read(p []byte) (int, error) {
	if s.r == nil {
		return 0, io.EOF
	}
	return s.r.Read(p)
}

func (s stream) Write(p []byte) (int, error) {
	if s.w == nil {
		return 0, &fs.PathError{Op: "write", Path: "/dev/stdin", Err: syscall.EBADF}
	}
	return s.w.Write(p)
}

func (stream) Close() error { return nil }

func (stream) Stat() (vfs.Stat, error) { return vfs.Stat{Mode: 0o020666}, nil }

// Devices are the files of /dev that exist virtually in every sandbox.
var Devices = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd/0", "/dev/fd/1", "/dev/fd/2"}

// IsDevice reports whether p (absolute, cleaned) is a virtual device.
func IsDevice(p string) bool {
	for _, d := range Devices {
		if p == d {
			return true
		}
	}
	return false
}

// OpenDevice opens a virtual device, or returns ok=false for other paths.
// /dev/stdin, /dev/stdout and /dev/stderr are the given streams, so
// "cat /dev/stdin" and "echo x >/dev/stderr" work without host files.
func OpenDevice(p string, stdin io.Reader, stdout, stderr io.Writer) (File, bool) {
	switch p {
	case "/dev/null":
		return devNull{}, true
	case "/dev/zero":
		return devZero{}, true
	case "/dev/random", "/dev/urandom":
		return devRandom{}, true
	case "/dev/stdin", "/dev/fd/0":
		return stream{r: stdin}, true
	case "/dev/stdout", "/dev/fd/1":
		return stream{w: stdout}, true
	case "/dev/stderr", "/dev/fd/2":
		return stream{w: stderr}, true
	}
	return nil, false
}

// DeviceStat is the attributes shown for a virtual device.
func DeviceStat(p string) vfs.Stat {
	return vfs.Stat{Mode: 0o020666, Nlink: 1, Mtime: time.Unix(0, 0), Atime: time.Unix(0, 0), Ctime: time.Unix(0, 0)}
}

type devNull struct{}

// IsDevNull reports whether w is /dev/null, whose writes cost nothing.
func IsDevNull(w io.Writer) bool {
	_, ok := w.(devNull)
	return ok
}

func (devNull) Read([]byte) (int, error)    { return 0, io.EOF }
func (devNull) Write(p []byte) (int, error) { return len(p), nil }
func (devNull) Close() error                { return nil }
func (devNull) Stat() (vfs.Stat, error)     { return DeviceStat("/dev/null"), nil }

type devZero struct{}

func (devZero) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
func (devZero) Write(p []byte) (int, error) { return len(p), nil }
func (devZero) Close() error                { return nil }
func (devZero) Stat() (vfs.Stat, error)     { return DeviceStat("/dev/zero"), nil }

type devRandom struct{}

func (devRandom) Read(p []byte) (int, error) { return cryptoRead(p) }
func (devRandom) Write(p []byte) (int, error) {
	return len(p), nil
}
func (devRandom) Close() error            { return nil }
func (devRandom) Stat() (vfs.Stat, error) { return DeviceStat("/dev/urandom"), nil }

// Open opens a file named on the command line (relative to Dir), with the
// virtual devices and "-" for standard input when dash is true.
func (c *Cmd) Open(name string, dash bool) (File, error) {
	if dash && name == "-" {
		return stream{r: c.Stdin}, nil
	}
	p := c.Abs(name)
	if f, ok := OpenDevice(strings.TrimSuffix(p, "/"), c.Stdin, c.Stdout, c.Stderr); ok {
		return f, nil
	}
	return c.FS.Open(p, os.O_RDONLY, 0)
}

// Create opens a file for writing (truncating, or appending).
func (c *Cmd) Create(name string, appendMode bool) (File, error) {
	p := c.Abs(name)
	if f, ok := OpenDevice(p, c.Stdin, c.Stdout, c.Stderr); ok {
		return f, nil
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendMode {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	return c.FS.Open(p, flags, 0o666)
}

// ReadAll reads a whole input file ("-" is stdin); a directory is EISDIR.
// What it returns is reserved in the run's memory budget until the
// command returns, or until it calls Release(len(data)).
func (c *Cmd) ReadAll(name string) ([]byte, error) {
	if name != "-" {
		if p := c.Abs(name); !IsDevice(strings.TrimSuffix(p, "/")) {
			// One resolution and one query, instead of open, stat and
			// reads: this is the path of grep, cat, sort... on every file.
			// The data is counted once read: a file in the database is
			// bounded already, and a stat first would cost a query.
			data, err := c.FS.ReadFile(p)
			if err == nil {
				err = c.Reserve(int64(len(data)))
			}
			if err != nil {
				return nil, err
			}
			return data, nil
		}
	}
	f, err := c.Open(name, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	// Size the buffer from the file: io.ReadAll starts at 512 bytes and
	// would take several reads (each a database query) per small file.
	hint := int64(0)
	if err == nil {
		hint = st.Size
	}
	return c.ReadAllFrom(f, hint)
}

// Stat follows symlinks; devices are answered virtually.
func (c *Cmd) Stat(name string) (vfs.Stat, error) {
	p := c.Abs(name)
	if IsDevice(p) {
		return DeviceStat(p), nil
	}
	return c.FS.Stat(p)
}

// StdinStat is the attributes of standard input when it is a file of
// the sandbox ("cmd < file"); an error for a pipe or a stream.
func (c *Cmd) StdinStat() (vfs.Stat, error) {
	if f, ok := c.Stdin.(interface{ Stat() (vfs.Stat, error) }); ok {
		return f.Stat()
	}
	return vfs.Stat{}, syscall.ESPIPE
}

// CLocale reports whether the environment selects the C (POSIX) locale
// for characters (LC_ALL, then LC_CTYPE, then LANG): a character is then
// a byte. The sandbox's default is UTF-8.
func (c *Cmd) CLocale() bool {
	for _, name := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := c.Getenv(name); v != "" {
			return v == "C" || v == "POSIX"
		}
	}
	return false
}

// Lstat does not follow a final symlink.
func (c *Cmd) Lstat(name string) (vfs.Stat, error) {
	p := c.Abs(name)
	if IsDevice(p) {
		return DeviceStat(p), nil
	}
	return c.FS.Lstat(p)
}

// Inputs calls fn for every input named in files, or stdin when there is
// none. A file that cannot be opened prints an error and makes the result
// 1; fn errors other than EPIPE likewise.
func (c *Cmd) Inputs(files []string, fn func(name string, r io.Reader) error) int {
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := 0
	for _, name := range files {
		if c.Cancelled() {
			return 1
		}
		f, err := c.Open(name, true)
		if err != nil {
			c.PathError(name, err)
			status = 1
			continue
		}
		if st, err := f.Stat(); err == nil && st.IsDir() {
			f.Close()
			c.Errorf("%s: Is a directory", name)
			status = 1
			continue
		}
		err = fn(name, f)
		f.Close()
		if err != nil {
			if IsWriteStop(err) {
				return status
			}
			c.PathError(name, err)
			status = 1
		}
	}
	return status
}

// IsWriteStop reports whether err means the reader of our output went
// away (a closed pipe) or a limit was hit: the command should stop quietly.
func IsWriteStop(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, ErrStop)
}

// ErrStop is returned by writers of the sandbox when the run must end (an
// output limit); commands stop without printing it.
var ErrStop = errors.New("sandbox: output stopped")

// Lines reads r line by line, calling fn with each line without its "\n";
// last reports whether the final line had no newline.
func Lines(r io.Reader, fn func(line string, noEOL bool) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		s, err := br.ReadString('\n')
		if len(s) > 0 {
			noEOL := !strings.HasSuffix(s, "\n")
			if ferr := fn(strings.TrimSuffix(s, "\n"), noEOL); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// SplitLines splits data into lines without their "\n"; a final line
// without newline is kept.
func SplitLines(data []byte) []string {
	s := string(data)
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// bufOut wraps Stdout in a buffer; the caller must Flush.
func (c *Cmd) bufOut() *bufio.Writer { return bufio.NewWriterSize(c.Stdout, 32<<10) }

// exitWrite turns the error of a final flush into an exit status.
func exitWrite(c *Cmd, err error, status int) int {
	if err != nil && !IsWriteStop(err) {
		c.Errorf("write error: %s", ErrText(err))
		return 1
	}
	return status
}

package jsnode

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/dop251/goja"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// errnoInfo is Node's name, number and message of an errno.
var errnoInfo = map[syscall.Errno]struct {
	code string
	msg  string
}{
	syscall.ENOENT:       {"ENOENT", "no such file or directory"},
	syscall.EACCES:       {"EACCES", "permission denied"},
	syscall.EPERM:        {"EPERM", "operation not permitted"},
	syscall.EEXIST:       {"EEXIST", "file already exists"},
	syscall.EISDIR:       {"EISDIR", "illegal operation on a directory"},
	syscall.ENOTDIR:      {"ENOTDIR", "not a directory"},
	syscall.ENOTEMPTY:    {"ENOTEMPTY", "directory not empty"},
	syscall.EINVAL:       {"EINVAL", "invalid argument"},
	syscall.ELOOP:        {"ELOOP", "too many symbolic links encountered"},
	syscall.ENAMETOOLONG: {"ENAMETOOLONG", "name too long"},
	syscall.EROFS:        {"EROFS", "read-only file system"},
	syscall.ENOSPC:       {"ENOSPC", "no space left on device"},
	syscall.EFBIG:        {"EFBIG", "file too large"},
	syscall.EBADF:        {"EBADF", "bad file descriptor"},
	syscall.EXDEV:        {"EXDEV", "cross-device link not permitted"},
	syscall.EBUSY:        {"EBUSY", "resource busy or locked"},
	syscall.ENOMEM:       {"ENOMEM", "not enough memory"},
}

// fsError throws a Node-style error: "ENOENT: no such file or directory,
// open '/x'" with code, errno, syscall and path.
func (n *node) fsError(err error, op, p string, dest ...string) {
	if errors.Is(err, commands.ErrMemory) || errors.Is(err, commands.ErrStop) {
		n.rt.Interrupt(cancelSignal{})
		panic(n.rt.NewGoError(err))
	}
	errno := commands.Errno(err)
	if errno == 0 {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			errno = syscall.ENOENT
		case errors.Is(err, fs.ErrPermission):
			errno = syscall.EACCES
		case errors.Is(err, fs.ErrExist):
			errno = syscall.EEXIST
		default:
			errno = syscall.EIO
		}
	}
	info, ok := errnoInfo[errno]
	if !ok {
		info.code = strings.ToUpper(fmt.Sprintf("E%d", int(errno)))
		info.msg = errno.Error()
		if name := errnoName(errno); name != "" {
			info.code = name
		}
	}
	msg := fmt.Sprintf("%s: %s, %s '%s'", info.code, info.msg, op, p)
	if len(dest) > 0 {
		msg += fmt.Sprintf(" -> '%s'", dest[0])
	}
	e := n.rt.NewGoError(errors.New(msg))
	e.Set("errno", -int(errno))
	e.Set("code", info.code)
	e.Set("syscall", op)
	e.Set("path", p)
	if len(dest) > 0 {
		e.Set("dest", dest[0])
	}
	panic(e)
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EIO:
		return "EIO"
	case syscall.ENOSYS:
		return "ENOSYS"
	}
	return ""
}

// str is argument i as a path: strings, Buffers and file: URLs.
func (n *node) pathArg(call goja.FunctionCall, i int) string {
	v := call.Argument(i)
	if o, ok := v.(*goja.Object); ok {
		if b, ok := o.Export().([]byte); ok {
			return string(b)
		}
		if h := o.Get("href"); h != nil && strings.HasPrefix(h.String(), "file://") {
			return strings.TrimPrefix(h.String(), "file://")
		}
	}
	if goja.IsUndefined(v) || goja.IsNull(v) {
		panic(n.typeError("ERR_INVALID_ARG_TYPE", "The \"path\" argument must be of type string. Received "+v.String()))
	}
	return v.String()
}

func (n *node) typeError(code, msg string) *goja.Object {
	e := n.rt.NewTypeError(msg)
	e.Set("code", code)
	return e
}

// bytesArg is argument i as bytes: a string (UTF-8) or a typed array.
func (n *node) bytesArg(v goja.Value) []byte {
	if o, ok := v.(*goja.Object); ok {
		switch x := o.Export().(type) {
		case []byte:
			return x
		case goja.ArrayBuffer:
			return x.Bytes()
		}
		if bv := o.Get("buffer"); bv == nil {
		} else if ab, ok := bv.Export().(goja.ArrayBuffer); ok {
			off := int(o.Get("byteOffset").ToInteger())
			l := int(o.Get("byteLength").ToInteger())
			b := ab.Bytes()
			if off >= 0 && l >= 0 && off+l <= len(b) {
				return b[off : off+l]
			}
		}
	}
	return []byte(v.String())
}

func (n *node) buf(b []byte) goja.Value {
	return n.rt.ToValue(n.rt.NewArrayBuffer(b))
}

// statObject is the fields of fs.Stats (the prelude adds the methods).
func (n *node) statObject(st vfs.Stat) *goja.Object {
	o := n.rt.NewObject()
	o.Set("dev", 1)
	o.Set("ino", st.Ino)
	o.Set("mode", st.Mode)
	o.Set("nlink", st.Nlink)
	o.Set("uid", st.UID)
	o.Set("gid", st.GID)
	o.Set("rdev", 0)
	o.Set("size", st.Size)
	o.Set("blksize", 4096)
	o.Set("blocks", (st.Size+511)/512)
	o.Set("atimeMs", float64(st.Atime.UnixNano())/1e6)
	o.Set("mtimeMs", float64(st.Mtime.UnixNano())/1e6)
	o.Set("ctimeMs", float64(st.Ctime.UnixNano())/1e6)
	o.Set("birthtimeMs", float64(st.Ctime.UnixNano())/1e6)
	return o
}

type openFile struct {
	f      commands.File
	path   string
	append bool
}

// parseFlags turns Node's open flags ("r", "w+", "ax"...) into os flags.
func parseFlags(s string) (int, bool) {
	switch s {
	case "", "r", "rs", "sr":
		return os.O_RDONLY, true
	case "r+", "rs+", "sr+":
		return os.O_RDWR, true
	case "w":
		return os.O_WRONLY | os.O_CREATE | os.O_TRUNC, true
	case "wx", "xw":
		return os.O_WRONLY | os.O_CREATE | os.O_TRUNC | os.O_EXCL, true
	case "w+":
		return os.O_RDWR | os.O_CREATE | os.O_TRUNC, true
	case "wx+", "xw+":
		return os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_EXCL, true
	case "a", "as", "sa":
		return os.O_WRONLY | os.O_CREATE | os.O_APPEND, true
	case "ax", "xa":
		return os.O_WRONLY | os.O_CREATE | os.O_APPEND | os.O_EXCL, true
	case "a+", "as+", "sa+":
		return os.O_RDWR | os.O_CREATE | os.O_APPEND, true
	case "ax+", "xa+":
		return os.O_RDWR | os.O_CREATE | os.O_APPEND | os.O_EXCL, true
	}
	return 0, false
}

// readPath reads a whole file; /dev/stdin and the other virtual devices
// are the command's streams.
func (n *node) readPath(p string) ([]byte, error) {
	if f, ok := commands.OpenDevice(p, n.c.Stdin, n.c.Stdout, n.c.Stderr); ok {
		return io.ReadAll(io.LimitReader(f, 256<<20))
	}
	data, err := n.c.FS.ReadFile(p)
	if err != nil {
		return nil, err
	}
	// The bytes become a JavaScript value the heap guard sees later; ask
	// the budget now so that one large read stops at once.
	if err := n.c.Mem.Check(int64(len(data))); err != nil {
		return nil, err
	}
	return data, nil
}

func (n *node) bindFS(fsObj *goja.Object) {
	rt := n.rt
	set := func(name string, f func(call goja.FunctionCall) goja.Value) { fsObj.Set(name, f) }

	set("readFile", func(call goja.FunctionCall) goja.Value {
		v := call.Argument(0)
		if fd, ok := v.Export().(int64); ok {
			return n.buf(n.readFD(int(fd)))
		}
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		data, err := n.readPath(p)
		if err != nil {
			n.fsError(err, "open", orig)
		}
		return n.buf(data)
	})
	set("writeFile", func(call goja.FunctionCall) goja.Value {
		data := n.bytesArg(call.Argument(1))
		flag := "w"
		if f := call.Argument(2); !goja.IsUndefined(f) && !goja.IsNull(f) {
			flag = f.String()
		}
		if fd, ok := call.Argument(0).Export().(int64); ok {
			n.writeFD(int(fd), data)
			return goja.Undefined()
		}
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		if dev, ok := commands.OpenDevice(p, n.c.Stdin, n.c.Stdout, n.c.Stderr); ok {
			if _, err := dev.Write(data); err != nil {
				n.fsError(err, "write", orig)
			}
			return goja.Undefined()
		}
		if flag == "w" {
			if err := n.c.FS.WriteFile(p, data, vfs.WriteOptions{}); err != nil {
				n.fsError(err, "open", orig)
			}
			return goja.Undefined()
		}
		fl, ok := parseFlags(flag)
		if !ok {
			panic(n.typeError("ERR_INVALID_ARG_VALUE", "invalid flag "+flag))
		}
		f, err := n.c.FS.Open(p, fl, 0o666)
		if err != nil {
			n.fsError(err, "open", orig)
		}
		defer f.Close()
		if _, err := f.Write(data); err != nil {
			n.fsError(err, "write", orig)
		}
		if err := f.Close(); err != nil {
			n.fsError(err, "close", orig)
		}
		return goja.Undefined()
	})
	set("stat", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		follow := call.Argument(1).ToBoolean()
		if commands.IsDevice(p) {
			return n.statObject(commands.DeviceStat(p))
		}
		var st vfs.Stat
		var err error
		if follow {
			st, err = n.c.FS.Stat(p)
		} else {
			st, err = n.c.FS.Lstat(p)
		}
		if err != nil {
			if call.Argument(2).ToBoolean() { // throwIfNoEntry: false
				return goja.Undefined()
			}
			op := "stat"
			if !follow {
				op = "lstat"
			}
			n.fsError(err, op, p)
		}
		return n.statObject(st)
	})
	set("exists", func(call goja.FunctionCall) goja.Value {
		v := call.Argument(0)
		if goja.IsUndefined(v) || goja.IsNull(v) {
			return rt.ToValue(false)
		}
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		if commands.IsDevice(p) {
			return rt.ToValue(true)
		}
		_, err := n.c.FS.Stat(p)
		return rt.ToValue(err == nil)
	})
	set("readdir", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		ents, err := n.c.FS.ReaddirPlus(p)
		if err != nil {
			n.fsError(err, "scandir", orig)
		}
		out := make([]any, 0, len(ents))
		for _, e := range ents {
			out = append(out, []any{e.Name, e.Stat.Mode & 0o170000})
		}
		return rt.ToValue(out)
	})
	set("mkdir", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		recursive := call.Argument(1).ToBoolean()
		mode := uint32(0o777)
		if m := call.Argument(2); !goja.IsUndefined(m) {
			mode = uint32(m.ToInteger())
		}
		if !recursive {
			if err := n.c.FS.Mkdir(p, mode); err != nil {
				n.fsError(err, "mkdir", orig)
			}
			return goja.Undefined()
		}
		// Node returns the first directory created, undefined if none.
		first := ""
		for d := p; d != "/"; d = path.Dir(d) {
			if _, err := n.c.FS.Stat(d); err == nil {
				break
			}
			first = d
		}
		if err := n.c.FS.MkdirAll(p, mode); err != nil {
			n.fsError(err, "mkdir", orig)
		}
		if first == "" {
			return goja.Undefined()
		}
		return rt.ToValue(first)
	})
	set("rm", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		recursive, force := call.Argument(1).ToBoolean(), call.Argument(2).ToBoolean()
		st, err := n.c.FS.Lstat(p)
		if err != nil {
			if force && commands.Errno(err) == syscall.ENOENT {
				return goja.Undefined()
			}
			n.fsError(err, "rm", orig)
		}
		if st.IsDir() {
			if !recursive {
				e := n.rt.NewGoError(fmt.Errorf("Path is a directory: rm returned EISDIR (is a directory) %s", p))
				e.Set("code", "ERR_FS_EISDIR")
				panic(e)
			}
			err = n.c.FS.RemoveAll(p)
		} else {
			err = n.c.FS.Unlink(p)
		}
		if err != nil {
			n.fsError(err, "rm", orig)
		}
		return goja.Undefined()
	})
	set("rmdir", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		var err error
		if call.Argument(1).ToBoolean() {
			err = n.c.FS.RemoveAll(p)
		} else {
			err = n.c.FS.Rmdir(p)
		}
		if err != nil {
			n.fsError(err, "rmdir", orig)
		}
		return goja.Undefined()
	})
	set("unlink", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		if err := n.c.FS.Unlink(p); err != nil {
			n.fsError(err, "unlink", orig)
		}
		return goja.Undefined()
	})
	set("rename", func(call goja.FunctionCall) goja.Value {
		origA, origB := n.pathArg(call, 0), n.pathArg(call, 1)
		a, b := n.abs(origA), n.abs(origB)
		if err := n.c.FS.Rename(a, b); err != nil {
			n.fsError(err, "rename", origA, origB)
		}
		return goja.Undefined()
	})
	set("copyFile", func(call goja.FunctionCall) goja.Value {
		origA, origB := n.pathArg(call, 0), n.pathArg(call, 1)
		a, b := n.abs(origA), n.abs(origB)
		if call.Argument(2).ToInteger()&1 != 0 { // COPYFILE_EXCL
			if _, err := n.c.FS.Lstat(b); err == nil {
				n.fsError(syscall.EEXIST, "copyfile", origA, origB)
			}
		}
		if err := n.c.FS.CopyFile(a, b); err != nil {
			n.fsError(err, "copyfile", origA, origB)
		}
		return goja.Undefined()
	})
	set("symlink", func(call goja.FunctionCall) goja.Value {
		target, orig := call.Argument(0).String(), n.pathArg(call, 1)
		p := n.abs(orig)
		if err := n.c.FS.Symlink(target, p); err != nil {
			n.fsError(err, "symlink", target, orig)
		}
		return goja.Undefined()
	})
	set("link", func(call goja.FunctionCall) goja.Value {
		origA, origB := n.pathArg(call, 0), n.pathArg(call, 1)
		a, b := n.abs(origA), n.abs(origB)
		if err := n.c.FS.Link(a, b); err != nil {
			n.fsError(err, "link", origA, origB)
		}
		return goja.Undefined()
	})
	set("readlink", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		t, err := n.c.FS.Readlink(p)
		if err != nil {
			n.fsError(err, "readlink", orig)
		}
		return rt.ToValue(t)
	})
	set("realpath", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		r, err := n.realpath(p, 0)
		if err != nil {
			n.fsError(err, "realpath", orig)
		}
		return rt.ToValue(r)
	})
	set("access", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		mode := call.Argument(1).ToInteger()
		if commands.IsDevice(p) {
			return goja.Undefined()
		}
		st, err := n.c.FS.Stat(p)
		if err != nil {
			n.fsError(err, "access", orig)
		}
		// The sandbox's policy is checked on use; here the mode bits
		// answer, as for the owner.
		perm := int64(st.Mode>>6) & 7
		if mode&^perm&7 != 0 {
			n.fsError(syscall.EACCES, "access", orig)
		}
		return goja.Undefined()
	})
	set("chmod", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		if err := n.c.FS.Chmod(p, uint32(call.Argument(1).ToInteger())); err != nil {
			n.fsError(err, "chmod", orig)
		}
		return goja.Undefined()
	})
	set("truncate", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		if err := n.c.FS.Truncate(p, call.Argument(1).ToInteger()); err != nil {
			n.fsError(err, "open", orig)
		}
		return goja.Undefined()
	})
	set("utimes", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		at := time.UnixMilli(int64(call.Argument(1).ToFloat() * 1000))
		mt := time.UnixMilli(int64(call.Argument(2).ToFloat() * 1000))
		if err := n.c.FS.Utimens(p, &at, &mt, true); err != nil {
			n.fsError(err, "utime", orig)
		}
		return goja.Undefined()
	})
	set("open", func(call goja.FunctionCall) goja.Value {
		orig := n.pathArg(call, 0)
		p := n.abs(orig)
		flag := "r"
		if f := call.Argument(1); !goja.IsUndefined(f) && !goja.IsNull(f) {
			flag = f.String()
		}
		fl, ok := parseFlags(flag)
		if !ok {
			panic(n.typeError("ERR_INVALID_ARG_VALUE", "invalid flag "+flag))
		}
		mode := uint32(0o666)
		if m := call.Argument(2); !goja.IsUndefined(m) {
			mode = uint32(m.ToInteger())
		}
		var f commands.File
		if dev, ok := commands.OpenDevice(p, n.c.Stdin, n.c.Stdout, n.c.Stderr); ok {
			f = dev
		} else {
			var err error
			f, err = n.c.FS.Open(p, fl, mode)
			if err != nil {
				n.fsError(err, "open", orig)
			}
		}
		if len(n.files) >= 1024 {
			f.Close()
			n.fsError(syscall.EMFILE, "open", orig)
		}
		fd := n.nextFD
		n.nextFD++
		n.files[fd] = &openFile{f: f, path: p, append: fl&os.O_APPEND != 0}
		return rt.ToValue(fd)
	})
	set("close", func(call goja.FunctionCall) goja.Value {
		fd := int(call.Argument(0).ToInteger())
		of, ok := n.files[fd]
		if !ok {
			if fd <= 2 {
				return goja.Undefined()
			}
			n.fsError(syscall.EBADF, "close", "")
		}
		delete(n.files, fd)
		if err := of.f.Close(); err != nil {
			n.fsError(err, "close", of.path)
		}
		return goja.Undefined()
	})
	set("read", func(call goja.FunctionCall) goja.Value {
		fd := int(call.Argument(0).ToInteger())
		size := int(call.Argument(1).ToInteger())
		if size < 0 || size > 64<<20 {
			size = 64 << 20
		}
		var r io.Reader
		if fd == 0 {
			r = n.c.Stdin
		} else if of, ok := n.files[fd]; ok {
			r = of.f
		} else {
			n.fsError(syscall.EBADF, "read", "")
		}
		b := make([]byte, size)
		k, err := io.ReadFull(r, b)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			n.fsError(err, "read", "")
		}
		return n.buf(b[:k])
	})
	set("write", func(call goja.FunctionCall) goja.Value {
		fd := int(call.Argument(0).ToInteger())
		data := n.bytesArg(call.Argument(1))
		n.writeFD(fd, data)
		return rt.ToValue(len(data))
	})
	set("fstat", func(call goja.FunctionCall) goja.Value {
		fd := int(call.Argument(0).ToInteger())
		of, ok := n.files[fd]
		if !ok {
			if fd <= 2 {
				return n.statObject(commands.DeviceStat("/dev/stdin"))
			}
			n.fsError(syscall.EBADF, "fstat", "")
		}
		st, err := of.f.Stat()
		if err != nil {
			n.fsError(err, "fstat", of.path)
		}
		return n.statObject(st)
	})
}

func (n *node) readFD(fd int) []byte {
	var r io.Reader
	if fd == 0 {
		r = n.c.Stdin
	} else if of, ok := n.files[fd]; ok {
		r = of.f
	} else {
		n.fsError(syscall.EBADF, "read", "")
	}
	data, err := io.ReadAll(io.LimitReader(r, 256<<20))
	if err != nil {
		n.fsError(err, "read", "")
	}
	if err := n.c.Mem.Check(int64(len(data))); err != nil {
		n.fsError(err, "read", "")
	}
	return data
}

func (n *node) writeFD(fd int, data []byte) {
	switch fd {
	case 1, 2:
		n.write(fd, data)
		return
	}
	of, ok := n.files[fd]
	if !ok {
		n.fsError(syscall.EBADF, "write", "")
	}
	if _, err := of.f.Write(data); err != nil {
		n.fsError(err, "write", of.path)
	}
}

// realpath resolves every symlink of p.
func (n *node) realpath(p string, depth int) (string, error) {
	if depth > 40 {
		return "", syscall.ELOOP
	}
	parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	cur := "/"
	for i, part := range parts {
		if part == "" {
			continue
		}
		next := path.Join(cur, part)
		st, err := n.c.FS.Lstat(next)
		if err != nil {
			return "", err
		}
		if st.Mode&0o170000 == 0o120000 {
			t, err := n.c.FS.Readlink(next)
			if err != nil {
				return "", err
			}
			if !strings.HasPrefix(t, "/") {
				t = path.Join(cur, t)
			}
			rest := strings.Join(parts[i+1:], "/")
			return n.realpath(path.Join(t, rest), depth+1)
		}
		cur = next
	}
	return cur, nil
}

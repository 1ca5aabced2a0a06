package vfs_test

// FuzzOps runs sequences of filesystem operations against the engine and
// against a small in-memory model of a POSIX filesystem (model_test.go),
// and compares the errno of every operation, what reads return, and at
// the end the whole tree: paths, types, contents, link targets and which
// names share an inode.
//
// The model follows POSIX, and Linux where POSIX leaves a choice (which
// error wins when several apply, trailing slashes). On Linux as root,
// AGENTFS_FUZZ_HOST=1 also checks the model against the kernel itself
// (fuzz_host_linux_test.go), which keeps the model honest.
//
// Run the fuzzer with: go test -run='^$' -fuzz=FuzzOps -fuzztime=60s ./vfs

import (
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// fuzzChunk is the chunk size of the fuzzed databases: small, so that
// short contents cross many chunk boundaries.
const fuzzChunk = 512

// The operations of a sequence.
const (
	opMkdir = iota
	opWrite
	opOpen
	opPwrite
	opPread
	opClose
	opTrunc
	opFtrunc
	opUnlink
	opRmdir
	opRename
	opLink
	opSymlink
	opRemoveAll
	opStat
	opLstat
	opReadlink
	opRead
	numOps
)

var opNames = [numOps]string{"mkdir", "write", "open", "pwrite", "pread", "close", "trunc", "ftrunc",
	"unlink", "rmdir", "rename", "link", "symlink", "rmall", "stat", "lstat", "readlink", "read"}

// Argument tables: every argument of an operation is one input byte, an
// index into one of these.
var (
	fuzzPaths   = makeFuzzPaths()
	fuzzTargets = []string{"a", "b", "c", "d", "/a", "/a/b", "/b/c", "..", ".", "../a", "a/b", "/", "/zz", "b/../c", "../../d", "/a/b/c"}
	fuzzLens    = []int64{0, 1, 7, 511, 512, 513, 1000, 1024, 1025, 1536, 2047, 2048, 3000, 4096, 5000, 100}
	fuzzOffs    = []int64{0, 1, 100, 511, 512, 513, 1023, 1024, 1537, 2048, 3000, 5000, 9000, 1<<20 + 2000, 1<<20 + 600000, 3<<20 + 1}
	fuzzSizes   = []int64{0, 1, 100, 511, 512, 513, 1024, 1500, 2048, 3000, 5000, 9000, 1<<20 + 2000, 3 << 20, 7, 4096}
)

// makeFuzzPaths lists every path of depth 1 to 3 over the names a, b, c,
// d, and a few spellings with ".", ".." and doubled slashes.
func makeFuzzPaths() []string {
	names := []string{"a", "b", "c", "d"}
	var out []string
	for _, x := range names {
		out = append(out, "/"+x)
	}
	for _, x := range names {
		for _, y := range names {
			out = append(out, "/"+x+"/"+y)
		}
	}
	for _, x := range names {
		for _, y := range names {
			for _, z := range names {
				out = append(out, "/"+x+"/"+y+"/"+z)
			}
		}
	}
	return append(out, "/", "/.", "/..", "/a/.", "/a/..", "/a/b/.", "/a/b/..", "/a/./b", "/a/../b", "//a//b")
}

// fuzzPath decodes a path byte: an index into fuzzPaths, and in a third of
// the cases the path with a trailing slash.
func fuzzPath(b byte) string {
	n := len(fuzzPaths)
	p := fuzzPaths[int(b)%n]
	if int(b)/n == 1 && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// fop is one decoded operation.
type fop struct {
	kind   int
	p1, p2 string
	target string
	slot   int
	n      int64 // length, offset or size
	n2     int64 // length of pwrite and pread
	seed   byte
	flags  int // write mode, open flags, rename flags
}

func (o fop) String() string {
	switch o.kind {
	case opMkdir, opUnlink, opRmdir, opRemoveAll, opStat, opLstat, opReadlink, opRead:
		return opNames[o.kind] + " " + o.p1
	case opWrite:
		return fmt.Sprintf("write %s %d %d %s", o.p1, o.n, o.seed, []string{"trunc", "append", "excl"}[o.flags])
	case opOpen:
		return fmt.Sprintf("open %d %s %s", o.slot, o.p1, openFlagString(o.flags))
	case opPwrite:
		return fmt.Sprintf("pwrite %d %d %d %d", o.slot, o.n, o.n2, o.seed)
	case opPread:
		return fmt.Sprintf("pread %d %d %d", o.slot, o.n, o.n2)
	case opClose:
		return fmt.Sprintf("close %d", o.slot)
	case opTrunc:
		return fmt.Sprintf("trunc %s %d", o.p1, o.n)
	case opFtrunc:
		return fmt.Sprintf("ftrunc %d %d", o.slot, o.n)
	case opRename:
		return fmt.Sprintf("rename %s %s %s", o.p1, o.p2, []string{"0", "noreplace", "exchange"}[o.flags])
	case opLink:
		return fmt.Sprintf("link %s %s", o.p1, o.p2)
	case opSymlink:
		return fmt.Sprintf("symlink %s %s", o.target, o.p1)
	}
	return "?"
}

// Open flags of the fuzzer, decoded from one byte.
const (
	ofCreate = 1 << iota
	ofTrunc
	ofExcl
	ofAppend
	ofRdonly
	ofAll = 1<<iota - 1
)

func openFlags(b byte) int {
	fl := int(b) & ofAll
	if fl&ofRdonly != 0 {
		fl &^= ofTrunc // O_RDONLY|O_TRUNC is unspecified by POSIX
	}
	return fl
}

func openFlagString(fl int) string {
	var s []string
	for i, n := range []string{"creat", "trunc", "excl", "append", "rdonly"} {
		if fl&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	if len(s) == 0 {
		return "rdwr"
	}
	return strings.Join(s, "|")
}

func osOpenFlags(fl int) int {
	f := os.O_RDWR
	if fl&ofRdonly != 0 {
		f = os.O_RDONLY
	}
	for bit, o := range map[int]int{ofCreate: os.O_CREATE, ofTrunc: os.O_TRUNC, ofExcl: os.O_EXCL, ofAppend: os.O_APPEND} {
		if fl&bit != 0 {
			f |= o
		}
	}
	return f
}

const maxFuzzOps = 80

// decodeOps turns fuzz input into operations: an opcode byte followed by
// one byte per argument. A truncated last operation is dropped.
func decodeOps(data []byte) []fop {
	var ops []fop
	for len(data) > 0 && len(ops) < maxFuzzOps {
		kind := int(data[0]) % numOps
		need := map[int]int{opMkdir: 1, opWrite: 4, opOpen: 3, opPwrite: 4, opPread: 3, opClose: 1, opTrunc: 2, opFtrunc: 2,
			opUnlink: 1, opRmdir: 1, opRename: 3, opLink: 2, opSymlink: 2, opRemoveAll: 1, opStat: 1, opLstat: 1, opReadlink: 1, opRead: 1}[kind]
		if len(data) < 1+need {
			break
		}
		a := data[1 : 1+need]
		data = data[1+need:]
		o := fop{kind: kind}
		switch kind {
		case opMkdir, opUnlink, opRmdir, opRemoveAll, opStat, opLstat, opReadlink, opRead:
			o.p1 = fuzzPath(a[0])
		case opWrite:
			o.p1, o.n, o.seed, o.flags = fuzzPath(a[0]), fuzzLens[a[1]%16], a[2], int(a[3]%3)
		case opOpen:
			o.slot, o.p1, o.flags = int(a[0]%3), fuzzPath(a[1]), openFlags(a[2])
		case opPwrite:
			o.slot, o.n, o.n2, o.seed = int(a[0]%3), fuzzOffs[a[1]%16], fuzzLens[a[2]%16], a[3]
		case opPread:
			o.slot, o.n, o.n2 = int(a[0]%3), fuzzOffs[a[1]%16], fuzzLens[a[2]%16]
		case opClose:
			o.slot = int(a[0] % 3)
		case opTrunc:
			o.p1, o.n = fuzzPath(a[0]), fuzzSizes[a[1]%16]
		case opFtrunc:
			o.slot, o.n = int(a[0]%3), fuzzSizes[a[1]%16]
		case opRename:
			o.p1, o.p2, o.flags = fuzzPath(a[0]), fuzzPath(a[1]), int(a[2]%3)
		case opLink:
			o.p1, o.p2 = fuzzPath(a[0]), fuzzPath(a[1])
		case opSymlink:
			o.target, o.p1 = fuzzTargets[a[0]%16], fuzzPath(a[1])
		}
		ops = append(ops, o)
	}
	return ops
}

// script encodes a readable sequence, one operation per line or ";", in
// the syntax of fop.String, into fuzz input.
func script(s string) []byte {
	var out []byte
	pathByte := func(p string) byte {
		for b := 0; b < 256; b++ {
			if fuzzPath(byte(b)) == p {
				return byte(b)
			}
		}
		panic("path not in the fuzz table: " + p)
	}
	index := func(what string, table []int64, v string) byte {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			panic(err)
		}
		for i, x := range table {
			if x == n {
				return byte(i)
			}
		}
		panic(what + " not in the fuzz table: " + v)
	}
	word := func(words []string, v string) byte {
		for i, w := range words {
			if w == v {
				return byte(i)
			}
		}
		panic("unknown word " + v)
	}
	num := func(v string) byte {
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(err)
		}
		return byte(n)
	}
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ';' }) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		kind := int(word(opNames[:], f[0]))
		out = append(out, byte(kind))
		switch kind {
		case opMkdir, opUnlink, opRmdir, opRemoveAll, opStat, opLstat, opReadlink, opRead:
			out = append(out, pathByte(f[1]))
		case opWrite:
			out = append(out, pathByte(f[1]), index("length", fuzzLens, f[2]), num(f[3]), word([]string{"trunc", "append", "excl"}, f[4]))
		case opOpen:
			fl := 0
			if f[3] != "rdwr" {
				for _, n := range strings.Split(f[3], "|") {
					fl |= 1 << word([]string{"creat", "trunc", "excl", "append", "rdonly"}, n)
				}
			}
			out = append(out, num(f[1]), pathByte(f[2]), byte(fl))
		case opPwrite:
			out = append(out, num(f[1]), index("offset", fuzzOffs, f[2]), index("length", fuzzLens, f[3]), num(f[4]))
		case opPread:
			out = append(out, num(f[1]), index("offset", fuzzOffs, f[2]), index("length", fuzzLens, f[3]))
		case opClose:
			out = append(out, num(f[1]))
		case opTrunc:
			out = append(out, pathByte(f[1]), index("size", fuzzSizes, f[2]))
		case opFtrunc:
			out = append(out, num(f[1]), index("size", fuzzSizes, f[2]))
		case opRename:
			out = append(out, pathByte(f[1]), pathByte(f[2]), word([]string{"0", "noreplace", "exchange"}, f[3]))
		case opLink:
			out = append(out, pathByte(f[1]), pathByte(f[2]))
		case opSymlink:
			i := -1
			for j, t := range fuzzTargets {
				if t == f[1] {
					i = j
				}
			}
			if i < 0 {
				panic("target not in the fuzz table: " + f[1])
			}
			out = append(out, byte(i), pathByte(f[2]))
		}
	}
	return out
}

// fuzzData is the content written by write and pwrite.
func fuzzData(n int64, seed byte) []byte { return pattern(int(n), seed) }

// backend is a filesystem the operations run on. Errors are errnos.
type backend interface {
	mkdir(p string) error
	writeFile(p string, data []byte, mode int) error
	open(slot int, p string, flags int) error
	pwrite(slot int, off int64, data []byte) error
	pread(slot int, off int64, n int64) ([]byte, error)
	ftruncate(slot int, size int64) error
	close(slot int) error
	truncate(p string, size int64) error
	unlink(p string) error
	rmdir(p string) error
	rename(a, b string, flags int) error
	link(a, b string) error
	symlink(target, p string) error
	removeAll(p string) error
	stat(p string, follow bool) (info, error)
	readlink(p string) (string, error)
	readFile(p string) ([]byte, error)
	// tree lists every path but "/" without following symlinks; only
	// called with no file open.
	tree() ([]treeEntry, error)
}

type info struct {
	typ   byte // 'd', 'f', 'l'
	size  int64
	nlink int
}

type treeEntry struct {
	path   string
	typ    byte
	data   []byte
	target string
	ino    uint64
	nlink  int
}

// runOps runs ops on b and describes the outcome of each, and at the end
// the tree, as lines of text; two filesystems behave the same when their
// lines are equal.
func runOps(b backend, ops []fop) (results []string, tree []string, err error) {
	var open [3]bool
	res := func(e error, extra string) string {
		s := errnoName(errnoOfBackend(e))
		if e != nil && errnoOfBackend(e) == 0 {
			s = "non-errno error: " + e.Error()
		}
		if extra != "" && e == nil {
			s += " " + extra
		}
		return s
	}
	for _, o := range ops {
		var r string
		switch o.kind {
		case opMkdir:
			r = res(b.mkdir(o.p1), "")
		case opWrite:
			r = res(b.writeFile(o.p1, fuzzData(o.n, o.seed), o.flags), "")
		case opOpen:
			if open[o.slot] {
				r = res(b.close(o.slot), "") + "; "
				open[o.slot] = false
			}
			e := b.open(o.slot, o.p1, o.flags)
			open[o.slot] = e == nil
			r += res(e, "")
		case opPwrite, opPread, opFtrunc, opClose:
			if !open[o.slot] {
				r = "no file"
				break
			}
			switch o.kind {
			case opPwrite:
				r = res(b.pwrite(o.slot, o.n, fuzzData(o.n2, o.seed)), "")
			case opPread:
				d, e := b.pread(o.slot, o.n, o.n2)
				if o.n2 == 0 && errnoOfBackend(e) == syscall.EISDIR {
					// POSIX lets a read of 0 bytes skip error checks
					// (Linux returns 0 on a directory).
					e = nil
				}
				r = res(e, digest(d))
			case opFtrunc:
				e := b.ftruncate(o.slot, o.n)
				r = res(e, "")
				if en := errnoOfBackend(e); en == syscall.EBADF || en == syscall.EINVAL {
					// ftruncate(2) of a descriptor not open for writing:
					// POSIX allows either.
					r = "EBADF|EINVAL"
				}
			case opClose:
				r = res(b.close(o.slot), "")
				open[o.slot] = false
			}
		case opTrunc:
			r = res(b.truncate(o.p1, o.n), "")
		case opUnlink:
			r = res(b.unlink(o.p1), "")
		case opRmdir:
			r = res(b.rmdir(o.p1), "")
		case opRename:
			r = res(b.rename(o.p1, o.p2, o.flags), "")
		case opLink:
			r = res(b.link(o.p1, o.p2), "")
		case opSymlink:
			r = res(b.symlink(o.target, o.p1), "")
		case opRemoveAll:
			r = res(b.removeAll(o.p1), "")
		case opStat, opLstat:
			st, e := b.stat(o.p1, o.kind == opStat)
			// A directory's size differs between filesystems; its link
			// count (2 and one per subdirectory) does not.
			extra := fmt.Sprintf("type=%c size=%d nlink=%d", st.typ, st.size, st.nlink)
			if st.typ == 'd' {
				extra = fmt.Sprintf("type=d nlink=%d", st.nlink)
			}
			r = res(e, extra)
		case opReadlink:
			t, e := b.readlink(o.p1)
			r = res(e, strconv.Quote(t))
		case opRead:
			d, e := b.readFile(o.p1)
			r = res(e, digest(d))
		}
		results = append(results, r)
	}
	for slot, isOpen := range open {
		if isOpen {
			if e := b.close(slot); e != nil {
				return results, nil, fmt.Errorf("close %d at the end: %v", slot, e)
			}
		}
	}
	entries, err := b.tree()
	if err != nil {
		return results, nil, err
	}
	return results, treeLines(entries), nil
}

func errnoOfBackend(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	return vfs.Errno(err)
}

// digest describes content: itself when short, else its length and hash.
func digest(d []byte) string {
	if len(d) <= 16 {
		return strconv.Quote(string(d))
	}
	zeros := 0
	for _, c := range d {
		if c == 0 {
			zeros++
		}
	}
	return fmt.Sprintf("%d bytes (%d zeros) %x", len(d), zeros, sha256.Sum256(d))[:48]
}

func treeLines(entries []treeEntry) []string {
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	first := map[uint64]string{} // inode -> first path naming it
	var out []string
	for _, e := range entries {
		line := fmt.Sprintf("%s %c", e.path, e.typ)
		switch e.typ {
		case 'f':
			line += " " + digest(e.data)
		case 'l':
			line += " -> " + e.target
		}
		line += fmt.Sprintf(" nlink=%d", e.nlink)
		if e.typ != 'd' {
			if p, ok := first[e.ino]; ok {
				line += " same inode as " + p
			} else {
				first[e.ino] = e.path
			}
		}
		out = append(out, line)
	}
	return out
}

// engine is the backend of the filesystem under test.
type engine struct {
	a     *core.Agent
	f     *vfs.FS
	files [3]*vfs.File
}

func newEngine(t testing.TB) *engine {
	a, err := core.Open(ctx, filepath.Join(tempDir(t), "fuzz.db"), core.Options{Create: true, ChunkSize: fuzzChunk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return &engine{a: a, f: a.FS}
}

func (e *engine) mkdir(p string) error { return e.f.Mkdir(ctx, p, 0o755) }
func (e *engine) writeFile(p string, data []byte, mode int) error {
	return e.f.WriteFile(ctx, p, data, vfs.WriteOptions{Append: mode == 1, Exclusive: mode == 2})
}
func (e *engine) open(slot int, p string, flags int) error {
	h, err := e.f.Open(ctx, p, osOpenFlags(flags), 0o644)
	e.files[slot] = h
	return err
}
func (e *engine) pwrite(slot int, off int64, data []byte) error {
	n, err := e.files[slot].WriteAt(data, off)
	if err == nil && n != len(data) {
		return fmt.Errorf("short write %d of %d", n, len(data))
	}
	return err
}
func (e *engine) pread(slot int, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	got, err := e.files[slot].ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	return buf[:got], err
}
func (e *engine) ftruncate(slot int, size int64) error { return e.files[slot].Truncate(size) }
func (e *engine) close(slot int) error {
	err := e.files[slot].Close()
	e.files[slot] = nil
	return err
}
func (e *engine) truncate(p string, size int64) error { return e.f.Truncate(ctx, p, size) }
func (e *engine) unlink(p string) error               { return e.f.Unlink(ctx, p) }
func (e *engine) rmdir(p string) error                { return e.f.Rmdir(ctx, p) }
func (e *engine) rename(a, b string, flags int) error {
	return e.f.Rename2(ctx, a, b, []int{0, vfs.RenameNoReplace, vfs.RenameExchange}[flags])
}
func (e *engine) link(a, b string) error            { return e.f.Link(ctx, a, b) }
func (e *engine) symlink(target, p string) error    { return e.f.Symlink(ctx, target, p) }
func (e *engine) removeAll(p string) error          { return e.f.RemoveAll(ctx, p) }
func (e *engine) readlink(p string) (string, error) { return e.f.Readlink(ctx, p) }
func (e *engine) readFile(p string) ([]byte, error) { return e.f.ReadFile(ctx, p) }
func (e *engine) stat(p string, follow bool) (info, error) {
	var st vfs.Stat
	var err error
	if follow {
		st, err = e.f.Stat(ctx, p)
	} else {
		st, err = e.f.Lstat(ctx, p)
	}
	return info{typ: st.TypeLetter()[0], size: st.Size, nlink: int(st.Nlink)}, err
}
func (e *engine) tree() ([]treeEntry, error) {
	var out []treeEntry
	err := e.f.Walk(ctx, "/", func(p string, st vfs.Stat) error {
		if p == "/" {
			return nil
		}
		te := treeEntry{path: p, typ: st.TypeLetter()[0], ino: uint64(st.Ino), nlink: int(st.Nlink)}
		var err error
		switch te.typ {
		case 'f':
			te.data, err = e.f.ReadFile(ctx, p)
			if err == nil && int64(len(te.data)) != st.Size {
				err = fmt.Errorf("%s: read %d bytes, size %d", p, len(te.data), st.Size)
			}
		case 'l':
			te.target, err = e.f.Readlink(ctx, p)
		}
		out = append(out, te)
		return err
	})
	return out, err
}

// seedScripts are interesting sequences; go test runs them every time.
var seedScripts = []string{
	// Chunk edges, sparse files, truncation.
	`write /a 513 1 trunc; open 0 /a rdwr; pwrite 0 511 3000 2; pread 0 0 4096; trunc /a 100; trunc /a 5000; read /a`,
	`write /a 100 1 trunc; open 0 /a rdwr; pwrite 0 1050576 7 3; pread 0 1023 2048; ftrunc 0 513; pwrite 0 3145729 1 4; read /a`,
	`write /a 2048 9 trunc; trunc /a 511; open 1 /a append; pwrite 1 0 1025 5; pread 1 0 4096; write /a 7 1 append; read /a`,
	`open 0 /a creat; pwrite 0 9000 1 1; ftrunc 0 1500; ftrunc 0 3000; pread 0 0 4096; close 0; read /a`,
	// Hard links and unlinked-but-open files.
	`mkdir /a; write /a/b 1000 1 trunc; link /a/b /c; link /c /a/d; open 0 /c rdwr; unlink /a/b; unlink /c; rmall /a; pwrite 0 0 7 2; pread 0 0 2048; stat /a/d; close 0`,
	`write /a 5000 3 trunc; open 2 /a rdonly; write /b 1 1 trunc; rename /b /a 0; pread 2 3000 1024; ftrunc 2 0; close 2; read /a`,
	// Symlinks: loops, dangling, through directories, trailing slashes.
	`symlink a /a; stat /a; symlink b /c; symlink c /b; stat /b/; lstat /b; mkdir /d; symlink ../a /d/b; stat /d/b/`,
	`mkdir /a; mkdir /a/b; symlink /a/b /c; write /c/d 7 1 trunc; stat /c/; rmdir /c/; unlink /c/; rename /c/ /d 0; rmall /c/; rmall /c; stat /a/b/d`,
	`symlink /zz /a; write /a 7 1 excl; open 0 /a creat|excl; mkdir /a/; write /a 7 1 trunc; readlink /a; read /a`,
	`mkdir /a; symlink .. /a/b; stat /a/b/a; symlink . /b; stat /b/b/a; stat /a/b/b/; readlink /a/b; mkdir /b/c; lstat /c`,
	// Renames.
	`mkdir /a; mkdir /a/b; mkdir /c; rename /a /a/b/c 0; rename /a/b /a 0; rename /c /a/b 0; rename /a /c 0; stat /c/b`,
	`write /a 7 1 trunc; mkdir /b; rename /a /b 0; rename /b /a 0; rename /a /b exchange; rename /a /b noreplace; rename /a /c exchange; link /a /c; rename /a /c 0`,
	`mkdir /a; write /a/b 7 1 trunc; rename /a/b /a 0; rename /a /a/. 0; rename /. /b 0; rename /a/b/ /c 0; rename /a/b /c/ 0`,
	// Names, dots and errors.
	`mkdir /a/; mkdir /a/b/; rmdir /a/b/..; rmdir /a/.; rmdir /; unlink /a/..; rmall /a/.; write /a/../b 7 1 trunc; read //a//b`,
	`write /a 7 1 trunc; mkdir /a/b; write /a/b 7 1 trunc; unlink /a/; rmdir /a; trunc /a/ 7; link /a /a/; symlink a /b/`,
}

func FuzzOps(f *testing.F) {
	for _, s := range seedScripts {
		f.Add(script(s))
	}
	f.Fuzz(checkOps)
}

// checkOps runs the operations encoded in data on the model and on the
// engine and fails on the first difference.
func checkOps(t *testing.T, data []byte) {
	ops := decodeOps(data)
	if len(ops) == 0 {
		return
	}
	m := newModel()
	e := newEngine(t)
	mres, mtree, err := runOps(m, ops)
	if err != nil {
		t.Fatalf("model: %v", err)
	}
	eres, etree, err := runOps(e, ops)
	if err != nil {
		t.Fatalf("engine: %v\n%s", err, describe(ops, mres, eres))
	}
	for i := range ops {
		if mres[i] != eres[i] {
			t.Fatalf("operation %d differs:\n%s", i, describe(ops[:i+1], mres, eres))
		}
	}
	if d := diffLines(mtree, etree); d != "" {
		t.Fatalf("trees differ after\n%s\n%s", describe(ops, mres, eres), d)
	}
	// Nothing leaks: after the last close, the inodes left are those the
	// tree reaches, and the tables are consistent.
	if got, want := queryInt(t, e.a, "SELECT COUNT(*) FROM fs_inode"), int64(m.live()); got != want {
		t.Fatalf("inodes in the database: got %d, want %d\n%s", got, want, describe(ops, mres, eres))
	}
	checkIntegrity(t, e.a)
}

func randomOps(rng *rand.Rand, n int) []byte {
	np := len(fuzzPaths)
	path := func() byte {
		var i int
		switch r := rng.Intn(10); {
		case r < 5:
			i = rng.Intn(4) // /a ... /d
		case r < 8:
			i = 4 + rng.Intn(16) // /a/a ... /d/d
		default:
			i = rng.Intn(np)
		}
		if rng.Intn(7) == 0 {
			i += np // trailing slash
		}
		return byte(i)
	}
	lastSlot := 0
	slot := func() byte {
		if rng.Intn(4) != 0 {
			return byte(lastSlot)
		}
		return byte(rng.Intn(3))
	}
	var out []byte
	for k := 0; k < n; k++ {
		kind := rng.Intn(numOps)
		out = append(out, byte(kind))
		switch kind {
		case opMkdir, opUnlink, opRmdir, opRemoveAll, opStat, opLstat, opReadlink, opRead:
			out = append(out, path())
		case opWrite:
			out = append(out, path(), byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(3)))
		case opOpen:
			lastSlot = rng.Intn(3)
			fl := byte(rng.Intn(256))
			if rng.Intn(2) == 0 {
				fl |= ofCreate
			}
			out = append(out, byte(lastSlot), path(), fl)
		case opPwrite:
			out = append(out, slot(), byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256)))
		case opPread:
			out = append(out, slot(), byte(rng.Intn(256)), byte(rng.Intn(256)))
		case opClose:
			out = append(out, slot())
		case opTrunc:
			out = append(out, path(), byte(rng.Intn(256)))
		case opFtrunc:
			out = append(out, slot(), byte(rng.Intn(256)))
		case opRename:
			out = append(out, path(), path(), byte(rng.Intn(3)))
		case opLink:
			out = append(out, path(), path())
		case opSymlink:
			out = append(out, byte(rng.Intn(16)), path())
		}
	}
	return out
}

// TestFS_ModelRandom runs random sequences of shallow operations (more
// likely to meet each other than the fuzzer's first guesses) on the engine
// and the model. AGENTFS_MODEL_N sets their number (default 150).
func TestFS_ModelRandom(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 20
	}
	if v := os.Getenv("AGENTFS_MODEL_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	rng := rand.New(rand.NewSource(int64(n)))
	for i := 0; i < n; i++ {
		in := randomOps(rng, 10+rng.Intn(60))
		if !t.Run("", func(t *testing.T) { checkOps(t, in) }) {
			t.Fatalf("input %d: %x", i, in)
		}
	}
}

func describe(ops []fop, want, got []string) string {
	var b strings.Builder
	for i, o := range ops {
		w, g := "", ""
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		mark := "  "
		if w != g {
			mark = "!!"
		}
		fmt.Fprintf(&b, "%s %2d %-40s model: %s", mark, i, o, w)
		if w != g {
			fmt.Fprintf(&b, "\n%s    %-40s engine: %s", mark, "", g)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func diffLines(want, got []string) string {
	w := map[string]bool{}
	for _, l := range want {
		w[l] = true
	}
	g := map[string]bool{}
	for _, l := range got {
		g[l] = true
	}
	var b strings.Builder
	for _, l := range want {
		if !g[l] {
			fmt.Fprintf(&b, "- model:  %s\n", l)
		}
	}
	for _, l := range got {
		if !w[l] {
			fmt.Fprintf(&b, "+ engine: %s\n", l)
		}
	}
	return b.String()
}

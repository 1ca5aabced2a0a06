//go:build linux && amd64

package vfs_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestFuzzModelMatchesLinux checks the model of FuzzOps against the Linux
// kernel: the seed sequences and random ones run in a chroot (so that
// absolute symlinks and ".." stay inside) and on the model must give the
// same results. It needs root and AGENTFS_FUZZ_HOST=1 (the number of
// random sequences is AGENTFS_FUZZ_HOST_N, default 3000). RemoveAll is not
// a system call and is left out.
func TestFuzzModelMatchesLinux(t *testing.T) {
	if os.Getenv("AGENTFS_FUZZ_HOST") == "" {
		t.Skip("set AGENTFS_FUZZ_HOST=1 (as root on Linux) to check the fuzz model against the kernel")
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to chroot")
	}
	n := 3000
	if v := os.Getenv("AGENTFS_FUZZ_HOST_N"); v != "" {
		fmt.Sscan(v, &n)
	}
	var inputs [][]byte
	for _, s := range seedScripts {
		inputs = append(inputs, script(s))
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < n; i++ {
		inputs = append(inputs, randomOps(rng, 10+rng.Intn(60)))
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "inputs.json")
	out := filepath.Join(dir, "results.json")
	root := filepath.Join(dir, "root")
	must(t, os.Mkdir(root, 0o755))
	blob, _ := json.Marshal(inputs)
	must(t, os.WriteFile(in, blob, 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENTFS_HOST_HELPER="+in+"|"+out+"|"+root)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("host helper: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	must(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	bad := 0
	for i := 0; sc.Scan(); i++ {
		var h hostResult
		must(t, json.Unmarshal(sc.Bytes(), &h))
		ops := hostOps(inputs[i])
		mres, mtree, err := runOps(newModel(), ops)
		must(t, err)
		if h.Err != "" {
			t.Fatalf("input %d on the host: %s", i, h.Err)
		}
		for j := range ops {
			if mres[j] != h.Results[j] {
				t.Errorf("input %d: operation %d differs between the model and Linux:\n%s", i, j,
					strings.ReplaceAll(describe(ops[:j+1], mres, h.Results), "engine:", "linux: "))
				bad++
				break
			}
		}
		if d := diffLines(mtree, h.Tree); d != "" && !t.Failed() {
			t.Errorf("input %d: trees differ between the model and Linux after\n%s%s", i, describe(ops, mres, h.Results), d)
			bad++
		}
		if bad >= 5 {
			t.Fatal("stopping after 5 differences")
		}
	}
	must(t, sc.Err())
}

type hostResult struct {
	Results []string
	Tree    []string
	Err     string
}

// hostOps is decodeOps without RemoveAll.
func hostOps(data []byte) []fop {
	var out []fop
	for _, o := range decodeOps(data) {
		if o.kind != opRemoveAll {
			out = append(out, o)
		}
	}
	return out
}

// TestHostHelper runs in a child process: it chroots and runs the inputs
// on the kernel.
func TestHostHelper(t *testing.T) {
	env := os.Getenv("AGENTFS_HOST_HELPER")
	if env == "" {
		t.Skip("helper of TestFuzzModelMatchesLinux")
	}
	parts := strings.Split(env, "|")
	blob, err := os.ReadFile(parts[0])
	must(t, err)
	var inputs [][]byte
	must(t, json.Unmarshal(blob, &inputs))
	out, err := os.Create(parts[1])
	must(t, err)
	defer out.Close()
	must(t, syscall.Chroot(parts[2]))
	must(t, os.Chdir("/"))
	enc := json.NewEncoder(out)
	for _, in := range inputs {
		ents, err := os.ReadDir("/")
		must(t, err)
		for _, e := range ents {
			must(t, os.RemoveAll("/"+e.Name()))
		}
		var h hostResult
		h.Results, h.Tree, err = runOps(&host{}, hostOps(in))
		if err != nil {
			h.Err = err.Error()
		}
		must(t, enc.Encode(h))
	}
}

type host struct{ fds [3]int }

func errnoErr(err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return err
}

func (h *host) mkdir(p string) error { return errnoErr(syscall.Mkdir(p, 0o755)) }
func (h *host) writeFile(p string, data []byte, mode int) error {
	fl := []int{syscall.O_TRUNC, syscall.O_APPEND, syscall.O_TRUNC | syscall.O_EXCL}[mode]
	fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_CLOEXEC|fl, 0o644)
	if err != nil {
		return errnoErr(err)
	}
	defer syscall.Close(fd)
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err != nil {
			return errnoErr(err)
		}
		data = data[n:]
	}
	return nil
}
func (h *host) open(slot int, p string, flags int) error {
	fd, err := syscall.Open(p, osOpenFlags(flags)|syscall.O_CLOEXEC, 0o644)
	h.fds[slot] = fd
	return errnoErr(err)
}
func (h *host) pwrite(slot int, off int64, data []byte) error {
	_, err := syscall.Pwrite(h.fds[slot], data, off)
	return errnoErr(err)
}
func (h *host) pread(slot int, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	got := 0
	for got < len(buf) {
		k, err := syscall.Pread(h.fds[slot], buf[got:], off+int64(got))
		if err != nil {
			return nil, errnoErr(err)
		}
		if k == 0 {
			break
		}
		got += k
	}
	return buf[:got], nil
}
func (h *host) ftruncate(slot int, size int64) error {
	return errnoErr(syscall.Ftruncate(h.fds[slot], size))
}
func (h *host) close(slot int) error { return errnoErr(syscall.Close(h.fds[slot])) }
func (h *host) truncate(p string, size int64) error {
	return errnoErr(syscall.Truncate(p, size))
}
func (h *host) unlink(p string) error { return errnoErr(syscall.Unlink(p)) }
func (h *host) rmdir(p string) error  { return errnoErr(syscall.Rmdir(p)) }
func (h *host) rename(a, b string, flags int) error {
	if flags == 0 {
		return errnoErr(syscall.Rename(a, b))
	}
	pa, _ := syscall.BytePtrFromString(a)
	pb, _ := syscall.BytePtrFromString(b)
	const sysRenameat2 = 316 // linux/amd64
	atFdcwd := -100
	_, _, e := syscall.Syscall6(sysRenameat2, uintptr(atFdcwd), uintptr(unsafe.Pointer(pa)), uintptr(atFdcwd), uintptr(unsafe.Pointer(pb)), uintptr(flags), 0)
	if e != 0 {
		return e
	}
	return nil
}
func (h *host) link(a, b string) error         { return errnoErr(syscall.Link(a, b)) }
func (h *host) symlink(target, p string) error { return errnoErr(syscall.Symlink(target, p)) }
func (h *host) removeAll(p string) error       { panic("not on the host") }
func (h *host) readlink(p string) (string, error) {
	buf := make([]byte, 4096)
	n, err := syscall.Readlink(p, buf)
	if err != nil {
		return "", errnoErr(err)
	}
	return string(buf[:n]), nil
}
func (h *host) readFile(p string) ([]byte, error) {
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, errnoErr(err)
	}
	defer syscall.Close(fd)
	var out []byte
	buf := make([]byte, 1<<16)
	for {
		n, err := syscall.Read(fd, buf)
		if err != nil {
			return nil, errnoErr(err)
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}
func hostType(mode uint32) byte {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return 'd'
	case syscall.S_IFLNK:
		return 'l'
	}
	return 'f'
}
func (h *host) stat(p string, follow bool) (info, error) {
	var st syscall.Stat_t
	var err error
	if follow {
		err = syscall.Stat(p, &st)
	} else {
		err = syscall.Lstat(p, &st)
	}
	return info{typ: hostType(st.Mode), size: st.Size, nlink: int(st.Nlink)}, errnoErr(err)
}
func (h *host) tree() ([]treeEntry, error) {
	var out []treeEntry
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := strings.TrimSuffix(dir, "/") + "/" + e.Name()
			var st syscall.Stat_t
			if err := syscall.Lstat(p, &st); err != nil {
				return err
			}
			te := treeEntry{path: p, typ: hostType(st.Mode), ino: st.Ino, nlink: int(st.Nlink)}
			switch te.typ {
			case 'f':
				te.data, err = h.readFile(p)
			case 'l':
				te.target, err = h.readlink(p)
			case 'd':
				err = walk(p)
			}
			if err != nil {
				return err
			}
			out = append(out, te)
		}
		return nil
	}
	return out, walk("/")
}

package vfs_test

import (
	"sort"
	"strings"
	"syscall"
)

// model is an in-memory POSIX filesystem, written for clarity rather than
// speed, that FuzzOps compares the engine with. It follows POSIX, and
// Linux where POSIX leaves a choice: path resolution as the kernel's
// (symlinks followed in the middle, at most 40 per lookup, ".." the real
// parent), the kernel's order of error checks, trailing slashes as Linux
// treats them. RemoveAll is not a system call; it follows the engine's
// documented rules (see removeAll).
type model struct {
	nodes map[int]*mnode
	next  int
	files [3]*mfile
	// overlay: directories report 1 link, as an overlay's delta layer
	// does (it does not count its base's subdirectories).
	overlay bool
}

type mnode struct {
	typ     byte           // 'd', 'f', 'l'
	entries map[string]int // directory: name -> node
	parent  int            // directory: its parent (the root is its own)
	data    []byte         // regular file
	target  string         // symlink
	nlink   int            // names of the node
	open    int            // open handles
}

type mfile struct {
	node  int
	flags int
}

const mroot = 1

func newModel() *model {
	m := &model{nodes: map[int]*mnode{}, next: mroot + 1}
	m.nodes[mroot] = &mnode{typ: 'd', entries: map[string]int{}, parent: mroot, nlink: 1}
	return m
}

func (m *model) add(n *mnode) int {
	id := m.next
	m.next++
	m.nodes[id] = n
	return id
}

// live counts the nodes that exist: reachable, or open.
func (m *model) live() int { return len(m.nodes) }

// release forgets a node with no name and no open handle.
func (m *model) release(id int) {
	n := m.nodes[id]
	if n != nil && n.nlink <= 0 && n.open <= 0 {
		delete(m.nodes, id)
	}
}

// unlinkEntry removes name from dir and drops a link of its node.
func (m *model) unlinkEntry(dir int, name string) {
	id := m.nodes[dir].entries[name]
	delete(m.nodes[dir].entries, name)
	m.nodes[id].nlink--
	m.release(id)
}

// mres is where a path leads.
type mres struct {
	parent int    // directory holding the final entry
	name   string // final component; "" for "/"
	node   int    // 0: the final entry does not exist
	dot    bool   // the final component is "/", "." or ".." (not a plain name)
}

func trailingSlash(p string) bool { return strings.HasSuffix(p, "/") }

// walk resolves path from directory start. Symlinks in the middle are
// always followed, a final one when follow is set, or when the path ends
// with a slash and slashFollows is set; then a final non-directory is
// ENOTDIR. depth counts the symlinks followed in the whole lookup.
func (m *model) walk(start int, path string, follow, slashFollows bool, depth *int) (mres, syscall.Errno) {
	if path == "" {
		return mres{}, syscall.ENOENT
	}
	cur := start
	if strings.HasPrefix(path, "/") {
		cur = mroot
	}
	var comps []string
	for _, c := range strings.Split(path, "/") {
		if c != "" {
			comps = append(comps, c)
		}
	}
	trailing := trailingSlash(path)
	if len(comps) == 0 {
		return mres{parent: m.nodes[cur].parent, node: cur, dot: true}, 0
	}
	for i, name := range comps {
		last := i == len(comps)-1
		switch name {
		case ".":
			if last {
				return mres{parent: m.nodes[cur].parent, name: ".", node: cur, dot: true}, 0
			}
			continue
		case "..":
			cur = m.nodes[cur].parent
			if last {
				return mres{parent: m.nodes[cur].parent, name: "..", node: cur, dot: true}, 0
			}
			continue
		}
		child, ok := m.nodes[cur].entries[name]
		if !ok {
			if last {
				return mres{parent: cur, name: name}, 0
			}
			return mres{}, syscall.ENOENT
		}
		cn := m.nodes[child]
		if cn.typ == 'l' && (!last || follow || (trailing && slashFollows)) {
			*depth++
			if *depth > 40 {
				return mres{}, syscall.ELOOP
			}
			r, e := m.walk(cur, cn.target, true, true, depth)
			if e != 0 {
				return mres{}, e
			}
			if !last {
				if r.node == 0 {
					return mres{}, syscall.ENOENT
				}
				if m.nodes[r.node].typ != 'd' {
					return mres{}, syscall.ENOTDIR
				}
				cur = r.node
				continue
			}
			if trailing && slashFollows && r.node != 0 && m.nodes[r.node].typ != 'd' {
				return mres{}, syscall.ENOTDIR
			}
			return r, 0
		}
		if !last {
			if cn.typ != 'd' {
				return mres{}, syscall.ENOTDIR
			}
			cur = child
			continue
		}
		if trailing && slashFollows && cn.typ != 'd' {
			return mres{}, syscall.ENOTDIR
		}
		return mres{parent: cur, name: name, node: child}, 0
	}
	panic("unreachable")
}

func (m *model) lookup(path string, follow, slashFollows bool) (mres, syscall.Errno) {
	depth := 0
	return m.walk(mroot, path, follow, slashFollows, &depth)
}

// entry resolves a path naming an entry to create, remove or rename: the
// final component is not followed, whatever the slashes.
func (m *model) entry(path string) (mres, syscall.Errno) { return m.lookup(path, false, false) }

func (m *model) isDir(id int) bool { return id != 0 && m.nodes[id].typ == 'd' }

// mkdir(2)
func (m *model) mkdir(p string) error {
	r, e := m.entry(p)
	switch {
	case e != 0:
		return e
	case r.dot || r.node != 0:
		return syscall.EEXIST
	}
	m.nodes[r.parent].entries[r.name] = m.add(&mnode{typ: 'd', entries: map[string]int{}, parent: r.parent, nlink: 1})
	return nil
}

// openNode is open(2) with the fuzzer's flags; it returns the node.
func (m *model) openNode(p string, fl int, write bool) (int, syscall.Errno) {
	creat, excl := fl&ofCreate != 0, fl&ofCreate != 0 && fl&ofExcl != 0
	if creat {
		// The final component is looked at before any final symlink is
		// followed: "/", "." and ".." exist; "name/" is EISDIR.
		r, e := m.entry(p)
		switch {
		case e != 0:
			return 0, e
		case r.dot && excl:
			return 0, syscall.EEXIST
		case r.dot:
			return 0, syscall.EISDIR
		case trailingSlash(p):
			return 0, syscall.EISDIR
		}
		if !excl && r.node != 0 && m.nodes[r.node].typ == 'l' {
			if r, e = m.lookup(p, true, false); e != 0 {
				return 0, e
			}
			if r.dot { // a link to "/", "." or ".."
				return 0, syscall.EISDIR
			}
		}
		if r.node == 0 {
			id := m.add(&mnode{typ: 'f', nlink: 1})
			m.nodes[r.parent].entries[r.name] = id
			return id, 0
		}
		if excl {
			return 0, syscall.EEXIST
		}
		if m.isDir(r.node) {
			return 0, syscall.EISDIR
		}
		if fl&ofTrunc != 0 {
			m.nodes[r.node].data = nil
		}
		return r.node, 0
	}
	r, e := m.lookup(p, true, true)
	switch {
	case e != 0:
		return 0, e
	case r.node == 0:
		return 0, syscall.ENOENT
	case m.isDir(r.node) && (write || fl&ofTrunc != 0):
		return 0, syscall.EISDIR
	}
	if fl&ofTrunc != 0 {
		m.nodes[r.node].data = nil
	}
	return r.node, 0
}

// writeFile is open(O_WRONLY|O_CREAT|O_TRUNC or O_APPEND or O_EXCL),
// write, close.
func (m *model) writeFile(p string, data []byte, mode int) error {
	fl := ofCreate | ofTrunc
	switch mode {
	case 1:
		fl = ofCreate | ofAppend
	case 2:
		fl |= ofExcl
	}
	id, e := m.openNode(p, fl, true)
	if e != 0 {
		return e
	}
	n := m.nodes[id]
	n.data = append(n.data, data...)
	return nil
}

func (m *model) open(slot int, p string, fl int) error {
	id, e := m.openNode(p, fl, fl&ofRdonly == 0)
	if e != 0 {
		return e
	}
	m.nodes[id].open++
	m.files[slot] = &mfile{node: id, flags: fl}
	return nil
}

func (m *model) close(slot int) error {
	h := m.files[slot]
	m.files[slot] = nil
	m.nodes[h.node].open--
	m.release(h.node)
	return nil
}

// setSize truncates or extends with zeros.
func setSize(n *mnode, size int64) {
	if size <= int64(len(n.data)) {
		n.data = n.data[:size:size]
		return
	}
	n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
}

func (m *model) pwrite(slot int, off int64, data []byte) error {
	h := m.files[slot]
	if h.flags&ofRdonly != 0 {
		return syscall.EBADF
	}
	n := m.nodes[h.node]
	if h.flags&ofAppend != 0 { // Linux: pwrite on O_APPEND appends
		off = int64(len(n.data))
	}
	if len(data) == 0 {
		return nil
	}
	if end := off + int64(len(data)); end > int64(len(n.data)) {
		setSize(n, end)
	}
	copy(n.data[off:], data)
	return nil
}

func (m *model) pread(slot int, off, cnt int64) ([]byte, error) {
	n := m.nodes[m.files[slot].node]
	if n.typ == 'd' {
		return nil, syscall.EISDIR
	}
	if off >= int64(len(n.data)) {
		return nil, nil
	}
	end := min(off+cnt, int64(len(n.data)))
	return append([]byte(nil), n.data[off:end]...), nil
}

func (m *model) ftruncate(slot int, size int64) error {
	h := m.files[slot]
	n := m.nodes[h.node]
	if h.flags&ofRdonly != 0 || n.typ != 'f' {
		return syscall.EINVAL
	}
	setSize(n, size)
	return nil
}

// truncate(2)
func (m *model) truncate(p string, size int64) error {
	r, e := m.lookup(p, true, true)
	switch {
	case e != 0:
		return e
	case r.node == 0:
		return syscall.ENOENT
	case m.isDir(r.node):
		return syscall.EISDIR
	}
	setSize(m.nodes[r.node], size)
	return nil
}

// unlink(2)
func (m *model) unlink(p string) error {
	r, e := m.entry(p)
	switch {
	case e != 0:
		return e
	case r.dot:
		return syscall.EISDIR
	case r.node == 0:
		return syscall.ENOENT
	case m.isDir(r.node):
		return syscall.EISDIR
	case trailingSlash(p):
		return syscall.ENOTDIR
	}
	m.unlinkEntry(r.parent, r.name)
	return nil
}

// rmdir(2)
func (m *model) rmdir(p string) error {
	r, e := m.entry(p)
	switch {
	case e != 0:
		return e
	case r.dot && r.name == "..":
		return syscall.ENOTEMPTY
	case r.dot && r.name == ".":
		return syscall.EINVAL
	case r.dot:
		return syscall.EBUSY
	case r.node == 0:
		return syscall.ENOENT
	case !m.isDir(r.node):
		return syscall.ENOTDIR
	case len(m.nodes[r.node].entries) > 0:
		return syscall.ENOTEMPTY
	}
	m.unlinkEntry(r.parent, r.name)
	return nil
}

// isAncestor reports whether directory a is d or one of its ancestors.
func (m *model) isAncestor(a, d int) bool {
	for {
		if d == a {
			return true
		}
		if d == mroot {
			return false
		}
		d = m.nodes[d].parent
	}
}

// rename(2) and renameat2(2), checks in the order of Linux's
// do_renameat2 and vfs_rename (6.x).
func (m *model) rename(a, b string, flags int) error {
	noreplace, exchange := flags == 1, flags == 2
	ra, e := m.entry(a)
	if e != 0 {
		return e
	}
	rb, e := m.entry(b)
	if e != 0 {
		return e
	}
	if ra.dot {
		return syscall.EBUSY
	}
	if rb.dot {
		if noreplace {
			return syscall.EEXIST
		}
		return syscall.EBUSY
	}
	if ra.node == 0 {
		return syscall.ENOENT
	}
	if noreplace && rb.node != 0 {
		return syscall.EEXIST
	}
	if exchange {
		if rb.node == 0 {
			return syscall.ENOENT
		}
		if !m.isDir(rb.node) && trailingSlash(b) {
			return syscall.ENOTDIR
		}
	}
	// Unless the source is a directory, trailing slashes are ENOTDIR.
	srcDir := m.isDir(ra.node)
	if !srcDir && (trailingSlash(a) || (!exchange && trailingSlash(b))) {
		return syscall.ENOTDIR
	}
	if ra.parent != rb.parent {
		if m.isAncestor(ra.node, rb.parent) {
			return syscall.EINVAL // the source is an ancestor of the target
		}
		if rb.node != 0 && m.isAncestor(rb.node, ra.parent) {
			if exchange {
				return syscall.EINVAL
			}
			return syscall.ENOTEMPTY // the target is an ancestor of the source
		}
	}
	if ra.node == rb.node {
		return nil // same file: nothing to do
	}
	if exchange {
		m.nodes[ra.parent].entries[ra.name] = rb.node
		m.nodes[rb.parent].entries[rb.name] = ra.node
		if m.isDir(ra.node) {
			m.nodes[ra.node].parent = rb.parent
		}
		if m.isDir(rb.node) {
			m.nodes[rb.node].parent = ra.parent
		}
		return nil
	}
	if rb.node != 0 {
		switch dstDir := m.isDir(rb.node); {
		case srcDir && !dstDir:
			return syscall.ENOTDIR
		case !srcDir && dstDir:
			return syscall.EISDIR
		case dstDir && len(m.nodes[rb.node].entries) > 0:
			return syscall.ENOTEMPTY
		}
		m.unlinkEntry(rb.parent, rb.name)
	}
	delete(m.nodes[ra.parent].entries, ra.name)
	m.nodes[rb.parent].entries[rb.name] = ra.node
	if srcDir {
		m.nodes[ra.node].parent = rb.parent
	}
	return nil
}

// link(2), without following a final symlink of the source.
func (m *model) link(a, b string) error {
	ra, e := m.lookup(a, false, true)
	if e != 0 {
		return e
	}
	if ra.node == 0 {
		return syscall.ENOENT
	}
	rb, e := m.entry(b)
	switch {
	case e != 0:
		return e
	case rb.dot || rb.node != 0:
		return syscall.EEXIST
	case trailingSlash(b):
		return syscall.ENOENT
	case m.isDir(ra.node):
		return syscall.EPERM
	}
	m.nodes[rb.parent].entries[rb.name] = ra.node
	m.nodes[ra.node].nlink++
	return nil
}

// symlink(2)
func (m *model) symlink(target, p string) error {
	r, e := m.entry(p)
	switch {
	case e != 0:
		return e
	case r.dot || r.node != 0:
		return syscall.EEXIST
	case trailingSlash(p):
		return syscall.ENOENT
	}
	m.nodes[r.parent].entries[r.name] = m.add(&mnode{typ: 'l', target: target, nlink: 1})
	return nil
}

// removeAll follows the engine's RemoveAll: like rm -rf of the entry the
// path names (a final symlink is removed, never followed; with a trailing
// slash it is ENOTDIR, as for rmdir and unlink). A missing path, or a
// missing directory on the way, is not an error; "." and ".." are EINVAL
// (as Go's os.RemoveAll), "/" is EBUSY.
func (m *model) removeAll(p string) error {
	r, e := m.entry(p)
	switch {
	case e == syscall.ENOENT:
		return nil
	case e != 0:
		return e
	case r.dot && r.name == "":
		return syscall.EBUSY
	case r.dot:
		return syscall.EINVAL
	case r.node == 0:
		return nil
	case trailingSlash(p) && !m.isDir(r.node):
		return syscall.ENOTDIR
	}
	m.removeTree(r.parent, r.name)
	return nil
}

func (m *model) removeTree(dir int, name string) {
	id := m.nodes[dir].entries[name]
	if n := m.nodes[id]; n.typ == 'd' {
		for _, child := range sortedNames(n.entries) {
			m.removeTree(id, child)
		}
	}
	m.unlinkEntry(dir, name)
}

func sortedNames(entries map[string]int) []string {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (m *model) stat(p string, follow bool) (info, error) {
	r, e := m.lookup(p, follow, true)
	if e != 0 {
		return info{}, e
	}
	if r.node == 0 {
		return info{}, syscall.ENOENT
	}
	n := m.nodes[r.node]
	st := info{typ: n.typ, nlink: m.links(r.node)}
	switch n.typ {
	case 'f':
		st.size = int64(len(n.data))
	case 'l':
		st.size = int64(len(n.target))
	}
	return st, nil
}

// links is the link count stat reports: the names of a file; 2 and one
// per subdirectory for a directory.
func (m *model) links(id int) int {
	n := m.nodes[id]
	if n.typ != 'd' {
		return n.nlink
	}
	if m.overlay {
		return 1
	}
	k := 2
	for _, c := range n.entries {
		if m.nodes[c].typ == 'd' {
			k++
		}
	}
	return k
}

func (m *model) readlink(p string) (string, error) {
	r, e := m.lookup(p, false, true)
	switch {
	case e != 0:
		return "", e
	case r.node == 0:
		return "", syscall.ENOENT
	case m.nodes[r.node].typ != 'l':
		return "", syscall.EINVAL
	}
	return m.nodes[r.node].target, nil
}

func (m *model) readFile(p string) ([]byte, error) {
	r, e := m.lookup(p, true, true)
	switch {
	case e != 0:
		return nil, e
	case r.node == 0:
		return nil, syscall.ENOENT
	case m.isDir(r.node):
		return nil, syscall.EISDIR
	}
	return append([]byte{}, m.nodes[r.node].data...), nil
}

func (m *model) tree() ([]treeEntry, error) {
	var out []treeEntry
	var walk func(dir int, prefix string)
	walk = func(dir int, prefix string) {
		for _, name := range sortedNames(m.nodes[dir].entries) {
			id := m.nodes[dir].entries[name]
			n := m.nodes[id]
			p := prefix + "/" + name
			out = append(out, treeEntry{path: p, typ: n.typ, data: n.data, target: n.target, ino: uint64(id), nlink: m.links(id)})
			if n.typ == 'd' {
				walk(id, p)
			}
		}
	}
	walk(mroot, "")
	return out, nil
}

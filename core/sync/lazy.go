//go:build cgo

package sync

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	gosync "sync"
	"syscall"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
)

// Partial sync, the client (docs/SYNC.md). A partially bootstrapped
// agent P has holes: pages of the remote (at Meta.Revision, the revision
// it bootstrapped at) that were not fetched yet. Two files list them, as
// RoaringBitmaps of 0-based page ids:
//
//	P-sync-missing       pages absent from the local database P
//	P-sync-base-missing  pages absent from the base P-sync-base
//
// Every SQLite connection to P or its base (the store's, through
// store.SetPartialVFS, and the sync client's own) reads the file through
// the VFS below: a read that touches an absent page fetches it (and the
// rest of its segment) from the remote with server_revision pinned to
// Meta.Revision, writes it into whichever of P and the base lacks it,
// and only then reads. A page SQLite writes into P is marked present
// before the write lands, so a fetch never overwrites a local change.
// Fetches are serialized across processes by an flock on
// P-sync-fetch.lock, under which the lists are read again from disk.

const partialVFSName = "agentfs-partial"

func missingPath(p string) string     { return p + "-sync-missing" }
func baseMissingPath(p string) string { return p + "-sync-base-missing" }

var registerPartial gosync.Once

func partialVFS() string {
	registerPartial.Do(func() { vfs.Register(partialVFSName, &lazyVFS{VFS: vfs.Find("")}) })
	return partialVFSName
}

func init() {
	store.SetPartialVFS(func(abs string) (string, error) { return partialVFS(), nil })
}

// IsPartial reports whether the database at path still has pages to
// fetch from its remote.
func IsPartial(path string) bool {
	_, err := os.Stat(missingPath(path))
	return err == nil
}

// partial is the in-process state of one partially synced agent.
type partial struct {
	path string // the agent database, absolute
	mu   gosync.Mutex
	// the lists as last read or written; a page absent here may have
	// been fetched by another process (fetch reads the files again).
	local, base map[uint32]bool
	token       string // for fetches, when a sync operation gave one
	// A read that starts where an earlier fetch ended (a file read
	// front to back, between reads of its index) doubles the fetch, up
	// to maxRun pages: a few such streams, replaced in turn.
	streams [4]stream
	turn    int
}

var (
	partialsMu gosync.Mutex
	partials   = map[string]*partial{}
)

func partialOf(path string) *partial {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	partialsMu.Lock()
	defer partialsMu.Unlock()
	if p := partials[abs]; p != nil {
		return p
	}
	p := &partial{path: abs}
	p.reload()
	partials[abs] = p
	return p
}

// setToken records the token of a sync operation for later fetches of
// this process (the default is $TURSO_DB_AUTH_TOKEN).
func setPartialToken(path, token string) {
	if token != "" && IsPartial(path) {
		p := partialOf(path)
		p.mu.Lock()
		p.token = token
		p.mu.Unlock()
	}
}

func readBitmap(path string) (map[uint32]bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[uint32]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	vals, err := decodeRoaring(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (EINVAL)", path, err)
	}
	m := make(map[uint32]bool, len(vals))
	for _, v := range vals {
		m[v] = true
	}
	return m, nil
}

// writeBitmap replaces a list. After a fetch the directory is not
// synced (durable false): a power loss may bring back the previous list,
// whose extra pages are only fetched again — unless SQLite wrote one of
// them since, which is why lazyFile.Sync syncs the directory before
// SQLite's own sync of the database (a checkpoint is complete, and its
// WAL frames dropped, only after that). Removing the pages SQLite is
// about to write, and the lists when the agent is made whole, are
// durable at once.
func writeBitmap(path string, m map[uint32]bool, durable bool) error {
	if len(m) == 0 {
		err := os.Remove(path)
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err == nil && durable {
			if d, derr := os.Open(filepath.Dir(path)); derr == nil {
				err = d.Sync()
				d.Close()
			}
		}
		return err
	}
	vals := make([]uint32, 0, len(m))
	for v := range m {
		vals = append(vals, v)
	}
	return writeFile(path, encodeRoaring(vals), durable)
}

// reload reads both lists from disk (p.mu held, or p not shared yet).
func (p *partial) reload() error {
	l, err := readBitmap(missingPath(p.path))
	if err != nil {
		return err
	}
	b, err := readBitmap(baseMissingPath(p.path))
	if err != nil {
		return err
	}
	p.local, p.base = l, b
	return nil
}

func (p *partial) save(durable bool) error {
	// The base's list first: the local list's file is the marker that
	// the agent is partial.
	if err := writeBitmap(baseMissingPath(p.path), p.base, durable); err != nil {
		return err
	}
	return writeBitmap(missingPath(p.path), p.local, durable)
}

// fetchLock serializes fetches and list updates across processes.
func fetchLock(path string) (func(), error) {
	f, err := os.OpenFile(path+"-sync-fetch.lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

func (p *partial) anyMissing(base bool, first, last int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.local
	if base {
		m = p.base
	}
	if len(m) == 0 {
		return false
	}
	for pg := first; pg <= last; pg++ {
		if m[uint32(pg)] {
			return true
		}
	}
	return false
}

// lockFresh takes the cross-process fetch lock and p.mu, and reloads the
// missing lists another process may have changed; unlock releases both.
func (p *partial) lockFresh() (unlock func(), err error) {
	release, err := fetchLock(p.path)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if err := p.reload(); err != nil {
		p.mu.Unlock()
		release()
		return nil, err
	}
	return func() { p.mu.Unlock(); release() }, nil
}

// markWritten records that SQLite is about to write pages [first, last]
// of the local database: they are the local database's from now on.
func (p *partial) markWritten(first, last int64) error {
	if !p.anyMissing(false, first, last) {
		return nil
	}
	unlock, err := p.lockFresh()
	if err != nil {
		return err
	}
	defer unlock()
	for pg := first; pg <= last; pg++ {
		delete(p.local, uint32(pg))
	}
	// Durable before SQLite's write lands: a fetch must never overwrite it.
	return writeBitmap(missingPath(p.path), p.local, true)
}

// ensure fetches the absent pages among [first, last] of the local
// database (base false) or of the base, with their segments.
func (p *partial) ensure(ctx context.Context, base bool, first, last int64) error {
	unlock, err := p.lockFresh()
	if err != nil {
		return err
	}
	defer unlock()
	miss := p.local
	if base {
		miss = p.base
	}
	need := false
	for pg := first; pg <= last && !need; pg++ {
		need = miss[uint32(pg)]
	}
	if !need { // another process fetched them (or made the agent whole)
		return nil
	}
	m, err := ReadMeta(p.path)
	if err != nil {
		return err
	}
	if m.Partial == nil {
		return fmt.Errorf("%s: pages are missing but %s names no partial bootstrap (EINVAL)", p.path, filepath.Base(metaPath(p.path)))
	}
	seg := int64(m.Partial.segmentPages())
	want := map[uint32]bool{}
	for pg := first; pg <= last; pg++ {
		if !miss[uint32(pg)] {
			continue
		}
		start, end := pg/seg*seg, pg/seg*seg+seg
		if len(want) == 0 {
			st := p.stream(pg, seg)
			end = max(end, pg+st.run)
			st.next = end
		}
		for s := start; s < end; s++ {
			if p.local[uint32(s)] || p.base[uint32(s)] {
				want[uint32(s)] = true
			}
		}
	}
	if len(want) == 0 {
		return nil
	}

	o := Options{Token: p.token}
	if o.Token == "" {
		o.Token = os.Getenv("TURSO_DB_AUTH_TOKEN")
	}
	r, err := newRemote(m.RemoteURL, o)
	if err != nil {
		return err
	}
	got, err := p.fetchPages(ctx, r, m.Revision, want, false)
	if err == nil && m.Partial.Prefetch {
		// The children of fetched interior b-tree pages are likely read
		// next (a lookup descends): one more request for those absent.
		kids := map[uint32]bool{}
		for _, data := range got {
			for _, c := range childPages(data.id, data.page) {
				if p.local[c] || p.base[c] {
					kids[c] = true
				}
			}
		}
		if len(kids) > 0 {
			_, err = p.fetchPages(ctx, r, m.Revision, kids, false)
		}
	}
	if r.recvd > 0 || r.sent > 0 {
		m.SentBytes += r.sent
		m.ReceivedByte += r.recvd
		if serr := m.write(p.path, false); err == nil { // counters only
			err = serr
		}
	}
	return err
}

// maxRun bounds the pages of one fetch of a sequential read (8 MiB).
const maxRun = 2048

type stream struct{ next, run int64 }

// stream is the sequential read that page pg continues (its fetch
// doubled), or a new one of one segment.
func (p *partial) stream(pg, seg int64) *stream {
	for i := range p.streams {
		st := &p.streams[i]
		if st.run > 0 && pg >= st.next && pg < st.next+seg {
			st.run = min(st.run*2, maxRun)
			return st
		}
	}
	st := &p.streams[p.turn]
	p.turn = (p.turn + 1) % len(p.streams)
	*st = stream{run: seg}
	return st
}

type fetchedPage struct {
	id   uint32
	page []byte
}

// fetchPages pulls pages at revision, writes each into the local
// database and the base where absent there, syncs both, and updates the
// lists (p.mu and the fetch lock held).
func (p *partial) fetchPages(ctx context.Context, r *remote, revision string, want map[uint32]bool, durable bool) ([]fetchedPage, error) {
	ids := make([]uint32, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	lf, err := os.OpenFile(p.path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	bf, err := os.OpenFile(basePath(p.path), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer bf.Close()
	var got []fetchedPage
	const chunk = 2048 // pages per request (8 MiB)
	for start := 0; start < len(ids); start += chunk {
		sel := ids[start:min(start+chunk, len(ids))]
		_, err := r.pull(ctx, pullRequest{ServerRevision: revision, ServerPagesSel: encodeRoaring(append([]uint32(nil), sel...))}, func(id uint64, data []byte) error {
			pg := uint32(id)
			if p.local[pg] {
				if _, err := lf.WriteAt(data, int64(id)*PageSize); err != nil {
					return err
				}
			}
			if p.base[pg] {
				if _, err := bf.WriteAt(data, int64(id)*PageSize); err != nil {
					return err
				}
			}
			got = append(got, fetchedPage{pg, append([]byte(nil), data...)})
			return nil
		})
		if err != nil {
			if strings.Contains(err.Error(), "HTTP 410") {
				return nil, fmt.Errorf("%w: the remote no longer keeps revision %s, which this partially bootstrapped agent reads its missing pages at; bootstrap it again (agentfs init ID --sync-remote-url URL --force), after saving what it holds", err, revision)
			}
			return nil, err
		}
	}
	if err := lf.Sync(); err != nil {
		return nil, err
	}
	if err := bf.Sync(); err != nil {
		return nil, err
	}
	for _, g := range got {
		delete(p.local, g.id)
		delete(p.base, g.id)
	}
	// Pages the server did not send (beyond the database at that
	// revision) are not pages of it: nothing to fetch for them.
	for _, id := range ids {
		delete(p.local, id)
		delete(p.base, id)
	}
	return got, p.save(durable)
}

// childPages lists the 0-based ids of the child pages an interior
// b-tree page (0-based id, 4096 bytes) points to.
func childPages(id uint32, page []byte) []uint32 {
	h := 0
	if id == 0 {
		h = 100 // page 1 starts with the database header
	}
	if len(page) < h+12 || (page[h] != 0x02 && page[h] != 0x05) {
		return nil
	}
	n := int(binary.BigEndian.Uint16(page[h+3:]))
	out := []uint32{binary.BigEndian.Uint32(page[h+8:]) - 1}
	for i := 0; i < n; i++ {
		at := h + 12 + 2*i
		if at+2 > len(page) {
			break
		}
		off := int(binary.BigEndian.Uint16(page[at:]))
		if off+4 > len(page) || off == 0 {
			continue
		}
		if c := binary.BigEndian.Uint32(page[off:]); c > 0 {
			out = append(out, c-1)
		}
	}
	return out
}

// materialize fetches every page still absent from the local database
// and the base, at the revision of the bootstrap, and makes the agent
// whole (the lists removed, Meta.Partial cleared).
func materialize(ctx context.Context, r *remote, path string, m *Meta) error {
	if !IsPartial(path) && m.Partial == nil {
		return nil
	}
	p := partialOf(path)
	unlock, err := p.lockFresh()
	if err != nil {
		return err
	}
	defer unlock()
	want := map[uint32]bool{}
	for id := range p.local {
		want[id] = true
	}
	for id := range p.base {
		want[id] = true
	}
	if len(want) > 0 {
		if _, err := p.fetchPages(ctx, r, m.Revision, want, true); err != nil {
			return err
		}
	}
	m.Partial = nil
	return m.save(path)
}

// lazyVFS is the VFS of partially synced databases (see above); other
// files pass through unchanged.
type lazyVFS struct{ vfs.VFS }

func (v *lazyVFS) Open(name string, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	return v.OpenFilename(nil, flags)
}

func (v *lazyVFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpenFilename(v.VFS, name, flags)
	if err != nil || flags&vfs.OPEN_MAIN_DB == 0 || name == nil {
		return f, flags, err
	}
	n := name.String()
	agent, base := n, false
	if strings.HasSuffix(n, "-sync-base") {
		agent, base = strings.TrimSuffix(n, "-sync-base"), true
	}
	if _, err := os.Stat(agent + "-sync.json"); err != nil {
		return f, flags, nil
	}
	return &lazyFile{File: f, p: partialOf(agent), base: base}, flags, nil
}

type lazyFile struct {
	vfs.File
	p    *partial
	base bool
}

func (f *lazyFile) pages(n int, off int64) (int64, int64) {
	return off / PageSize, (off + int64(n) - 1) / PageSize
}

func (f *lazyFile) ReadAt(b []byte, off int64) (int, error) {
	if len(b) > 0 {
		first, last := f.pages(len(b), off)
		if f.p.anyMissing(f.base, first, last) {
			if err := f.p.ensure(context.Background(), f.base, first, last); err != nil {
				fmt.Fprintf(os.Stderr, "agentfs: fetching pages %d..%d of %s from its sync remote: %v\n", first, last, f.p.path, err)
				return 0, sqlite3.IOERR_READ
			}
		}
	}
	return f.File.ReadAt(b, off)
}

func (f *lazyFile) WriteAt(b []byte, off int64) (int, error) {
	if len(b) > 0 && !f.base {
		first, last := f.pages(len(b), off)
		if err := f.p.markWritten(first, last); err != nil {
			return 0, sqlite3.IOERR_WRITE
		}
	}
	return f.File.WriteAt(b, off)
}

func (f *lazyFile) Truncate(size int64) error {
	if !f.base {
		// Pages cut off are no longer the remote's: should the file grow
		// again, SQLite writes them before reading them.
		st, err := os.Stat(f.p.path)
		if err == nil && st.Size() > size {
			if err := f.p.markWritten(size/PageSize, (st.Size()-1)/PageSize); err != nil {
				return err
			}
		}
	}
	return f.File.Truncate(size)
}

// Sync makes the lists as durable as the database's pages first (see
// writeBitmap).
func (f *lazyFile) Sync(flags vfs.SyncFlag) error {
	if !f.base {
		d, err := os.Open(filepath.Dir(f.p.path))
		if err != nil {
			return err
		}
		err = d.Sync()
		d.Close()
		if err != nil && !errors.Is(err, syscall.EINVAL) {
			return err
		}
	}
	return f.File.Sync(flags)
}

// No memory mapping: SQLite must read pages through ReadAt.
func (f *lazyFile) DeviceCharacteristics() vfs.DeviceCharacteristic {
	return f.File.DeviceCharacteristics() & (vfs.IOCAP_IMMUTABLE | vfs.IOCAP_SEQUENTIAL |
		vfs.IOCAP_POWERSAFE_OVERWRITE | vfs.IOCAP_UNDELETABLE_WHEN_OPEN | vfs.IOCAP_SAFE_APPEND)
}

// The optional interfaces SQLite's WAL mode and locking need, passed on.
func (f *lazyFile) Unwrap() vfs.File                   { return f.File }
func (f *lazyFile) SharedMemory() vfs.SharedMemory     { return vfsutil.WrapSharedMemory(f.File) }
func (f *lazyFile) LockState() vfs.LockLevel           { return vfsutil.WrapLockState(f.File) }
func (f *lazyFile) PersistWAL() bool                   { return vfsutil.WrapPersistWAL(f.File) }
func (f *lazyFile) SetPersistWAL(keep bool)            { vfsutil.WrapSetPersistWAL(f.File, keep) }
func (f *lazyFile) HasMoved() (bool, error)            { return vfsutil.WrapHasMoved(f.File) }
func (f *lazyFile) Overwrite() error                   { return vfsutil.WrapOverwrite(f.File) }
func (f *lazyFile) CheckpointStart()                   { vfsutil.WrapCheckpointStart(f.File) }
func (f *lazyFile) CheckpointDone()                    { vfsutil.WrapCheckpointDone(f.File) }
func (f *lazyFile) BusyHandler(handler func() bool)    { vfsutil.WrapBusyHandler(f.File, handler) }
func (f *lazyFile) SizeHint(size int64) error          { return vfsutil.WrapSizeHint(f.File, size) }
func (f *lazyFile) ChunkSize(size int)                 { vfsutil.WrapChunkSize(f.File, size) }
func (f *lazyFile) Pragma(n, v string) (string, error) { return vfsutil.WrapPragma(f.File, n, v) }

// bootstrapPartial is Bootstrap with o.Partial: the local database and
// the base get the pages of the prefix (or of the query), the lists of
// absent pages the rest, and Meta.Partial the options for later fetches.
func bootstrapPartial(ctx context.Context, r *remote, path, rawURL string, o Options, opts core.Options) (err error) {
	if o.Encryption != nil {
		return errors.New("partial sync of an encrypted agent is not supported (ENOTSUP): bootstrap it whole (without --sync-partial-*), or unencrypted")
	}
	pt := *o.Partial
	if err := pt.Check(); err != nil {
		return err
	}
	req := pullRequest{}
	switch {
	case pt.BootstrapQuery != "":
		req.ServerQuerySel = pt.BootstrapQuery
	case pt.BootstrapLength > 0:
		n := uint32(max(1, pt.BootstrapLength/PageSize))
		ids := make([]uint32, n)
		for i := range ids {
			ids[i] = uint32(i)
		}
		req.ServerPagesSel = encodeRoaring(ids)
	}
	abs, aerr := filepath.Abs(path)
	if aerr != nil {
		return aerr
	}
	path = abs
	files := []string{path, basePath(path), metaPath(path), missingPath(path), baseMissingPath(path), path + "-sync-fetch.lock", path + "-wal", path + "-shm"}
	defer func() {
		if err != nil {
			for _, f := range files {
				os.Remove(f)
			}
			partialsMu.Lock()
			delete(partials, path)
			partialsMu.Unlock()
		}
	}()
	for _, f := range files {
		os.Remove(f)
	}
	lf, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	bf, err := os.OpenFile(basePath(path), os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer bf.Close()
	got := map[uint32]bool{}
	h, err := r.pull(ctx, req, func(id uint64, data []byte) error {
		got[uint32(id)] = true
		if _, err := lf.WriteAt(data, int64(id)*PageSize); err != nil {
			return err
		}
		_, err := bf.WriteAt(data, int64(id)*PageSize)
		return err
	})
	if err != nil {
		return err
	}
	// Absent pages are holes of the files (no disk used until fetched).
	for _, f := range []*os.File{lf, bf} {
		if err := f.Truncate(int64(h.DBSize) * PageSize); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if h.DBSize > 0 && !got[0] {
		return fmt.Errorf("the remote did not send page 1 of the database in a partial bootstrap (EPROTO)")
	}
	missing := map[uint32]bool{}
	for i := uint32(0); i < uint32(h.DBSize); i++ {
		if !got[i] {
			missing[i] = true
		}
	}
	m := &Meta{RemoteURL: rawURL, ClientID: randomClientID(), Revision: h.ServerRevision, LastPull: time.Now().Unix(), SentBytes: r.sent, ReceivedByte: r.recvd}
	if len(missing) > 0 {
		m.Partial = &pt
	}
	if err := m.save(path); err != nil {
		return err
	}
	p := partialOf(path)
	p.mu.Lock()
	p.local, p.base = missing, maps.Clone(missing)
	p.token = o.Token
	err = p.save(true)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	hasAgent, err := holdsAgent(ctx, basePath(path), o)
	if err != nil {
		return fmt.Errorf("the remote database is not a SQLite database this engine reads: %w (EPROTO)", err)
	}
	if !hasAgent {
		// No agent on the remote yet: this side starts a new one (whose
		// tables the first push creates), over a whole base.
		if err := materialize(ctx, r, path, m); err != nil {
			return err
		}
		lf.Close()
		if err := os.Remove(path); err != nil {
			return err
		}
		m.SentBytes, m.ReceivedByte = r.sent, r.recvd
		if err := m.save(path); err != nil {
			return err
		}
	}
	opts.Create = true
	a, err := core.Open(ctx, path, opts)
	if err != nil {
		return err
	}
	return a.Close()
}

var errProbeDone = errors.New("probe done")

// remoteChanged asks for the pages changed since revision and stops at
// the first one: whether there is any, and the server's revision.
func remoteChanged(ctx context.Context, r *remote, revision string) (bool, string, error) {
	changed := false
	h, err := r.pull(ctx, pullRequest{ClientRevision: revision}, func(uint64, []byte) error {
		changed = true
		return errProbeDone
	})
	if errors.Is(err, errProbeDone) {
		return true, "", nil
	}
	if err != nil {
		return false, "", err
	}
	return changed, h.ServerRevision, nil
}

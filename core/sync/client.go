//go:build cgo

package sync

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
)

// A synced agent database P has two companions:
//
//	P-sync.json  what the client knows of the remote (Meta)
//	P-sync-base  the remote database as of Meta.Revision, page for page
//
// The base is what "local changes" are measured against: a push sends
// the rows where P differs from it, a pull applies the rows where the
// remote's new state differs from it. Both files are replaced by atomic
// renames, so a process killed at any point leaves either the old or
// the new version, and a pull or push repeated from the old one gives
// the same result (every step is idempotent).

func metaPath(p string) string { return p + "-sync.json" }
func basePath(p string) string { return p + "-sync-base" }

// Synced reports whether the database at path is set up for sync.
func Synced(path string) bool {
	_, err := os.Stat(metaPath(path))
	return err == nil
}

// ReadMeta reads the sync state of the database at path.
func ReadMeta(path string) (*Meta, error) {
	b, err := os.ReadFile(metaPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not set up for sync (ENOENT: no %s): create it with agentfs init ID --sync-remote-url URL", path, filepath.Base(metaPath(path)))
	}
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w (EINVAL)", metaPath(path), err)
	}
	return &m, nil
}

// writeFile replaces path by a rename of a synced new file (never a
// torn file); durable also syncs the directory, without which a power
// loss may bring the old version back whole.
func writeFile(path string, data []byte, durable bool) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if !durable {
		return os.Rename(tmp, path)
	}
	return rename(tmp, path)
}

func rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(to)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (m *Meta) save(path string) error { return m.write(path, true) }

func (m *Meta) write(path string, durable bool) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(metaPath(path), append(b, '\n'), durable)
}

// remote is one conversation with the server.
type remote struct {
	url   string
	o     Options
	sent  int64
	recvd int64
}

func newRemote(rawURL string, o Options) (*remote, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("bad sync URL %q: want http(s)://HOST[:PORT]/ID (EINVAL)", rawURL)
	}
	switch u.Scheme {
	case "http", "https":
	case "libsql", "turso":
		u.Scheme = "https"
	default:
		return nil, fmt.Errorf("bad sync URL %q: scheme %q (want http, https or libsql) (EINVAL)", rawURL, u.Scheme)
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 5 * time.Minute}
	}
	return &remote{url: strings.TrimRight(u.String(), "/"), o: o}, nil
}

// do sends one request and checks its status; the caller reads and
// closes the body.
func (r *remote) do(ctx context.Context, path, ctype string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ctype)
	if r.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.o.Token)
	}
	r.sent += int64(len(body))
	resp, err := r.o.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("sync remote %s unreachable: %v (EHOSTUNREACH): check the URL and that the server runs", r.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		text := strings.TrimSpace(string(msg))
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return nil, fmt.Errorf("sync remote %s refused the request (EACCES, HTTP %d: %s): set TURSO_DB_AUTH_TOKEN to the server's token", r.url, resp.StatusCode, text)
		case http.StatusNotFound:
			return nil, fmt.Errorf("sync remote %s has no such endpoint (ENOENT, HTTP 404): the URL must be http(s)://HOST:PORT/ID of a sync server", r.url)
		}
		return nil, fmt.Errorf("sync remote %s: HTTP %d: %s (EIO)", r.url, resp.StatusCode, text)
	}
	return resp, nil
}

type countingReader struct {
	r *bufio.Reader
	n *int64
}

func (c countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		*c.n++
	}
	return b, err
}

// pullPages asks for the pages changed since revision (all pages when
// it is empty) and hands each to page. It returns the header.
func (r *remote) pullPages(ctx context.Context, revision string, page func(id uint64, data []byte) error) (*pullHeader, error) {
	return r.pull(ctx, pullRequest{ClientRevision: revision}, page)
}

// pull sends one /pull-updates request and hands each page to page.
func (r *remote) pull(ctx context.Context, req pullRequest, page func(id uint64, data []byte) error) (*pullHeader, error) {
	resp, err := r.do(ctx, "/pull-updates", "application/protobuf", req.marshal())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	cr := countingReader{br, &r.recvd}
	read := func(b []byte) error {
		n, err := io.ReadFull(br, b)
		r.recvd += int64(n)
		return err
	}
	msg, err := readDelimited(cr, read)
	if err != nil {
		if err == io.EOF {
			err = errShortMessage
		}
		return nil, fmt.Errorf("pull from %s: %w (EIO)", r.url, err)
	}
	var h pullHeader
	if err := h.unmarshal(msg); err != nil {
		return nil, fmt.Errorf("pull from %s: bad header: %w (EPROTO)", r.url, err)
	}
	if h.Zstd || !h.Raw {
		return nil, fmt.Errorf("pull from %s: the server sent pages in an encoding other than raw (EPROTO)", r.url)
	}
	if h.StreamKind != 0 {
		return nil, fmt.Errorf("pull from %s: the server sent a logical log, not pages (EPROTO)", r.url)
	}
	for {
		msg, err := readDelimited(cr, read)
		if err == io.EOF {
			return &h, nil
		}
		if err != nil {
			return nil, fmt.Errorf("pull from %s: %w (EIO)", r.url, err)
		}
		var p pageData
		if err := p.unmarshal(msg); err != nil {
			return nil, fmt.Errorf("pull from %s: bad page: %w (EPROTO)", r.url, err)
		}
		if len(p.Page) != PageSize || p.PageID >= h.DBSize {
			return nil, fmt.Errorf("pull from %s: page %d of %d bytes outside a database of %d pages (EPROTO)", r.url, p.PageID, len(p.Page), h.DBSize)
		}
		if err := page(p.PageID, p.Page); err != nil {
			return nil, err
		}
	}
}

// fetchBase writes the remote's pages changed since meta's revision over
// a copy of the base, as P-sync-base.tmp, synced. It returns the new
// revision and whether any page came.
func fetchBase(ctx context.Context, r *remote, path, revision string) (string, bool, error) {
	tmp := basePath(path) + ".tmp"
	os.Remove(tmp)
	if revision != "" {
		if err := copyFile(basePath(path), tmp); err != nil {
			return "", false, err
		}
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	w, err := newPageWriter(f, r.o)
	if err != nil {
		return "", false, err
	}
	pages := 0
	h, err := r.pullPages(ctx, revision, func(id uint64, data []byte) error {
		pages++
		return w.write(id, data)
	})
	if err != nil {
		os.Remove(tmp)
		return "", false, err
	}
	if err := w.truncate(h.DBSize); err != nil {
		return "", false, err
	}
	if err := f.Sync(); err != nil {
		return "", false, err
	}
	return h.ServerRevision, pages > 0, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Bootstrap creates the local database at path (which must not exist)
// from the remote at rawURL: the remote's agent if it holds one, else a
// new empty agent whose tables the first push creates remotely.
func Bootstrap(ctx context.Context, path, rawURL string, o Options, opts core.Options) (err error) {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists (EEXIST)", path)
	}
	if o.Encryption == nil {
		o.Encryption = opts.Encryption
	}
	if e := o.Encryption; e != nil && e.Cipher == "" {
		// A new encrypted database gets the store's default cipher.
		o.Encryption = &store.Encryption{Cipher: "aegis256", Key: e.Key}
		if len(e.Key) == 16 {
			o.Encryption.Cipher = "aegis128l"
		}
	}
	if o.Encryption != nil {
		if err := store.CheckEncryption(o.Encryption); err != nil {
			return err
		}
		opts.Encryption = o.Encryption
	}
	r, err := newRemote(rawURL, o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	unlock, err := lock(path)
	if err != nil {
		return err
	}
	defer func() {
		unlock()
		if err != nil { // nothing of a refused bootstrap stays
			os.Remove(path + "-sync.lock")
		}
	}()
	if o.Partial != nil {
		return bootstrapPartial(ctx, r, path, rawURL, o, opts)
	}
	rev, _, err := fetchBase(ctx, r, path, "")
	if err != nil {
		return err
	}
	tmp := basePath(path) + ".tmp"
	hasAgent, err := holdsAgent(ctx, tmp, o)
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("the remote database is not a SQLite database this engine reads: %w (EPROTO)", err)
	}
	if hasAgent && o.Encryption != nil {
		if err := copyBaseInto(ctx, tmp, path, o.Encryption); err != nil {
			os.Remove(path)
			return err
		}
	} else if hasAgent {
		if err := copyFile(tmp, path); err != nil {
			return err
		}
	}
	opts.Create = true
	a, err := core.Open(ctx, path, opts)
	if err != nil {
		os.Remove(path)
		os.Remove(tmp)
		return err
	}
	if err := a.Close(); err != nil {
		return err
	}
	if err := rename(tmp, basePath(path)); err != nil {
		return err
	}
	now := time.Now().Unix()
	m := &Meta{RemoteURL: rawURL, ClientID: randomClientID(), Revision: rev, LastPull: now, SentBytes: r.sent, ReceivedByte: r.recvd}
	return m.save(path)
}

func randomClientID() string {
	var b [8]byte
	if f, err := os.Open("/dev/urandom"); err == nil {
		io.ReadFull(f, b[:])
		f.Close()
	}
	return fmt.Sprintf("agentfs-%x", b)
}

func holdsAgent(ctx context.Context, path string, o Options) (bool, error) {
	db, err := openBase(path, o)
	if err != nil {
		return false, err
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='fs_inode'").Scan(&n)
	return n > 0, err
}

func immutableURI(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "immutable=1"}
	return u.String()
}

// local opens a connection to the local database with the base attached.
func local(ctx context.Context, path string, o Options) (*sql.DB, *sql.Conn, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil, err
	}
	db, err := openLocal(path, o)
	if err != nil {
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	for _, s := range []string{"PRAGMA busy_timeout=10000"} {
		if _, err := c.ExecContext(ctx, s); err != nil {
			c.Close()
			db.Close()
			return nil, nil, err
		}
	}
	if _, err := c.ExecContext(ctx, "ATTACH ? AS base", baseURI(basePath(path), o)); err != nil {
		c.Close()
		db.Close()
		return nil, nil, fmt.Errorf("opening the sync base %s: %w", basePath(path), err)
	}
	return db, c, nil
}

// Pull brings the remote's changes into the local database at path.
// Rows changed on both sides keep the local version (a file as a whole:
// see docs/SYNC.md); tool calls both sides appended keep both.
func Pull(ctx context.Context, path string, o Options) (PullResult, error) {
	unlock, err := lock(path)
	if err != nil {
		return PullResult{}, err
	}
	defer unlock()
	m, err := ReadMeta(path)
	if err != nil {
		return PullResult{}, err
	}
	if o, err = withKey(path, o); err != nil {
		return PullResult{}, err
	}
	r, err := newRemote(m.RemoteURL, o)
	if err != nil {
		return PullResult{}, err
	}
	res, err := pull(ctx, r, path, m)
	m.SentBytes += r.sent
	m.ReceivedByte += r.recvd
	if err == nil {
		m.LastPull = time.Now().Unix()
		err = m.save(path)
	}
	return res, err
}

func pull(ctx context.Context, r *remote, path string, m *Meta) (PullResult, error) {
	if IsPartial(path) || m.Partial != nil {
		// A partial agent stays partial while the remote has not changed
		// (a probe that stops at the first page); else it is made whole
		// first: the row diffs below read every page of the local
		// database and the base.
		changed, rev, err := remoteChanged(ctx, r, m.Revision)
		if err != nil {
			return PullResult{}, err
		}
		if !changed {
			_ = rev // the same revision: no page was written since
			return PullResult{Revision: m.Revision}, nil
		}
		if err := materialize(ctx, r, path, m); err != nil {
			return PullResult{}, err
		}
	}
	rev, changed, err := fetchBase(ctx, r, path, m.Revision)
	if err != nil {
		return PullResult{}, err
	}
	tmp := basePath(path) + ".tmp"
	res := PullResult{Revision: rev, Changed: changed}
	if !changed {
		os.Remove(tmp)
		m.Revision = rev
		return res, nil
	}
	db, c, err := local(ctx, path, r.o)
	if err != nil {
		return res, err
	}
	defer db.Close()
	defer c.Close()
	if _, err := c.ExecContext(ctx, "ATTACH ? AS nbase", baseURI(tmp, r.o)); err != nil {
		return res, fmt.Errorf("the pulled database: %w (EPROTO)", err)
	}
	if err := apply(ctx, c, &res); err != nil {
		return res, err
	}
	c.ExecContext(ctx, "DETACH nbase")
	c.ExecContext(ctx, "DETACH base")
	if err := rename(tmp, basePath(path)); err != nil {
		return res, err
	}
	m.Revision = rev
	return res, nil
}

// idSpaces are the counters both machines draw from: an id that each
// side gave to a different new row is given a new number on this side
// before the remote's rows arrive, so both rows survive.
var idSpaces = []struct {
	table, col string
	refs       [][2]string
}{
	{"fs_inode", "ino", [][2]string{{"fs_data", "ino"}, {"fs_symlink", "ino"}, {"fs_xattr", "ino"}, {"fs_dentry", "ino"},
		{"fs_dentry", "parent_ino"}, {"fs_origin", "delta_ino"}, {"agentfs_overlay_inode", "ino"}}},
	{"fs_dentry", "id", nil},
	{"tool_calls", "id", nil},
}

func apply(ctx context.Context, c *sql.Conn, res *PullResult) error {
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	local, order, err := tables(ctx, c, "main")
	if err != nil {
		return err
	}
	base, _, err := tables(ctx, c, "base")
	if err != nil {
		return err
	}
	remote, rorder, err := tables(ctx, c, "nbase")
	if err != nil {
		return err
	}
	if err := renumber(ctx, c, local, base, remote); err != nil {
		return err
	}
	// What this side changed since the base, by conflict group.
	mine := map[string]bool{}
	for _, name := range order {
		ops, err := diff(ctx, c, local[name], "main", "base", base[name] != nil)
		if err != nil {
			return err
		}
		for i := range ops {
			mine[ops[i].group()] = true
		}
	}
	// New tables, indexes and triggers of the remote.
	for _, name := range rorder {
		if local[name] == nil {
			if _, err := c.ExecContext(ctx, ifNotExists(remote[name].create)); err != nil {
				return fmt.Errorf("creating table %s from the remote: %w", name, err)
			}
		}
	}
	idx, iorder, err := indexSQL(ctx, c, "nbase")
	if err != nil {
		return err
	}
	for _, name := range iorder {
		if _, err := c.ExecContext(ctx, ifNotExists(idx[name])); err != nil {
			return fmt.Errorf("creating %s from the remote: %w", name, err)
		}
	}
	var all []op
	for _, name := range rorder {
		t := remote[name]
		if lt := local[name]; lt != nil && len(lt.cols) != len(t.cols) {
			return fmt.Errorf("table %s has %d columns here and %d on the remote: sync carries added tables, not changed ones (EINVAL)", name, len(lt.cols), len(t.cols))
		}
		ops, err := diff(ctx, c, t, "nbase", "base", base[name] != nil)
		if err != nil {
			return err
		}
		all = append(all, ops...)
	}
	for _, del := range []bool{true, false} {
		for i := range all {
			o := &all[i]
			if o.del != del {
				continue
			}
			if mine[o.group()] {
				res.Kept++
				continue
			}
			q, args := o.stmt()
			if _, err := c.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("applying a remote change to %s: %w", o.t.name, err)
			}
			res.Applied++
		}
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	ok = true
	return nil
}

func renumber(ctx context.Context, c *sql.Conn, local, base, remote map[string]*table) error {
	for _, s := range idSpaces {
		if local[s.table] == nil || remote[s.table] == nil {
			continue
		}
		t, col := quote(s.table), quote(s.col)
		notInBase := ""
		if base[s.table] != nil {
			notInBase = " AND m." + col + " NOT IN (SELECT " + col + " FROM base." + t + ")"
		}
		cols := local[s.table].selectCols()
		q := "SELECT m." + col + " FROM main." + t + " m JOIN nbase." + t + " n ON n." + col + " = m." + col + " WHERE 1" + notInBase +
			" AND EXISTS (SELECT " + cols + " FROM main." + t + " WHERE " + col + " = m." + col + " EXCEPT SELECT " + cols + " FROM nbase." + t + " WHERE " + col + " = m." + col + ")"
		ids, err := query(ctx, c, q, 1)
		if err != nil {
			return fmt.Errorf("%s: %w", s.table, err)
		}
		if len(ids) == 0 {
			continue
		}
		var next int64
		if err := c.QueryRowContext(ctx, "SELECT max(coalesce((SELECT max("+col+") FROM main."+t+"), 0), coalesce((SELECT max("+col+") FROM nbase."+t+"), 0))").Scan(&next); err != nil {
			return err
		}
		for _, id := range ids {
			next++
			if _, err := c.ExecContext(ctx, "UPDATE main."+t+" SET "+col+" = ? WHERE "+col+" = ?", next, id[0]); err != nil {
				return err
			}
			for _, ref := range s.refs {
				if local[ref[0]] == nil {
					continue
				}
				if _, err := c.ExecContext(ctx, "UPDATE main."+quote(ref[0])+" SET "+quote(ref[1])+" = ? WHERE "+quote(ref[1])+" = ?", next, id[0]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Push sends the local changes to the remote: first a pull (so that the
// remote's changes are merged here and the rows sent are this side's
// resolution), then the rows where the local database differs from the
// base, in one remote transaction, then a pull that makes the remote's
// new state the base.
func Push(ctx context.Context, path string, o Options) (PushResult, error) {
	unlock, err := lock(path)
	if err != nil {
		return PushResult{}, err
	}
	defer unlock()
	m, err := ReadMeta(path)
	if err != nil {
		return PushResult{}, err
	}
	if o, err = withKey(path, o); err != nil {
		return PushResult{}, err
	}
	r, err := newRemote(m.RemoteURL, o)
	if err != nil {
		return PushResult{}, err
	}
	var res PushResult
	err = func() error {
		if _, err := pull(ctx, r, path, m); err != nil {
			return err
		}
		n, err := push(ctx, r, path, m)
		if err != nil {
			return err
		}
		res.Rows = n
		if n > 0 {
			m.Pushes++
			m.LastPush = time.Now().Unix()
		}
		_, err = pull(ctx, r, path, m)
		res.Revision = m.Revision
		return err
	}()
	m.SentBytes += r.sent
	m.ReceivedByte += r.recvd
	if serr := m.save(path); err == nil {
		err = serr
	}
	return res, err
}

type step struct {
	Condition any            `json:"condition,omitempty"`
	Stmt      map[string]any `json:"stmt"`
}

func push(ctx context.Context, r *remote, path string, m *Meta) (int, error) {
	db, c, err := local(ctx, path, r.o)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	defer c.Close()
	// One read transaction: the rows sent are one snapshot.
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return 0, err
	}
	defer c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	ltabs, order, err := tables(ctx, c, "main")
	if err != nil {
		return 0, err
	}
	btabs, _, err := tables(ctx, c, "base")
	if err != nil {
		return 0, err
	}
	type change struct {
		sql  string
		args []any
	}
	var schema, changes []change
	schema = append(schema, change{createLastChangeTable, nil})
	for _, name := range order {
		if btabs[name] == nil {
			schema = append(schema, change{ifNotExists(ltabs[name].create), nil})
		}
	}
	idx, iorder, err := indexSQL(ctx, c, "main")
	if err != nil {
		return 0, err
	}
	bidx, _, err := indexSQL(ctx, c, "base")
	if err != nil {
		return 0, err
	}
	for _, name := range iorder {
		if _, ok := bidx[name]; !ok {
			schema = append(schema, change{ifNotExists(idx[name]), nil})
		}
	}
	var all []op
	for _, name := range order {
		if bt := btabs[name]; bt != nil && len(bt.cols) != len(ltabs[name].cols) {
			return 0, fmt.Errorf("table %s has %d columns here and %d on the remote: sync carries added tables, not changed ones (EINVAL)", name, len(ltabs[name].cols), len(bt.cols))
		}
		ops, err := diff(ctx, c, ltabs[name], "main", "base", btabs[name] != nil)
		if err != nil {
			return 0, err
		}
		all = append(all, ops...)
	}
	for _, del := range []bool{true, false} {
		for i := range all {
			if all[i].del == del {
				q, args := all[i].stmt()
				changes = append(changes, change{q, args})
			}
		}
	}
	if len(changes) == 0 {
		return 0, nil
	}
	// Batches of at most maxBatchBytes of values, each one remote
	// transaction: the rows are written by key, so a push cut between
	// two batches and sent again ends in the same state.
	for start := 0; start < len(changes); {
		batch := append([]change(nil), schema...)
		size := 0
		end := start
		for end < len(changes) && (end == start || size < maxBatchBytes) {
			for _, a := range changes[end].args {
				switch v := a.(type) {
				case []byte:
					size += len(v)
				case string:
					size += len(v)
				default:
					size += 8
				}
			}
			batch = append(batch, changes[end])
			end++
		}
		batch = append(batch, change{"INSERT INTO turso_sync_last_change_id(client_id, pull_gen, change_id) VALUES (?, ?, ?) ON CONFLICT(client_id) DO UPDATE SET pull_gen=excluded.pull_gen, change_id=excluded.change_id",
			[]any{m.ClientID, int64(0), m.Pushes + 1}})
		steps := []step{{Stmt: map[string]any{"sql": "BEGIN IMMEDIATE", "args": []any{}, "want_rows": false}}}
		for _, ch := range append(batch, change{"COMMIT", nil}) {
			// Each step runs only if the one before succeeded: an error
			// leaves the transaction open, and the server rolls it back.
			steps = append(steps, step{Stmt: map[string]any{"sql": ch.sql, "args": hArgs(ch.args), "want_rows": false},
				Condition: map[string]any{"type": "ok", "step": len(steps) - 1}})
		}
		if err := sendBatch(ctx, r, steps); err != nil {
			return 0, err
		}
		start = end
	}
	return len(changes), nil
}

// maxBatchBytes bounds the values of one push request (the server's
// default request limit is 256 MiB; JSON and base64 add a third).
var maxBatchBytes = 32 << 20

func sendBatch(ctx context.Context, r *remote, steps []step) error {
	body, err := json.Marshal(map[string]any{"baton": nil, "requests": []any{map[string]any{"type": "batch", "batch": map[string]any{"steps": steps}}}})
	if err != nil {
		return err
	}
	resp, err := r.do(ctx, "/v2/pipeline", "application/json", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	r.recvd += int64(len(rb))
	if err != nil {
		return fmt.Errorf("push to %s: the answer was cut: %w (EIO); the next push sends the changes again", r.url, err)
	}
	var out struct {
		Results []struct {
			Type     string  `json:"type"`
			Error    *hError `json:"error"`
			Response struct {
				Result struct {
					StepErrors []*hError `json:"step_errors"`
				} `json:"result"`
			} `json:"response"`
		} `json:"results"`
	}
	if err := json.Unmarshal(rb, &out); err != nil || len(out.Results) != 1 {
		return fmt.Errorf("push to %s: unexpected answer (EPROTO)", r.url)
	}
	if e := out.Results[0].Error; e != nil {
		return fmt.Errorf("push to %s: %s (%s)", r.url, e.Message, e.Code)
	}
	errs := out.Results[0].Response.Result.StepErrors
	for i, e := range errs {
		if e != nil {
			return fmt.Errorf("push to %s: step %d: %s (%s); that batch changed nothing remotely", r.url, i, e.Message, e.Code)
		}
	}
	if len(errs) != len(steps) {
		return fmt.Errorf("push to %s: %d step results for %d steps (EPROTO)", r.url, len(errs), len(steps))
	}
	return nil
}

func hArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = jsonValue(a)
	}
	return out
}

// Checkpoint copies the local WAL into the database file.
func Checkpoint(ctx context.Context, path string, o Options) error {
	if _, err := ReadMeta(path); err != nil {
		return err
	}
	db, err := openLocal(path, o)
	if err != nil {
		return err
	}
	defer db.Close()
	var busy, l, ck int
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &l, &ck); err != nil {
		return err
	}
	if busy != 0 {
		return fmt.Errorf("checkpoint of %s blocked by another reader (EBUSY): retry when it is idle", path)
	}
	return nil
}

// GetStats reports the sync state; CDCOperations counts the rows a push
// would send.
func GetStats(ctx context.Context, path string, o Options) (Stats, error) {
	m, err := ReadMeta(path)
	if err != nil {
		return Stats{}, err
	}
	if o, err = withKey(path, o); err != nil {
		return Stats{}, err
	}
	s := Stats{Revision: m.Revision, NetworkSentBytes: m.SentBytes, NetworkReceivedBytes: m.ReceivedByte, RemoteURL: m.RemoteURL}
	if m.LastPull != 0 {
		s.LastPullUnixTime = &m.LastPull
	}
	if m.LastPush != 0 {
		s.LastPushUnixTime = &m.LastPush
	}
	if st, err := os.Stat(path + "-wal"); err == nil {
		s.MainWALSize = st.Size()
	}
	if IsPartial(path) {
		p := partialOf(path)
		p.mu.Lock()
		err := p.reload()
		s.MissingPages = int64(len(p.local))
		p.mu.Unlock()
		s.CDCOperations = -1
		return s, err
	}
	db, c, err := local(ctx, path, o)
	if err != nil {
		return s, err
	}
	defer db.Close()
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return s, err
	}
	defer c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	ltabs, order, err := tables(ctx, c, "main")
	if err != nil {
		return s, err
	}
	btabs, _, err := tables(ctx, c, "base")
	if err != nil {
		return s, err
	}
	for _, name := range order {
		ops, err := diff(ctx, c, ltabs[name], "main", "base", btabs[name] != nil)
		if err != nil {
			return s, err
		}
		s.CDCOperations += int64(len(ops))
	}
	return s, nil
}

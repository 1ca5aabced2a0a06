//go:build cgo

// Package sync speaks Turso's database sync protocol (docs/SYNC.md): a
// server (Server, behind "agentfs serve sync") that keeps one SQLite
// database per agent id, and a client (Open, Pull, Push) that keeps a
// local agent database in step with such a server.
package sync

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	gosync "sync"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// Server serves the databases DIR/ID.db. It must be the only program
// writing them: it learns which pages each write changed from the WAL it
// checkpoints after every request.
type Server struct {
	dir string
	// MaxRequestBytes bounds a request body (default 256 MiB).
	MaxRequestBytes int64
	// Log, when set, gets one line per request.
	Log *log.Logger
	// HistoryBytes bounds the page history kept per database for
	// requests pinned to an older revision (partial clients' lazy reads;
	// default DefaultHistoryBytes). Set it before the first request.
	HistoryBytes int64

	mu  gosync.Mutex
	dbs map[string]*database
}

// NewServer serves the databases under dir (created if missing).
func NewServer(dir string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Server{dir: dir, dbs: map[string]*database{}, MaxRequestBytes: 256 << 20, HistoryBytes: DefaultHistoryBytes}, nil
}

// database is one served database. Every request holds mu from start to
// end, so requests on one database run one at a time (a push's
// transaction and a pull's page stream never interleave).
type database struct {
	mu   gosync.Mutex
	path string
	db   *sql.DB
	conn *sql.Conn
	// epoch names this opening of the database: revisions are
	// "EPOCH.N", and a revision of another epoch (before a restart) is
	// answered with every page.
	epoch   string
	rev     uint64
	changed map[uint32]uint64 // 0-based page id -> revision that last wrote it
	// hist is ID.db-history (history.go); revisions from oldest to rev
	// are served, pinned, byte-identical to what they were.
	hist      *sql.DB
	oldest    uint64
	histBytes int64
	limit     int64
	notify    chan struct{} // closed at the next change (long polls)

	// A hrana stream that ended a request inside a transaction keeps mu
	// locked for its next request (owner is its baton) until streamIdle.
	smu        gosync.Mutex
	owner      string
	ownerTimer *time.Timer
}

func (d *database) revision() string { return d.epoch + "." + strconv.FormatUint(d.rev, 10) }

func (s *Server) get(ctx context.Context, id string) (*database, error) {
	if err := core.CheckID(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.dbs[id]; d != nil {
		return d, nil
	}
	d, err := openServed(ctx, filepath.Join(s.dir, id+".db"), s.HistoryBytes)
	if err != nil {
		return nil, err
	}
	s.dbs[id] = d
	return d, nil
}

func openServed(ctx context.Context, path string, limit int64) (*database, error) {
	_, statErr := os.Stat(path)
	fp := fingerprint(path)
	if errors.Is(statErr, os.ErrNotExist) {
		fp = ""
	}
	hist, err := openHistory(ctx, path+"-history")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(sqlite.DriverName, path)
	if err != nil {
		hist.Close()
		return nil, err
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		hist.Close()
		return nil, err
	}
	fail := func(err error) (*database, error) {
		conn.Close()
		db.Close()
		hist.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// page_size before anything is written; autocheckpoint off, so the
	// WAL holds exactly the pages of the writes since the last request.
	for _, p := range []string{"PRAGMA page_size=4096", "PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0",
		"PRAGMA synchronous=FULL", "PRAGMA busy_timeout=5000"} {
		rows, err := conn.QueryContext(ctx, p)
		if err != nil {
			return fail(err)
		}
		for rows.Next() { // a pragma runs when stepped
		}
		if err := rows.Close(); err != nil {
			return fail(err)
		}
	}
	if errors.Is(statErr, os.ErrNotExist) {
		// A database of at least one page, holding the table where the
		// protocol's clients record what they pushed.
		if _, err := conn.ExecContext(ctx, createLastChangeTable); err != nil {
			return fail(err)
		}
	}
	var ps int
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&ps); err != nil {
		return fail(err)
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fail(err)
	}
	if mode != "wal" {
		return fail(fmt.Errorf("journal mode %q: the server needs WAL mode", mode))
	}
	if ps != PageSize {
		return fail(fmt.Errorf("page size %d: the sync protocol carries 4096-byte pages only (EINVAL)", ps))
	}
	var b [8]byte
	rand.Read(b[:])
	if limit <= 0 {
		limit = DefaultHistoryBytes
	}
	d := &database{path: path, db: db, conn: conn, hist: hist, limit: limit,
		changed: map[uint32]uint64{}, notify: make(chan struct{})}
	if err := d.loadHistory(ctx, fp, hex.EncodeToString(b[:])); err != nil {
		return fail(err)
	}
	// Pages a crashed run (or the creation above) left in the WAL become
	// a revision of their own.
	if err := d.afterWrite(ctx); err != nil {
		return fail(err)
	}
	return d, nil
}

const createLastChangeTable = "CREATE TABLE IF NOT EXISTS turso_sync_last_change_id (client_id TEXT PRIMARY KEY, pull_gen INTEGER, change_id INTEGER)"

// afterWrite records the pages the WAL holds as changed by a new
// revision, then checkpoints them into the database file.
func (d *database) afterWrite(ctx context.Context) error {
	pages, err := walPages(d.path + "-wal")
	if err != nil {
		return err
	}
	if len(pages) == 0 {
		return d.checkpoint(ctx)
	}
	rev := d.rev + 1
	// The versions this write replaces go to the history first: a crash
	// after this commit and before the checkpoint leaves the file as it
	// was, and the next run records the WAL's pages again.
	if err := d.saveHistory(ctx, rev, pages, walCommitSize(d.path+"-wal")); err != nil {
		return fmt.Errorf("saving page history: %w", err)
	}
	d.rev = rev
	for _, p := range pages {
		d.changed[p] = rev
	}
	close(d.notify)
	d.notify = make(chan struct{})
	if err := d.checkpoint(ctx); err != nil {
		return err
	}
	return d.afterCheckpoint(ctx, rev, d.limit)
}

func (d *database) checkpoint(ctx context.Context) error {
	var busy, logN, ck int
	if err := d.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logN, &ck); err != nil {
		return err
	}
	if busy != 0 {
		return errors.New("checkpoint blocked: another program has the database open (EBUSY)")
	}
	return nil
}

// walPages lists the 0-based ids of the pages in a WAL's frames of the
// current salt (SQLite's WAL format: a 32-byte header, then frames of a
// 24-byte header and a page).
func walPages(path string) ([]uint32, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hdr := make([]byte, 32)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, nil // empty (truncated) WAL
	}
	ps := int64(binary.BigEndian.Uint32(hdr[8:]))
	if ps != PageSize {
		return nil, fmt.Errorf("WAL page size %d", ps)
	}
	salt1, salt2 := binary.BigEndian.Uint32(hdr[16:]), binary.BigEndian.Uint32(hdr[20:])
	seen := map[uint32]bool{}
	var out []uint32
	fh := make([]byte, 24)
	for off := int64(32); ; off += 24 + ps {
		if _, err := f.ReadAt(fh, off); err != nil {
			break
		}
		if binary.BigEndian.Uint32(fh[8:]) != salt1 || binary.BigEndian.Uint32(fh[12:]) != salt2 {
			break
		}
		p := binary.BigEndian.Uint32(fh) - 1
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// Handler serves the protocol under /ID/: POST /ID/pull-updates and
// POST /ID/v2/pipeline, and GET /healthz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("POST /{id}/pull-updates", s.pullUpdates)
	mux.HandleFunc("POST /{id}/v2/pipeline", s.pipeline)
	mux.HandleFunc("POST /{id}/v3/pipeline", s.pipeline)
	mux.HandleFunc("POST /{id}/v3/cursor", s.cursor)
	// version probes of hrana clients
	mux.HandleFunc("GET /{id}/v2", func(w http.ResponseWriter, _ *http.Request) {})
	mux.HandleFunc("GET /{id}/v3", func(w http.ResponseWriter, _ *http.Request) {})
	return mux
}

func (s *Server) logf(r *http.Request, format string, args ...any) {
	if s.Log != nil {
		s.Log.Printf("%s %s: "+format, append([]any{r.Method, r.URL.Path}, args...)...)
	}
}

func (s *Server) body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.MaxRequestBytes))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return b, true
}

func (s *Server) pullUpdates(w http.ResponseWriter, r *http.Request) {
	body, ok := s.body(w, r)
	if !ok {
		return
	}
	var req pullRequest
	if err := req.unmarshal(body); err != nil {
		http.Error(w, "bad PullUpdatesRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.StreamKind != 0 {
		http.Error(w, "this server streams pages only (no MVCC logical log)", http.StatusBadRequest)
		return
	}
	sel, err := decodeRoaring(req.ServerPagesSel)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d, err := s.get(r.Context(), r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d.mu.Lock()
	if req.ClientRevision != "" && req.ClientRevision == d.revision() && req.ServerRevision == "" && req.LongPollTimeoutMS > 0 {
		// Long poll: wait for the next change (bounded), then answer.
		ch := d.notify
		d.mu.Unlock()
		t := time.NewTimer(min(time.Duration(req.LongPollTimeoutMS)*time.Millisecond, time.Minute))
		select {
		case <-ch:
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
		d.mu.Lock()
	}
	defer d.mu.Unlock()
	at := d.rev
	if req.ServerRevision != "" {
		n, ok := d.parseRev(req.ServerRevision)
		if !ok || n < d.oldest {
			// 410: the client's pinned view is gone; it must bootstrap again.
			http.Error(w, fmt.Sprintf("revision %s is no longer served (now %s; page history from %s.%d on): bootstrap again", req.ServerRevision, d.revision(), d.epoch, d.oldest), http.StatusGone)
			return
		}
		at = n
	}
	if req.ServerQuerySel != "" && len(sel) == 0 {
		if at != d.rev {
			http.Error(w, "server_query_selector is answered at the latest revision only", http.StatusBadRequest)
			return
		}
		qsel, err := queryPages(r.Context(), d.path, req.ServerQuerySel)
		if err != nil {
			http.Error(w, "server_query_selector: "+err.Error(), http.StatusBadRequest)
			return
		}
		sel = qsel
	}
	f, err := sqlite.OpenFile(d.path) // not os.Open: see sqlite.File
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	dbSize, err := d.sizeAt(r.Context(), at)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var pages []uint32
	switch {
	case len(sel) > 0:
		for _, p := range sel {
			if p < dbSize {
				pages = append(pages, p)
			}
		}
	case req.ClientRevision != "":
		since, ok := d.parseRev(req.ClientRevision)
		if ok && since >= d.oldest && since <= at {
			if at == d.rev {
				for p, rev := range d.changed {
					if rev > since && p < dbSize {
						pages = append(pages, p)
					}
				}
				sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
				break
			}
			ch, err := d.changedBetween(r.Context(), since, at)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			for _, p := range ch {
				if p < dbSize {
					pages = append(pages, p)
				}
			}
			break
		}
		fallthrough // a revision of another epoch, or older than the history: every page
	default:
		pages = make([]uint32, dbSize)
		for i := range pages {
			pages[i] = uint32(i)
		}
	}
	served := d.epoch + "." + strconv.FormatUint(at, 10)
	hdr := pullHeader{ServerRevision: served, DBSize: uint64(dbSize), Raw: true, Protocol: 1}
	w.Header().Set("Content-Type", "application/protobuf")
	if _, err := w.Write(delimited(hdr.marshal())); err != nil {
		return
	}
	buf := make([]byte, PageSize)
	for _, p := range pages {
		if err := d.readPageAt(r.Context(), f, p, at, buf); err != nil {
			s.logf(r, "reading page %d: %v", p, err)
			return // the client sees a cut stream and retries
		}
		if _, err := w.Write(delimited((&pageData{PageID: uint64(p), Page: buf}).marshal())); err != nil {
			return
		}
	}
	s.logf(r, "%d of %d pages at %s (client at %q)", len(pages), dbSize, served, req.ClientRevision)
}

// streamIdle is how long a stream that left a transaction open keeps
// the database before it is rolled back and the database freed.
var streamIdle = 10 * time.Second

// acquire takes the database for a request of the stream named baton
// ("" starts a new stream). A stream whose transaction is open already
// holds the database: its request continues it.
func (d *database) acquire(baton string) error {
	if baton != "" {
		d.smu.Lock()
		defer d.smu.Unlock()
		if d.owner != baton || !d.ownerTimer.Stop() {
			return errors.New("unknown or expired baton: the stream was closed (its transaction rolled back); start a new one")
		}
		d.owner = ""
		return nil
	}
	d.mu.Lock()
	return nil
}

// release ends a request: with a transaction open (and the stream not
// closed) the database stays held for the stream, whose new baton is
// returned; otherwise the writes are recorded and the database freed.
func (d *database) release(sess *session, closed bool) (string, error) {
	ci, err := sess.info()
	if err == nil && !ci.Autocommit && !closed {
		var b [12]byte
		rand.Read(b[:])
		baton := hex.EncodeToString(b[:])
		d.smu.Lock()
		d.owner = baton
		d.ownerTimer = time.AfterFunc(streamIdle, func() {
			d.smu.Lock()
			if d.owner != baton {
				d.smu.Unlock()
				return
			}
			d.owner = ""
			d.smu.Unlock()
			d.conn.ExecContext(context.Background(), "ROLLBACK")
			d.afterWrite(context.Background())
			d.mu.Unlock()
		})
		d.smu.Unlock()
		return baton, nil
	}
	defer d.mu.Unlock()
	if err == nil && !ci.Autocommit {
		d.conn.ExecContext(sess.ctx, "ROLLBACK")
	}
	return "", d.afterWrite(sess.ctx)
}

func (s *Server) begin(w http.ResponseWriter, r *http.Request, baton *string) (*database, *session, bool) {
	d, err := s.get(r.Context(), r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, nil, false
	}
	b := ""
	if baton != nil {
		b = *baton
	}
	if err := d.acquire(b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, nil, false
	}
	return d, &session{ctx: context.WithoutCancel(r.Context()), conn: d.conn}, true
}

func (s *Server) pipeline(w http.ResponseWriter, r *http.Request) {
	body, ok := s.body(w, r)
	if !ok {
		return
	}
	var req pipelineReq
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad pipeline request: "+err.Error(), http.StatusBadRequest)
		return
	}
	d, sess, ok := s.begin(w, r, req.Baton)
	if !ok {
		return
	}
	results := make([]map[string]any, 0, len(req.Requests))
	closed := false
	for i := range req.Requests {
		results = append(results, sess.request(&req.Requests[i]))
		closed = closed || req.Requests[i].Type == "close"
	}
	baton, err := d.release(sess, closed)
	if err != nil {
		s.logf(r, "after write: %v", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var b any
	if baton != "" {
		b = baton
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"baton": b, "base_url": nil, "results": results})
	s.logf(r, "%d requests", len(req.Requests))
}

// cursor serves POST /v3/cursor: one batch, answered as lines of JSON
// (the stream's baton, then step_begin, row, step_end or step_error
// entries per executed step).
func (s *Server) cursor(w http.ResponseWriter, r *http.Request) {
	body, ok := s.body(w, r)
	if !ok {
		return
	}
	var req struct {
		Baton *string `json:"baton"`
		Batch struct {
			Steps []hStep `json:"steps"`
		} `json:"batch"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad cursor request: "+err.Error(), http.StatusBadRequest)
		return
	}
	d, sess, ok := s.begin(w, r, req.Baton)
	if !ok {
		return
	}
	var entries []any
	results := make([]*stmtResult, 0, len(req.Batch.Steps))
	errs := make([]*hError, 0, len(req.Batch.Steps))
	for i := range req.Batch.Steps {
		st := &req.Batch.Steps[i]
		run, err := sess.cond(st.Condition, results, errs)
		if err != nil {
			entries = append(entries, map[string]any{"type": "error", "error": &hError{Message: err.Error(), Code: "PROTO_ERROR"}})
			break
		}
		if !run {
			results, errs = append(results, nil), append(errs, nil)
			continue
		}
		res, e := sess.execute(&st.Stmt)
		results, errs = append(results, res), append(errs, e)
		if e != nil {
			entries = append(entries, map[string]any{"type": "step_error", "step": i, "error": e})
			continue
		}
		entries = append(entries, map[string]any{"type": "step_begin", "step": i, "cols": res.Cols})
		for _, row := range res.Rows {
			entries = append(entries, map[string]any{"type": "row", "row": row})
		}
		entries = append(entries, map[string]any{"type": "step_end", "affected_row_count": res.AffectedRowCount, "last_insert_rowid": res.LastInsertRowid})
	}
	baton, err := d.release(sess, false)
	if err != nil {
		s.logf(r, "after write: %v", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var b any
	if baton != "" {
		b = baton
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w) // one JSON value per line
	enc.Encode(map[string]any{"baton": b, "base_url": nil})
	for _, e := range entries {
		enc.Encode(e)
	}
	s.logf(r, "cursor of %d steps", len(req.Batch.Steps))
}

// Close closes every database.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for id, d := range s.dbs {
		d.mu.Lock()
		d.conn.Close()
		if err := d.db.Close(); err != nil && first == nil {
			first = err
		}
		if err := d.hist.Close(); err != nil && first == nil {
			first = err
		}
		d.mu.Unlock()
		delete(s.dbs, id)
	}
	return first
}

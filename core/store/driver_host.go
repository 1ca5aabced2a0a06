//go:build js && agentfs_workers

package store

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strings"
	"sync"
	"syscall/js"
)

// The Workers build (tag agentfs_workers): the engine carries no SQLite.
// A database is the SQL storage of its host, a Cloudflare Durable
// Object's ctx.storage.sql, reached through a JavaScript object that the
// host attaches under a name (AttachHost). Statements cross as one call
// each, synchronously (the Durable Object's SQL API is synchronous).
//
// Transactions: the Durable Object refuses BEGIN, COMMIT and SAVEPOINT;
// its only transaction is ctx.storage.transactionSync(callback), which
// commits when the callback returns and rolls back when it throws. The
// store's BEGIN IMMEDIATE ... COMMIT|ROLLBACK maps onto one such
// callback: at BEGIN IMMEDIATE a goroutine calls transactionSync, whose
// callback (run by Go on that goroutine) waits; meanwhile the store's
// statements run on their own goroutine, inside the callback's JavaScript
// frame and so inside the transaction; COMMIT lets the callback return,
// ROLLBACK makes it throw, and both wait until transactionSync has
// returned. A plain BEGIN (a read snapshot) needs nothing: the object is
// single-threaded and the engine is its only writer. The pragmas the
// store sets for files (busy_timeout, mmap_size, synchronous, ...) mean
// nothing here and are skipped; data_version is constant, as no other
// connection ever writes.
//
// The call's own transaction: the host may run a whole engine call inside
// one transactionSync of its own (obj.begin present). The first BEGIN
// IMMEDIATE of that call then takes it over (obj.begin answers 1): no
// goroutine, no callback into Go, no transactionSync of its own; its
// COMMIT tells the host (obj.end(true)), whose transaction commits when
// the call returns. Its ROLLBACK cannot undo the writes at once: it tells
// the host (obj.end(false)), which refuses every later statement of the
// call and rolls the whole call back when it returns; if it refused any,
// it runs the call again without a transaction to take over (else the
// call's answer stands: nothing else touched the storage after the
// rollback). A later BEGIN IMMEDIATE of the same call (obj.begin answers
// 0) nests its own transactionSync inside.
const walMode = false

// soleWriter: data_version never changes (the engine is the storage's
// only writer, see above), so the store reads no data version and opens
// no read snapshot (a plain BEGIN is a no-op here anyway): each of those
// statements still costs a trip through database/sql.
const soleWriter = true

// DriverName names the SQLite under the engine, for benchmarks and
// diagnostics.
const DriverName = "workers-host-sql"

// host is an attached database: its JavaScript object (see AttachHost)
// and the write transaction open on it, if any.
type host struct {
	name string
	obj  js.Value
	exec js.Value
	tx   js.Value
	// callBegin and callEnd: the host's call transaction (obj.begin and
	// obj.end; undefined when the host has none).
	callBegin js.Value
	callEnd   js.Value
	// body is the callback run inside the host's transaction (one per
	// host, not one per transaction: each js.FuncOf and each JavaScript
	// value Go holds costs an allocation and a finalizer).
	body js.Func

	mu      sync.Mutex
	write   *hostTx // the open write transaction; nil when none
	pending *hostTx // the transaction whose body is about to run

	// txs are the transactions for txLoop to run; quit ends it.
	txs  chan *hostTx
	quit chan struct{}

	// The statement wire (see runQuery), used under wire: query ids, the
	// arguments' encoding buffer and the host's shared byte buffers.
	wire    sync.Mutex
	ids     map[string]hostQuery
	enc     []byte
	args    js.Value // obj.args, the host's buffer for arguments
	argsCap int
	out     js.Value // obj.out, the host's buffer for rows
	outCap  int
}

// hostQuery is a statement the host knows by number (obj.prepare) and
// what statement() does with it.
type hostQuery struct {
	id   int
	kind int
}

type hostTx struct {
	owner *hostConn
	// call: this is the host's call transaction (see the top of the
	// file), taken over by owner; the channels are unused.
	call    bool
	entered chan struct{}
	end     chan bool  // true: commit, false: roll back
	done    chan error // transactionSync has returned
}

var hosts sync.Map // name -> *host

// AttachHost makes obj the database called path, for Open(path):
//
//	obj.prepare(query: string): number
//	obj.exec(query: number | string, args: number | Uint8Array): number | string
//	obj.args: Uint8Array, obj.grow(n: number): Uint8Array
//	obj.out: Uint8Array, obj.shrink(): void
//	obj.tx(body: () => boolean): null | string
//	obj.begin(): number, obj.end(commit: boolean): number   (optional)
//
// prepare numbers a statement's text so that exec takes the number (a
// string crossing into JavaScript is decoded each time); exec runs one
// statement with its arguments (encoded by encodeArgs: the first n bytes
// of obj.args, or an array of their own when large) and writes its rows
// (decoded by decodeRows) into obj.out, answering their length, or
// answers an error message; grow replaces obj.args by a larger buffer,
// shrink replaces a large obj.out by a small one. tx runs body inside the
// host's transaction, rolls back if body answers false, and answers an
// error message or null. begin and end, when present, hand over the
// transaction the host runs the current engine call in (see the top of
// the file): begin answers 1 (taken), 0 (none: use tx) or -1 (the call
// was rolled back: refuse); end answers 0, or -1 if that transaction was
// not open.
func AttachHost(path string, obj js.Value) {
	h := &host{name: memoryName(path), obj: obj, exec: obj.Get("exec"), tx: obj.Get("tx"), ids: map[string]hostQuery{},
		txs: make(chan *hostTx), quit: make(chan struct{})}
	if b, e := obj.Get("begin"), obj.Get("end"); b.Type() == js.TypeFunction && e.Type() == js.TypeFunction {
		h.callBegin, h.callEnd = b, e
	}
	h.body = js.FuncOf(func(js.Value, []js.Value) any {
		h.mu.Lock()
		t := h.pending
		h.pending = nil
		h.mu.Unlock()
		if t == nil {
			return false
		}
		close(t.entered)
		return <-t.end
	})
	h.refreshArgs()
	h.refreshOut()
	go h.txLoop()
	if old, ok := hosts.Swap(h.name, h); ok {
		old.(*host).stop()
	}
}

// DetachHost forgets the database path once it is closed.
func DetachHost(path string) {
	if old, ok := hosts.LoadAndDelete(memoryName(path)); ok {
		old.(*host).stop()
	}
}

func (h *host) stop() {
	close(h.quit)
	h.body.Release()
}

// txLoop calls the host's tx for each transaction that begins. One
// goroutine for all of them, not a new one each: a new goroutine starts
// with a small stack that grows (by copying) on every transaction, about
// a tenth of a small write's time in workerd.
func (h *host) txLoop() {
	for {
		select {
		case <-h.quit:
			return
		case t := <-h.txs:
			r := h.tx.Invoke(h.body.Value)
			var err error
			if r.Type() == js.TypeString {
				err = errors.New(r.String())
			}
			t.done <- err
		}
	}
}

func (h *host) refreshArgs() {
	h.args = h.obj.Get("args")
	h.argsCap = h.args.Get("byteLength").Int()
}

func (h *host) refreshOut() {
	h.out = h.obj.Get("out")
	h.outCap = h.out.Get("byteLength").Int()
}

func memoryName(path string) string { return strings.TrimLeft(path, "/") }

func lookupHost(path string) (*host, bool) {
	h, ok := hosts.Load(memoryName(path))
	if !ok {
		return nil, false
	}
	return h.(*host), true
}

func dataSource(path string, opts Options) (abs, dsn string, err error) {
	if _, ok := lookupHost(path); !ok {
		return "", "", &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return "/" + memoryName(path), memoryName(path), nil
}

// Stat reports whether path is an attached host database that holds an
// AgentFS database (its fs_inode table): an empty storage is a database
// still to be created, as a missing file is.
func Stat(path string) error {
	h, ok := lookupHost(path)
	if !ok {
		return &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
	}
	r, err := h.run("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'fs_inode'", nil)
	if err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if len(r.rows) == 0 || r.rows[0][0] != int64(1) {
		return &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist}
	}
	return nil
}

func openConnector(dsn string) (driver.Connector, error) {
	h, ok := lookupHost(dsn)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: dsn, Err: fs.ErrNotExist}
	}
	return hostConnector{h}, nil
}

func cantOpen(error) bool { return false }

func immutable(abs, dsn string) (string, error) { return dsn, nil }

// CreateFile builds a new database in the attached host storage (see
// CreateFile of native builds): build's write transaction is the host's,
// so a failure leaves the storage as it was.
func CreateFile(ctx context.Context, path string, opts Options, build func(db *DB) error) error {
	if Stat(path) == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	opts.ReadOnly = false
	db, err := Open(ctx, path, opts)
	if err != nil {
		return err
	}
	if err := build(db); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

type hostConnector struct{ h *host }

func (c hostConnector) Connect(context.Context) (driver.Conn, error) { return &hostConn{h: c.h}, nil }
func (c hostConnector) Driver() driver.Driver                        { return hostDriver{} }

type hostDriver struct{}

func (hostDriver) Open(name string) (driver.Conn, error) {
	c, err := openConnector(name)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// hostConn is one database/sql connection; every connection of a host
// runs on the host's one SQL storage.
type hostConn struct {
	h *host
}

func (c *hostConn) Prepare(query string) (driver.Stmt, error) { return &hostStmt{c: c, q: query}, nil }
func (c *hostConn) Close() error                              { return nil }
func (c *hostConn) Begin() (driver.Tx, error) {
	return nil, errors.New("store: transactions of the host database are BEGIN IMMEDIATE statements")
}

func (c *hostConn) ExecContext(_ context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.statement(query, args)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return driver.RowsAffected(0), nil
	}
	return &hostResult{h: c.h}, nil
}

func (c *hostConn) QueryContext(_ context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.statement(query, args)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = &hostRows{}
	}
	return r, nil
}

// CheckNamedValue takes the argument types encodeArgs binds as they are,
// ints included (the store passes many: sizes, nanoseconds), so that
// database/sql skips its reflection-based conversion of each argument.
func (c *hostConn) CheckNamedValue(nv *driver.NamedValue) error {
	switch nv.Value.(type) {
	case nil, int64, int, bool, float64, string, []byte:
		return nil
	}
	return driver.ErrSkip
}

var (
	_ driver.ExecerContext     = (*hostConn)(nil)
	_ driver.QueryerContext    = (*hostConn)(nil)
	_ driver.NamedValueChecker = (*hostConn)(nil)
)

// skipped are the store's per-connection settings for files, which the
// host's SQL storage refuses and has no use for.
var skipped = []string{"BUSY_TIMEOUT", "JOURNAL_SIZE_LIMIT", "MMAP_SIZE", "TEMP_STORE", "QUERY_ONLY", "SYNCHRONOUS", "PAGE_SIZE"}

// What statement() does with a query: run it, or one of the things the
// host's storage does instead of the statements it refuses.
const (
	kindRun = iota
	kindBegin
	kindNothing
	kindCommit
	kindRollback
	kindSavepoint
	kindDataVersion
	kindCheckpoint
	kindPageSize
)

// statementKind tells what statement() does with query (see the top of this
// file).
func statementKind(query string) int {
	q := strings.ToUpper(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(query), ";")))
	switch {
	case q == "BEGIN IMMEDIATE" || q == "BEGIN EXCLUSIVE":
		return kindBegin
	case q == "BEGIN" || q == "BEGIN DEFERRED":
		return kindNothing
	case q == "COMMIT" || q == "END":
		return kindCommit
	case q == "ROLLBACK":
		return kindRollback
	case strings.HasPrefix(q, "SAVEPOINT") || strings.HasPrefix(q, "RELEASE") || strings.HasPrefix(q, "ROLLBACK TO"):
		return kindSavepoint
	case q == "PRAGMA DATA_VERSION":
		return kindDataVersion
	case strings.HasPrefix(q, "PRAGMA WAL_CHECKPOINT"):
		return kindCheckpoint
	case q == "PRAGMA PAGE_SIZE":
		return kindPageSize
	case strings.HasPrefix(q, "PRAGMA ") && strings.Contains(q, "="):
		name := strings.TrimSpace(q[len("PRAGMA "):strings.Index(q, "=")])
		for _, s := range skipped {
			if name == s {
				return kindNothing
			}
		}
	}
	return kindRun
}

// statement runs query, or does what the host's storage does instead of
// the statements it refuses (see the top of this file). A nil result
// with no error: nothing to answer.
func (c *hostConn) statement(query string, args []driver.NamedValue) (*hostRows, error) {
	q := c.h.query(query)
	switch q.kind {
	case kindBegin:
		return nil, c.begin()
	case kindNothing:
		return nil, nil
	case kindCommit:
		return nil, c.end(true)
	case kindRollback:
		return nil, c.end(false)
	case kindSavepoint:
		return nil, errors.New("savepoints are not available on a Durable Object's SQL storage (group commit is off in the Workers build)")
	case kindDataVersion:
		return &hostRows{cols: []string{"data_version"}, rows: [][]driver.Value{{int64(1)}}}, nil
	case kindCheckpoint:
		return &hostRows{cols: []string{"busy", "log", "checkpointed"}, rows: [][]driver.Value{{int64(0), int64(0), int64(0)}}}, nil
	}
	vals := make([]driver.Value, len(args))
	for i, a := range args {
		vals[i] = a.Value
	}
	if q.kind == kindPageSize {
		r, err := c.h.runQuery(query, q, vals)
		if err != nil && strings.Contains(err.Error(), "SQLITE_AUTH") {
			// Runtimes before late 2026 (workerd of wrangler 4.70, say)
			// refuse reading page_size; their storage has SQLite's
			// default page size, which is what the engine reports then.
			return &hostRows{cols: []string{"page_size"}, rows: [][]driver.Value{{int64(4096)}}}, nil
		}
		return r, err
	}
	if len(vals) > maxHostArgs {
		if head, group, n, ok := valuesList(query, len(vals)); ok {
			return c.h.runSplit(head, group, n, vals)
		}
	}
	return c.h.runQuery(query, q, vals)
}

// maxHostQueries bounds the statements a host keeps by number: the
// store's are a few dozen; user queries (agentfs query) past the bound
// cross as text.
const maxHostQueries = 512

// query answers what the host knows of query: its number (-1: none,
// it crosses as text) and what statement() does with it.
func (h *host) query(query string) hostQuery {
	h.wire.Lock()
	defer h.wire.Unlock()
	if q, ok := h.ids[query]; ok {
		return q
	}
	q := hostQuery{id: -1, kind: statementKind(query)}
	if q.kind == kindRun && len(h.ids) < maxHostQueries {
		q.id = h.obj.Call("prepare", query).Int()
	}
	if len(h.ids) < maxHostQueries {
		h.ids[query] = q
	}
	return q
}

// maxHostArgs is the most arguments a Durable Object's SQL storage binds
// to one statement (its SQLite is built with a limit of 100).
const maxHostArgs = 100

// valuesList splits a multi-row INSERT, "HEAD VALUES (?,?,?),(?,?,?)...",
// into its head ("HEAD VALUES "), one group "(?,?,?)" and the number of
// arguments per group, when every group is that one and the groups take
// exactly nargs arguments (the store's chunk writes are such statements).
func valuesList(query string, nargs int) (head, group string, per int, ok bool) {
	i := strings.LastIndex(strings.ToUpper(query), " VALUES ")
	if i < 0 {
		return "", "", 0, false
	}
	head, rest := query[:i+len(" VALUES ")], strings.TrimSpace(query[i+len(" VALUES "):])
	end := strings.IndexByte(rest, ')')
	if end < 0 || rest[0] != '(' {
		return "", "", 0, false
	}
	group = rest[:end+1]
	per = strings.Count(group, "?")
	if per == 0 || per > maxHostArgs || nargs%per != 0 || strings.Trim(group, "(?, )") != "" {
		return "", "", 0, false
	}
	n := nargs / per
	if rest != group+strings.Repeat(","+group, n-1) {
		return "", "", 0, false
	}
	return head, group, per, true
}

// runSplit runs a multi-row INSERT (see valuesList) as several, each
// within maxHostArgs; inside the store's transaction, as one.
func (h *host) runSplit(head, group string, per int, vals []driver.Value) (*hostRows, error) {
	rows := maxHostArgs / per
	for len(vals) > 0 {
		k := min(rows, len(vals)/per)
		q := head + group + strings.Repeat(","+group, k-1)
		if _, err := h.runQuery(q, h.query(q), vals[:k*per]); err != nil {
			return nil, err
		}
		vals = vals[k*per:]
	}
	return &hostRows{}, nil
}

// begin opens the host's transaction (see the top of this file).
func (c *hostConn) begin() error {
	h := c.h
	h.mu.Lock()
	if h.write != nil {
		h.mu.Unlock()
		return errors.New("cannot start a transaction within a transaction")
	}
	if h.callBegin.Type() == js.TypeFunction {
		switch h.callBegin.Invoke().Int() {
		case 1:
			h.write = &hostTx{owner: c, call: true}
			h.mu.Unlock()
			return nil
		case -1:
			h.mu.Unlock()
			return errCallRolledBack
		}
	}
	t := &hostTx{owner: c, entered: make(chan struct{}), end: make(chan bool, 1), done: make(chan error, 1)}
	h.write = t
	h.pending = t
	h.mu.Unlock()
	select {
	case h.txs <- t:
	case <-h.quit:
		t.done <- errors.New("store: the host's SQL storage was detached")
	}
	select {
	case <-t.entered:
		return nil
	case err := <-t.done:
		h.mu.Lock()
		h.write = nil
		if h.pending == t {
			h.pending = nil
		}
		h.mu.Unlock()
		if err == nil {
			err = errors.New("the host ended the transaction before it began")
		}
		return err
	}
}

// end commits or rolls back the transaction that c began; on another
// connection (a reader's COMMIT of its snapshot) it does nothing.
func (c *hostConn) end(commit bool) error {
	h := c.h
	h.mu.Lock()
	t := h.write
	if t == nil || t.owner != c {
		h.mu.Unlock()
		return nil
	}
	h.write = nil
	h.mu.Unlock()
	if t.call {
		if h.callEnd.Invoke(commit).Int() != 0 && commit {
			return errCallRolledBack
		}
		return nil
	}
	t.end <- commit
	err := <-t.done
	if !commit {
		return nil
	}
	return err
}

// errCallRolledBack: the host's call transaction was rolled back; the
// host runs the call again (see the top of the file).
var errCallRolledBack = errors.New("store: this call's transaction was rolled back; the host runs it again")

// run runs one statement on the host and reads all its rows.
func (h *host) run(query string, args []driver.Value) (*hostRows, error) {
	return h.runQuery(query, h.query(query), args)
}

// sharedMax is the largest arguments or rows that cross through the
// host's shared buffers; larger ones (file data) cross in arrays of
// their own, so that the buffers stay small.
const sharedMax = 64 << 10

var uint8Array = js.Global().Get("Uint8Array")

// runQuery runs one statement on the host and reads all its rows: the
// arguments cross in obj.args and the rows in obj.out, so that a
// statement costs one call into JavaScript and no new JavaScript value.
func (h *host) runQuery(query string, q hostQuery, args []driver.Value) (*hostRows, error) {
	h.wire.Lock()
	defer h.wire.Unlock()
	enc, err := encodeArgs(h.enc[:0], args)
	if err != nil {
		return nil, err
	}
	if cap(enc) <= sharedMax {
		h.enc = enc
	}
	var a any = len(enc)
	switch {
	case len(enc) == 0:
	case len(enc) > sharedMax:
		u := uint8Array.New(len(enc))
		js.CopyBytesToJS(u, enc)
		a = u
	default:
		if len(enc) > h.argsCap {
			h.obj.Call("grow", len(enc))
			h.refreshArgs()
		}
		js.CopyBytesToJS(h.args, enc)
	}
	var qv any = q.id
	if q.id < 0 {
		qv = query
	}
	out := h.exec.Invoke(qv, a)
	if out.Type() == js.TypeString {
		// The host may have grown obj.out before the statement failed.
		h.refreshOut()
		return nil, classify(hostError(out.String()))
	}
	n := out.Int()
	if n > h.outCap {
		// The host made obj.out larger for these rows.
		h.refreshOut()
	}
	b := make([]byte, n)
	js.CopyBytesToGo(b, h.out)
	if h.outCap > sharedMax {
		h.obj.Call("shrink")
		h.refreshOut()
	}
	return decodeRows(b)
}

// hostError is an error of the host's SQL, with SQLite's words (the
// engine matches some, such as "UNIQUE constraint failed").
type hostError string

func (e hostError) Error() string { return string(e) }

// hostResult answers LastInsertId and RowsAffected when asked (most
// callers never ask), from the same connection's state right after the
// statement: nothing else runs on the host in between.
type hostResult struct{ h *host }

func (r *hostResult) LastInsertId() (int64, error) { return r.one("SELECT last_insert_rowid()") }
func (r *hostResult) RowsAffected() (int64, error) { return r.one("SELECT changes()") }

func (r *hostResult) one(q string) (int64, error) {
	rows, err := r.h.run(q, nil)
	if err != nil {
		return 0, err
	}
	if len(rows.rows) != 1 {
		return 0, errors.New("store: " + q + " answered no row")
	}
	n, ok := rows.rows[0][0].(int64)
	if !ok {
		return 0, fmt.Errorf("store: %s answered %T", q, rows.rows[0][0])
	}
	return n, nil
}

type hostStmt struct {
	c *hostConn
	q string
}

func (s *hostStmt) Close() error  { return nil }
func (s *hostStmt) NumInput() int { return -1 }
func (s *hostStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.c.ExecContext(context.Background(), s.q, named(args))
}
func (s *hostStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.c.QueryContext(context.Background(), s.q, named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// hostRows are a statement's rows, read whole (the host's cursor is
// drained in JavaScript in one call).
type hostRows struct {
	cols []string
	rows [][]driver.Value
	next int
}

func (r *hostRows) Columns() []string { return r.cols }
func (r *hostRows) Close() error      { return nil }
func (r *hostRows) Next(dest []driver.Value) error {
	if r.next >= len(r.rows) {
		return io.EOF
	}
	copy(dest, r.rows[r.next])
	r.next++
	return nil
}

// The wire between Go and the host's JavaScript (sdk-ts
// src/cloudflare/host.ts), little-endian. A value is a tag byte and its
// bytes: 0 null; 1 integer (int64); 2 real (float64); 3 text (uint32
// length, UTF-8); 4 blob (uint32 length, bytes). Arguments are values one
// after the other; rows are the column count (uint32), each column name
// (uint32 length, UTF-8), the row count (uint32) and the values row by row.
const (
	tagNull = iota
	tagInt
	tagReal
	tagText
	tagBlob
)

func encodeArgs(b []byte, args []driver.Value) ([]byte, error) {
	for i, a := range args {
		switch v := a.(type) {
		case nil:
			b = append(b, tagNull)
		case int64:
			b = binary.LittleEndian.AppendUint64(append(b, tagInt), uint64(v))
		case int:
			b = binary.LittleEndian.AppendUint64(append(b, tagInt), uint64(int64(v)))
		case bool:
			n := uint64(0)
			if v {
				n = 1
			}
			b = binary.LittleEndian.AppendUint64(append(b, tagInt), n)
		case float64:
			b = binary.LittleEndian.AppendUint64(append(b, tagReal), math.Float64bits(v))
		case string:
			b = binary.LittleEndian.AppendUint32(append(b, tagText), uint32(len(v)))
			b = append(b, v...)
		case []byte:
			b = binary.LittleEndian.AppendUint32(append(b, tagBlob), uint32(len(v)))
			b = append(b, v...)
		default:
			return nil, fmt.Errorf("store: argument %d: %T cannot be bound", i+1, a)
		}
	}
	return b, nil
}

var errWire = errors.New("store: malformed answer from the host's SQL storage")

func decodeRows(b []byte) (*hostRows, error) {
	p := 0
	u32 := func() (int, bool) {
		if len(b)-p < 4 {
			return 0, false
		}
		n := int(binary.LittleEndian.Uint32(b[p:]))
		p += 4
		return n, true
	}
	bytesN := func() ([]byte, bool) {
		n, ok := u32()
		if !ok || len(b)-p < n {
			return nil, false
		}
		s := b[p : p+n : p+n]
		p += n
		return s, true
	}
	nc, ok := u32()
	if !ok {
		return nil, errWire
	}
	r := &hostRows{cols: make([]string, nc)}
	for i := range r.cols {
		s, ok := bytesN()
		if !ok {
			return nil, errWire
		}
		r.cols[i] = string(s)
	}
	nr, ok := u32()
	if !ok || (nc == 0 && nr > 0) {
		return nil, errWire
	}
	r.rows = make([][]driver.Value, nr)
	for i := range r.rows {
		row := make([]driver.Value, nc)
		for j := range row {
			if p >= len(b) {
				return nil, errWire
			}
			tag := b[p]
			p++
			switch tag {
			case tagNull:
			case tagInt, tagReal:
				if len(b)-p < 8 {
					return nil, errWire
				}
				u := binary.LittleEndian.Uint64(b[p:])
				p += 8
				if tag == tagInt {
					row[j] = int64(u)
				} else {
					row[j] = math.Float64frombits(u)
				}
			case tagText, tagBlob:
				s, ok := bytesN()
				if !ok {
					return nil, errWire
				}
				if tag == tagText {
					row[j] = string(s)
				} else {
					row[j] = s
				}
			default:
				return nil, errWire
			}
		}
		r.rows[i] = row
	}
	return r, nil
}

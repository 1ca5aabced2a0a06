// Package store is the only code in the engine that speaks to a SQL driver.
//
// A DB holds one primary connection, guarded by a mutex, on which every
// metadata operation and every write runs (SQLite allows one writer at a
// time anyway), and a pool of reader connections for bulk data reads that
// may run in parallel with the writer (WAL mode).
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Durability chooses how hard each commit tries to reach the disk.
type Durability int

const (
	// DurabilityNormal is the default: WAL with synchronous=NORMAL. A commit
	// is atomic and survives a crash of the process; after a power loss the
	// last commits may be rolled back, never torn. This is SQLite's
	// recommended setting for WAL and what makes small writes fast.
	DurabilityNormal Durability = iota
	// DurabilityFull fsyncs the WAL on every commit (synchronous=FULL): a
	// committed operation survives power loss.
	DurabilityFull
)

// Options configure Open.
type Options struct {
	Durability Durability
	// BusyTimeout is how long a writer waits for another process holding
	// the write lock before giving up with EBUSY. Default 30s.
	BusyTimeout time.Duration
	// ReadOnly opens the database for queries only.
	ReadOnly bool
	// Readers is the size of the reader pool. Default 4.
	Readers int
	// PageSize of a database file created by this Open (SQLite's default,
	// 4096, when 0). It cannot change once the file has pages.
	PageSize int
	// Encryption, when set, keeps the file encrypted at rest in the page
	// format of Turso's engine (internal/crypt); the SQLite of every
	// connection is then ncruces' (compiled to Go) over an encrypting VFS.
	Encryption *Encryption

	// building: the file is CreateFile's temporary copy, which no other
	// connection sees and which is fsynced once, whole, before it takes
	// its name. It is filled with the rollback journal in memory and no
	// syncs (neither a journal nor a WAL on disk, nor their fsyncs and
	// the directory's), and switched to WAL mode at the end (CreateFile).
	building bool
}

// Encryption is a cipher (Turso's names: aes128gcm, aes256gcm, aegis128l,
// aegis256, ...) and its key. The key stays in memory: never in a data
// source name, a log or an error.
type Encryption struct {
	Cipher string
	Key    []byte
}

// DB is an open database file.
type DB struct {
	path string
	opts Options

	mu      sync.Mutex // guards primary
	primary *sql.Conn
	pool    *sql.DB // the primary conn is taken from here too
	readers *sql.DB

	group     groupState  // guarded by mu (group.go)
	groupOpen atomic.Bool // group.open, readable without mu
	groupLost atomic.Bool // group.lostErr != nil, readable without mu

	ckpt *checkpointer // background checkpoints (checkpoint.go); nil when off

	// User queries (userquery.go): a pool of guarded read-only
	// connections, opened at the first query, and their authorizers.
	dsn     string
	qmu     sync.Mutex
	qpool   *sql.DB
	qguards map[any]*policy
	qclosed bool

	// crypt is the name of the encrypting VFS of an encrypted database
	// ("" when plain); uncrypt unregisters it at Close.
	crypt   string
	uncrypt func()
	// cryptCgo: crypt is the cgo driver's VFS (registerCgoCrypt), not
	// ncruces'.
	cryptCgo bool
	// lazy is the VFS of a partially synced database (setupPartial),
	// "" otherwise.
	lazy string
}

// Open opens (creating if needed) the database file at path.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = 30 * time.Second
	}
	if opts.Readers == 0 {
		opts.Readers = 4
	}
	abs, dsn, err := dataSource(path, opts)
	if err != nil {
		return nil, err
	}
	db := &DB{path: abs, opts: opts}
	if dsn, err = db.setupCrypt(abs, dsn); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if dsn, err = db.setupPartial(abs, dsn); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok && db.uncrypt != nil {
			db.uncrypt()
		}
	}()
	if err := db.openPrimary(ctx, dsn); err != nil {
		if !opts.ReadOnly || !cantOpen(err) {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		// Read-only media: SQLite cannot create the -shm file that
		// reading a WAL-mode database needs.
		if dsn, err = immutable(abs, dsn); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		if err := db.openPrimary(ctx, dsn); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	db.dsn = dsn // user-query connections open the same file, the same way
	conn := db.primary
	if opts.PageSize != 0 && !opts.ReadOnly {
		// Only effective while the file is empty; must precede WAL mode.
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size = %d", opts.PageSize)); err != nil {
			db.Close()
			return nil, classify(fmt.Errorf("open %s: set page size: %w", path, err))
		}
	}
	if err := db.reserveCrypt(ctx, conn); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if opts.building {
		var mode string
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = MEMORY").Scan(&mode); err != nil {
			db.Close()
			return nil, classify(fmt.Errorf("open %s: set journal mode: %w", path, err))
		}
	} else if !opts.ReadOnly && walMode {
		if err := db.ensureWAL(ctx, conn); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: set WAL mode: %w", path, err)
		}
	}
	readers, err := db.openPool(dsn, opts.Readers)
	if err != nil {
		db.Close()
		return nil, err
	}
	db.readers = readers
	db.startCheckpointer(ctx)
	ok = true
	return db, nil
}

// openPrimary opens the pool of the primary connection and the
// connection, and reads the schema once: a file that is not SQLite, is
// damaged, or cannot be read fails here, at Open, instead of at the first
// operation (and before anything was written to it).
func (db *DB) openPrimary(ctx context.Context, dsn string) error {
	pool, err := db.openPool(dsn, 1)
	if err != nil {
		return err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		pool.Close()
		return classify(err)
	}
	var n int64
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		conn.Close()
		pool.Close()
		return classify(err)
	}
	db.pool, db.primary = pool, conn
	return nil
}

// uriPath escapes the characters that would end a path in a "file:" URI
// (which SQLite reads as a URI) or start an escape.
var uriPath = strings.NewReplacer("%", "%25", "#", "%23", "?", "%3f").Replace

// ensureWAL switches the file to WAL mode. Switching needs an exclusive
// lock, and SQLite answers SQLITE_BUSY at once (without the busy handler)
// when another process holds the file, for example while it creates the
// same new database: retry until the busy timeout.
func (db *DB) ensureWAL(ctx context.Context, conn *sql.Conn) error {
	deadline := time.Now().Add(db.opts.BusyTimeout)
	for {
		// journal_mode answers with a row; QueryRow is required by the driver.
		var mode string
		err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
		if err == nil && strings.EqualFold(mode, "wal") {
			return nil
		}
		if err == nil {
			err = conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
			if err == nil && strings.EqualFold(mode, "wal") {
				return nil
			}
			if err == nil {
				err = fmt.Errorf("journal mode stayed %q", mode)
			}
		}
		if !isBusy(err) || time.Now().After(deadline) {
			return classify(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openPool opens a pool whose every new connection gets the pragmas.
func (db *DB) openPool(dsn string, size int) (*sql.DB, error) {
	base, err := db.connector(dsn)
	if err != nil {
		return nil, classify(err)
	}
	p := sql.OpenDB(&connector{base: base, pragmas: db.pragmas()})
	p.SetMaxOpenConns(size)
	p.SetMaxIdleConns(size)
	p.SetConnMaxLifetime(0)
	return p, nil
}

func (db *DB) pragmas() []string {
	p := []string{
		fmt.Sprintf("PRAGMA busy_timeout = %d", db.opts.BusyTimeout.Milliseconds()),
		// After a checkpoint, shrink a WAL that one big transaction (a
		// 64 MiB write) grew, instead of keeping its size on disk forever.
		"PRAGMA journal_size_limit = 16777216",
		// Pages of the database file are read from a mapping instead of
		// a pread(2) each: SQLite's own page cache is 2 MB, so a large
		// read misses it for every 4 KiB page. Up to SQLite's default
		// ceiling (SQLITE_MAX_MMAP_SIZE, just under 2 GiB); the WAL is
		// still read with pread.
		"PRAGMA mmap_size = 2147418112",
	}
	if db.lazy != "" {
		// Pages are read through the VFS (no mapping), each absent one
		// fetched from the remote: a larger cache.
		p = append(p, "PRAGMA cache_size = -32768")
	}
	if db.crypt != "" {
		// Sorts and temporary tables would spill pages in the clear.
		p = append(p, "PRAGMA temp_store = MEMORY")
		// SQLite's own page cache stays at its default 2 MB, though an
		// encrypted file cannot be mapped (every page is decrypted on its
		// way in; the cgo driver's VFS decrypts from its own mapping): an
		// 8 MiB cache made a 64 MiB write 15 ms slower (more pages held
		// dirty, spilled later and checksummed again at commit) and gained
		// nothing measurable on 4 KiB random reads (bench/crypt.sh:
		// 1.13x vs 1.34x the plain write, 1.14x vs 1.13x the reads).
	}
	if db.opts.ReadOnly {
		// The driver has no read-only open mode; query_only makes every
		// write statement fail on this connection.
		p = append(p, "PRAGMA query_only = ON")
	}
	switch {
	case db.opts.ReadOnly:
		// Nothing is committed through a read-only connection.
	case db.opts.building:
		// CreateFile syncs the finished file once.
		p = append(p, "PRAGMA synchronous = OFF")
	case db.opts.Durability == DurabilityFull:
		p = append(p, "PRAGMA synchronous = FULL")
	default:
		p = append(p, "PRAGMA synchronous = NORMAL")
	}
	return p
}

// connector applies per-connection settings, which SQLite keeps per
// connection, to every connection the pool opens.
type connector struct {
	base    driver.Connector
	pragmas []string
	setup   func(driver.Conn) error // after the pragmas; nil: none
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, classify(err)
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("store: driver connection cannot execute statements")
	}
	for _, p := range c.pragmas {
		if _, err := ex.ExecContext(ctx, p, nil); err != nil && !strings.Contains(err.Error(), "returned rows") {
			conn.Close()
			return nil, classify(fmt.Errorf("%s: %w", p, err))
		}
	}
	if c.setup != nil {
		if err := c.setup(conn); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

func (c *connector) Driver() driver.Driver { return c.base.Driver() }

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Encryption is the key and cipher the database was opened with (the
// cipher resolved from the file when the options named none), or nil for
// a plain database.
func (db *DB) Encryption() *Encryption { return db.opts.Encryption }

// Close closes every connection. It checkpoints the WAL so the file can be
// copied on its own afterwards.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	var errs []error
	db.commitGroup()
	errs = append(errs, db.takeLostErr())
	db.setGroupCommit(0)
	db.stopCheckpointer()
	errs = append(errs, db.closeQueryPool())
	if db.primary != nil {
		if !db.opts.ReadOnly {
			var a, b, c int64
			_ = db.primary.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&a, &b, &c)
		}
		errs = append(errs, db.primary.Close())
		db.primary = nil
	}
	if db.readers != nil {
		errs = append(errs, db.readers.Close())
		db.readers = nil
	}
	if db.pool != nil {
		errs = append(errs, db.pool.Close())
		db.pool = nil
	}
	if db.uncrypt != nil {
		db.uncrypt()
		db.uncrypt = nil
	}
	return errors.Join(errs...)
}

// Conn is the primary connection, valid inside Do/Write callbacks only.
type Conn struct {
	c   *sql.Conn
	ctx context.Context
	// caller is the operation's own context. The connection's statements
	// run under ctx, which cannot be cancelled: cancelling a statement
	// mid-step would leave the shared connection in an unknown state.
	// Instead, every Exec and Query first checks caller, so a cancelled
	// or expired operation stops before its next statement and, in a
	// write, rolls back as a whole.
	caller context.Context
	dv     int64
	// lazy: the read transaction of Do starts at the first statement;
	// stale: the database changed between the data version that the
	// caller's caches trusted and that transaction's snapshot.
	lazy, began, stale bool
	lost               int64 // failed group commits so far (group.go)
}

// snapshot opens Do's read transaction before the first statement. When
// its snapshot is newer than the data version fn started with, it aborts
// fn (see Do): nothing fn did after reading its caches has happened yet.
func (c *Conn) snapshot() {
	if !c.lazy || c.began {
		return
	}
	c.began = true
	_, err := c.c.ExecContext(c.ctx, "BEGIN")
	if err == nil {
		var v int64
		if err = c.c.QueryRowContext(c.ctx, "PRAGMA data_version").Scan(&v); err == nil && v == c.dv {
			return
		}
		c.c.ExecContext(c.ctx, "COMMIT")
	}
	c.stale = true
	panic(staleSnapshot{})
}

// staleSnapshot aborts a lazy Do whose caches may not match its snapshot.
type staleSnapshot struct{}

// DataVersion is PRAGMA data_version as read at the start of the running
// Do or Write: it differs between two operations exactly when another
// connection (another process, or another DB in this one) committed in
// between. Our own commits on the primary connection do not change it,
// so each cache keeps its own last-seen value and compares. It also
// changes when a group commit failed (group.go): the caches may hold
// what the rolled-back operations wrote.
func (c *Conn) DataVersion() int64 { return c.dv + c.lost<<40 }

// Exec runs a statement.
func (c *Conn) Exec(query string, args ...any) (sql.Result, error) {
	if err := c.stopped(); err != nil {
		return nil, err
	}
	c.snapshot()
	r, err := c.c.ExecContext(c.ctx, query, args...)
	return r, classify(err)
}

// QueryRow runs a query expected to return at most one row.
func (c *Conn) QueryRow(query string, args ...any) *sql.Row {
	c.snapshot()
	return c.c.QueryRowContext(c.ctx, query, args...)
}

// Query runs a query.
func (c *Conn) Query(query string, args ...any) (*sql.Rows, error) {
	if err := c.stopped(); err != nil {
		return nil, err
	}
	c.snapshot()
	r, err := c.c.QueryContext(c.ctx, query, args...)
	return r, classify(err)
}

// stopped returns the caller's context error once it is cancelled or past
// its deadline.
func (c *Conn) stopped() error {
	if c.caller == nil {
		return nil
	}
	return c.caller.Err()
}

// Context is the context of the running operation.
func (c *Conn) Context() context.Context { return c.ctx }

// Do runs fn on the primary connection for reading: all of fn's queries
// see one snapshot even while other processes commit, and
// c.DataVersion tells caches whether to drop what they hold.
//
// The data version is read first, on its own; the read transaction only
// starts with fn's first statement. An operation that its caches answer
// in full (a stat of a known path) thus costs one statement instead of
// three. If that snapshot is newer than the data version (another process
// committed in between), what fn took from its caches may not match the
// database: fn is stopped at that first statement, before it has used any
// result, and runs again from the start in an ordinary read transaction.
// fn must therefore only read.
func (db *DB) Do(ctx context.Context, fn func(c *Conn) error) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.primary == nil {
		return ErrClosed
	}
	// Checked after the wait for the lock, which can be long.
	if err := ctx.Err(); err != nil {
		return err
	}
	if db.group.open {
		// Inside the open group's write transaction: its snapshot is
		// current (nobody else can commit) and shows its own changes.
		return fn(&Conn{c: db.primary, ctx: context.WithoutCancel(ctx), caller: ctx, dv: db.group.dv, lost: db.group.lost})
	}
	c := &Conn{c: db.primary, ctx: context.WithoutCancel(ctx), caller: ctx, lazy: !soleWriter, lost: db.group.lost}
	if err := db.readDataVersion(c); err != nil {
		return err
	}
	stale, err := runLazy(c, fn)
	if !stale {
		return err
	}
	c = &Conn{c: db.primary, ctx: c.ctx, caller: ctx, lost: db.group.lost}
	if _, err := c.c.ExecContext(c.ctx, "BEGIN"); err != nil {
		return classify(err)
	}
	defer c.c.ExecContext(c.ctx, "COMMIT")
	// The pragma is the first read: it opens the snapshot that the rest of
	// fn reads, and reports changes committed before it.
	if err := db.readDataVersion(c); err != nil {
		return err
	}
	return fn(c)
}

// runLazy runs fn, ending its read transaction if one began, and reports
// whether fn was stopped by a stale snapshot.
func runLazy(c *Conn, fn func(c *Conn) error) (stale bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(staleSnapshot); !ok {
				if c.began && !c.stale {
					c.c.ExecContext(c.ctx, "COMMIT")
				}
				panic(p)
			}
			stale = true
		}
	}()
	err = fn(c)
	if c.began {
		c.c.ExecContext(c.ctx, "COMMIT")
	}
	return false, err
}

// Locked runs fn while holding the primary connection's lock, without
// touching the database: for state that lives beside the connection.
func (db *DB) Locked(fn func()) {
	db.mu.Lock()
	defer db.mu.Unlock()
	fn()
}

// Write runs fn in one write transaction (BEGIN IMMEDIATE) on the primary
// connection: all of fn's statements commit together or none does.
func (db *DB) Write(ctx context.Context, fn func(c *Conn) error) (err error) {
	if db.opts.ReadOnly {
		return ErrReadOnly
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.primary == nil {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if db.group.delay > 0 {
		return db.groupWrite(ctx, fn)
	}
	c := &Conn{c: db.primary, ctx: context.WithoutCancel(ctx), caller: ctx, lost: db.group.lost}
	db.catchUp(c.ctx)
	if err := db.begin(c); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			db.rollback(c)
			if !isOutOfMemory(p) {
				panic(p)
			}
			err = ErrNoMemory
			return
		}
		if err != nil {
			db.rollback(c)
			return
		}
		if _, cerr := c.c.ExecContext(c.ctx, "COMMIT"); cerr != nil {
			db.rollback(c)
			err = classify(cerr)
			return
		}
		db.committed()
	}()
	// Inside BEGIN IMMEDIATE nobody else can commit, so the data version
	// read here covers every external change up to our own commit.
	if err := db.readDataVersion(c); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fn(c)
}

// WriteOne runs fn, which must run exactly one statement that writes,
// as that statement's own transaction: SQLite makes a lone statement
// atomic, so the BEGIN IMMEDIATE, data version and COMMIT statements of
// Write are saved (on this driver, each costs about as much as the write
// itself). fn must not use caches: it gets no data version. Under group
// commit it runs as Write does, inside the open group.
func (db *DB) WriteOne(ctx context.Context, fn func(c *Conn) error) error {
	if db.opts.ReadOnly {
		return ErrReadOnly
	}
	db.mu.Lock()
	if db.group.delay > 0 {
		db.mu.Unlock()
		return db.Write(ctx, fn) // Write decides again under the lock
	}
	defer db.mu.Unlock()
	if db.primary == nil {
		return ErrClosed
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c := &Conn{c: db.primary, ctx: context.WithoutCancel(ctx), lost: db.group.lost}
	db.catchUp(c.ctx)
	err := fn(c)
	if err == nil {
		db.committed()
	}
	return err
}

func (db *DB) begin(c *Conn) error {
	// busy_timeout covers most waits; retry a little more for the rare
	// SQLITE_BUSY that the busy handler cannot wait out (WAL recovery).
	deadline := time.Now().Add(db.opts.BusyTimeout)
	for {
		_, err := c.c.ExecContext(c.ctx, "BEGIN IMMEDIATE")
		if err == nil {
			return nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			return classify(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (db *DB) rollback(c *Conn) {
	_, _ = c.c.ExecContext(context.Background(), "ROLLBACK")
}

func (db *DB) readDataVersion(c *Conn) error {
	if soleWriter {
		c.dv = 1 // constant: see soleWriter
		return nil
	}
	if err := c.c.QueryRowContext(c.ctx, "PRAGMA data_version").Scan(&c.dv); err != nil {
		return classify(err)
	}
	return nil
}

// Read runs fn on a reader connection inside a read transaction, in
// parallel with the writer. Use it for bulk reads that do not need caches.
func (db *DB) Read(ctx context.Context, fn func(c *Conn) error) error {
	conn, err := db.reader(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	c := &Conn{c: conn, ctx: ctx, caller: ctx}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return classify(err)
	}
	defer conn.ExecContext(context.Background(), "COMMIT")
	return fn(c)
}

// Sync forces the WAL to disk (fsync), whatever the durability mode.
func (db *DB) Sync(ctx context.Context) error {
	return db.Raw(ctx, func(c *Conn) error {
		var a, b, d int64
		err := c.QueryRow("PRAGMA wal_checkpoint(FULL)").Scan(&a, &b, &d)
		return classify(err)
	})
}

// Errors of the store.
var (
	ErrClosed   = errors.New("database is closed")
	ErrReadOnly = errors.New("database is opened read-only")
	// ErrBusy means another process held the write lock for longer than
	// the busy timeout.
	ErrBusy = errors.New("database is busy: another process holds the write lock")
	// ErrInUse means an operation that needs the database to itself
	// (Convert) found it open in another process.
	ErrInUse = errors.New("the database is open in another process (EBUSY)")
	// ErrNotADatabase means the file is not SQLite, or is encrypted.
	ErrNotADatabase = errors.New("not an AgentFS database: not SQLite at all, or encrypted")
	// ErrCorrupt means SQLite found the file damaged (truncated,
	// overwritten): restore a snapshot, or repair what fsck can.
	ErrCorrupt = errors.New("database is damaged")
	// ErrCantRead means a read-only open cannot read the database where
	// it is (read-only media with a WAL to apply).
	ErrCantRead = errors.New("cannot read the database in place")
)

// ErrNoMemory means SQLite could not allocate what a write needed; the
// write was rolled back. In a WebAssembly build the whole database lives
// in memory, so a very large file can reach this. It unwraps to ENOMEM.
var ErrNoMemory error = noMemory{}

type noMemory struct{}

func (noMemory) Error() string {
	return "out of memory: the database engine could not allocate what this write needs; nothing was written"
}
func (noMemory) Unwrap() error { return syscall.ENOMEM }

// isOutOfMemory reports whether a recovered panic is the WebAssembly
// driver's out-of-memory panic (ncruces/go-sqlite3 panics on SQLITE_NOMEM
// instead of returning it).
func isOutOfMemory(p any) bool {
	e, ok := p.(error)
	return ok && e.Error() == "sqlite3: out of memory"
}

func isBusy(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "database is locked") || strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database is busy")
}

// classify turns driver errors the user can act on into sentinel errors
// (once: an error already classified is returned as is).
func classify(err error) error {
	if err == nil || errors.Is(err, ErrBusy) || errors.Is(err, ErrNotADatabase) || errors.Is(err, ErrCorrupt) {
		return err
	}
	msg := err.Error()
	switch {
	case isBusy(err):
		return fmt.Errorf("%w (%v)", ErrBusy, err)
	case strings.Contains(msg, "file is not a database"):
		// SQLite's words add nothing to the sentinel's.
		return ErrNotADatabase
	case strings.Contains(msg, "database disk image is malformed"):
		return fmt.Errorf("%w (SQLite: database disk image is malformed)", ErrCorrupt)
	}
	return err
}

// Raw runs fn on the primary connection outside any transaction, for
// statements that refuse to run inside one (ATTACH, VACUUM). fn manages
// its own transactions. Caches of callers must be dropped afterwards.
func (db *DB) Raw(ctx context.Context, fn func(c *Conn) error) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.primary == nil {
		return ErrClosed
	}
	db.commitGroup()
	if err := db.takeLostErr(); err != nil {
		return err
	}
	defer db.committed() // fn may have written
	return fn(&Conn{c: db.primary, ctx: ctx})
}

// CopyTo writes a consistent copy of the database to dest (VACUUM INTO),
// from a reader connection, so writers are not blocked while it runs. dest
// must not exist.
func (db *DB) CopyTo(ctx context.Context, dest string) error {
	if db.readers == nil {
		return ErrClosed
	}
	db.flushForReaders()
	conn, err := db.readers.Conn(ctx)
	if err != nil {
		return classify(err)
	}
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "VACUUM INTO ?", dest)
	return classify(err)
}

// Query runs fn on a reader connection without a transaction: for reads
// of one statement (atomic on their own) that need no cache, such as the
// key-value store and the tool-call log. They run in parallel with the
// writer and with each other.
func (db *DB) Query(ctx context.Context, fn func(c *Conn) error) error {
	conn, err := db.reader(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return fn(&Conn{c: conn, ctx: ctx, caller: ctx})
}

// reader takes a reader connection once the writes of an open group
// commit are visible to it.
func (db *DB) reader(ctx context.Context) (*sql.Conn, error) {
	if db.readers == nil {
		return nil, ErrClosed
	}
	db.flushForReaders()
	conn, err := db.readers.Conn(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return conn, nil
}

// Checkpoint copies the WAL into the database file and truncates the WAL
// to zero bytes, so the database file alone is complete and the disk holds
// the data once. It first waits for a background checkpoint in progress
// (which would make SQLite answer busy and leave the WAL at full size),
// and retries while a reader's snapshot still needs WAL frames, for up to
// checkpointPatience; then it fails with ErrBusy.
func (db *DB) Checkpoint(ctx context.Context) error {
	return db.Raw(ctx, func(c *Conn) error {
		if cp := db.ckpt; cp != nil {
			cp.mu.Lock()
			defer cp.mu.Unlock()
		}
		deadline := time.Now().Add(checkpointPatience)
		for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
			var busy, logFrames, done int64
			if err := c.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
				return classify(err)
			}
			if busy == 0 {
				if cp := db.ckpt; cp != nil {
					cp.restarted()
				}
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%w: checkpoint could not complete while other connections read", ErrBusy)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pause):
			}
		}
	})
}

// checkpointPatience is how long Checkpoint retries while readers hold
// snapshots that need the WAL.
const checkpointPatience = 2 * time.Second

// Strings runs a query and returns its first column as strings, read as
// bytes so that text the driver would mistake for a date stays exact.
func (c *Conn) Strings(query string, args ...any) ([]string, error) {
	rows, err := c.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, rows.Err()
}

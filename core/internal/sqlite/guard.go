package sqlite

/*
#include <stdint.h>
#include <stdlib.h>

typedef struct sqlite3 sqlite3;
typedef int64_t sqlite3_int64;

// A statement's budget of virtual-machine steps and its stop request,
// read by the progress handler that a guarded connection installs (see
// guard.go). stop is written by another thread, hence the atomics.
typedef struct {
	sqlite3_int64 left; // steps left before the statement is stopped
	int stop;           // set by Stop: stop at the next check
	int why;            // what stopped it: 1 budget, 2 Stop
} budget;

// progressSteps: the handler runs every this many VM steps, so a stop
// request is seen within microseconds and the budget is exact to that.
#define PROGRESS_STEPS 1000

int sqlite3_progress_handler(sqlite3 *db, int n, int (*cb)(void *), void *p);
int sqlite3_limit(sqlite3 *db, int id, int v);
int sqlite3_set_authorizer(sqlite3 *db, int (*cb)(void *, int, const char *, const char *, const char *, const char *), void *p);
int sqlite3_db_config(sqlite3 *db, int op, ...);

static int on_progress(void *p) {
	budget *b = (budget *)p;
	if (__atomic_load_n(&b->stop, __ATOMIC_RELAXED)) {
		b->why = 2;
		return 1;
	}
	b->left -= PROGRESS_STEPS;
	if (b->left < 0) {
		b->why = 1;
		return 1;
	}
	return 0;
}
static void budget_stop(budget *b) { __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED); }
static void budget_arm(budget *b, sqlite3_int64 steps) {
	b->left = steps;
	b->why = 0;
	__atomic_store_n(&b->stop, 0, __ATOMIC_RELAXED);
}
static int set_progress(sqlite3 *db, budget *b) {
	sqlite3_progress_handler(db, PROGRESS_STEPS, on_progress, b);
	return 0;
}

// The Go authorizer (guard.go) behind a C function of SQLite's signature;
// h is the cgo.Handle of the connection's Authorizer.
extern int agentfsAuthorize(uintptr_t h, int action, char *a, char *b, char *c, char *d);
static int authorize(void *p, int action, const char *a, const char *b, const char *c, const char *d) {
	return agentfsAuthorize((uintptr_t)p, action, (char *)a, (char *)b, (char *)c, (char *)d);
}
static int set_authorizer(sqlite3 *db, uintptr_t h) {
	return sqlite3_set_authorizer(db, h ? authorize : 0, (void *)h);
}

// db_config sets one of SQLite's int switches (sqlite3_db_config is
// variadic, which cgo cannot call).
static int db_config(sqlite3 *db, int op, int v) {
	int out = -1;
	int rc = sqlite3_db_config(db, op, v, &out);
	if (rc == 0 && out != v) return 1; // SQLITE_ERROR: the switch did not take
	return rc;
}
*/
import "C"

import (
	"errors"
	"runtime/cgo"
	"unsafe"
)

// Authorizer decides, while SQLite prepares a statement, whether the
// statement may do action (SQLite's action codes: SQLITE_READ is 20,
// SQLITE_FUNCTION 31...) on the names SQLite passes (see
// sqlite3_set_authorizer: two action arguments, the schema, the trigger
// or view). It returns true to allow; false makes the prepare fail
// with "not authorized".
type Authorizer func(action int, arg1, arg2, schema, inner string) bool

// Guarded is implemented by this driver's connections (reach one with
// sql.Conn.Raw): what a connection that runs other people's SQL needs.
type Guarded interface {
	// Guard restricts the connection for good: auth decides every
	// statement it prepares; loading extensions is off, defensive mode
	// on (no writes to the schema or shadow tables), untrusted schema
	// (functions with side effects are refused in views and triggers),
	// no ATTACH (at most 0 attached databases), and no string or blob
	// longer than maxLength bytes. A progress handler enforces the
	// budget that Arm sets.
	Guard(auth Authorizer, maxLength int) error
	// Arm sets the budget of the statements that run until the next Arm:
	// they fail with SQLITE_INTERRUPT after steps VM steps in total, or
	// at the first check after Stop. It clears an earlier Stop.
	Arm(steps int64)
	// Stop makes the running statement fail at its next progress check
	// (within a thousand VM steps). Safe from any goroutine while the
	// connection is open.
	Stop()
	// Stopped reports what stopped the last statement: the budget, Stop,
	// or neither (false, false).
	Stopped() (budget, stopped bool)
}

// SQLite's db_config switches and limit categories used by Guard.
const (
	dbconfigEnableLoadExtension = 1005
	dbconfigDefensive           = 1010
	dbconfigTrustedSchema       = 1017
	limitLength                 = 0
	limitAttached               = 7
)

// guard is a guarded connection's state, freed at Close.
type guard struct {
	budget *C.budget // C memory: read by the progress handler
	auth   cgo.Handle
}

func (c *conn) Guard(auth Authorizer, maxLength int) error {
	if c.db == nil {
		return errors.New("sqlite: connection is closed")
	}
	if c.guard != nil {
		return errors.New("sqlite: connection is already guarded")
	}
	for _, s := range []struct{ op, v int }{
		{dbconfigEnableLoadExtension, 0},
		{dbconfigDefensive, 1},
		{dbconfigTrustedSchema, 0},
	} {
		if rc := C.db_config(c.db, C.int(s.op), C.int(s.v)); rc != sqliteOK {
			return c.err(rc)
		}
	}
	C.sqlite3_limit(c.db, limitAttached, 0)
	if maxLength > 0 {
		C.sqlite3_limit(c.db, limitLength, C.int(maxLength))
	}
	g := &guard{budget: (*C.budget)(C.calloc(1, C.size_t(C.sizeof_budget))), auth: cgo.NewHandle(auth)}
	C.budget_arm(g.budget, C.sqlite3_int64(1<<62))
	C.set_progress(c.db, g.budget)
	if rc := C.set_authorizer(c.db, C.uintptr_t(g.auth)); rc != sqliteOK {
		C.sqlite3_progress_handler(c.db, 0, nil, nil)
		g.free()
		return c.err(rc)
	}
	// Statements prepared before the authorizer was installed would run
	// without its checks.
	for q, s := range c.cache {
		s.finalize()
		delete(c.cache, q)
	}
	c.guard = g
	return nil
}

func (g *guard) free() {
	C.free(unsafe.Pointer(g.budget))
	g.auth.Delete()
}

func (c *conn) Arm(steps int64) {
	if c.guard != nil {
		C.budget_arm(c.guard.budget, C.sqlite3_int64(steps))
	}
}

func (c *conn) Stop() {
	if c.guard != nil {
		C.budget_stop(c.guard.budget)
	}
}

func (c *conn) Stopped() (budget, stopped bool) {
	if c.guard == nil {
		return false, false
	}
	why := c.guard.budget.why
	return why == 1, why == 2
}

var _ Guarded = (*conn)(nil)

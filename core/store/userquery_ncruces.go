//go:build !(js && agentfs_workers)

package store

// The guarded user-query path on the ncruces driver (SQLite compiled to
// Go), which every build has: the WebAssembly build, CGO-free native
// builds, and encrypted databases in every build (internal/crypt).
// Connections of our cgo driver take userquery_cgo.go's path instead.

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync/atomic"

	"github.com/ncruces/go-sqlite3"
)

type rawConn interface{ Raw() *sqlite3.Conn }

// guardConn installs p as the authorizer of a new query connection, with
// the restrictions that sqlite.Guarded applies to cgo connections.
func guardConn(dc driver.Conn, p *policy) error {
	if ok, err := guardLibsql(dc, p); ok {
		return err
	}
	rc, ok := dc.(rawConn)
	if !ok {
		return errors.New("store: driver connection has no SQLite handle")
	}
	c := rc.Raw()
	names, _, err := rows(context.Background(), c, moduleQuery, nil, nil)
	if err != nil {
		return err
	}
	p.modules = map[string]bool{}
	for _, n := range names {
		s, _ := n[0].(string)
		p.modules[s] = true
	}
	for _, s := range []struct {
		op sqlite3.DBConfig
		v  bool
	}{
		{sqlite3.DBCONFIG_ENABLE_LOAD_EXTENSION, false},
		{sqlite3.DBCONFIG_DEFENSIVE, true},
		{sqlite3.DBCONFIG_TRUSTED_SCHEMA, false},
	} {
		if v, err := c.Config(s.op, s.v); err != nil || v != s.v {
			return errors.Join(errors.New("store: cannot restrict the query connection"), err)
		}
	}
	c.Limit(sqlite3.LIMIT_ATTACHED, 0)
	c.Limit(sqlite3.LIMIT_LENGTH, maxQueryValue)
	return c.SetAuthorizer(func(action sqlite3.AuthorizerActionCode, a, b, schema, inner string) sqlite3.AuthorizerReturnCode {
		if p.allow(int(action), a, b, schema, inner) {
			return sqlite3.AUTH_OK
		}
		return sqlite3.AUTH_DENY
	})
}

// stepCtx is the interrupt context of a query connection: ncruces'
// progress handler asks Err every 1000 VM steps, which counts down the
// budget. Step asks it once more per call: runGuarded pays those back.
type stepCtx struct {
	context.Context
	left    atomic.Int64
	out     atomic.Bool
	counted atomic.Bool
}

var errBudget = errors.New("step budget used up")

const progressSteps = 1000

func (c *stepCtx) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.counted.Load() && c.left.Add(-progressSteps) < 0 {
		c.out.Store(true)
	}
	if c.out.Load() {
		return errBudget
	}
	return nil
}

// rows runs query on c and returns its rows (for the module and schema
// lists, which are small). sc, when set, has Step's own check paid back.
func rows(ctx context.Context, c *sqlite3.Conn, query string, args []any, sc *stepCtx) ([][]any, []string, error) {
	var out [][]any
	cols, err := each(c, query, args, sc, func(cols []string, row []any) error {
		if row != nil {
			out = append(out, append([]any{}, row...))
		}
		return nil
	})
	return out, cols, err
}

// each prepares query (one statement) on c, binds args and calls visit
// per row, with values as stored: no conversion of date-like text.
func each(c *sqlite3.Conn, query string, args []any, sc *stepCtx, visit func([]string, []any) error) ([]string, error) {
	refund := func() {
		if sc != nil {
			sc.left.Add(progressSteps)
		}
	}
	refund()
	s, tail, err := c.Prepare(query)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if s == nil {
		return nil, &QueryError{Msg: "query: empty statement", Kind: ErrQueryInvalid}
	}
	if !blank(c, tail) {
		return nil, errMultiple
	}
	if !s.ReadOnly() {
		return nil, errWrites
	}
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case nil:
			err = s.BindNull(i + 1)
		case int64:
			err = s.BindInt64(i+1, v)
		case float64:
			err = s.BindFloat(i+1, v)
		case string:
			err = s.BindText(i+1, v)
		case []byte:
			err = s.BindBlob(i+1, v)
		}
		if err != nil {
			return nil, err
		}
	}
	cols := make([]string, s.ColumnCount())
	for i := range cols {
		cols[i] = s.ColumnName(i)
	}
	if err := visit(cols, nil); err != nil {
		return cols, err
	}
	row := make([]any, len(cols))
	for {
		refund()
		if !s.Step() {
			return cols, s.Err()
		}
		for i := range row {
			switch s.ColumnType(i) {
			case sqlite3.INTEGER:
				row[i] = s.ColumnInt64(i)
			case sqlite3.FLOAT:
				row[i] = s.ColumnFloat(i)
			case sqlite3.TEXT:
				row[i] = s.ColumnText(i)
			case sqlite3.BLOB:
				row[i] = s.ColumnBlob(i, []byte{})
			default:
				row[i] = nil
			}
		}
		if err := visit(cols, row); err != nil {
			return cols, err
		}
	}
}

var (
	errMultiple = errors.New("more than one statement")
	errWrites   = errors.New("a statement that writes (VACUUM, REINDEX...)")
)

// blank reports whether tail holds no statement: only white space,
// semicolons and comments, as SQLite's tokenizer reads them.
func blank(c *sqlite3.Conn, tail string) bool {
	for tail != "" {
		s, rest, err := c.Prepare(tail)
		if s != nil {
			s.Close()
		}
		if err != nil || s != nil || len(rest) >= len(tail) {
			return false
		}
		tail = rest
	}
	return true
}

// runGuarded runs a user query on the guarded connection dc (see
// DB.UserQuery).
func runGuarded(ctx context.Context, dc any, p *policy, query string, args []any, lim QueryLimits, visit func([]string, []any) error) error {
	rc, ok := dc.(rawConn)
	if !ok {
		return runGuardedLibsql(ctx, dc, p, query, args, lim, visit)
	}
	c := rc.Raw()
	sc := &stepCtx{Context: ctx}
	sc.left.Store(lim.Steps)
	defer c.SetInterrupt(c.SetInterrupt(sc))

	schema, _, err := rows(ctx, c, schemaQuery, nil, nil)
	if err != nil {
		return finish(ctx, err, p, sc.out.Load(), false, lim)
	}
	names := make([]string, len(schema))
	readable := make([]bool, len(schema))
	for i, r := range schema {
		names[i], _ = r[0].(string)
		n, _ := r[1].(int64)
		readable[i] = n != 0
	}
	p.load(names, readable)

	sc.counted.Store(true)
	size := sizer{max: lim.MaxBytes}
	_, err = each(c, query, args, sc, func(cols []string, row []any) error {
		if err := size.add(row); err != nil { // nil row (the columns): 0 bytes
			return err
		}
		return visit(cols, row)
	})
	switch {
	case errors.Is(err, errMultiple), errors.Is(err, errWrites):
		return notAllowed(err.Error())
	}
	return finish(ctx, err, p, sc.out.Load(), false, lim)
}

func isInterrupt(err error) bool {
	return errors.Is(err, sqlite3.INTERRUPT) || isInterruptLibsql(err)
}

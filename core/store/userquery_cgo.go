//go:build !js && cgo

package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// guardLibsql installs p as the authorizer of a new query connection of
// our cgo driver, with the rest of sqlite.Guarded's restrictions; ok is
// false for a connection of another driver (ncruces).
func guardLibsql(dc driver.Conn, p *policy) (ok bool, err error) {
	g, ok := dc.(sqlite.Guarded)
	if !ok {
		return false, nil
	}
	names, err := column(dc, moduleQuery)
	if err != nil {
		return true, err
	}
	p.modules = setOf(names...)
	return true, g.Guard(p.allow, maxQueryValue)
}

// column reads the first column of query's rows as strings.
func column(dc driver.Conn, query string) ([]string, error) {
	rows, err := dc.(driver.QueryerContext).QueryContext(context.Background(), query, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		s, _ := dest[0].(string)
		out = append(out, s)
	}
}

// runGuardedLibsql runs a user query on the guarded connection dc of our
// cgo driver (see DB.UserQuery).
func runGuardedLibsql(ctx context.Context, dc any, p *policy, query string, args []any, lim QueryLimits, visit func([]string, []any) error) error {
	g := dc.(sqlite.Guarded)
	q := dc.(driver.QueryerContext)
	g.Arm(lim.Steps)
	// The statement stops at its next progress check once ctx ends (a
	// client that went away, a deadline, Close); the flag is cleared by
	// the next Arm, so nothing of it outlives this query.
	defer context.AfterFunc(ctx, g.Stop)()

	// The names of the main schema, read as the statement will see them.
	rows, err := q.QueryContext(ctx, schemaQuery, nil)
	if err != nil {
		budget, stopped := g.Stopped()
		return finish(ctx, err, p, budget, stopped, lim)
	}
	var names []string
	var readable []bool
	dest := make([]driver.Value, 2)
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			break
		}
		if err != nil {
			rows.Close()
			budget, stopped := g.Stopped()
			return finish(ctx, err, p, budget, stopped, lim)
		}
		n, _ := dest[0].(string)
		r, _ := dest[1].(int64)
		names, readable = append(names, n), append(readable, r != 0)
	}
	rows.Close()
	p.load(names, readable)

	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	rows, err = q.QueryContext(ctx, query, named)
	if err != nil {
		switch {
		case errors.Is(err, sqlite.ErrMultipleStatements):
			return notAllowed("more than one statement")
		case errors.Is(err, sqlite.ErrNotReadOnly):
			return notAllowed("a statement that writes (VACUUM, REINDEX...)")
		}
		return finish(ctx, err, p, false, false, lim)
	}
	defer rows.Close()
	cols := rows.Columns()
	if err := visit(cols, nil); err != nil {
		return err
	}
	row := make([]driver.Value, len(cols))
	out := make([]any, len(cols))
	size := sizer{max: lim.MaxBytes}
	for {
		err := rows.Next(row)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			budget, stopped := g.Stopped()
			return finish(ctx, err, p, budget, stopped, lim)
		}
		for i, v := range row {
			if b, ok := v.([]byte); ok {
				// SQLite's memory until the next row.
				v = append([]byte{}, b...)
			}
			out[i] = v
		}
		if err := size.add(out); err != nil {
			return err
		}
		if err := visit(cols, out); err != nil {
			return err
		}
	}
}

func isInterruptLibsql(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Primary() == 9 // SQLITE_INTERRUPT
}

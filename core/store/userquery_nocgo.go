//go:build js || !cgo

package store

import (
	"context"
	"database/sql/driver"
	"errors"
)

// Without cgo there is no connection of our cgo driver (internal/sqlite):
// every connection is ncruces', guarded by userquery_ncruces.go.

func guardLibsql(driver.Conn, *policy) (bool, error) { return false, nil }

func runGuardedLibsql(context.Context, any, *policy, string, []any, QueryLimits, func([]string, []any) error) error {
	return errors.New("store: driver connection has no SQLite handle")
}

func isInterruptLibsql(error) bool { return false }

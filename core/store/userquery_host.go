//go:build js && agentfs_workers

package store

import (
	"context"
	"database/sql/driver"
)

// The Workers build reaches its SQL through the host (driver_host.go),
// which has no authorizer, no read-only connection and no step counter:
// the guards that make a user's SQL safe (userquery.go) cannot be
// installed, so user queries are refused rather than run unguarded.

var errNoUserQuery = &QueryError{
	Msg:  "query: SQL queries are not available in the Workers build (the Durable Object's SQL storage cannot be restricted to reading); read the agent through fs, kv and tools, or query ctx.storage.sql in your Durable Object",
	Kind: ErrQueryNotAllowed,
}

func guardConn(driver.Conn, *policy) error { return errNoUserQuery }

func runGuarded(context.Context, any, *policy, string, []any, QueryLimits, func([]string, []any) error) error {
	return errNoUserQuery
}

func isInterrupt(error) bool { return false }

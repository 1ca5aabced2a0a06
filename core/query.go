package core

import (
	"context"

	"github.com/agentfs-go/agentfs/core/store"
)

// QueryLimits bound Agent.Query: a budget of SQLite VM steps (default
// DefaultQuerySteps) and of result bytes (none by default).
type QueryLimits = store.QueryLimits

// DefaultQuerySteps is the step budget of a query whose limits say 0.
const DefaultQuerySteps = store.DefaultQuerySteps

// DefaultQueryMaxBytes is the result bound of doors that hold a whole
// result in memory (AgentService.Query) when they are given none.
const DefaultQueryMaxBytes = 64 << 20

// Errors of Agent.Query, each wrapped by a *QueryError.
var (
	ErrQueryNotAllowed = store.ErrQueryNotAllowed
	ErrQueryStopped    = store.ErrQueryStopped
	ErrQueryTooLarge   = store.ErrQueryTooLarge
	ErrQueryInvalid    = store.ErrQueryInvalid
)

// QueryError is why a query failed; its message names what was refused
// or what stopped it ("query: not allowed: ATTACH (...)").
type QueryError = store.QueryError

// Query runs sql, one statement from a user, read-only: it may read this
// agent's database (its tables and views, with SQLite's pure functions,
// recursive CTEs and introspection PRAGMAs) and nothing else. It runs on
// a connection of its own, so a slow query holds no lock of the agent's
// other operations, and stops when ctx ends or the step budget is used
// up. args are bound to its parameters (int64, float64, string, []byte,
// nil). visit gets the column names with a nil row first, then each row
// (see store.DB.UserQuery).
func (a *Agent) Query(ctx context.Context, sql string, args []any, lim QueryLimits, visit func(cols []string, row []any) error) error {
	return a.DB.UserQuery(ctx, sql, args, lim, visit)
}

// Package toolcalls is the append-only log of an agent's tool calls.
package toolcalls

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentfs-go/agentfs/core/store"
)

// Status of a tool call.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusError   = "error"
)

// ErrNotFound is returned for an unknown tool call id.
var ErrNotFound = errors.New("tool call not found")

// ErrFinished is returned when finishing a call that is not pending.
var ErrFinished = errors.New("tool call already finished")

// callError names the call a failure is about, in words ("no tool call
// with id 999"), and matches ErrNotFound or ErrFinished with errors.Is.
type callError struct {
	id     int64
	status string // of a finished call; "" for a missing one
}

func (e *callError) Error() string {
	if e.status == "" {
		return fmt.Sprintf("no tool call with id %d", e.id)
	}
	return fmt.Sprintf("tool call %d is already finished (%s)", e.id, e.status)
}

func (e *callError) Is(target error) bool {
	return target == ErrNotFound && e.status == "" || target == ErrFinished && e.status != ""
}

// Call is one row of the log. Times are Unix seconds, as in the format;
// DurationMs is measured with millisecond precision by this engine.
type Call struct {
	ID          int64           `json:"id"`
	Name        string          `json:"name"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       *string         `json:"error,omitempty"`
	Status      string          `json:"status"`
	StartedAt   int64           `json:"started_at"`
	CompletedAt *int64          `json:"completed_at,omitempty"`
	DurationMs  *int64          `json:"duration_ms,omitempty"`
}

// Log is the tool-call log of one database.
type Log struct {
	db *store.DB
	// starts remembers precise start times of calls begun here, so that
	// durations are exact rather than whole seconds.
	starts map[int64]time.Time
}

// New returns the log of db.
func New(db *store.DB) *Log { return &Log{db: db, starts: map[int64]time.Time{}} }

func jsonArg(v json.RawMessage) (any, error) {
	if v == nil {
		return nil, nil
	}
	// JSON text is UTF-8 (RFC 8259); json.Valid does not check that, and
	// the driver refuses to bind a string that is not.
	if !json.Valid(v) || !utf8.Valid(v) {
		return nil, errors.New("toolcalls: value is not valid JSON")
	}
	return string(v), nil
}

// text binds s as TEXT from its bytes. Names and error messages are bound
// this way, never as Go strings: the driver refuses a string that is not
// valid UTF-8 and cuts one at its first NUL, so Fail with the stderr of a
// tool failed (leaving the call pending) or stored a truncated message.
func text(s string) []byte { return []byte(s) }

// Start records a pending call and returns its id.
func (l *Log) Start(ctx context.Context, name string, params json.RawMessage) (int64, error) {
	if strings.TrimSpace(name) == "" {
		return 0, errors.New("toolcalls: empty tool name")
	}
	p, err := jsonArg(params)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	var id int64
	err = l.db.WriteOne(ctx, func(c *store.Conn) error {
		return c.QueryRow("INSERT INTO tool_calls (name, parameters, status, started_at) VALUES (CAST(? AS TEXT), ?, 'pending', ?) RETURNING id",
			text(name), p, now.Unix()).Scan(&id)
	})
	if err == nil {
		l.db.Locked(func() { l.starts[id] = now })
	}
	return id, err
}

// Success marks a pending call as successful with a JSON result.
func (l *Log) Success(ctx context.Context, id int64, result json.RawMessage) error {
	r, err := jsonArg(result)
	if err != nil {
		return err
	}
	return l.finish(ctx, id, StatusSuccess, r, nil)
}

// Fail marks a pending call as failed with an error message.
func (l *Log) Fail(ctx context.Context, id int64, msg string) error {
	return l.finish(ctx, id, StatusError, nil, text(msg))
}

func (l *Log) finish(ctx context.Context, id int64, status string, result, errMsg any) error {
	now := time.Now()
	return l.db.Write(ctx, func(c *store.Conn) error {
		var started int64
		var cur string
		err := c.QueryRow("SELECT CAST(started_at AS INTEGER), status FROM tool_calls WHERE id = ?", id).Scan(&started, &cur)
		if errors.Is(err, sql.ErrNoRows) {
			return &callError{id: id}
		}
		if err != nil {
			return err
		}
		if cur != StatusPending {
			return &callError{id: id, status: cur}
		}
		dur := (now.Unix() - started) * 1000
		if t, ok := l.starts[id]; ok {
			dur = now.Sub(t).Milliseconds()
			delete(l.starts, id)
		}
		_, err = c.Exec("UPDATE tool_calls SET status = ?, result = ?, error = CAST(? AS TEXT), completed_at = ?, duration_ms = ? WHERE id = ?",
			status, result, errMsg, now.Unix(), dur, id)
		return err
	})
}

// Record inserts a finished call in one step. A non-nil errMsg makes it
// an error; started and completed are the call's times.
func (l *Log) Record(ctx context.Context, name string, started, completed time.Time, params, result json.RawMessage, errMsg *string) (int64, error) {
	if strings.TrimSpace(name) == "" {
		return 0, errors.New("toolcalls: empty tool name")
	}
	if completed.Before(started) {
		return 0, errors.New("toolcalls: completed before started")
	}
	p, err := jsonArg(params)
	if err != nil {
		return 0, err
	}
	r, err := jsonArg(result)
	if err != nil {
		return 0, err
	}
	status := StatusSuccess
	var e any
	if errMsg != nil {
		status, e = StatusError, text(*errMsg)
	}
	var id int64
	err = l.db.WriteOne(ctx, func(c *store.Conn) error {
		return c.QueryRow(`INSERT INTO tool_calls (name, parameters, result, error, status, started_at, completed_at, duration_ms)
			VALUES (CAST(? AS TEXT), ?, ?, CAST(? AS TEXT), ?, ?, ?, ?) RETURNING id`,
			text(name), p, r, e, status, started.Unix(), completed.Unix(), completed.Sub(started).Milliseconds()).Scan(&id)
	})
	return id, err
}

const cols = "id, CAST(name AS BLOB), CAST(parameters AS BLOB), CAST(result AS BLOB), CAST(error AS BLOB), CAST(status AS BLOB), CAST(started_at AS INTEGER), CAST(completed_at AS INTEGER), CAST(duration_ms AS INTEGER)"

func scanCall(r interface{ Scan(...any) error }) (Call, error) {
	var c Call
	var name, params, result, errMsg, status []byte
	var completed, dur sql.NullInt64
	if err := r.Scan(&c.ID, &name, &params, &result, &errMsg, &status, &c.StartedAt, &completed, &dur); err != nil {
		return c, err
	}
	c.Name, c.Status = string(name), string(status)
	if params != nil {
		c.Parameters = params
	}
	if result != nil {
		c.Result = result
	}
	if errMsg != nil {
		s := string(errMsg)
		c.Error = &s
	}
	if completed.Valid {
		c.CompletedAt = &completed.Int64
	}
	if dur.Valid {
		c.DurationMs = &dur.Int64
	}
	return c, nil
}

// Get returns one call.
func (l *Log) Get(ctx context.Context, id int64) (Call, error) {
	var c Call
	err := l.db.Query(ctx, func(conn *store.Conn) error {
		var err error
		c, err = scanCall(conn.QueryRow("SELECT "+cols+" FROM tool_calls WHERE id = ?", id))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return c, &callError{id: id}
	}
	return c, err
}

// Filter selects calls for List. Zero fields match everything. Filters
// apply before the limit.
type Filter struct {
	Name   string
	Status string
	Since  time.Time // started at or after
	Until  time.Time // started before
	Limit  int
	// Ascending lists oldest first; the default is newest first.
	Ascending bool
}

// query builds the WHERE, ORDER BY and LIMIT clauses of a listing.
func (f Filter) query() (string, []any, error) {
	var where []string
	var args []any
	if f.Name != "" {
		where = append(where, "name = CAST(? AS TEXT)")
		args = append(args, text(f.Name))
	}
	if f.Status != "" {
		switch f.Status {
		case StatusPending, StatusSuccess, StatusError:
		default:
			return "", nil, fmt.Errorf("toolcalls: unknown status %q (pending, success or error)", f.Status)
		}
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	if !f.Since.IsZero() {
		where = append(where, "started_at >= ?")
		args = append(args, f.Since.Unix())
	}
	if !f.Until.IsZero() {
		where = append(where, "started_at < ?")
		args = append(args, f.Until.Unix())
	}
	q := " FROM tool_calls"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Ascending {
		q += " ORDER BY started_at ASC, id ASC"
	} else {
		q += " ORDER BY started_at DESC, id DESC"
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return q, args, nil
}

// List returns the calls matching filter.
func (l *Log) List(ctx context.Context, f Filter) ([]Call, error) {
	q, args, err := f.query()
	if err != nil {
		return nil, err
	}
	var out []Call
	err = l.db.Query(ctx, func(c *store.Conn) error {
		rows, err := c.Query("SELECT "+cols+q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			call, err := scanCall(rows)
			if err != nil {
				return err
			}
			out = append(out, call)
		}
		return rows.Err()
	})
	return out, err
}

// Stats summarises the calls of one tool.
type Stats struct {
	Name          string  `json:"name"`
	TotalCalls    int64   `json:"total_calls"`
	Successful    int64   `json:"successful"`
	Failed        int64   `json:"failed"`
	Pending       int64   `json:"pending"`
	AvgDurationMs float64 `json:"avg_duration_ms"`
}

// Stats returns per-tool counts and average durations, by name.
func (l *Log) Stats(ctx context.Context) ([]Stats, error) {
	var out []Stats
	err := l.db.Query(ctx, func(c *store.Conn) error {
		rows, err := c.Query(`SELECT CAST(name AS BLOB), COUNT(*),
			SUM(status = 'success'), SUM(status = 'error'), SUM(status = 'pending'),
			COALESCE(AVG(duration_ms), 0)
			FROM tool_calls GROUP BY name ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s Stats
			var name []byte
			if err := rows.Scan(&name, &s.TotalCalls, &s.Successful, &s.Failed, &s.Pending, &s.AvgDurationMs); err != nil {
				return err
			}
			s.Name = string(name)
			out = append(out, s)
		}
		return rows.Err()
	})
	return out, err
}

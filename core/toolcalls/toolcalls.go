// Package toolcalls is the append-only log of an agent's tool calls.
package toolcalls

import (
	"bytes"
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
		var err error
		id, err = insert(c, "INSERT INTO tool_calls (name, parameters, status, started_at) VALUES (CAST(? AS TEXT), ?, 'pending', ?)",
			text(name), p, now.Unix())
		return err
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
		var err error
		id, err = insert(c, `INSERT INTO tool_calls (name, parameters, result, error, status, started_at, completed_at, duration_ms)
			VALUES (CAST(? AS TEXT), ?, ?, CAST(? AS TEXT), ?, ?, ?, ?)`,
			text(name), p, r, e, status, started.Unix(), completed.Unix(), completed.Sub(started).Milliseconds())
		return err
	})
	return id, err
}

// insert runs an INSERT into tool_calls and returns the new row's id (its
// rowid: the id column is the INTEGER PRIMARY KEY). Exec and LastInsertId
// rather than RETURNING: RETURNING buffers its rows and commits at the
// statement's reset, which SQLite's WAL hook does not report (the store
// then reads the WAL's length with a pread), and costs more through the
// driver. Under WriteOne nothing else runs on the connection in between.
func insert(c *store.Conn, query string, args ...any) (int64, error) {
	res, err := c.Exec(query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

const cols = "id, CAST(name AS BLOB), CAST(parameters AS BLOB), CAST(result AS BLOB), CAST(error AS BLOB), CAST(status AS BLOB), CAST(started_at AS INTEGER), CAST(completed_at AS INTEGER), CAST(duration_ms AS INTEGER)"

// Row is one call as the database holds it, for a reader that encodes
// calls itself (the engine's protocol answers a listing from the rows
// without building a Call for each): the text columns are the database's
// own bytes, nil for NULL, valid only until the function given the row
// returns.
type Row struct {
	ID                        int64
	Name, Parameters, Result  []byte
	Error, Status             []byte
	StartedAt                 int64
	CompletedAt, DurationMs   int64
	HasCompleted, HasDuration bool
}

// scanRow reads one row of cols into r. The text columns are scanned as
// sql.RawBytes (no copy) and the integers as any (the driver's values as
// they are): a listing of 10,000 calls spent more time in database/sql's
// copies and conversions than in SQLite.
func scanRow(s interface{ Scan(...any) error }, r *Row) error {
	var id, started, completed, dur any
	if err := s.Scan(&id, (*sql.RawBytes)(&r.Name), (*sql.RawBytes)(&r.Parameters), (*sql.RawBytes)(&r.Result),
		(*sql.RawBytes)(&r.Error), (*sql.RawBytes)(&r.Status), &started, &completed, &dur); err != nil {
		return err
	}
	var err error
	r.ID, _, err = intColumn(id, err)
	r.StartedAt, _, err = intColumn(started, err)
	r.CompletedAt, r.HasCompleted, err = intColumn(completed, err)
	r.DurationMs, r.HasDuration, err = intColumn(dur, err)
	return err
}

// intColumn is an integer column's value (ok false for NULL), converted
// as database/sql would if a driver gave it as something else than int64.
func intColumn(v any, err error) (n int64, ok bool, _ error) {
	switch x := v.(type) {
	case int64:
		return x, true, err
	case nil:
		return 0, false, err
	}
	var ni sql.NullInt64
	if cerr := ni.Scan(v); cerr != nil && err == nil {
		err = cerr
	}
	return ni.Int64, ni.Valid, err
}

// Call copies the row into a Call, which stays valid.
func (r *Row) Call() Call {
	c := Call{ID: r.ID, Name: string(r.Name), Status: string(r.Status), StartedAt: r.StartedAt}
	if r.Parameters != nil {
		c.Parameters = bytes.Clone(r.Parameters)
	}
	if r.Result != nil {
		c.Result = bytes.Clone(r.Result)
	}
	if r.Error != nil {
		s := string(r.Error)
		c.Error = &s
	}
	if r.HasCompleted {
		v := r.CompletedAt
		c.CompletedAt = &v
	}
	if r.HasDuration {
		v := r.DurationMs
		c.DurationMs = &v
	}
	return c
}

// Get returns one call.
func (l *Log) Get(ctx context.Context, id int64) (Call, error) {
	var c Call
	err := l.GetRow(ctx, id, func(r *Row) error {
		c = r.Call()
		return nil
	})
	return c, err
}

// GetRow passes the call with this id to fn, as its row (see Row).
func (l *Log) GetRow(ctx context.Context, id int64, fn func(r *Row) error) error {
	err := l.db.Query(ctx, func(conn *store.Conn) error {
		rows, err := conn.Query("SELECT "+cols+" FROM tool_calls WHERE id = ?", id)
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return &callError{id: id}
		}
		var r Row
		if err := scanRow(rows, &r); err != nil {
			return err
		}
		return fn(&r)
	})
	return err
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
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	order := " ORDER BY started_at DESC, id DESC"
	if f.Ascending {
		order = " ORDER BY started_at ASC, id ASC"
	}
	if f.Limit <= 0 {
		return " FROM tool_calls" + cond + order, args, nil
	}
	limit := fmt.Sprintf(" LIMIT %d", f.Limit)
	if f.Name == "" && f.Status == "" {
		// The started_at index gives the order: no sort, and the
		// limit ends the scan.
		return " FROM tool_calls" + cond + order + limit, args, nil
	}
	// Found through the name or status index, the calls must be sorted:
	// sorting whole rows to keep a few cost twice as much as sorting
	// their ids and times, then reading the rows kept (getByName with a
	// limit of 100 among 1,000 calls of the tool).
	q := " FROM tool_calls WHERE id IN (SELECT id FROM tool_calls" + cond + order + limit + ")" + order
	return q, args, nil
}

// List returns the calls matching filter.
func (l *Log) List(ctx context.Context, f Filter) ([]Call, error) {
	var out []Call
	err := l.ListRows(ctx, f, func(r *Row) error {
		out = append(out, r.Call())
		return nil
	})
	return out, err
}

// ListRows passes the calls matching filter to fn, in order, as rows (see
// Row); an error from fn ends the listing with it.
func (l *Log) ListRows(ctx context.Context, f Filter, fn func(r *Row) error) error {
	q, args, err := f.query()
	if err != nil {
		return err
	}
	return l.db.Query(ctx, func(c *store.Conn) error {
		rows, err := c.Query("SELECT "+cols+q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var r Row
		for rows.Next() {
			if err := scanRow(rows, &r); err != nil {
				return err
			}
			if err := fn(&r); err != nil {
				return err
			}
		}
		return rows.Err()
	})
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

//go:build cgo

package sync

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// Hrana over HTTP (the JSON form of POST /v2/pipeline): the SQL endpoint
// through which the protocol's clients push their changes, and which
// SQL-over-HTTP clients use as a remote database.

type hValue struct {
	Type   string          `json:"type"`
	Value  json.RawMessage `json:"value,omitempty"`
	Base64 *string         `json:"base64,omitempty"`
}

type hStmt struct {
	SQL   *string  `json:"sql"`
	SQLID *int     `json:"sql_id"`
	Args  []hValue `json:"args"`
	Named []struct {
		Name  string `json:"name"`
		Value hValue `json:"value"`
	} `json:"named_args"`
	WantRows *bool `json:"want_rows"`
}

type hCond struct {
	Type  string  `json:"type"`
	Step  int     `json:"step"`
	Cond  *hCond  `json:"cond"`
	Conds []hCond `json:"conds"`
}

type hStep struct {
	Condition *hCond `json:"condition"`
	Stmt      hStmt  `json:"stmt"`
}

type hRequest struct {
	Type  string `json:"type"`
	Stmt  *hStmt `json:"stmt"`
	Batch *struct {
		Steps []hStep `json:"steps"`
	} `json:"batch"`
	SQL *string `json:"sql"`
}

type pipelineReq struct {
	Baton    *string    `json:"baton"`
	Requests []hRequest `json:"requests"`
}

type hError struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

type hCol struct {
	Name     *string `json:"name"`
	Decltype *string `json:"decltype"`
}

type stmtResult struct {
	Cols             []hCol  `json:"cols"`
	Rows             [][]any `json:"rows"`
	AffectedRowCount int64   `json:"affected_row_count"`
	LastInsertRowid  *string `json:"last_insert_rowid"`
	ReplicationIndex *string `json:"replication_index"`
	RowsRead         int64   `json:"rows_read"`
	RowsWritten      int64   `json:"rows_written"`
	QueryDurationMS  float64 `json:"query_duration_ms"`
}

func (v hValue) arg() (any, error) {
	str := func() (string, error) {
		var s string
		if err := json.Unmarshal(v.Value, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	switch v.Type {
	case "null":
		return nil, nil
	case "integer":
		if s, err := str(); err == nil {
			return strconv.ParseInt(s, 10, 64)
		}
		var n int64
		err := json.Unmarshal(v.Value, &n)
		return n, err
	case "float":
		var f float64
		if err := json.Unmarshal(v.Value, &f); err != nil {
			s, err2 := str()
			if err2 != nil {
				return nil, err
			}
			return strconv.ParseFloat(s, 64)
		}
		return f, nil
	case "text":
		return str()
	case "blob":
		if v.Base64 == nil {
			return []byte{}, nil
		}
		return base64.RawStdEncoding.DecodeString(strings.TrimRight(*v.Base64, "="))
	}
	return nil, fmt.Errorf("unknown value type %q", v.Type)
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case nil:
		return map[string]any{"type": "null"}
	case int64:
		return map[string]any{"type": "integer", "value": strconv.FormatInt(x, 10)}
	case float64:
		return map[string]any{"type": "float", "value": x}
	case string:
		return map[string]any{"type": "text", "value": x}
	case []byte:
		return map[string]any{"type": "blob", "base64": base64.StdEncoding.EncodeToString(x)}
	}
	return map[string]any{"type": "text", "value": fmt.Sprint(v)}
}

var sqliteCodes = map[int]string{1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT",
	5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT",
	10: "SQLITE_IOERR", 11: "SQLITE_CORRUPT", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN", 17: "SQLITE_SCHEMA",
	18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE", 25: "SQLITE_RANGE", 26: "SQLITE_NOTADB"}

func toHError(err error) *hError {
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := sqliteCodes[se.Primary()]
		if code == "" {
			code = "SQLITE_ERROR"
		}
		return &hError{Message: se.Msg, Code: code}
	}
	return &hError{Message: err.Error(), Code: "SQL_PARSE_ERROR"}
}

// session runs a pipeline's requests on one connection.
type session struct {
	ctx  context.Context
	conn *sql.Conn
}

func (s *session) info() (sqlite.ConnInfo, error) {
	var ci sqlite.ConnInfo
	err := s.conn.Raw(func(dc any) error {
		var err error
		ci, err = sqlite.Info(dc)
		return err
	})
	return ci, err
}

func (s *session) execute(st *hStmt) (*stmtResult, *hError) {
	if st.SQL == nil {
		return nil, &hError{Message: "stored SQL (sql_id) is not supported: send the statement text", Code: "SQL_NOT_FOUND"}
	}
	if len(st.Named) > 0 {
		return nil, &hError{Message: "named arguments are not supported: use positional ones", Code: "ARGS_INVALID"}
	}
	args := make([]any, len(st.Args))
	for i, a := range st.Args {
		v, err := a.arg()
		if err != nil {
			return nil, &hError{Message: fmt.Sprintf("argument %d: %v", i+1, err), Code: "ARGS_INVALID"}
		}
		args[i] = v
	}
	before, err := s.info()
	if err != nil {
		return nil, toHError(err)
	}
	rows, err := s.conn.QueryContext(s.ctx, *st.SQL, args...)
	if err != nil {
		return nil, toHError(err)
	}
	cols, _ := rows.Columns()
	res := &stmtResult{Cols: make([]hCol, len(cols)), Rows: [][]any{}}
	for i := range cols {
		res.Cols[i] = hCol{Name: &cols[i]}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return nil, toHError(err)
		}
		row := make([]any, len(cols))
		for i, v := range vals {
			row[i] = jsonValue(v)
		}
		res.Rows = append(res.Rows, row)
		res.RowsRead++
	}
	if err := rows.Close(); err != nil {
		return nil, toHError(err)
	}
	if err := rows.Err(); err != nil {
		return nil, toHError(err)
	}
	after, err := s.info()
	if err != nil {
		return nil, toHError(err)
	}
	if after.TotalChanges != before.TotalChanges {
		res.AffectedRowCount = after.Changes
		res.RowsWritten = after.Changes
	}
	if after.LastInsertID != 0 {
		id := strconv.FormatInt(after.LastInsertID, 10)
		res.LastInsertRowid = &id
	}
	return res, nil
}

func (s *session) cond(c *hCond, results []*stmtResult, errs []*hError) (bool, error) {
	if c == nil {
		return true, nil
	}
	switch c.Type {
	case "ok", "error":
		if c.Step < 0 || c.Step >= len(results) {
			return false, fmt.Errorf("condition refers to step %d, which has not run before it", c.Step)
		}
		if c.Type == "ok" {
			return results[c.Step] != nil, nil
		}
		return errs[c.Step] != nil, nil
	case "not":
		v, err := s.cond(c.Cond, results, errs)
		return !v, err
	case "and", "or":
		for i := range c.Conds {
			v, err := s.cond(&c.Conds[i], results, errs)
			if err != nil {
				return false, err
			}
			if c.Type == "and" && !v {
				return false, nil
			}
			if c.Type == "or" && v {
				return true, nil
			}
		}
		return c.Type == "and", nil
	case "is_autocommit":
		ci, err := s.info()
		return ci.Autocommit, err
	}
	return false, fmt.Errorf("unknown batch condition %q", c.Type)
}

// request runs one request of a pipeline and returns its result entry.
func (s *session) request(r *hRequest) map[string]any {
	fail := func(e *hError) map[string]any { return map[string]any{"type": "error", "error": e} }
	ok := func(resp map[string]any) map[string]any { return map[string]any{"type": "ok", "response": resp} }
	switch r.Type {
	case "execute":
		if r.Stmt == nil {
			return fail(&hError{Message: "execute without stmt", Code: "PROTO_ERROR"})
		}
		res, e := s.execute(r.Stmt)
		if e != nil {
			return fail(e)
		}
		return ok(map[string]any{"type": "execute", "result": res})
	case "batch":
		if r.Batch == nil {
			return fail(&hError{Message: "batch without steps", Code: "PROTO_ERROR"})
		}
		n := len(r.Batch.Steps)
		results := make([]*stmtResult, 0, n)
		errs := make([]*hError, 0, n)
		for i := range r.Batch.Steps {
			st := &r.Batch.Steps[i]
			run, err := s.cond(st.Condition, results, errs)
			if err != nil {
				return fail(&hError{Message: err.Error(), Code: "PROTO_ERROR"})
			}
			if !run {
				results, errs = append(results, nil), append(errs, nil)
				continue
			}
			res, e := s.execute(&st.Stmt)
			results, errs = append(results, res), append(errs, e)
		}
		return ok(map[string]any{"type": "batch", "result": map[string]any{
			"step_results": results, "step_errors": errs, "replication_index": nil}})
	case "sequence":
		if r.SQL == nil {
			return fail(&hError{Message: "sequence without sql", Code: "PROTO_ERROR"})
		}
		if _, err := s.conn.ExecContext(s.ctx, *r.SQL); err != nil {
			return fail(toHError(err))
		}
		return ok(map[string]any{"type": "sequence"})
	case "get_autocommit":
		ci, err := s.info()
		if err != nil {
			return fail(toHError(err))
		}
		return ok(map[string]any{"type": "get_autocommit", "is_autocommit": ci.Autocommit})
	case "close":
		return ok(map[string]any{"type": "close"})
	case "describe":
		if r.SQL == nil {
			return fail(&hError{Message: "describe without sql", Code: "PROTO_ERROR"})
		}
		var d sqlite.Description
		err := s.conn.Raw(func(dc any) error {
			var err error
			d, err = sqlite.Describe(dc, *r.SQL)
			return err
		})
		if err != nil {
			return fail(toHError(err))
		}
		params := make([]map[string]any, len(d.Params))
		for i, p := range d.Params {
			params[i] = map[string]any{"name": nil}
			if p != "" {
				params[i]["name"] = p
			}
		}
		cols := make([]map[string]any, len(d.Cols))
		for i := range d.Cols {
			cols[i] = map[string]any{"name": d.Cols[i], "decltype": nil}
			if d.Decltypes[i] != "" {
				cols[i]["decltype"] = d.Decltypes[i]
			}
		}
		return ok(map[string]any{"type": "describe", "result": map[string]any{
			"params": params, "cols": cols, "is_explain": d.Explain, "is_readonly": d.ReadOnly}})
	}
	return fail(&hError{Message: fmt.Sprintf("request type %q is not supported", r.Type), Code: "PROTO_ERROR"})
}

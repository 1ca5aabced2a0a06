package cmd

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
)

func init() { register(newQueryCmd) }

func newQueryCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "query ID_OR_PATH SQL",
		Short: "Run a read-only SQL query on an agent database",
		Long: `Run one read-only SQL statement on the database and print its rows.
The database is opened for queries only (PRAGMA query_only) and the
statement is rolled back after it ran, so nothing changes.
Formats: table (NULL shown as NULL), csv (NULL as an empty field), json
(an array of objects). Blobs print as hex in table and csv, base64 in
json. Text that reads as a date or time comes back from the driver as a
time and prints as "YYYY-MM-DD HH:MM:SS[.fraction]".

  agentfs query my-agent "SELECT name, status FROM tool_calls"
  agentfs query my-agent "SELECT key, value FROM kv_store" --format json`,
		Args:              usageArgs(cobra.ExactArgs(2)),
		ValidArgsFunction: completeAgentFirst,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" && format != "csv" {
				return usageError(cmd, "--format must be table, json or csv, not %q", format)
			}
			q := args[1]
			return withAgent(cmd, args[0], core.Options{ReadOnly: true}, func(a *core.Agent) error {
				return a.DB.Do(cmd.Context(), func(c *store.Conn) error {
					// query_only refuses writes; rolling back to a savepoint
					// also undoes anything that got past it.
					if _, err := c.Exec("SAVEPOINT agentfs_query"); err != nil {
						return err
					}
					defer func() {
						c.Exec("ROLLBACK TO agentfs_query")
						c.Exec("RELEASE agentfs_query")
					}()
					rows, err := c.Query(q)
					if err != nil {
						return queryError(err)
					}
					defer rows.Close()
					return queryError(printRows(cmd.OutOrStdout(), rows, format))
				})
			})
		},
	}
	c.Flags().StringVar(&format, "format", "table", "output format: table, json or csv")
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]cobra.Completion{"table", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// queryError explains the refusal of a write statement.
func queryError(err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	if strings.Contains(s, "readonly database") || strings.Contains(s, "read-only") || strings.Contains(s, "query_only") {
		return userError{
			msg:  "query is read-only: the statement would change the database (" + lastLine(s) + ")",
			hint: "change data with agentfs fs, kv or tools; query runs SELECT and other reads only",
		}
	}
	return fmt.Errorf("query: %s", lastLine(s))
}

// lastLine keeps the SQLite message of a driver error, which reads
// "failed to ...\nerror code = 1: ...: SQLite failure: `message`".
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	const mark = "SQLite failure: `"
	if i := strings.Index(s, mark); i >= 0 && strings.HasSuffix(s, "`") {
		return s[i+len(mark) : len(s)-1]
	}
	return s
}

func printRows(w io.Writer, rows *sql.Rows, format string) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	bw := bufio.NewWriter(w)
	var tw *tableWriter
	var cw *csv.Writer
	switch format {
	case "table":
		tw = newTableWriter(bw)
		fmt.Fprintln(tw, strings.Join(escapeCells(cols), "\t"))
	case "csv":
		cw = csv.NewWriter(bw)
		if err := cw.Write(cols); err != nil {
			return err
		}
	case "json":
		bw.WriteString("[")
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		switch format {
		case "table":
			cells := make([]string, len(vals))
			for i, v := range vals {
				cells[i] = cellText(v, "NULL")
			}
			fmt.Fprintln(tw, strings.Join(escapeCells(cells), "\t"))
		case "csv":
			cells := make([]string, len(vals))
			for i, v := range vals {
				cells[i] = cellText(v, "")
			}
			if err := cw.Write(cells); err != nil {
				return err
			}
		case "json":
			if n > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n  {")
			for i, v := range vals {
				if i > 0 {
					bw.WriteString(", ")
				}
				k, _ := marshalJSON(cols[i])
				bw.Write(k)
				bw.WriteString(": ")
				bw.Write(cellJSON(v))
			}
			bw.WriteString("}")
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	switch format {
	case "table":
		if err := tw.Flush(); err != nil {
			return err
		}
	case "csv":
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	case "json":
		if n > 0 {
			bw.WriteString("\n")
		}
		bw.WriteString("]\n")
	}
	return bw.Flush()
}

// escapeCells keeps each table cell on one line and in its column.
func escapeCells(cells []string) []string {
	r := strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r", "\t", "\\t")
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = r.Replace(c)
	}
	return out
}

// sqliteTime prints a time the driver parsed from text in SQLite's own
// format, which is how such text is usually written.
func sqliteTime(t time.Time) string {
	s := t.Format("2006-01-02 15:04:05.999999999")
	if t.Location() != time.UTC {
		s += t.Format("-07:00")
	}
	return s
}

func cellText(v any, null string) string {
	switch v := v.(type) {
	case nil:
		return null
	case []byte:
		return hex.EncodeToString(v)
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case time.Time:
		return sqliteTime(v)
	}
	return fmt.Sprint(v)
}

func cellJSON(v any) []byte {
	var x any = v
	switch v := v.(type) {
	case []byte:
		x = base64.StdEncoding.EncodeToString(v)
	case time.Time:
		x = sqliteTime(v)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			x = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	b, err := marshalJSON(x)
	if err != nil {
		b, _ = marshalJSON(fmt.Sprint(v))
	}
	return b
}

// marshalJSON is json.Marshal without escaping <, > and &.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

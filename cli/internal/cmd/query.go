package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
)

func init() { register(newQueryCmd) }

func newQueryCmd() *cobra.Command {
	var format string
	var steps int64
	c := &cobra.Command{
		Use:   "query ID_OR_PATH SQL",
		Short: "Run a read-only SQL query on an agent database",
		Long: `Run one SQL statement that reads the agent's database and print its rows.
The statement may read the database's tables and views (fs_inode,
fs_dentry, kv_store, tool_calls...) with SQLite's functions (json_*,
date and math functions, aggregates, window functions), recursive CTEs
and the PRAGMAs that describe the schema (table_info, index_list...).
Anything else is refused: writes, ATTACH, CREATE TEMP, transactions,
PRAGMAs that change settings, and functions that reach the host
(readfile, writefile, load_extension).
A statement stops after --max-steps steps of SQLite's virtual machine
(an endless recursive CTE, say) or at Ctrl-C.
Formats: table (NULL shown as NULL), csv (NULL as an empty field), json
(an array of objects). Blobs print as hex in table and csv, base64 in
json. Text prints exactly as stored (a date stays the text it was).

  agentfs query my-agent "SELECT name, status FROM tool_calls"
  agentfs query my-agent "SELECT key, value FROM kv_store" --format json
  agentfs query my-agent "PRAGMA table_info(fs_inode)"`,
		Args:              usageArgs(cobra.ExactArgs(2)),
		ValidArgsFunction: completeAgentFirst,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" && format != "csv" {
				return usageError(cmd, "--format must be table, json or csv, not %q", format)
			}
			if steps <= 0 {
				return usageError(cmd, "--max-steps must be positive, not %d", steps)
			}
			return withAgent(cmd, args[0], core.Options{ReadOnly: true}, func(a *core.Agent) error {
				p := &rowPrinter{w: bufio.NewWriter(cmd.OutOrStdout()), format: format}
				err := a.Query(cmd.Context(), args[1], nil, core.QueryLimits{Steps: steps}, p.visit)
				if err == nil {
					err = p.finish()
				}
				return queryError(err)
			})
		},
	}
	c.Flags().StringVar(&format, "format", "table", "output format: table, json or csv")
	c.Flags().Int64Var(&steps, "max-steps", core.DefaultQuerySteps, "stop the statement after this many steps of SQLite's virtual machine")
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]cobra.Completion{"table", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// queryError adds what to do next to a refused or stopped query.
func queryError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, core.ErrQueryNotAllowed):
		return userError{msg: err.Error(), hint: "query runs one SELECT (or a PRAGMA that describes the schema) on this agent's database; change data with agentfs fs, kv or tools"}
	case errors.Is(err, core.ErrQueryStopped) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		return userError{msg: err.Error(), hint: "narrow the query (WHERE, LIMIT) or raise --max-steps"}
	case errors.Is(err, core.ErrQueryInvalid):
		return userError{msg: err.Error(), hint: "list the tables with: agentfs query ID \"SELECT name FROM sqlite_schema\""}
	}
	return err
}

// rowPrinter prints the rows of a query as they come.
type rowPrinter struct {
	w      *bufio.Writer
	format string
	cols   []string
	tw     *tableWriter
	cw     *csv.Writer
	n      int
}

// visit is the query's visitor: the columns first (row nil), then rows.
func (p *rowPrinter) visit(cols []string, row []any) error {
	if row == nil {
		p.cols = cols
		switch p.format {
		case "table":
			p.tw = newTableWriter(p.w)
			fmt.Fprintln(p.tw, strings.Join(escapeCells(cols), "\t"))
		case "csv":
			p.cw = csv.NewWriter(p.w)
			return p.cw.Write(cols)
		case "json":
			p.w.WriteString("[")
		}
		return nil
	}
	switch p.format {
	case "table":
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = cellText(v, "NULL")
		}
		fmt.Fprintln(p.tw, strings.Join(escapeCells(cells), "\t"))
	case "csv":
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = cellText(v, "")
		}
		if err := p.cw.Write(cells); err != nil {
			return err
		}
	case "json":
		if p.n > 0 {
			p.w.WriteString(",")
		}
		p.w.WriteString("\n  {")
		for i, v := range row {
			if i > 0 {
				p.w.WriteString(", ")
			}
			k, _ := marshalJSON(p.cols[i])
			p.w.Write(k)
			p.w.WriteString(": ")
			p.w.Write(cellJSON(v))
		}
		p.w.WriteString("}")
	}
	p.n++
	return nil
}

func (p *rowPrinter) finish() error {
	switch p.format {
	case "table":
		if p.tw != nil {
			if err := p.tw.Flush(); err != nil {
				return err
			}
		}
	case "csv":
		if p.cw != nil {
			p.cw.Flush()
			if err := p.cw.Error(); err != nil {
				return err
			}
		}
	case "json":
		if p.n > 0 {
			p.w.WriteString("\n")
		}
		p.w.WriteString("]\n")
	}
	return p.w.Flush()
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
	}
	return fmt.Sprint(v)
}

func cellJSON(v any) []byte {
	var x any = v
	switch v := v.(type) {
	case []byte:
		x = base64.StdEncoding.EncodeToString(v)
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

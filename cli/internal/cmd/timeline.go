package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

func init() { register(newTimelineCmd) }

// summaryWidth is the width of the SUMMARY column of the table.
const summaryWidth = 60

func newTimelineCmd() *cobra.Command {
	var limit int
	var tool, status, since, format string
	c := &cobra.Command{
		Use:   "timeline ID_OR_PATH",
		Short: "Show the tool calls of an agent, newest first",
		Long: `Show the tool calls of an agent, newest first. Filters apply before the
limit: --filter search --limit 5 shows the five latest calls of search.
--since takes a duration (30m, 1h, 7d) or a time (2026-01-02T15:04:05Z,
2026-01-02). The table shows start times in local time; --format json
prints every field, with Unix times.`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeAgentFirst,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := toolcalls.Filter{Name: tool, Limit: limit}
			switch status {
			case "", toolcalls.StatusPending, toolcalls.StatusSuccess, toolcalls.StatusError:
				f.Status = status
			default:
				return usageError(cmd, "--status must be pending, success or error, not %q", status)
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return usageError(cmd, "--since: %v", err)
				}
				f.Since = t
			}
			if limit < 0 {
				return usageError(cmd, "--limit must be 0 (no limit) or more")
			}
			if format != "table" && format != "json" {
				return usageError(cmd, "--format must be table or json, not %q", format)
			}
			return readAgent(cmd, args[0], func(a *core.Agent) error {
				calls, err := a.Tools.List(cmd.Context(), f)
				if err != nil {
					return err
				}
				if format == "json" {
					if calls == nil {
						calls = []toolcalls.Call{}
					}
					enc := json.NewEncoder(cmd.OutOrStdout())
					enc.SetEscapeHTML(false)
					enc.SetIndent("", "  ")
					return enc.Encode(calls)
				}
				if len(calls) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "no tool calls")
					return nil
				}
				tw := newTableWriter(cmd.OutOrStdout())
				fmt.Fprintln(tw, "ID\tTOOL\tSTATUS\tSTARTED\tDURATION\tSUMMARY")
				for _, c := range calls {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", c.ID, oneLine(c.Name), c.Status,
						time.Unix(c.StartedAt, 0).Local().Format("2006-01-02 15:04:05"), formatDuration(c.DurationMs), callSummary(c))
				}
				return tw.Flush()
			})
		},
	}
	c.Flags().IntVar(&limit, "limit", 100, "show at most N calls (0: all)")
	c.Flags().StringVar(&tool, "filter", "", "only calls of this tool")
	c.Flags().StringVar(&status, "status", "", "only calls with this status: pending, success or error")
	c.Flags().StringVar(&since, "since", "", "only calls started since a duration ago (1h) or a time (RFC 3339)")
	c.Flags().StringVar(&format, "format", "table", "output format: table or json")
	c.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]cobra.Completion{"pending", "success", "error"}, cobra.ShellCompDirectiveNoFileComp))
	c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]cobra.Completion{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// tableWriter aligns tab-separated cells in columns two spaces apart,
// without trailing blanks.
type tableWriter struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

func newTableWriter(out io.Writer) *tableWriter {
	t := &tableWriter{out: out}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// Flush writes the table.
func (t *tableWriter) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	for _, l := range strings.SplitAfter(t.buf.String(), "\n") {
		if l == "" {
			continue
		}
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimRight(l, " \n")
		if nl {
			l += "\n"
		}
		if _, err := io.WriteString(t.out, l); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}

// parseSince reads a duration before now (90s, 1h30m, 7d) or a time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("negative duration %q", s)
		}
		return now.Add(-d), nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (1h, 30m, 7d) nor a time (2026-01-02T15:04:05Z)", s)
}

func formatDuration(ms *int64) string {
	if ms == nil {
		return "-"
	}
	switch d := time.Duration(*ms) * time.Millisecond; {
	case d < time.Second:
		return fmt.Sprintf("%dms", *ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

// callSummary is "params -> result" or "params -> error: msg", on one line
// of at most summaryWidth characters.
func callSummary(c toolcalls.Call) string {
	s := compactJSON(c.Parameters)
	var out string
	switch {
	case c.Error != nil:
		out = "error: " + *c.Error
	case c.Result != nil:
		out = compactJSON(c.Result)
	}
	if out != "" {
		if s != "" {
			s += " -> "
		}
		s += out
	}
	return truncate(oneLine(s), summaryWidth)
}

func compactJSON(v json.RawMessage) string {
	if v == nil {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return string(v)
	}
	return b.String()
}

// oneLine replaces line breaks and tabs, which would break the table.
func oneLine(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
	// Other control characters (an escape sequence would drive the
	// terminal) are shown as Go escapes.
	return visibleControls(s)
}

// visibleControls writes each non-printable rune of s as \xNN or \uNNNN.
func visibleControls(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsPrint(r) || r == ' ':
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// truncate shortens s to at most n characters, marking the cut with "...".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-3]) + "..."
}

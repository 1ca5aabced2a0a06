package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

func init() { register(newToolsCmd) }

func newToolsCmd() *cobra.Command {
	return newGroupCmd("tools", "Log the tool calls of an agent",
		`Log tool calls from a shell-driven agent; read them with agentfs timeline.

  id=$(agentfs tools my-agent start search --params '{"q": "sqlite"}')
  agentfs tools my-agent finish "$id" --result '{"hits": 3}'
  agentfs tools my-agent finish "$id" --error "timeout"
  agentfs tools my-agent record fetch --started 1767366245 --completed 1767366246.5 --result '"ok"'`,
		func(id string) []*cobra.Command {
			return []*cobra.Command{newToolsStartCmd(id), newToolsFinishCmd(id), newToolsRecordCmd(id)}
		})
}

// jsonFlag returns the raw JSON of a flag, nil when it is not given, or a
// usage error when it is not valid JSON.
func jsonFlag(cmd *cobra.Command, name, value string) (json.RawMessage, error) {
	if !cmd.Flags().Changed(name) {
		return nil, nil
	}
	if !json.Valid([]byte(value)) {
		return nil, usageError(cmd, "--%s is not valid JSON: %s (quote strings: '\"text\"')", name, value)
	}
	return json.RawMessage(value), nil
}

// toolsError adds a next step to the errors of the tool-call log.
func toolsError(id string, err error) error {
	switch {
	case errors.Is(err, toolcalls.ErrNotFound):
		return userError{msg: err.Error(), hint: fmt.Sprintf("list calls with: agentfs timeline %s", id)}
	case errors.Is(err, toolcalls.ErrFinished):
		return userError{msg: err.Error(), hint: fmt.Sprintf("list pending calls with: agentfs timeline %s --status pending", id)}
	}
	return err
}

func newToolsStartCmd(id string) *cobra.Command {
	var params string
	c := &cobra.Command{
		Use:   "start NAME",
		Short: "Record the start of a call and print its id",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := jsonFlag(cmd, "params", params)
			if err != nil {
				return err
			}
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				callID, err := a.Tools.Start(cmd.Context(), args[0], p)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(cmd.OutOrStdout(), callID)
				return err
			})
		},
	}
	c.Flags().StringVar(&params, "params", "", "parameters of the call, as JSON")
	return c
}

func newToolsFinishCmd(id string) *cobra.Command {
	var result, errMsg string
	c := &cobra.Command{
		Use:   "finish CALL_ID",
		Short: "Mark a pending call as succeeded (--result) or failed (--error)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			callID, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return usageError(cmd, "CALL_ID must be a number, got %q", args[0])
			}
			r, err := jsonFlag(cmd, "result", result)
			if err != nil {
				return err
			}
			failed := cmd.Flags().Changed("error")
			if failed && r != nil {
				return usageError(cmd, "give --result or --error, not both")
			}
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				if failed {
					return toolsError(id, a.Tools.Fail(cmd.Context(), callID, errMsg))
				}
				return toolsError(id, a.Tools.Success(cmd.Context(), callID, r))
			})
		},
	}
	c.Flags().StringVar(&result, "result", "", "result of the call, as JSON")
	c.Flags().StringVar(&errMsg, "error", "", "error message: the call failed")
	return c
}

func newToolsRecordCmd(id string) *cobra.Command {
	var started, completed, params, result, errMsg string
	c := &cobra.Command{
		Use:   "record NAME --started UNIX --completed UNIX",
		Short: "Record a finished call in one step and print its id",
		Long: `Record a call that has already finished. --started and --completed are
Unix times in seconds, with an optional fraction (1767366245.250), or
RFC 3339 times (2026-01-02T15:04:05.25Z). With --error the call is
recorded as failed, else as successful.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, f := range []string{"started", "completed"} {
				if !cmd.Flags().Changed(f) {
					return usageError(cmd, "--%s is required", f)
				}
			}
			start, err := parseTime(started)
			if err != nil {
				return usageError(cmd, "--started: %v", err)
			}
			end, err := parseTime(completed)
			if err != nil {
				return usageError(cmd, "--completed: %v", err)
			}
			if end.Before(start) {
				return usageError(cmd, "--completed is before --started")
			}
			p, err := jsonFlag(cmd, "params", params)
			if err != nil {
				return err
			}
			r, err := jsonFlag(cmd, "result", result)
			if err != nil {
				return err
			}
			var e *string
			if cmd.Flags().Changed("error") {
				if r != nil {
					return usageError(cmd, "give --result or --error, not both")
				}
				e = &errMsg
			}
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				callID, err := a.Tools.Record(cmd.Context(), args[0], start, end, p, r, e)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(cmd.OutOrStdout(), callID)
				return err
			})
		},
	}
	c.Flags().StringVar(&started, "started", "", "start time: Unix seconds (fraction allowed) or RFC 3339")
	c.Flags().StringVar(&completed, "completed", "", "end time: Unix seconds (fraction allowed) or RFC 3339")
	c.Flags().StringVar(&params, "params", "", "parameters of the call, as JSON")
	c.Flags().StringVar(&result, "result", "", "result of the call, as JSON")
	c.Flags().StringVar(&errMsg, "error", "", "error message: the call failed")
	return c
}

// parseTime reads Unix seconds with an optional decimal fraction (exact
// to the nanosecond) or an RFC 3339 time.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "/eE") {
		return time.Time{}, fmt.Errorf("%q is neither Unix seconds nor an RFC 3339 time", s)
	}
	ns := new(big.Rat).Mul(r, big.NewRat(1e9, 1))
	q := new(big.Int).Quo(ns.Num(), ns.Denom()) // truncates toward zero
	if !q.IsInt64() {
		return time.Time{}, fmt.Errorf("%q is out of range", s)
	}
	return time.Unix(0, q.Int64()), nil
}

package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfs-go/agentfs/core/sandbox"
)

// --- exec

type ExecInput struct {
	Command string            `json:"command" jsonschema:"a shell script (POSIX shell with bash extensions: pipes, redirections, &&, ||, loops, functions), run inside the engine over the agent filesystem"`
	Cwd     string            `json:"cwd,omitempty" jsonschema:"working directory in the agent filesystem"`
	Stdin   string            `json:"stdin,omitempty" jsonschema:"standard input of the script"`
	Env     map[string]string `json:"env,omitempty" jsonschema:"environment variables to add for this script"`
}

type ExecOutput struct {
	ExitCode   int    `json:"exit_code" jsonschema:"exit status: 0 for success, 127 for an unknown command, 124 when a limit stopped the script"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Cwd        string `json:"cwd" jsonschema:"working directory when the script ended"`
	Limit      string `json:"limit,omitempty" jsonschema:"the limit that stopped the script, if any"`
	DurationMs int64  `json:"duration_ms"`
}

func init() {
	define(spec[ExecInput, ExecOutput]{
		name: "exec", title: "Run a shell script", writes: true, destructive: true,
		desc: "Run a shell script in the agent's sandbox: a POSIX shell whose commands (ls, cat, grep, sed, awk, find, sort, head, wc, ...) are built into the engine and see only the agent filesystem; no host program runs and no host file is reachable. " +
			"Returns the exit code, stdout and stderr; a non-zero exit code is a normal result, not a tool error. Scripts run under the server's limits (commands, time, output).",
		defaults: map[string]any{"cwd": "/"},
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in ExecInput) (ExecOutput, error) {
			if strings.TrimSpace(in.Command) == "" {
				return ExecOutput{}, fmt.Errorf("EINVAL: empty command")
			}
			cwd := in.Cwd
			if cwd == "" {
				cwd = "/"
			}
			cwd, err := agentPath(cwd)
			if err != nil {
				return ExecOutput{}, err
			}
			opts := sandbox.ExecOptions{Dir: cwd, Env: in.Env}
			if in.Stdin != "" {
				opts.Stdin = strings.NewReader(in.Stdin)
			}
			res, err := s.sandbox.Exec(ctx, in.Command, opts)
			if err != nil {
				return ExecOutput{}, err
			}
			out := ExecOutput{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, Cwd: res.Dir, DurationMs: res.Duration.Milliseconds()}
			if res.Limit != nil {
				out.Limit = res.Limit.Error()
			}
			return out, nil
		},
		summary: func(in ExecInput, out ExecOutput) any {
			m := map[string]any{"exit_code": out.ExitCode, "stdout_bytes": len(out.Stdout), "stderr_bytes": len(out.Stderr)}
			if out.Limit != "" {
				m["limit"] = out.Limit
			}
			return m
		},
		// The log marks a failing script as an error, as the sandbox's
		// own audit does.
		logError: func(out ExecOutput) string {
			if out.ExitCode == 0 {
				return ""
			}
			msg := fmt.Sprintf("exit status %d", out.ExitCode)
			if out.Limit != "" {
				msg += ": " + out.Limit
			}
			return msg
		},
		available: func(s *Server) bool { return s.sandbox != nil },
	})
}

// newSandbox makes the sandbox of the exec tool, or nil (with a warning)
// when it cannot be made.
func (s *Server) newSandbox() *sandbox.Sandbox {
	opts := s.opts.Sandbox
	if opts.Limits == (sandbox.Limits{}) {
		opts.Limits = sandbox.Normal
	}
	// The call is logged as mcp:exec; a second record would repeat it.
	opts.NoAudit = true
	sb, err := sandbox.New(s.agent, opts)
	if err != nil {
		s.log.Warn("mcp: exec is not served", "error", err)
		return nil
	}
	return sb
}

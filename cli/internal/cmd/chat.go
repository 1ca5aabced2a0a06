package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/agenttools"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/session"
)

func init() { register(newChatCmd) }

func newChatCmd() *cobra.Command {
	var model, provider, baseURL, sessionID, prompt, system, profile string
	var maxTurns, maxTokens int
	var timeout time.Duration
	var readOnly, list bool
	var readable, writable, allow, deny []string
	c := &cobra.Command{
		Use:   "chat ID_OR_PATH [-p PROMPT]",
		Short: "Talk to a model whose tools work on the agent (an agent session inside the engine)",
		Long: `Run an agent session: a conversation with a model served over HTTP whose
tool calls (read_file, write_file, edit_file, list, search, bash, kv_get,
kv_set) run inside the engine on this agent. Text streams to standard
output as it arrives; each tool call is one line on standard error.

With -p, send PROMPT and exit. Without it, read prompts from a terminal,
one line each (Ctrl-D leaves, Ctrl-C stops the running prompt); when
standard input is not a terminal, all of it is one prompt.

Providers: openai (Chat Completions: OPENAI_API_KEY, OPENAI_BASE_URL,
default https://api.openai.com/v1; any compatible server such as a local
one) and anthropic (Messages API: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL).
The model comes from --model or AGENTFS_MODEL. The key is only sent to the
model server, never stored or printed.

The conversation is stored in the agent (resume it with --session S; a
new session's id is printed at the end), and every model turn and tool
call is in the timeline: agentfs timeline ID. See docs/SESSIONS.md.`,
		Example: `  agentfs chat my-agent --model gpt-4o-mini -p "create /src/hello.py and run it"
  agentfs chat my-agent --provider anthropic --model claude-sonnet-4-5 --session s-1a2b3c4d
  echo "summarise /notes" | agentfs chat my-agent --base-url http://127.0.0.1:11434/v1 --model llama3.2
  agentfs chat my-agent --writable /work --deny curl -p "refactor /work"
  agentfs chat my-agent --list`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeAgentFirst,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return readAgent(cmd, args[0], func(a *core.Agent) error {
					infos, err := session.List(cmd.Context(), a)
					if err != nil {
						return err
					}
					if len(infos) == 0 {
						fmt.Fprintln(cmd.ErrOrStderr(), "no sessions")
						return nil
					}
					tw := newTableWriter(cmd.OutOrStdout())
					fmt.Fprintln(tw, "SESSION\tPROVIDER\tMODEL\tMESSAGES\tUPDATED")
					for _, i := range infos {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", i.ID, i.Provider, i.Model, i.Messages, i.Updated.Local().Format(time.DateTime))
					}
					return tw.Flush()
				})
			}
			if provider != "" && provider != session.OpenAI && provider != session.Anthropic {
				return usageError(cmd, "--provider must be openai or anthropic, not %q", provider)
			}
			limits, err := sandbox.Profile(profile)
			if err != nil {
				return usageError(cmd, "--profile must be normal or hardened, not %q", profile)
			}
			if maxTurns < 0 || maxTokens < 0 || timeout < 0 {
				return usageError(cmd, "--max-turns, --max-tokens and --timeout must not be negative")
			}
			opts := session.Options{
				Provider: provider, Model: model, BaseURL: baseURL, System: system,
				MaxTurns: maxTurns, MaxTokens: maxTokens, Timeout: timeout,
				Tools: agenttools.Options{ReadOnly: readOnly, Limits: limits,
					Policy: sandbox.Policy{Readable: nilIfEmpty(readable), Writable: nilIfEmpty(writable), Allow: nilIfEmpty(allow), Deny: deny}},
			}
			in := cmd.InOrStdin()
			interactive := prompt == "" && isTerminalReader(in)
			if prompt == "" && !interactive {
				b, err := io.ReadAll(io.LimitReader(in, 16<<20))
				if err != nil {
					return err
				}
				prompt = strings.TrimSpace(string(b))
				if prompt == "" {
					return usageError(cmd, "no prompt: give -p PROMPT, or pipe it on standard input")
				}
			}
			return withAgent(cmd, args[0], core.Options{}, func(a *core.Agent) error {
				s, err := session.Open(cmd.Context(), a, sessionID, opts)
				if err != nil {
					return chatError(err)
				}
				ch := &chatPrinter{out: cmd.OutOrStdout(), errw: cmd.ErrOrStderr()}
				if !interactive {
					err = s.Prompt(cmd.Context(), prompt, ch.event)
				} else {
					err = chatLoop(cmd, s, ch)
				}
				if sessionID == "" && len(s.History()) > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "session %s (continue with: agentfs chat %s --session %s)\n", s.ID(), args[0], s.ID())
				}
				if err != nil {
					return chatError(err)
				}
				return nil
			})
		},
	}
	f := c.Flags()
	f.StringVar(&model, "model", "", "model name (default: the session's, or AGENTFS_MODEL)")
	f.StringVar(&provider, "provider", "", "openai or anthropic (default: the session's; anthropic when only ANTHROPIC_API_KEY is set)")
	f.StringVar(&baseURL, "base-url", "", "API base URL (default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the provider's)")
	f.StringVar(&sessionID, "session", "", "session to resume or create (default: a new one)")
	f.StringVarP(&prompt, "prompt", "p", "", "send this prompt and exit")
	f.StringVar(&system, "system", "", "system prompt of a new session")
	f.IntVar(&maxTurns, "max-turns", 0, fmt.Sprintf("model turns per prompt (default %d)", session.DefaultMaxTurns))
	f.IntVar(&maxTokens, "max-tokens", 0, fmt.Sprintf("output tokens per model turn (default %d)", session.DefaultMaxTokens))
	f.DurationVar(&timeout, "timeout", 0, fmt.Sprintf("time limit of one prompt (default %s)", session.DefaultTimeout))
	f.StringVar(&profile, "profile", "normal", "limits of bash and search: normal or hardened")
	f.BoolVar(&readOnly, "read-only", false, "offer only the tools that do not change the agent")
	f.StringSliceVar(&readable, "readable", nil, "path prefixes the tools may read (repeatable; default all)")
	f.StringSliceVar(&writable, "writable", nil, "path prefixes the tools may write (repeatable; default all)")
	f.StringSliceVar(&allow, "allow", nil, "commands bash may run (repeatable; default all)")
	f.StringSliceVar(&deny, "deny", nil, "commands bash may not run (repeatable)")
	f.BoolVar(&list, "list", false, "list the agent's stored sessions")
	return c
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// chatLoop reads prompts from the terminal, one line each.
func chatLoop(cmd *cobra.Command, s *session.Session, ch *chatPrinter) error {
	sc := bufio.NewScanner(cmd.InOrStdin())
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		fmt.Fprint(ch.errw, "> ")
		if !sc.Scan() {
			fmt.Fprintln(ch.errw)
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		// Ctrl-C stops this prompt, not the program.
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
		err := s.Prompt(ctx, line, ch.event)
		stop()
		if err != nil && !errors.Is(err, context.Canceled) {
			// The conversation goes on: the failed turn left the history
			// as it was.
			fmt.Fprintf(ch.errw, "agentfs: %s\n", chatError(err))
		}
	}
}

// chatPrinter writes a session's events: text as it streams, one line
// per tool call.
type chatPrinter struct {
	out, errw io.Writer
	midLine   bool
}

func (p *chatPrinter) event(e session.Event) {
	switch e.Type {
	case "text":
		fmt.Fprint(p.out, e.Text)
		p.midLine = !strings.HasSuffix(e.Text, "\n")
	case "tool_result":
		p.endLine()
		status := "ok"
		if e.IsError {
			var r struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(e.Result, &r)
			status = "error: " + r.Error
		} else if e.ToolName == "bash" {
			var r struct {
				ExitCode int `json:"exit_code"`
			}
			_ = json.Unmarshal(e.Result, &r)
			status = fmt.Sprintf("exit %d", r.ExitCode)
		}
		fmt.Fprintf(p.errw, "[%s %s] %s\n", e.ToolName, truncate(oneLine(string(e.Arguments)), 80), truncate(oneLine(status), 120))
	case "done":
		p.endLine()
	}
}

func (p *chatPrinter) endLine() {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
}

// chatError gives a session failure its next step.
func chatError(err error) error {
	var ue userError
	if errors.As(err, &ue) {
		return err
	}
	h := "check --base-url and --model; agentfs chat --help"
	switch {
	case errors.Is(err, syscall.EACCES):
		h = "set OPENAI_API_KEY or ANTHROPIC_API_KEY (the key is never stored)"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		h = "check --base-url (OPENAI_BASE_URL / ANTHROPIC_BASE_URL) and --model"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EAGAIN):
		h = "the model server failed; the conversation is kept up to the last complete turn: run the prompt again with --session"
	case errors.Is(err, syscall.E2BIG):
		h = "raise --max-turns, or continue with another prompt in the same --session"
	case errors.Is(err, syscall.ETIMEDOUT):
		h = "raise --timeout"
	case errors.Is(err, syscall.EBUSY):
		h = "wait for the running prompt of this session"
	}
	return userError{msg: err.Error(), hint: h}
}

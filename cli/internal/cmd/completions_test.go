package cmd

import (
	"strings"
	"testing"
)

func TestCompletions(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "# bash completion V2 for agentfs",
		"zsh":        "#compdef agentfs",
		"fish":       "# fish completion for agentfs",
		"powershell": "# powershell completion for agentfs",
	} {
		out := mustRun(t, "completions", shell)
		if !strings.HasPrefix(out, want) {
			t.Errorf("completions %s starts with %q, want %q", shell, out[:min(len(out), 60)], want)
		}
	}
	// The alias keeps cobra's usual name working (and replaces cobra's
	// default command, which would otherwise be listed as well).
	if out := mustRun(t, "completion", "fish"); !strings.HasPrefix(out, "# fish completion for agentfs") {
		t.Errorf("completion fish: %q", out[:min(len(out), 60)])
	}
	if help := mustRun(t, "--help"); !strings.Contains(help, "\n  completions ") || strings.Contains(help, "\n  completion ") {
		t.Errorf("agentfs --help should list completions and not cobra's default completion command:\n%s", help)
	}
	wantFail(t, 2, []string{"completions", "tcsh"}, `invalid argument "tcsh"`)
	wantFail(t, 2, []string{"completions"}, "accepts 1 arg(s)")
}

func TestDynamicCompletion(t *testing.T) {
	newAgent(t)
	mustRun(t, "init", "other")
	out := mustRun(t, "__complete", "fs", "")
	if !strings.HasPrefix(out, "other\nt\n") {
		t.Errorf("completing an agent id gave:\n%s", out)
	}
	out = mustRun(t, "__complete", "fs", "t", "im")
	if !strings.HasPrefix(out, "import\tCopy a host directory tree into the agent filesystem\n") {
		t.Errorf("completing a subcommand gave:\n%s", out)
	}
	out = mustRun(t, "__complete", "timeline", "t", "--status", "")
	if !strings.HasPrefix(out, "pending\nsuccess\nerror\n") {
		t.Errorf("completing --status gave:\n%s", out)
	}
}

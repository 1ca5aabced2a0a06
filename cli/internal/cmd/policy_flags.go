package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentfs-go/agentfs/core/rpc"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

// policyFlags are the path and command rules of the sandbox (sh and
// serve mcp), beside --env, --allow-net and --profile.
type policyFlags struct {
	read, write, allow, deny []string
	defaultDeny              bool
}

func addPolicyFlags(c *cobra.Command, pf *policyFlags) {
	c.Flags().StringArrayVar(&pf.read, "read", nil, "let scripts read below this absolute path prefix of the agent filesystem (repeatable); with none, everything is readable unless --default-deny")
	c.Flags().StringArrayVar(&pf.write, "write", nil, "let scripts write (and read) below this absolute path prefix (repeatable); with none, everything is writable unless --read or --default-deny")
	c.Flags().StringArrayVar(&pf.allow, "allow", nil, "let only these utilities run (repeatable; the shell's builtins always may unless denied)")
	c.Flags().StringArrayVar(&pf.deny, "deny", nil, "never run this command, builtins included (repeatable)")
	c.Flags().BoolVar(&pf.defaultDeny, "default-deny", false, "allow-lists only: nothing is readable, writable or runnable unless --read, --write or --allow lists it")
}

// apply sets the rules on p and validates the whole policy (EINVAL
// messages become usage errors).
func (pf *policyFlags) apply(cmd *cobra.Command, p *sandbox.Policy) error {
	p.DefaultDeny = pf.defaultDeny
	p.Allow, p.Deny = pf.allow, pf.deny
	if pf.read != nil || pf.write != nil {
		p.Readable, p.Writable = pf.read, pf.write
		if p.Writable == nil && p.Readable != nil {
			// --read alone: read-only.
			p.Writable = []string{}
		}
	}
	if err := p.Validate(); err != nil {
		return usageError(cmd, "%v", flagNames(err))
	}
	return nil
}

// flagNames says the policy error with the flags' names.
func flagNames(err error) error {
	pe, ok := err.(*sandbox.PolicyError)
	if !ok {
		return err
	}
	names := map[string]string{"readable": "--read", "writable": "--write", "allow": "--allow", "deny": "--deny", "env": "--env", "net": "--allow-net"}
	for k, v := range names {
		if len(pe.Field) >= len(k) && pe.Field[:len(k)] == k {
			if pe.Value != "" {
				return fmt.Errorf("%s %q: %s", v, pe.Value, pe.Msg)
			}
			return fmt.Errorf("%s: %s", v, pe.Msg)
		}
	}
	return err
}

// printPolicy writes the effective policy as JSON, the form the SDKs'
// policy() returns (agentfs.v1.EffectivePolicy, proto field names).
func printPolicy(cmd *cobra.Command, opts sandbox.Options, profile string) error {
	js, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(rpc.EffectivePolicy(opts, profile))
	if err != nil {
		return err
	}
	// protojson varies its spacing on purpose; print one stable form.
	var buf bytes.Buffer
	if err := json.Indent(&buf, js, "", "  "); err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), buf.String())
	return err
}

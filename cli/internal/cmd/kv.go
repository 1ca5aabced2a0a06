package cmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/kv"
)

func init() { register(newKVCmd) }

func newKVCmd() *cobra.Command {
	return newGroupCmd("kv", "Read and change the key-value store of an agent",
		`Read and change the key-value store of an agent: string keys, JSON values.

  agentfs kv my-agent set step 3
  agentfs kv my-agent set user '{"name": "Ada"}'
  agentfs kv my-agent set note hello        (stored as the string "hello")
  agentfs kv my-agent get user
  agentfs kv my-agent ls --prefix user`,
		func(id string) []*cobra.Command {
			return []*cobra.Command{newKVGetCmd(id), newKVSetCmd(id), newKVRmCmd(id), newKVLsCmd(id)}
		})
}

func keyNotFound(id, key string) error {
	return userError{msg: fmt.Sprintf("key not found: %q", key), hint: fmt.Sprintf("list keys with: agentfs kv %s ls", id)}
}

func newKVGetCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "get KEY",
		Short: "Print the JSON value of a key",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readAgent(cmd, id, func(a *core.Agent) error {
				v, err := a.KV.GetJSON(cmd.Context(), args[0])
				if errors.Is(err, kv.ErrNotFound) {
					return keyNotFound(id, args[0])
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", v)
				return err
			})
		},
	}
}

// kvValue is the JSON to store for a command-line VALUE: the value itself
// when it is valid JSON (unless asString), else a JSON string.
func kvValue(value string, asString bool) []byte {
	if !asString && json.Valid([]byte(value)) {
		return []byte(value)
	}
	b, _ := json.Marshal(value) // a string always encodes
	return b
}

func newKVSetCmd(id string) *cobra.Command {
	var asString bool
	c := &cobra.Command{
		Use:   "set [--string] KEY VALUE",
		Short: "Set a key; VALUE is JSON, or else stored as a string",
		Long: `Set KEY to VALUE. VALUE is stored as JSON when it is valid JSON (3, true,
null, "text", [1,2], {"a":1}); anything else is stored as a JSON string.
--string always stores VALUE as a string (so that "3" stays text). Flags
come before KEY: after it, everything is the key and the value, so that
"agentfs kv ID set n -1" stores -1.`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				return a.KV.SetJSON(cmd.Context(), args[0], kvValue(args[1], asString))
			})
		},
	}
	c.Flags().BoolVar(&asString, "string", false, "store VALUE as a JSON string even if it parses as JSON")
	c.Flags().SetInterspersed(false)
	return c
}

func newKVRmCmd(id string) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "rm KEY...",
		Short: "Remove keys",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				for _, key := range args {
					existed, err := a.KV.Delete(cmd.Context(), key)
					if err != nil {
						return err
					}
					if !existed && !force {
						return keyNotFound(id, key)
					}
				}
				return nil
			})
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "ignore missing keys")
	return c
}

func newKVLsCmd(id string) *cobra.Command {
	var prefix string
	var asJSON bool
	c := &cobra.Command{
		Use:   "ls",
		Short: "List keys and values (key<TAB>value)",
		Long: `List keys in order with their JSON values, one "key<TAB>value" line each;
--json prints an array of {key, value, created_at, updated_at}.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readAgent(cmd, id, func(a *core.Agent) error {
				entries, err := a.KV.List(cmd.Context(), prefix, 0)
				if err != nil {
					return err
				}
				w := bufio.NewWriter(cmd.OutOrStdout())
				if asJSON {
					if entries == nil {
						entries = []kv.Entry{}
					}
					enc := json.NewEncoder(w)
					enc.SetEscapeHTML(false)
					enc.SetIndent("", "  ")
					if err := enc.Encode(entries); err != nil {
						return err
					}
				} else {
					for _, e := range entries {
						// A tab or newline in a key would split the
						// line: keys are quoted as fs ls quotes names
						// (--json has them exact).
						fmt.Fprintf(w, "%s\t%s\n", quoteName(e.Key), e.Value)
					}
				}
				return w.Flush()
			})
		},
	}
	c.Flags().StringVar(&prefix, "prefix", "", "only keys starting with this prefix")
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return c
}

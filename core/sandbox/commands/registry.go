// Package commands holds the utilities of the in-process sandbox: cat, ls,
// grep, sed, awk, jq and the rest, each implemented in Go over the agent
// filesystem. Nothing here starts a host process or opens a host file: a
// command sees the world only through its Cmd (arguments, working
// directory, environment, standard streams and an FS).
//
// Each command (or small family) lives in its own file and registers
// itself from an init function; the sandbox looks names up in Default.
package commands

import (
	"sort"
	"sync"
)

// Func runs one command and returns its exit status.
type Func func(c *Cmd) int

// Command is one registered utility.
type Command struct {
	Name  string
	Usage string // one line: options understood
	Run   Func
}

// Registry maps command names to implementations.
type Registry struct {
	mu   sync.RWMutex
	cmds map[string]Command
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{cmds: map[string]Command{}} }

// Register adds or replaces a command.
func (r *Registry) Register(c Command) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds[c.Name] = c
}

// Lookup finds a command by name.
func (r *Registry) Lookup(name string) (Command, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.cmds[name]
	return c, ok
}

// Names lists the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.cmds))
	for n := range r.cmds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Clone returns a copy that can be extended without touching r.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := NewRegistry()
	for k, v := range r.cmds {
		n.cmds[k] = v
	}
	return n
}

// Default holds every built-in command.
var Default = NewRegistry()

func register(name, usage string, run Func) {
	Default.Register(Command{Name: name, Usage: usage, Run: run})
}

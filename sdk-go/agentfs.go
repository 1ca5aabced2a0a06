// Package agentfs is the Go SDK of AgentFS: the engine in-process, no
// child process and no server. It opens an agent database by id (stored in
// .agentfs/ID.db, as agentfs-sdk does) or by path.
//
// The filesystem, key-value store and tool-call log are the engine's own
// types; see github.com/agentfs-go/agentfs/core for the full API.
package agentfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// Options choose the database to open. Set ID, Path, or neither (a new
// database in a temporary directory, removed by Close).
type Options struct {
	ID   string // agent id: letters, digits, "_" and "-"; stored as .agentfs/ID.db
	Path string // database file path; takes precedence over ID
	// Engine options (durability, chunk size, owner of new files).
	Engine core.Options
}

// AgentFS is an open agent database.
type AgentFS struct {
	agent   *core.Agent
	tempDir string

	FS    *vfs.FS
	KV    *kv.Store
	Tools *toolcalls.Log
}

// Open opens or creates an agent database.
func Open(ctx context.Context, opts Options) (*AgentFS, error) {
	path, temp := opts.Path, ""
	switch {
	case path != "":
	case opts.ID != "":
		if !core.ValidID(opts.ID) {
			return nil, fmt.Errorf("agentfs: invalid id %q: use letters, digits, '_' and '-'", opts.ID)
		}
		path = core.PathForID(opts.ID)
	default:
		dir, err := os.MkdirTemp("", "agentfs-")
		if err != nil {
			return nil, err
		}
		temp, path = dir, filepath.Join(dir, "agent.db")
	}
	eo := opts.Engine
	eo.Create = true
	a, err := core.Open(ctx, path, eo)
	if err != nil {
		if temp != "" {
			os.RemoveAll(temp)
		}
		return nil, err
	}
	return &AgentFS{agent: a, tempDir: temp, FS: a.FS, KV: a.KV, Tools: a.Tools}, nil
}

// Path is the database file.
func (a *AgentFS) Path() string { return a.agent.Path() }

// Engine gives the underlying engine handle (snapshots, fsck, SQL).
func (a *AgentFS) Engine() *core.Agent { return a.agent }

// Close closes the database (and removes it when it was temporary).
func (a *AgentFS) Close() error {
	err := a.agent.Close()
	if a.tempDir != "" {
		err = errors.Join(err, os.RemoveAll(a.tempDir))
	}
	return err
}

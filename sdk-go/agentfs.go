// Package agentfs is the Go SDK of AgentFS: one SQLite file holding an
// agent's filesystem, key-value store and tool-call log.
//
// Open runs the engine in-process (no child process, no server); Dial
// talks to a remote `agentfs serve http`. Both return an Agent, so code
// can switch between them. NewIOFS wraps an agent's filesystem as an io/fs.FS.
package agentfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/rpc"
	agentsync "github.com/agentfs-go/agentfs/core/sync"
)

// Options choose the database to open. Set ID, Path, or neither (a new
// database in a temporary directory, removed by Close).
type Options struct {
	ID   string // agent id: 1 to 128 letters, digits, "_" and "-"; stored as .agentfs/ID.db
	Path string // database file path; takes precedence over ID
	// Engine options (durability, chunk size, owner of new files,
	// encryption at rest).
	Engine core.Options
	// SyncRemoteURL names the agent's sync remote (docs/SYNC.md): a
	// database that does not exist yet is bootstrapped from it; an
	// existing one must be synced with it already. Then Pull, Push, Sync
	// and SyncStats reach it.
	SyncRemoteURL string
	// SyncToken is the sync remote's bearer token (default:
	// TURSO_DB_AUTH_TOKEN).
	SyncToken string
	// SyncPartial makes the bootstrap from SyncRemoteURL partial
	// (docs/SYNC.md; `agentfs init --sync-partial-*`): only the first
	// BootstrapLength bytes of the remote, or the pages the server reads
	// to run BootstrapQuery, come at once; the pages the database lacks
	// are fetched when read, SegmentSize bytes at a time (default
	// 131072), with Prefetch also the pages a fetched b-tree page points
	// to. Used only when the database is bootstrapped.
	SyncPartial *agentsync.Partial
}

// AgentFS is an agent database open in this process. It implements Agent.
type AgentFS struct {
	agent   *core.Agent
	tempDir string
	fs      *localFS
	kv      *localKV
	tools   *localTools
	sync    agentsync.Options
	execer
	sessions

	mmu    sync.Mutex
	mounts map[*Mount]struct{} // MountSandbox's mounts not unmounted yet
}

var _ Agent = (*AgentFS)(nil)

// Open opens or creates an agent database in this process.
func Open(ctx context.Context, opts Options) (*AgentFS, error) {
	path, temp := opts.Path, ""
	switch {
	case path != "":
	case opts.ID != "":
		if err := core.CheckID(opts.ID); err != nil {
			return nil, fmt.Errorf("agentfs: %w", err)
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
	so := agentsync.Options{Token: opts.SyncToken, Encryption: eo.Encryption}
	if so.Token == "" {
		so.Token = os.Getenv("TURSO_DB_AUTH_TOKEN")
	}
	if opts.SyncPartial != nil && opts.SyncRemoteURL == "" {
		if temp != "" {
			os.RemoveAll(temp)
		}
		return nil, errors.New("agentfs: Options.SyncPartial without Options.SyncRemoteURL: a partial bootstrap is of a sync remote (EINVAL)")
	}
	if opts.SyncRemoteURL != "" {
		if temp != "" {
			os.RemoveAll(temp)
			return nil, errors.New("agentfs: a sync remote needs Options.ID or Options.Path (a temporary database is not synced)")
		}
		po := so
		po.Partial = opts.SyncPartial
		if po.Partial != nil {
			if err := po.Partial.Check(); err != nil {
				return nil, fmt.Errorf("agentfs: Options.SyncPartial: %w", err)
			}
		}
		if err := agentsync.Prepare(ctx, path, opts.SyncRemoteURL, po, eo); err != nil {
			return nil, fmt.Errorf("agentfs: %w", err)
		}
	}
	a, err := core.Open(ctx, path, eo)
	if err != nil {
		if temp != "" {
			os.RemoveAll(temp)
		}
		return nil, err
	}
	binds := &bindingTable{fns: map[string]*boundFn{}}
	sess := rpc.NewSession(a, opts.ID, binds)
	svc := &rpc.Service{Version: core.Version}
	return &AgentFS{
		agent: a, tempDir: temp,
		fs:       &localFS{f: a.FS},
		kv:       &localKV{s: a.KV},
		tools:    &localTools{l: a.Tools},
		sync:     so,
		execer:   execer{c: localProcs{svc: svc, sess: sess}, mapErr: localErr, binds: binds, session: sess},
		sessions: sessions{sc: localSessions{svc: svc, sess: sess}, mapErr: localErr},
	}, nil
}

// FS is the agent's filesystem.
func (a *AgentFS) FS() FileSystem { return a.fs }

// KV is the agent's key-value store.
func (a *AgentFS) KV() KVStore { return a.kv }

// Tools is the agent's tool-call log.
func (a *AgentFS) Tools() ToolLog { return a.tools }

// Path is the database file.
func (a *AgentFS) Path() string { return a.agent.Path() }

// Engine gives the underlying engine handle (snapshots, fsck, SQL, the
// full filesystem API with inode-level calls and extended attributes).
func (a *AgentFS) Engine() *core.Agent { return a.agent }

// Close closes the database (and removes it when it was temporary).
func (a *AgentFS) Close() error {
	// Running scripts stop, and mounts end, before the database closes.
	a.session.CloseProcs()
	a.session.CloseAgentSessions()
	err := errors.Join(a.unmountAll(), a.agent.Close())
	if a.tempDir != "" {
		err = errors.Join(err, os.RemoveAll(a.tempDir))
	}
	return err
}

// SyncPullResult says what a pull did (rows applied, rows of the remote
// not applied because this side changed the same thing).
type SyncPullResult = agentsync.PullResult

// SyncPushResult says what a push did.
type SyncPushResult = agentsync.PushResult

// SyncStats is the sync state, with the field names of Turso's sync
// statistics.
type SyncStats = agentsync.Stats

// Pull brings the sync remote's changes into the agent; rows both sides
// changed keep this side's version (docs/SYNC.md, "Conflicts"). The agent
// must have been created with a sync remote (Options.SyncRemoteURL, or
// agentfs init --sync-remote-url).
func (a *AgentFS) Pull(ctx context.Context) (SyncPullResult, error) {
	return agentsync.Pull(ctx, a.agent.Path(), a.sync)
}

// Push sends the agent's changes to the sync remote, after merging the
// remote's.
func (a *AgentFS) Push(ctx context.Context) (SyncPushResult, error) {
	return agentsync.Push(ctx, a.agent.Path(), a.sync)
}

// Sync pulls, then pushes.
func (a *AgentFS) Sync(ctx context.Context) (SyncPullResult, SyncPushResult, error) {
	return agentsync.Sync(ctx, a.agent.Path(), a.sync)
}

// SyncStats reports the sync state.
func (a *AgentFS) SyncStats(ctx context.Context) (SyncStats, error) {
	return agentsync.GetStats(ctx, a.agent.Path(), a.sync)
}

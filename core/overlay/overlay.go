package overlay

import (
	"context"

	"github.com/agentfs-go/agentfs/core"
)

// Create makes a new overlay database at dbPath over the host directory
// base and opens it (core.Open with Create and Base).
func Create(ctx context.Context, dbPath, base string, opts core.Options) (*core.Agent, error) {
	opts.Create = true
	opts.Base = base
	return core.Open(ctx, dbPath, opts)
}

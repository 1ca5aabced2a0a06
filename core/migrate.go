package core

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/store"
)

// MigrationResult tells what Migrate did or would do.
type MigrationResult struct {
	From   schema.Info
	Steps  []schema.Step
	Backup string // copy of the database taken before migrating
}

// Migrate brings the database at path to the current layout in one
// transaction, after saving a backup copy next to it. With dryRun it only
// reports the steps.
func Migrate(ctx context.Context, path string, dryRun bool) (*MigrationResult, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, &fs.PathError{Op: "migrate", Path: path, Err: syscall.ENOENT}
	}
	db, err := store.Open(ctx, path, store.Options{ReadOnly: dryRun})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res := &MigrationResult{}
	err = db.Do(ctx, func(c *store.Conn) error {
		var err error
		res.From, err = schema.Inspect(c)
		return err
	})
	if err != nil {
		return nil, err
	}
	if res.From.AgentFSVersion == "" {
		return nil, fmt.Errorf("migrate %s: the file holds no AgentFS database", path)
	}
	res.Steps, err = schema.Plan(res.From)
	if err != nil || dryRun || len(res.Steps) == 0 {
		return res, err
	}
	res.Backup = fmt.Sprintf("%s.pre-migrate-%s.bak", path, time.Now().UTC().Format("20060102T150405Z"))
	if err := db.CopyTo(ctx, res.Backup); err != nil {
		return nil, fmt.Errorf("migrate %s: backup failed, nothing changed: %w", path, err)
	}
	err = db.Write(ctx, func(c *store.Conn) error { return schema.Apply(c, res.Steps) })
	return res, err
}

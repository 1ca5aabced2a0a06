package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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

// MigrateOptions are the options of Migrate.
type MigrateOptions struct {
	// DryRun only reports the steps.
	DryRun bool
	// Encryption is the key and cipher of an encrypted database (the
	// backup copy is encrypted with them too).
	Encryption *store.Encryption
}

// Migrate brings the database at path to the current layout in one
// transaction, after saving a backup copy next to it.
func Migrate(ctx context.Context, path string, opts MigrateOptions) (*MigrationResult, error) {
	dryRun := opts.DryRun
	if err := store.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &fs.PathError{Op: "migrate", Path: path, Err: syscall.ENOENT}
		}
		return nil, statError(path, err)
	}
	// Plan through a read-only connection: a file that is no AgentFS
	// database, or needs nothing, is never opened for writing.
	res, err := planMigration(ctx, path, true, opts.Encryption)
	if err != nil || dryRun || len(res.Steps) == 0 {
		return res, err
	}
	db, err := store.Open(ctx, path, store.Options{Encryption: opts.Encryption})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// Again under the writable connection: the file may have changed.
	if res, err = inspectPlan(ctx, db, path); err != nil || len(res.Steps) == 0 {
		return res, err
	}
	res.Backup = fmt.Sprintf("%s.pre-migrate-%s.bak", path, time.Now().UTC().Format("20060102T150405Z"))
	if err := db.CopyTo(ctx, res.Backup); err != nil {
		return nil, fmt.Errorf("migrate %s: backup failed, nothing changed: %w", path, err)
	}
	err = db.Write(ctx, func(c *store.Conn) error { return schema.Apply(c, res.Steps) })
	return res, err
}

func planMigration(ctx context.Context, path string, readOnly bool, enc *store.Encryption) (*MigrationResult, error) {
	db, err := store.Open(ctx, path, store.Options{ReadOnly: readOnly, Readers: 1, Encryption: enc})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return inspectPlan(ctx, db, path)
}

func inspectPlan(ctx context.Context, db *store.DB, path string) (*MigrationResult, error) {
	res := &MigrationResult{}
	err := db.Do(ctx, func(c *store.Conn) error {
		var err error
		res.From, err = schema.Inspect(c)
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case res.From.AgentFSVersion == "" && res.From.OtherTables:
		return nil, fmt.Errorf("migrate %s: %w: it holds another application's tables", path, ErrNotAgentFS)
	case res.From.AgentFSVersion == "":
		return nil, fmt.Errorf("migrate %s: %w: it is empty", path, ErrNotAgentFS)
	}
	res.Steps, err = schema.Plan(res.From)
	return res, err
}

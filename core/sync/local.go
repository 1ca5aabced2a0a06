//go:build cgo

package sync

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentfs-go/agentfs/core/internal/sqlite"
)

// openLocal opens the local database for the sync client's own SQL.
func openLocal(path string, o Options) (*sql.DB, error) {
	if o.Encryption != nil {
		return nil, fmt.Errorf("sync of an encrypted database: %w", errors.ErrUnsupported)
	}
	return sql.Open(sqlite.DriverName, path)
}

// baseURI names a base file (or its new version) for ATTACH.
func baseURI(path string, o Options) string { return immutableURI(path) }

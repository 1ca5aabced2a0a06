//go:build !cgo

package sync

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/agentfs-go/agentfs/core"
)

// ErrNeedsCgo: sync reads and writes the agent's SQLite pages and the
// server speaks SQL over HTTP through the cgo SQLite driver, which this
// build (CGO_ENABLED=0) does not have. It wraps ENOTSUP.
var ErrNeedsCgo = fmt.Errorf("sync needs the agentfs built with cgo (CGO_ENABLED=1 on linux or macOS): this build has no cgo SQLite driver: %w", errors.ErrUnsupported)

// Bootstrap fails with ErrNeedsCgo in a build without cgo.
func Bootstrap(ctx context.Context, path, rawURL string, o Options, opts core.Options) error {
	return ErrNeedsCgo
}

// ReadMeta fails with ErrNeedsCgo in a build without cgo.
func ReadMeta(path string) (*Meta, error) { return nil, ErrNeedsCgo }

// Pull fails with ErrNeedsCgo in a build without cgo.
func Pull(ctx context.Context, path string, o Options) (PullResult, error) {
	return PullResult{}, ErrNeedsCgo
}

// Push fails with ErrNeedsCgo in a build without cgo.
func Push(ctx context.Context, path string, o Options) (PushResult, error) {
	return PushResult{}, ErrNeedsCgo
}

// Checkpoint fails with ErrNeedsCgo in a build without cgo.
func Checkpoint(ctx context.Context, path string, o Options) error { return ErrNeedsCgo }

// GetStats fails with ErrNeedsCgo in a build without cgo.
func GetStats(ctx context.Context, path string, o Options) (Stats, error) {
	return Stats{}, ErrNeedsCgo
}

// Server is the sync server; a build without cgo has none (its fields
// are those of the cgo build's, so callers compile either way).
type Server struct {
	MaxRequestBytes int64
	Log             *log.Logger
	HistoryBytes    int64
}

// NewServer fails with ErrNeedsCgo in a build without cgo.
func NewServer(dir string) (*Server, error) { return nil, ErrNeedsCgo }

// Handler is never reached: NewServer fails first.
func (s *Server) Handler() http.Handler { return http.NotFoundHandler() }

// Close does nothing.
func (s *Server) Close() error { return nil }

func setPartialToken(path, token string) {}

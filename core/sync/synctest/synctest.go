//go:build cgo

// Package synctest starts the engine's sync server (the one `agentfs
// serve sync` runs) on a loopback port for the length of a test.
package synctest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	agentsync "github.com/agentfs-go/agentfs/core/sync"
)

// Start serves a new sync server over a temporary data directory, wrapped
// by wrap when it is not nil (a token check, a fault), until the test
// ends, and returns its base URL: an agent syncs with BASE/ID.
func Start(t testing.TB, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	srv, err := agentsync.NewServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return hs.URL
}

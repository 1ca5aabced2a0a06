//go:build !cgo

package cmd

import "testing"

// Without cgo there is no sync: each sync command says so in one line
// and touches nothing.
func TestSyncNeedsCgo(t *testing.T) {
	newAgent(t)
	wantFail(t, 1, []string{"sync", "t", "pull"}, "sync needs the agentfs built with cgo")
	wantFail(t, 1, []string{"init", "s", "--sync-remote-url", "http://127.0.0.1:1/s"}, "sync needs the agentfs built with cgo")
}

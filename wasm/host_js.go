//go:build js && agentfs_workers

package main

import (
	"syscall/js"

	"github.com/agentfs-go/agentfs/core/store"
)

// databaseFuncs of the Workers build: a database is the SQL storage of
// the host (a Durable Object), reached through a JavaScript object (see
// store.AttachHost):
//
//	attach(path, {exec, tx})   Open(path) uses this host's SQL storage
//	detach(path)               forget it (after the agent is closed)
var databaseFuncs = map[string]func(args []js.Value) any{"attach": attach, "detach": detach}

func attach(args []js.Value) any {
	store.AttachHost(args[0].String(), args[1])
	return nil
}

func detach(args []js.Value) any {
	store.DetachHost(args[0].String())
	return nil
}

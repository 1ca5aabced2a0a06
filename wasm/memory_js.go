//go:build js && !agentfs_workers

package main

import (
	"context"
	"syscall/js"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
)

// databaseFuncs of the in-memory build (SQLite compiled in, databases in
// memory):
//
//	load(path, bytes, wal?)          the database at path is these bytes (with its -wal's committed transactions)
//	save(path) -> bytes              the bytes of the database at path (encrypted as stored, for an encrypted one)
//	drop(path)                       forget the database at path
var databaseFuncs = map[string]func(args []js.Value) any{"load": load, "save": save, "drop": drop}

func load(args []js.Value) any {
	db := bytesOf(args[1])
	if len(args) > 2 && store.Encrypted(db) {
		// Its log's checksums are over plain pages: applied at the
		// open that brings the key.
		store.LoadMemoryWAL(args[0].String(), db, bytesOf(args[2]))
		return nil
	}
	if len(args) > 2 {
		var err error
		if db, err = store.ApplyWAL(db, bytesOf(args[2])); err != nil {
			return errorValue(err)
		}
	}
	store.LoadMemory(args[0].String(), db)
	return nil
}

// save answers the bytes of the database at path, or an errorValue
// (ENOENT for a database that is not there).
func save(args []js.Value) any {
	path := args[0].String()
	if store.EncryptedMemory(path) {
		// The stored bytes are the encrypted file the native engine
		// opens with the key; SQLite's own copy would be the plain pages.
		b, err := store.RawMemory(path)
		if err != nil {
			return errorValue(err)
		}
		return jsBytes(b, nil)
	}
	a, err := core.Open(context.Background(), path, core.Options{ReadOnly: true})
	if err != nil {
		return errorValue(err)
	}
	defer a.Close()
	b, err := a.DB.Serialize(context.Background())
	if err != nil {
		return errorValue(err)
	}
	return jsBytes(b, nil)
}

func drop(args []js.Value) any {
	store.DropMemory(args[0].String())
	return nil
}

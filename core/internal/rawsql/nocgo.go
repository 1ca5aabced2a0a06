//go:build !cgo || js

package rawsql

import _ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"

const driverName = "sqlite3"

//go:build cgo && !js

package rawsql

import "github.com/agentfs-go/agentfs/core/internal/sqlite"

const driverName = sqlite.DriverName

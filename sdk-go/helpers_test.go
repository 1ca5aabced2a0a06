package agentfs_test

import (
	"time"

	"github.com/agentfs-go/agentfs/core/toolcalls"
)

func toolcallsFilterSince(d time.Duration) toolcalls.Filter {
	return toolcalls.Filter{Since: time.Now().Add(-d)}
}

//go:build !unix

package commands

import "time"

// cpuTimes has no source outside unix: time reports 0 for user and sys.
func cpuTimes() (user, sys time.Duration, ok bool) { return 0, 0, false }

//go:build !linux && !darwin

package cmd

import (
	"os"
	"time"
)

// hostAtime is the access time of a host file; unknown here, so the
// modification time stands in.
func hostAtime(fi os.FileInfo) time.Time { return fi.ModTime() }

// lchtimes would set the times of a symlink itself; not supported here.
func lchtimes(string, time.Time, time.Time) error { return nil }

package vfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// A tree copied into the agent (fs import of a directory, fs cp -r) to a
// destination that does not exist yet is built in a hidden staging
// directory next to it and renamed into place at the end, in one
// transaction: a failure removes the staging directory, so the
// destination is there whole or not at all. A copy killed midway leaves
// the staging directory; the next tree copy into the same directory
// removes those of processes that are gone. Into an existing directory
// the trees merge, each file replaced atomically; a failure then says
// what was written.

// StagePrefix starts the names of StageTree's staging directories:
// .agentfs-tmp-PID-RANDOM.
const StagePrefix = ".agentfs-tmp-"

// StageTree runs build to make the tree dst: into a staging directory
// renamed to dst at the end when dst does not exist, into dst itself when
// it is an existing directory. counts reports what build has written so
// far, for the error of a failed merge.
func (f *FS) StageTree(ctx context.Context, dst string, build func(target string) error, counts func() string) error {
	_, err := f.Lstat(ctx, dst)
	switch {
	case err == nil:
		if err := build(dst); err != nil {
			return fmt.Errorf("%w\nstopped there: %s were written into the existing %s before the failure (each file whole, old or new); the rest was not copied", err, counts(), dst)
		}
		return nil
	case Errno(err) != syscall.ENOENT || dst == "/":
		return err
	}
	parent := path.Dir(dst)
	if err := f.MkdirAll(ctx, parent, 0o755); err != nil {
		return err
	}
	f.removeStaleStaging(ctx, parent)
	var rnd [6]byte
	rand.Read(rnd[:])
	stage := path.Join(parent, StagePrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:]))
	if err := build(stage); err != nil {
		if rerr := f.RemoveAll(ctx, stage); rerr != nil {
			return fmt.Errorf("%w\nnothing was written to %s, but the partial copy in %s could not be removed: %v", err, dst, stage, rerr)
		}
		return fmt.Errorf("%w\nnothing was written to %s (the partial copy was removed)", err, dst)
	}
	if err := f.Rename2(ctx, stage, dst, RenameNoReplace); err != nil {
		f.RemoveAll(ctx, stage)
		return fmt.Errorf("%w\nnothing was written to %s (it appeared during the copy)", err, dst)
	}
	return nil
}

// removeStaleStaging removes the staging directories in dir of processes
// that no longer run (a copy killed midway).
func (f *FS) removeStaleStaging(ctx context.Context, dir string) {
	names, err := f.Readdir(ctx, dir)
	if err != nil {
		return
	}
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, StagePrefix)
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 {
			continue
		}
		if !processAlive(pid) {
			f.RemoveAll(ctx, path.Join(dir, n))
		}
	}
}

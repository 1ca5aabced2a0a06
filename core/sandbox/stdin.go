package sandbox

import (
	"io"
	"os"

	"github.com/agentfs-go/agentfs/core/sandbox/commands"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// For "cmd < file" the interpreter turns any reader that is not an
// *os.File into a host pipe it feeds itself, so a command would see a
// pipe where GNU tools see the file (wc sizes its columns from it). The
// open handler makes that pipe itself, remembers which agent file feeds
// it, and dispatch gives the command a stdin that answers Stat with the
// file's attributes. No host file is involved: only the pipe the
// interpreter would have made anyway.

// maxStdinFiles bounds the remembered pipes of one Exec.
const maxStdinFiles = 1024

// reserveFeeder counts a "< f" open in feeders before the file is opened;
// false once stopFeeders has run. The caller's stdinPipe (or its failed
// open) releases the reservation.
func (st *execState) reserveFeeder() bool {
	st.stdinMu.Lock()
	defer st.stdinMu.Unlock()
	if st.feedStopped {
		return false
	}
	st.feeders.Add(1)
	return true
}

// stdinPipe returns a host pipe fed from f, or f itself when f is not a
// regular file or no pipe can be made (js/wasm). It takes over the
// reservation of reserveFeeder.
func (st *execState) stdinPipe(f commands.File) io.ReadWriteCloser {
	vs, err := f.Stat()
	if err != nil || !vs.IsRegular() {
		st.feeders.Done()
		return f
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		st.feeders.Done()
		return f
	}
	key, ok := pipeKey(pr)
	if !ok {
		pr.Close()
		pw.Close()
		st.feeders.Done()
		return f
	}
	st.stdinMu.Lock()
	if st.stdinFiles == nil || len(st.stdinFiles) >= maxStdinFiles {
		st.stdinFiles = map[uint64]vfs.Stat{}
	}
	st.stdinFiles[key] = vs
	st.feedEnds = append(st.feedEnds, pr)
	stopped := st.feedStopped
	st.stdinMu.Unlock()
	if stopped {
		// Reserved before stopFeeders, piped after it listed the reading
		// ends: end this one here (the feeder then stops with EPIPE).
		pr.Close()
	}
	go func() {
		defer st.feeders.Done()
		// Ends at the file's end, or with EPIPE once the interpreter
		// closes the reading end after the command.
		io.Copy(pw, f)
		pw.Close()
		f.Close()
	}()
	return pr
}

// stopFeeders closes the reading ends the interpreter has not closed (a
// background job stopped with its Exec) and waits for every feeder to
// close its agent file. Before this, a file read through "< f" could
// still be open, and be closed, after Exec returned: a later operation
// then raced that Close (a removal saw the file open and left its
// purge to that Close).
func (st *execState) stopFeeders() {
	st.stdinMu.Lock()
	st.feedStopped = true
	ends := st.feedEnds
	st.feedEnds = nil
	st.stdinMu.Unlock()
	for _, pr := range ends {
		pr.Close() // already closed after its command: an error, ignored
	}
	st.feeders.Wait()
}

// stdinFile is the stdin a command gets: r, with the attributes of the
// agent file that feeds it when there is one.
func (st *execState) stdinFile(r *os.File) io.Reader {
	key, ok := pipeKey(r)
	if !ok {
		return r
	}
	st.stdinMu.Lock()
	vs, ok := st.stdinFiles[key]
	st.stdinMu.Unlock()
	if !ok {
		return r
	}
	return fileStdin{Reader: r, st: vs}
}

type fileStdin struct {
	io.Reader
	st vfs.Stat
}

func (f fileStdin) Stat() (vfs.Stat, error) { return f.st, nil }

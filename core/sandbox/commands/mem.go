package commands

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// Mem is the memory budget of one run, shared by every command of it.
// Commands reserve what they hold (lines to sort, a file read whole, a
// sed hold space) before they hold it; a reservation past the budget
// stops the run. It counts what the commands declare, which is most of
// what they can hold; the sandbox backs it with a watch of the process
// heap for what nobody declares (shell variables, awk and jq values).
//
// A nil *Mem is no budget: every call succeeds.
type Mem struct {
	max  int64
	used atomic.Int64
	// exceeded is called once the budget is passed; it stops the run.
	exceeded func()
}

// NewMem is a budget of max bytes (0: none) that calls exceeded when a
// reservation would pass it.
func NewMem(max int64, exceeded func()) *Mem {
	return &Mem{max: max, exceeded: exceeded}
}

// ErrMemory is what a reservation past the budget returns: the run is
// being stopped by its memory limit, and the command should stop quietly
// (IsWriteStop reports it, like a closed output).
var ErrMemory = fmt.Errorf("%w: memory limit", ErrStop)

// Max is the budget in bytes (0: none).
func (m *Mem) Max() int64 {
	if m == nil {
		return 0
	}
	return m.max
}

// Used is what is reserved now.
func (m *Mem) Used() int64 {
	if m == nil {
		return 0
	}
	return m.used.Load()
}

// reserve takes n more bytes, or fails with ErrMemory and stops the run.
func (m *Mem) reserve(n int64) error {
	if m == nil || n <= 0 {
		return nil
	}
	if m.max <= 0 {
		m.used.Add(n)
		return nil
	}
	if m.used.Add(n) > m.max {
		m.used.Add(-n)
		if m.exceeded != nil {
			m.exceeded()
		}
		return ErrMemory
	}
	return nil
}

func (m *Mem) release(n int64) {
	if m != nil && n > 0 {
		m.used.Add(-n)
	}
}

// Check reports whether n more bytes would fit now, without keeping
// them: for a value about to be built and dropped right away. Past the
// budget it stops the run like a reservation.
func (m *Mem) Check(n int64) error {
	if err := m.reserve(n); err != nil {
		return err
	}
	m.release(n)
	return nil
}

// Reserve takes n bytes of the run's memory budget for this command; they
// are given back by Release or when the command returns. Past the budget
// the run is stopped and Reserve returns ErrMemory.
func (c *Cmd) Reserve(n int64) error {
	if n <= 0 {
		return nil
	}
	if err := c.Mem.reserve(n); err != nil {
		return err
	}
	c.held += n
	return nil
}

// Release gives back n bytes this command reserved.
func (c *Cmd) Release(n int64) {
	n = min(n, c.held)
	if n <= 0 {
		return
	}
	c.held -= n
	c.Mem.release(n)
}

// ReleaseAll gives back everything this command reserved; the sandbox
// calls it when the command returns.
func (c *Cmd) ReleaseAll() { c.Release(c.held) }

// Held is a size a command keeps in step with the budget (a sed pattern
// space, a growing list): Set moves the reservation to the new size.
type Held struct {
	c *Cmd
	n int64
}

// Set makes the reservation n bytes; ErrMemory past the budget.
func (h *Held) Set(n int64) error {
	switch {
	case n > h.n:
		if err := h.c.Reserve(n - h.n); err != nil {
			return err
		}
	case n < h.n:
		h.c.Release(h.n - n)
	}
	h.n = n
	return nil
}

// NewHeld starts a size of 0 reserved for this command.
func (c *Cmd) NewHeld() *Held { return &Held{c: c} }

// lineCost is what one line kept as a string in a slice costs beyond its
// bytes: the string header.
const lineCost = 16

// ReadAllFrom reads r to its end, reserving what it reads (kept until the
// command returns or releases it). sizeHint, when positive, sizes the
// buffer at once.
func (c *Cmd) ReadAllFrom(r io.Reader, sizeHint int64) ([]byte, error) {
	var b bytes.Buffer
	reserved := int64(0)
	if sizeHint > 0 && sizeHint < 1<<30 {
		if err := c.Reserve(sizeHint + 1); err != nil {
			return nil, err
		}
		reserved = sizeHint + 1
		b.Grow(int(sizeHint) + 1)
	}
	buf := make([]byte, 64<<10)
	for {
		if c.Ctx != nil && c.Cancelled() {
			return b.Bytes(), ErrStop
		}
		n, err := r.Read(buf)
		if n > 0 {
			if more := int64(b.Len()+n) - reserved; more > 0 {
				if err := c.Reserve(more); err != nil {
					c.Release(reserved)
					return nil, err
				}
				reserved += more
			}
			b.Write(buf[:n])
		}
		if errors.Is(err, io.EOF) {
			return b.Bytes(), nil
		}
		if err != nil {
			return b.Bytes(), err
		}
	}
}

// KeepLines reserves what lines cost when kept (their bytes and string
// headers); ErrMemory past the budget.
func (c *Cmd) KeepLines(lines []string) error {
	n := int64(0)
	for _, l := range lines {
		n += int64(len(l)) + lineCost
	}
	return c.Reserve(n)
}

package sandbox

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// The memory guard backs the reservations of the commands (see
// commands.Mem) for what no code of ours can count: the interpreter's
// variables ("x=$x$x" doubles a string per statement), awk's and jq's
// values, a command substitution's buffer. Go cannot say which goroutine
// holds what, so the guard watches the heap of the whole process while
// scripts run:
//
//   - every run records the live heap when it starts (its baseline);
//   - every 2 ms the guard reads the heap: when the live heap (as of the
//     last collection) has grown past the lowest baseline by more than
//     the sum of the running scripts' MaxMemoryBytes, the scripts are
//     over their budgets together;
//   - the live size of a collection counts only if the collection began
//     after every running script started (else the guard collects);
//   - the heap counts garbage too, so it only forces a collection, to
//     know the live size now, when the heap passes what the collector
//     would let it reach were the scripts within their budgets (twice
//     the baseline plus the budgets), at most every 50 ms unless the
//     heap grew by a quarter since;
//   - a process ceiling (SetMemoryCeiling; default the runtime's memory
//     limit when one is set, else 4 GiB) applies to every script, those
//     without a memory limit included.
//
// Attribution: with one script running, the growth is its own and it
// alone stops. With several, the guard cannot tell whose it is and stops
// them all with the "memory" limit: a wrong stop costs a retry, a missed
// one the process. When a script without a memory limit runs beside
// others, only the process ceiling applies (its growth could be anyone's).

// memoryCeiling is the process ceiling set by SetMemoryCeiling (0: the
// default).
var memoryCeiling atomic.Int64

// defaultCeiling is the process ceiling when neither SetMemoryCeiling nor
// the runtime's memory limit says otherwise.
const defaultCeiling = 4 << 30

// SetMemoryCeiling sets the heap size of the whole process past which
// the running scripts are stopped with the "memory" limit, whatever their
// own limits (0: the default, the runtime's memory limit when
// debug.SetMemoryLimit set one, else 4 GiB). Servers set it below the
// memory they may use.
func SetMemoryCeiling(n int64) { memoryCeiling.Store(max(n, 0)) }

func ceiling() uint64 {
	if n := memoryCeiling.Load(); n > 0 {
		return uint64(n)
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		// Stop scripts a little before the collector starts to thrash.
		return uint64(l) / 10 * 9
	}
	return defaultCeiling
}

type memGuard struct {
	mu      sync.Mutex
	runs    map[*budget]guardRun // running scripts
	running bool
	lastGC  time.Time
	// heapAtGC is the heap when the guard last forced a collection.
	heapAtGC uint64
	// suspect is set while the heap is past the point where the guard
	// collects to know the live size: the interpreter then asks the
	// guard before every statement (stepContext), so that a statement
	// that doubled a string is judged before the next one doubles it
	// again, not 2 ms later.
	suspect atomic.Bool
	samples []metrics.Sample
}

// guardRun is what the guard knows of a running script: the live heap
// and the number of completed collections when it started.
type guardRun struct{ base, cycles uint64 }

var guard = &memGuard{runs: map[*budget]guardRun{}}

const (
	heapObjects = "/memory/classes/heap/objects:bytes"
	heapLive    = "/gc/heap/live:bytes"
	gcCycles    = "/gc/cycles/total:gc-cycles"
)

// watch adds a script to the guard until the returned function is called.
func (g *memGuard) watch(b *budget) (unwatch func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.samples == nil {
		g.samples = []metrics.Sample{{Name: heapObjects}, {Name: heapLive}, {Name: gcCycles}}
	}
	_, live, cycles := g.read()
	g.runs[b] = guardRun{base: live, cycles: cycles}
	if !g.running {
		g.running = true
		go g.loop()
	}
	return func() {
		g.mu.Lock()
		delete(g.runs, b)
		g.mu.Unlock()
	}
}

// read samples the heap (objects, garbage included) and the live heap of
// the last collection; g.mu is held.
func (g *memGuard) read() (heap, live, cycles uint64) {
	metrics.Read(g.samples)
	get := func(i int) uint64 {
		if g.samples[i].Value.Kind() == metrics.KindUint64 {
			return g.samples[i].Value.Uint64()
		}
		return 0
	}
	return get(0), get(1), get(2)
}

func (g *memGuard) loop() {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		g.mu.Lock()
		if len(g.runs) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		g.check()
		g.mu.Unlock()
	}
}

// checkNow runs a check on the caller's goroutine when the heap is
// suspect (cheap otherwise: one atomic load).
func (g *memGuard) checkNow() {
	if !g.suspect.Load() {
		return
	}
	g.mu.Lock()
	if len(g.runs) > 0 {
		g.check()
	}
	g.mu.Unlock()
}

// check stops the scripts that are over; g.mu is held.
func (g *memGuard) check() {
	minBase := uint64(math.MaxUint64)
	sum := uint64(0)
	allLimited := true
	lastStart := uint64(0) // collections done when the latest run started
	for b, r := range g.runs {
		minBase = min(minBase, r.base)
		lastStart = max(lastStart, r.cycles)
		if m := b.limits.MaxMemoryBytes; m > 0 {
			sum += uint64(m)
		} else {
			allLimited = false
		}
	}
	top := ceiling()
	over := func(live uint64) bool {
		return live > top || allLimited && live > minBase+sum
	}
	heap, live, cycles := g.read()
	suspicious := heap > top || allLimited && heap > 2*(minBase+sum)
	g.suspect.Store(suspicious)
	// The live size of the last collection counts only when a whole
	// collection ran after every script started: a cycle that began
	// before may end after and count what an earlier script held.
	fresh := cycles >= lastStart+2
	if !(fresh && over(live)) {
		if !suspicious && !over(live) {
			return
		}
		// A collection of our own costs a mark of the live heap: at most
		// every 50 ms, unless the heap grew by a quarter since the last
		// one (a string doubling in one statement must not slip by).
		if time.Since(g.lastGC) < 50*time.Millisecond && heap < g.heapAtGC/4*5 {
			return
		}
		runtime.GC()
		g.lastGC, g.heapAtGC = time.Now(), heap
		if _, live, _ = g.read(); !over(live) {
			return
		}
	}
	for b := range g.runs {
		if b.limits.MaxMemoryBytes > 0 {
			b.tripMemory()
		} else {
			b.trip(&LimitError{Limit: "memory", Max: int64(top)})
		}
	}
}

package commands

import (
	"fmt"
	"strings"
	"time"
)

func init() {
	register("time", "time [-p] COMMAND [ARG]...", runTime)
}

// Times is what "time" reports: the elapsed time and the CPU time the
// process spent meanwhile (the sandbox runs commands in-process, so user
// and sys are those of the whole process over the interval).
type Times struct {
	start           time.Time
	user, sys       time.Duration
	haveCPU         bool
	Real, User, Sys time.Duration
}

// StartTimes starts measuring.
func StartTimes() *Times {
	t := &Times{start: time.Now()}
	t.user, t.sys, t.haveCPU = cpuTimes()
	return t
}

// Stop ends the measure.
func (t *Times) Stop() {
	t.Real = time.Since(t.start)
	if t.haveCPU {
		if u, s, ok := cpuTimes(); ok {
			t.User, t.Sys = max(u-t.user, 0), max(s-t.sys, 0)
		}
	}
}

// Format is bash's report: "\nreal\t0m0.012s\nuser\t..." or, with posix
// (-p), "real 0.01\nuser 0.00\nsys 0.00\n".
func (t *Times) Format(posix bool) string {
	var b strings.Builder
	if !posix {
		b.WriteByte('\n')
	}
	for _, x := range []struct {
		name string
		d    time.Duration
	}{{"real", t.Real}, {"user", t.User}, {"sys", t.Sys}} {
		if posix {
			fmt.Fprintf(&b, "%s %.2f\n", x.name, x.d.Seconds())
			continue
		}
		min := int64(x.d / time.Minute)
		sec := (x.d - time.Duration(min)*time.Minute).Seconds()
		fmt.Fprintf(&b, "%s\t%dm%.3fs\n", x.name, min, sec)
	}
	return b.String()
}

func runTime(c *Cmd) int {
	args := c.Args[1:]
	posix := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		switch args[0] {
		case "-p", "--portability":
			posix = true
		case "--":
			args = args[1:]
			goto run
		default:
			return c.Usage(125, "invalid option -- %s", q(strings.TrimLeft(args[0], "-")))
		}
		args = args[1:]
	}
run:
	t := StartTimes()
	status := 0
	if len(args) > 0 {
		status = c.Exec(c.Ctx, Invocation{Args: args, Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr})
	}
	t.Stop()
	fmt.Fprint(c.Stderr, t.Format(posix))
	return status
}

// Token writes the start of a measure as text (the time keyword keeps it
// in a shell variable between its two halves).
func (t *Times) Token() string {
	return fmt.Sprintf("%d:%d:%d:%t", t.start.UnixNano(), t.user, t.sys, t.haveCPU)
}

// TimesFromToken reads what Token wrote.
func TimesFromToken(s string) (*Times, bool) {
	var ns, u, sy int64
	var have bool
	if _, err := fmt.Sscanf(s, "%d:%d:%d:%t", &ns, &u, &sy, &have); err != nil {
		return nil, false
	}
	return &Times{start: time.Unix(0, ns), user: time.Duration(u), sys: time.Duration(sy), haveCPU: have}, true
}

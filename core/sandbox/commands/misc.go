package commands

import (
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

func init() {
	register("true", "true", func(*Cmd) int { return 0 })
	register("false", "false", func(*Cmd) int { return 1 })
	register("basename", "basename NAME [SUFFIX] | basename -a [-s SUFFIX] NAME...", runBasename)
	register("dirname", "dirname NAME...", runDirname)
	register("env", "env [-i] [-u NAME] [NAME=VALUE]... [COMMAND [ARG]...]", runEnv)
	register("printenv", "printenv [NAME]...", runPrintenv)
	register("sleep", "sleep NUMBER[smhd]...", runSleep)
	register("whoami", "whoami", func(c *Cmd) int { fmt.Fprintln(c.Stdout, c.ID.User); return 0 })
	register("hostname", "hostname", func(c *Cmd) int { fmt.Fprintln(c.Stdout, c.ID.Hostname); return 0 })
	register("which", "which [-a] NAME...", runWhich)
	register("yes", "yes [STRING]...", runYes)
}

func runBasename(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "as:z", long: map[string]string{"multiple": "a", "suffix=": "s", "zero": "z"}}, 1)
	if !ok {
		return code
	}
	if len(args) == 0 {
		return c.Usage(1, "missing operand")
	}
	suffix, multi := "", o.has("a")
	if s, ok := o.val("s"); ok {
		suffix, multi = s, true
	}
	if !multi {
		if len(args) > 2 {
			return c.Usage(1, "extra operand '%s'", args[2])
		}
		if len(args) == 2 {
			suffix = args[1]
		}
		args = args[:1]
	}
	end := "\n"
	if o.has("z") {
		end = "\x00"
	}
	for _, a := range args {
		fmt.Fprint(c.Stdout, baseName(a, suffix)+end)
	}
	return 0
}

func baseName(a, suffix string) string {
	if a == "" {
		return ""
	}
	t := strings.TrimRight(a, "/")
	if t == "" {
		return "/"
	}
	b := t[strings.LastIndexByte(t, '/')+1:]
	if suffix != "" && b != suffix && strings.HasSuffix(b, suffix) {
		b = strings.TrimSuffix(b, suffix)
	}
	return b
}

func dirName(a string) string {
	t := strings.TrimRight(a, "/")
	if t == "" {
		if strings.HasPrefix(a, "/") {
			return "/"
		}
		return "."
	}
	i := strings.LastIndexByte(t, '/')
	if i < 0 {
		return "."
	}
	d := strings.TrimRight(t[:i], "/")
	if d == "" {
		return "/"
	}
	return d
}

func runDirname(c *Cmd) int {
	o, args, code, ok := c.parseOpts(spec{short: "z", long: map[string]string{"zero": "z"}}, 1)
	if !ok {
		return code
	}
	if len(args) == 0 {
		return c.Usage(1, "missing operand")
	}
	end := "\n"
	if o.has("z") {
		end = "\x00"
	}
	for _, a := range args {
		fmt.Fprint(c.Stdout, dirName(a)+end)
	}
	return 0
}

func runEnv(c *Cmd) int {
	args := c.Args[1:]
	env := map[string]string{}
	var order []string
	if c.Environ != nil {
		for _, kv := range c.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
			order = append(order, k)
		}
	}
	for len(args) > 0 {
		a := args[0]
		if a == "-i" || a == "-" || a == "--ignore-environment" {
			env, order = map[string]string{}, nil
		} else if a == "-u" && len(args) > 1 {
			delete(env, args[1])
			args = args[1:]
		} else if strings.HasPrefix(a, "--unset=") {
			delete(env, strings.TrimPrefix(a, "--unset="))
		} else if a == "--" {
			args = args[1:]
			break
		} else if strings.HasPrefix(a, "-") && a != "-" {
			return c.Usage(125, "invalid option -- '%s'", strings.TrimLeft(a, "-"))
		} else {
			break
		}
		args = args[1:]
	}
	for len(args) > 0 && strings.Contains(args[0], "=") {
		k, v, _ := strings.Cut(args[0], "=")
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
		args = args[1:]
	}
	if len(args) > 0 {
		if c.Exec == nil {
			return c.Fail("cannot run commands here")
		}
		list := make([]string, 0, len(order))
		seen := map[string]bool{}
		for _, k := range order {
			if v, ok := env[k]; ok && !seen[k] {
				seen[k] = true
				list = append(list, k+"="+v)
			}
		}
		return c.Exec(c.Ctx, Invocation{Args: args, Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr, Env: list})
	}
	seen := map[string]bool{}
	for _, k := range order {
		if v, ok := env[k]; ok && !seen[k] {
			seen[k] = true
			fmt.Fprintf(c.Stdout, "%s=%s\n", k, v)
		}
	}
	return 0
}

func runPrintenv(c *Cmd) int {
	args := c.Args[1:]
	if len(args) == 0 {
		if c.Environ != nil {
			for _, kv := range c.Environ() {
				fmt.Fprintln(c.Stdout, kv)
			}
		}
		return 0
	}
	status := 0
	for _, a := range args {
		if v, ok := c.Env(a); ok {
			fmt.Fprintln(c.Stdout, v)
		} else {
			status = 1
		}
	}
	return status
}

func runSleep(c *Cmd) int {
	if len(c.Args) < 2 {
		return c.Usage(1, "missing operand")
	}
	var total time.Duration
	for _, a := range c.Args[1:] {
		unit := time.Second
		s := a
		switch {
		case strings.HasSuffix(s, "s"):
			s = s[:len(s)-1]
		case strings.HasSuffix(s, "m"):
			s, unit = s[:len(s)-1], time.Minute
		case strings.HasSuffix(s, "h"):
			s, unit = s[:len(s)-1], time.Hour
		case strings.HasSuffix(s, "d"):
			s, unit = s[:len(s)-1], 24*time.Hour
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || math.IsNaN(f) {
			return c.Usage(1, "invalid time interval '%s'", a)
		}
		total += time.Duration(f * float64(unit))
	}
	t := time.NewTimer(total)
	defer t.Stop()
	select {
	case <-t.C:
		return 0
	case <-c.Ctx.Done():
		return 130
	}
}

func runWhich(c *Cmd) int {
	args := c.Args[1:]
	if len(args) > 0 && args[0] == "-a" {
		args = args[1:]
	}
	status := 0
	for _, a := range args {
		if strings.Contains(a, "/") {
			if st, err := c.Stat(a); err == nil && st.IsRegular() && st.Mode&0o111 != 0 {
				fmt.Fprintln(c.Stdout, a)
				continue
			}
			status = 1
			continue
		}
		if c.Lookup != nil && c.Lookup(a) {
			fmt.Fprintln(c.Stdout, path.Join("/usr/bin", a))
			continue
		}
		status = 1
	}
	return status
}

func runYes(c *Cmd) int {
	s := "y"
	if len(c.Args) > 1 {
		s = strings.Join(c.Args[1:], " ")
	}
	line := s + "\n"
	buf := strings.Repeat(line, max(1, 8192/len(line)))
	for !c.Cancelled() {
		if _, err := io.WriteString(c.Stdout, buf); err != nil {
			return exitWrite(c, err, 1)
		}
	}
	return 1
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Command agentfs-sandbox-bench measures package sandbox (core/sandbox):
// the cost of a new sandbox running "echo hi", the memory of idle
// sandboxes, and three shell pipelines over a generated 10k-file tree,
// run in the sandbox over an agent database and with /bin/bash and the
// GNU tools over the same tree written to a native directory on the same
// disk, in the same run (see bench/sandbox.sh).
//
//	agentfs-sandbox-bench                       every phase
//	agentfs-sandbox-bench -phases echo -n-echo 1000 -cpuprofile cpu.out
//
// Human-readable progress goes to stderr; the Markdown report (tables)
// goes to stdout.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

var ctx = context.Background()

var (
	flagPhases  = flag.String("phases", "echo,mem,tree", "phases to run (any subset of echo,mem,tree)")
	flagNEcho   = flag.Int("n-echo", 10000, "runs of new sandbox + echo hi, per audit setting")
	flagNMem    = flag.Int("n-mem", 1000, "idle sandboxes (and sessions) kept alive")
	flagMemStep = flag.Int("mem-every", 100, "measure RSS every N sandboxes")
	flagDirs    = flag.Int("dirs", 100, "directories of the generated tree")
	flagFiles   = flag.Int("files", 100, "files per directory of the generated tree")
	flagReps    = flag.Int("reps", 5, "repetitions of each tree pipeline on each side")
	flagDir     = flag.String("dir", "", "work directory for the databases and the native tree (default ./tmp/sandbox-<pid>)")
	flagKeep    = flag.Bool("keep", false, "keep the work directory")
	flagCPU     = flag.String("cpuprofile", "", "write a CPU profile of the measured phases to this file")
	flagBash    = flag.String("bash", "/bin/bash", "the shell of the native side")
)

func main() {
	flag.Parse()
	phases := map[string]bool{}
	for _, p := range strings.Split(*flagPhases, ",") {
		phases[strings.TrimSpace(p)] = true
	}
	work := *flagDir
	if work == "" {
		work = filepath.Join("tmp", fmt.Sprintf("sandbox-%d", os.Getpid()))
	}
	work, err := filepath.Abs(work)
	check(err)
	check(os.MkdirAll(work, 0o755))
	if !*flagKeep {
		defer os.RemoveAll(work)
	}
	if *flagCPU != "" {
		f, err := os.Create(*flagCPU)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}

	var out bytes.Buffer
	if phases["echo"] {
		benchEcho(&out, work)
	}
	if phases["mem"] {
		benchMem(&out, work)
	}
	if phases["tree"] {
		if !benchTree(&out, work) {
			os.Stdout.Write(out.Bytes())
			fatalf("tree: the sandbox and GNU outputs differ (see above)")
		}
	}
	os.Stdout.Write(out.Bytes())
}

func check(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "agentfs-sandbox-bench: "+format+"\n", args...)
	os.Exit(1)
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func openAgent(path string) *core.Agent {
	a, err := core.Open(ctx, path, core.Options{Create: true})
	check(err)
	return a
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

// ---- 1. new sandbox + echo hi ----

func benchEcho(out *bytes.Buffer, work string) {
	a := openAgent(filepath.Join(work, "echo.db"))
	defer a.Close()
	n := *flagNEcho
	run := func(noAudit bool) time.Duration {
		t := time.Now()
		sb, err := sandbox.New(a, sandbox.Options{Limits: sandbox.Normal, NoAudit: noAudit})
		check(err)
		res, err := sb.Exec(ctx, "echo hi", sandbox.ExecOptions{})
		d := time.Since(t)
		check(err)
		if res.Stdout != "hi\n" || res.ExitCode != 0 {
			fatalf("echo hi: got %q exit %d stderr %q", res.Stdout, res.ExitCode, res.Stderr)
		}
		return d
	}
	// Warm-up, not reported.
	for range 500 {
		run(false)
		run(true)
	}
	fmt.Fprintf(out, "### New sandbox + `echo hi` (%d runs each)\n\n", n)
	fmt.Fprintf(out, "| audit | p50 ms | p99 ms | mean ms | max ms | allocs/run | KiB alloc/run |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, noAudit := range []bool{false, true} {
		name := "on (default)"
		if noAudit {
			name = "off (`NoAudit: true`)"
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		ds := make([]time.Duration, n)
		var total time.Duration
		for i := range ds {
			ds[i] = run(noAudit)
			total += ds[i]
		}
		runtime.ReadMemStats(&m1)
		slices.Sort(ds)
		p50, p99 := quantile(ds, 0.50), quantile(ds, 0.99)
		allocs := float64(m1.Mallocs-m0.Mallocs) / float64(n)
		kib := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n) / 1024
		logf("echo audit=%v: p50 %s ms p99 %s ms mean %s ms max %s ms, %.0f allocs/run, %.1f KiB/run",
			!noAudit, ms(p50), ms(p99), ms(total/time.Duration(n)), ms(ds[n-1]), allocs, kib)
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %.0f | %.1f |\n", name, ms(p50), ms(p99), ms(total/time.Duration(n)), ms(ds[n-1]), allocs, kib)
	}
	fmt.Fprintf(out, "\nTarget p50 ≤ 0.5 ms; reference (Rivet agentOS) 4.8 ms p50. Each run is `sandbox.New(agent, Options{Limits: Normal})` + `Exec(ctx, \"echo hi\")` on one open agent database, timed together; 500 warm-up runs of each setting first.\n\n")
}

// ---- 2. memory per idle sandbox ----

func rssKiB() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	check(err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			v, err := strconv.ParseInt(f[0], 10, 64)
			check(err)
			return v
		}
	}
	fatalf("no VmRSS in /proc/self/status")
	return 0
}

func heapKiB() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc / 1024)
}

func benchMem(out *bytes.Buffer, work string) {
	n, step := *flagNMem, *flagMemStep
	type series struct {
		name      string
		rss, heap []int64 // at 0, step, 2*step, ...
	}
	measure := func(name string, make1 func(a *core.Agent) any) series {
		a := openAgent(filepath.Join(work, "mem-"+strings.Fields(name)[0]+".db"))
		defer a.Close()
		// One throwaway first, so that code pages, the statement cache and
		// the database pages touched by one Exec are in the baseline.
		_ = make1(a)
		s := series{name: name}
		keep := make([]any, 0, n)
		s.rss = append(s.rss, rssKiB())
		s.heap = append(s.heap, heapKiB())
		for i := 1; i <= n; i++ {
			keep = append(keep, make1(a))
			if i%step == 0 {
				s.rss = append(s.rss, rssKiB())
				s.heap = append(s.heap, heapKiB())
			}
		}
		runtime.KeepAlive(keep)
		return s
	}
	sandboxes := func(a *core.Agent) any {
		sb, err := sandbox.New(a, sandbox.Options{Limits: sandbox.Normal})
		check(err)
		res, err := sb.Exec(ctx, "true", sandbox.ExecOptions{})
		check(err)
		if res.ExitCode != 0 {
			fatalf("true: exit %d", res.ExitCode)
		}
		return sb
	}
	sessions := func(a *core.Agent) any {
		sb, err := sandbox.New(a, sandbox.Options{Limits: sandbox.Normal})
		check(err)
		se, err := sb.NewSession("/")
		check(err)
		res, err := se.Exec(ctx, "true", sandbox.ExecOptions{})
		check(err)
		if res.ExitCode != 0 {
			fatalf("true: exit %d", res.ExitCode)
		}
		return se
	}
	all := []series{
		measure("Sandbox (sandbox.New + Exec `true`)", sandboxes),
		measure("Session (sandbox.New + NewSession + Session.Exec `true`, the shell kept)", sessions),
	}
	fmt.Fprintf(out, "### Memory per idle sandbox (%d kept alive, RSS after `runtime.GC` + `debug.FreeOSMemory` every %d)\n\n", n, step)
	fmt.Fprintf(out, "| kept alive | RSS with 0, MiB | RSS with %d, MiB | RSS increase per sandbox, KiB | Go heap increase per sandbox, KiB |\n|---|---:|---:|---:|---:|\n", n)
	for _, s := range all {
		last := len(s.rss) - 1
		cnt := float64(last * step)
		perRSS := float64(s.rss[last]-s.rss[0]) / cnt
		perHeap := float64(s.heap[last]-s.heap[0]) / cnt
		logf("mem %s: RSS KiB %v; heap KiB %v; %.2f KiB RSS/sandbox, %.2f KiB heap/sandbox", s.name, s.rss, s.heap, perRSS, perHeap)
		fmt.Fprintf(out, "| %s | %.1f | %.1f | %.1f | %.2f |\n", s.name, float64(s.rss[0])/1024, float64(s.rss[last])/1024, perRSS, perHeap)
	}
	fmt.Fprintf(out, "\nRSS every %d (KiB):\n\n", step)
	for _, s := range all {
		fmt.Fprintf(out, "- %s: %s\n", strings.SplitN(s.name, " ", 2)[0], joinInts(s.rss))
	}
	fmt.Fprintf(out, "\nTarget ≤ 1 MB per sandbox; reference (Rivet agentOS) about 22 MB.\n\n")
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, " ")
}

// ---- 3. pipelines over a 10k-file tree ----

var words = strings.Fields(`alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima
mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu
func return import package error value index table query result`)

// genFile is the deterministic content of file (d, f): 1-4 KiB of text
// lines drawn from a small vocabulary, so that lines repeat across files
// (sort | uniq -c has real counts) and about 1 line in 50 holds "needle".
func genFile(d, f int) []byte {
	r := rand.New(rand.NewPCG(uint64(d), uint64(f)))
	size := 1024 + r.IntN(3072)
	var b bytes.Buffer
	for b.Len() < size {
		if r.IntN(50) == 0 {
			fmt.Fprintf(&b, "// marker needle %d\n", r.IntN(20))
			continue
		}
		nw := 1 + r.IntN(3)
		for i := range nw {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

type pipeline struct {
	name   string
	script string // TREE is replaced by the tree's path on each side
}

var pipelines = []pipeline{
	{"grep -r | wc -l", "grep -r needle TREE | wc -l"},
	{"find -type f | wc -l", "find TREE -type f | wc -l"},
	{"find | xargs cat | sort | uniq -c | sort -rn | head", "find TREE -name '*.txt' | xargs cat | sort | uniq -c | sort -rn | head"},
}

func benchTree(out *bytes.Buffer, work string) bool {
	a := openAgent(filepath.Join(work, "tree.db"))
	defer a.Close()
	native := filepath.Join(work, "native", "tree")
	var nbytes int64
	t := time.Now()
	for d := range *flagDirs {
		dir := fmt.Sprintf("d%03d", d)
		check(os.MkdirAll(filepath.Join(native, dir), 0o755))
		for f := range *flagFiles {
			data := genFile(d, f)
			nbytes += int64(len(data))
			name := fmt.Sprintf("f%03d.txt", f)
			check(os.WriteFile(filepath.Join(native, dir, name), data, 0o644))
			check(a.FS.WriteFile(ctx, "/tree/"+dir+"/"+name, data, vfs.WriteOptions{CreateParents: true}))
		}
	}
	nfiles := *flagDirs * *flagFiles
	logf("tree: %d files, %.1f MiB, written to the agent and %s in %v", nfiles, float64(nbytes)/(1<<20), native, time.Since(t).Round(time.Millisecond))
	check(a.Checkpoint(ctx))
	// Both copies were just written, so both are in the page cache; each
	// pipeline also runs once unmeasured on each side before the timed runs.

	sb, err := sandbox.New(a, sandbox.Options{Limits: sandbox.Normal})
	check(err)
	runSandbox := func(script string) (string, time.Duration) {
		t := time.Now()
		res, err := sb.Exec(ctx, script, sandbox.ExecOptions{})
		d := time.Since(t)
		check(err)
		if res.ExitCode != 0 || res.Stderr != "" {
			fatalf("sandbox %q: exit %d stderr %q", script, res.ExitCode, res.Stderr)
		}
		return res.Stdout, d
	}
	runNative := func(script string) (string, time.Duration) {
		cmd := exec.Command(*flagBash, "-c", script)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		t := time.Now()
		err := cmd.Run()
		d := time.Since(t)
		if err != nil || stderr.Len() > 0 {
			fatalf("native %q: %v stderr %q", script, err, stderr.String())
		}
		return stdout.String(), d
	}
	same := true
	fmt.Fprintf(out, "### Pipelines over a %d-file tree (%d dirs × %d files, %.1f MiB of text), median of %d\n\n", nfiles, *flagDirs, *flagFiles, float64(nbytes)/(1<<20), *flagReps)
	fmt.Fprintf(out, "| pipeline | sandbox ms | bash + GNU ms | ratio | same output | output (first line) |\n|---|---:|---:|---:|---|---|\n")
	for _, p := range pipelines {
		sScript := strings.ReplaceAll(p.script, "TREE", "/tree")
		nScript := strings.ReplaceAll(p.script, "TREE", native)
		sOut, _ := runSandbox(sScript)
		nOut, _ := runNative(nScript)
		var sd, nd []time.Duration
		// Alternate the sides, so that neither gets a quieter machine.
		for range *flagReps {
			o, d := runSandbox(sScript)
			if o != sOut {
				fatalf("sandbox %q: output changed between runs", sScript)
			}
			sd = append(sd, d)
			o, d = runNative(nScript)
			if o != nOut {
				fatalf("native %q: output changed between runs", nScript)
			}
			nd = append(nd, d)
		}
		slices.Sort(sd)
		slices.Sort(nd)
		sm, nm := sd[len(sd)/2], nd[len(nd)/2]
		ok := sOut == nOut
		if !ok {
			same = false
			logf("tree %q: outputs differ\n--- sandbox\n%s--- GNU\n%s", p.script, sOut, nOut)
		}
		first, _, _ := strings.Cut(strings.TrimSpace(nOut), "\n")
		logf("tree %s: sandbox %s ms, GNU %s ms, ratio %.2f, same output %v (sandbox runs %v, GNU runs %v)",
			p.name, ms(sm), ms(nm), float64(sm)/float64(nm), ok, sd, nd)
		cell := strings.ReplaceAll(sScript, "|", `\|`) // a pipe inside a table cell
		fmt.Fprintf(out, "| `%s` | %s | %s | %.2f× | %s | `%s` |\n", cell, ms(sm), ms(nm), float64(sm)/float64(nm), yesNo(ok), strings.TrimSpace(first))
	}
	fmt.Fprintf(out, "\nTarget: sandbox within 3× of GNU. The GNU side is `%s -c SCRIPT` (process start included) with `LC_ALL=C`, on the same tree written to a native directory on the same disk; the sandbox side is `Sandbox.Exec` on the agent database (audit on, `Limits: Normal`). The sides alternate; one unmeasured run of each first. Outputs are compared byte for byte.\n\n", *flagBash)
	return same
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// Command agentfs-bench runs the reference workloads of shared/bench
// (workloads.mjs, written against Turso's agentfs-sdk) on the Go engine,
// in-process, with the same sizes, operation names, verification and
// output, so that the two can be compared side by side (see bench/).
//
//	agentfs-bench                              every phase, durability normal
//	agentfs-bench -durability full -phases small
//
// Env: N_FILES (10000) N_DIRS (100) BIG_MIB (64) N_PREAD (1000) N_KV (10000)
// N_TOOLS (10000) WARM (500) COLD_RUNS (5) BENCH_DIR (./tmp/run-<pid>)
// KEEP=1 keeps the db files; AGENTFS_BIN (bin/agentfs) is the CLI used for
// the cold start (none skips it).
//
// Output: one human-readable line per workload and a final "JSON {...}"
// line with the structure of workloads.mjs's (ops, sizes, rss_kb, cold,
// env), which `node workloads.mjs --summarize FILE` can read.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/store"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// procStart approximates process start for the cold-start child: package
// variables are initialised after the Go runtime starts, before main.
var procStart = time.Now()

const (
	small = 1024
	mib   = 1 << 20
)

var (
	ctx                                             = context.Background()
	nFiles, nDirs, nPread, nKV, nTools, warm, nCold int
	bigMiB                                          float64
)

func envNum(k string, d float64) float64 {
	if v := os.Getenv(k); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			fatalf("%s=%q: not a number", k, v)
		}
		return f
	}
	return d
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "agentfs-bench: "+format+"\n", a...)
	os.Exit(1)
}

// ---------- results, in the shape of workloads.mjs's R ----------

// omap is a JSON object that keeps insertion order (workloads.mjs's
// --summarize lists operations in the order of the first run).
type omap struct {
	keys []string
	m    map[string]any
}

func newOmap() *omap { return &omap{m: map[string]any{}} }

func (o *omap) set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

func (o *omap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type opResult struct {
	N       int      `json:"n"`
	TotalMs float64  `json:"total_ms"`
	OpsS    float64  `json:"ops_s"`
	P50Ms   float64  `json:"p50_ms"`
	P99Ms   float64  `json:"p99_ms"`
	MiBS    *float64 `json:"mib_s,omitempty"`
}

type sizeResult struct {
	DB    int64 `json:"db"`
	WAL   int64 `json:"wal"`
	Total int64 `json:"total"`
}

// coldResult is one cold start. SpawnToWriteMs is process spawn to the
// first write being done: for the CLI (which prints nothing) it is the
// process exit, for the engine child its first line of output.
type coldResult struct {
	Kind           string   `json:"kind"`
	SpawnToWriteMs float64  `json:"spawn_to_write_ms"`
	ExitMs         float64  `json:"exit_ms"`
	InprocMs       *float64 `json:"inproc_ms,omitempty"`
}

var R = struct {
	Ops        *omap        `json:"ops"`
	Sizes      *omap        `json:"sizes"`
	RSSKB      *omap        `json:"rss_kb"`
	Cold       []coldResult `json:"cold"`
	ColdEngine []coldResult `json:"cold_engine"`
	ColdError  string       `json:"cold_error,omitempty"`
	Env        *omap        `json:"env"`
}{Ops: newOmap(), Sizes: newOmap(), RSSKB: newOmap(), Cold: []coldResult{}, ColdEngine: []coldResult{}, Env: newOmap()}

// ---------- helpers, as in workloads.mjs ----------

// rng is mulberry32, the generator of workloads.mjs, so that shuffles and
// offsets are the same sequence on both sides.
func rng(seed uint32) func() float64 {
	return func() float64 {
		seed += 0x6d2b79f5
		t := (seed ^ seed>>15) * (1 | seed)
		t = (t + (t^t>>7)*(61|t)) ^ t
		return float64(t^t>>14) / 4294967296
	}
}

func shuffled(n int, seed uint32) []int {
	r := rng(seed)
	a := seq(n)
	for i := n - 1; i > 0; i-- {
		j := int(math.Floor(r() * float64(i+1)))
		a[i], a[j] = a[j], a[i]
	}
	return a
}

func seq(n int) []int {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	return a
}

func pct(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, i)]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func timed[T any](name string, items []T, fn func(item T, i int) error, bytesPerOp int) {
	lat := make([]float64, len(items))
	t0 := time.Now()
	for i, it := range items {
		s := time.Now()
		if err := fn(it, i); err != nil {
			fatalf("%s: item %d: %v", name, i, err)
		}
		lat[i] = ms(time.Since(s))
	}
	total := ms(time.Since(t0))
	sort.Float64s(lat)
	r := opResult{N: len(items), TotalMs: total, OpsS: float64(len(items)) * 1000 / total, P50Ms: pct(lat, 50), P99Ms: pct(lat, 99)}
	extra := ""
	if bytesPerOp > 0 {
		v := float64(bytesPerOp) * float64(len(items)) / mib / (total / 1000)
		r.MiBS = &v
		extra = fmt.Sprintf(" MiB/s=%.1f", v)
	}
	if !strings.HasPrefix(name, "warm:") {
		R.Ops.set(name, r)
	}
	fmt.Printf("%-34s n=%6d total=%9.1fms ops/s=%9.1f p50=%.3fms p99=%.3fms%s\n", name, r.N, total, r.OpsS, r.P50Ms, r.P99Ms, extra)
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func sizes(label, dbPath string) {
	s := sizeResult{DB: fileSize(dbPath), WAL: fileSize(dbPath + "-wal")}
	s.Total = s.DB + s.WAL
	R.Sizes.set(label, s)
	fmt.Printf("size %-29s db=%.2fMiB wal=%.2fMiB total=%.2fMiB\n", label, float64(s.DB)/mib, float64(s.WAL)/mib, float64(s.Total)/mib)
}

// vmHWM is the peak resident set size of this process in KiB, the
// counterpart of node's process.resourceUsage().maxRSS.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func rss(label string) { R.RSSKB.set(label, vmHWM()) }

var durability = store.DurabilityNormal

func open(p string) *core.Agent {
	a, err := core.Open(ctx, p, core.Options{Create: true, Durability: durability})
	if err != nil {
		fatalf("open %s: %v", p, err)
	}
	return a
}

func closeAgent(a *core.Agent) {
	if err := a.Close(); err != nil {
		fatalf("close: %v", err)
	}
}

// checkpoint is workloads.mjs's PRAGMA wal_checkpoint(TRUNCATE), which
// empties the -wal file: Agent.Checkpoint, the engine's explicit
// checkpoint (the SDKs' checkpoint()), which waits out the background
// checkpointer that would otherwise make the pragma answer busy and leave
// the WAL at full size.
func checkpoint(a *core.Agent) {
	if err := a.Checkpoint(ctx); err != nil {
		fatalf("checkpoint: %v", err)
	}
}

func check(ok bool, msg string) error {
	if !ok {
		return errors.New("verification failed: " + msg)
	}
	return nil
}

func fpath(i int) string { return fmt.Sprintf("/d%d/f%d.bin", i%nDirs, i) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		fatalf("random: %v", err)
	}
	return b
}

// jsNum formats a number as JavaScript's String(x) does for the values
// used in operation names (64, 0.5).
func jsNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// ---------- cold start ----------

// coldCLI runs the agentfs CLI: process start to exit of
// `agentfs fs DB write /hello.txt hello` on a fresh database made
// beforehand (agentfs init), so it includes CLI start-up, open, the write,
// the checkpoint at close and process exit.
func coldCLI(bin, dbPath string) (coldResult, error) {
	a, err := core.Open(ctx, dbPath, core.Options{Create: true})
	if err != nil {
		return coldResult{}, err
	}
	if err := a.Close(); err != nil {
		return coldResult{}, err
	}
	cmd := exec.Command(bin, "fs", dbPath, "write", "/hello.txt", "hello")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	err = cmd.Run()
	exit := ms(time.Since(t0))
	if err != nil {
		return coldResult{}, fmt.Errorf("%s fs %s write /hello.txt hello: %v: %s", bin, dbPath, err, strings.TrimSpace(stderr.String()))
	}
	if a, err = core.Open(ctx, dbPath, core.Options{}); err != nil {
		return coldResult{}, err
	}
	b, err := a.FS.ReadFile(ctx, "/hello.txt")
	a.Close()
	if err != nil || string(b) != "hello" {
		return coldResult{}, fmt.Errorf("verification failed: cold CLI write: %q, %v", b, err)
	}
	return coldResult{Kind: "agentfs CLI", SpawnToWriteMs: exit, ExitMs: exit}, nil
}

// coldEngine runs this binary as a minimal engine process (the analogue of
// workloads.mjs's `node -e` child): open (creating) the database, one
// writeFile, print, close. Spawn to first output is the cold start.
func coldEngine(dbPath string) (coldResult, error) {
	self, err := os.Executable()
	if err != nil {
		return coldResult{}, err
	}
	cmd := exec.Command(self, "-cold-child", dbPath)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return coldResult{}, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return coldResult{}, err
	}
	br := bufio.NewReader(out)
	if _, err := br.Peek(1); err != nil {
		cmd.Wait()
		return coldResult{}, fmt.Errorf("cold child: no output: %v", err)
	}
	first := ms(time.Since(t0))
	line, _ := io.ReadAll(br)
	if err := cmd.Wait(); err != nil {
		return coldResult{}, fmt.Errorf("cold child: %v", err)
	}
	exit := ms(time.Since(t0))
	var c struct {
		InprocMs float64 `json:"inproc_ms"`
	}
	if err := json.Unmarshal(line, &c); err != nil {
		return coldResult{}, fmt.Errorf("cold child output %q: %v", line, err)
	}
	return coldResult{Kind: "engine process", SpawnToWriteMs: first, ExitMs: exit, InprocMs: &c.InprocMs}, nil
}

func coldChild(dbPath string) {
	a, err := core.Open(ctx, dbPath, core.Options{Create: true})
	if err != nil {
		fatalf("%v", err)
	}
	if err := a.FS.WriteFile(ctx, "/hello.txt", []byte("hello"), vfs.WriteOptions{CreateParents: true}); err != nil {
		fatalf("%v", err)
	}
	fmt.Printf("{\"inproc_ms\":%f}\n", ms(time.Since(procStart)))
	os.Stdout.Sync()
	if err := a.Close(); err != nil {
		fatalf("%v", err)
	}
}

// ---------- workloads ----------

func smallFiles(a *core.Agent, n int, dbPath, tag string) {
	data := make([][]byte, n)
	for i := range data {
		data[i] = randomBytes(small)
	}
	dirs := min(nDirs, n)
	timed(tag+"mkdir", seq(dirs), func(i, _ int) error { return a.FS.Mkdir(ctx, fmt.Sprintf("/d%d", i), 0o755) }, 0)
	timed(tag+"a.writeFile 1KiB", seq(n), func(i, _ int) error {
		return a.FS.WriteFile(ctx, fpath(i), data[i], vfs.WriteOptions{CreateParents: true})
	}, small)
	if tag == "" {
		sizes("after a (10k x 1KiB)", dbPath)
		rss("a")
	}
	timed(tag+"b.readFile 1KiB random", shuffled(n, 1), func(i, _ int) error {
		b, err := a.FS.ReadFile(ctx, fpath(i))
		if err != nil {
			return err
		}
		return check(bytes.Equal(b, data[i]), fpath(i))
	}, small)
	timed(tag+"c.stat random", shuffled(n, 2), func(i, _ int) error {
		s, err := a.FS.Stat(ctx, fpath(i))
		if err != nil {
			return err
		}
		return check(s.Size == small && s.IsRegular(), "stat")
	}, 0)
	timed(tag+"c.readdir (100 entries)", seq(dirs), func(i, _ int) error {
		l, err := a.FS.Readdir(ctx, fmt.Sprintf("/d%d", i))
		if err != nil {
			return err
		}
		return check(len(l) == (n-i+dirs-1)/dirs, "readdir")
	}, 0)
	timed(tag+"c.readdirPlus (100 entries)", seq(dirs), func(i, _ int) error {
		l, err := a.FS.ReaddirPlus(ctx, fmt.Sprintf("/d%d", i))
		if err != nil {
			return err
		}
		return check(len(l) > 0, "readdirPlus")
	}, 0)
	if tag == "" {
		rss("b_c")
		checkpoint(a)
		sizes("after a-c + checkpoint", dbPath)
	}
}

func bigFile(a *core.Agent, size int, np int, dbPath, tag string) {
	data := randomBytes(size)
	timed(tag+"d.writeFile "+jsNum(float64(size)/mib)+"MiB", []int{0}, func(int, int) error {
		return a.FS.WriteFile(ctx, "/big.bin", data, vfs.WriteOptions{CreateParents: true})
	}, size)
	if tag == "" {
		sizes("after d (64MiB write)", dbPath)
		rss("d_write")
	}
	timed(tag+"d.readFile "+jsNum(float64(size)/mib)+"MiB", []int{0}, func(int, int) error {
		b, err := a.FS.ReadFile(ctx, "/big.bin")
		if err != nil {
			return err
		}
		return check(bytes.Equal(b, data), "big read")
	}, size)
	fh, err := a.FS.Open(ctx, "/big.bin", os.O_RDONLY, 0)
	if err != nil {
		fatalf("open /big.bin: %v", err)
	}
	r := rng(3)
	offs := make([]int, np)
	for i := range offs {
		offs[i] = int(math.Floor(r() * float64(size-4096)))
	}
	buf := make([]byte, 4096)
	pread := func(msg string) func(o, _ int) error {
		return func(o, _ int) error {
			n, err := fh.ReadAt(buf, int64(o))
			if err != nil && !(errors.Is(err, io.EOF) && n == len(buf)) {
				return err
			}
			return check(bytes.Equal(buf[:n], data[o:o+4096]), msg)
		}
	}
	timed(tag+"d.pread 4KiB random offset", offs, pread("pread"), 4096)
	aligned := make([]int, np)
	for i, o := range offs {
		aligned[i] = o - o%4096
	}
	timed(tag+"d.pread 4KiB 4K-aligned", aligned, pread("pread al"), 4096)
	if err := fh.Close(); err != nil {
		fatalf("close /big.bin: %v", err)
	}
	if tag == "" {
		rss("d")
		checkpoint(a)
		sizes("after d + checkpoint", dbPath)
	}
}

type kvVal struct {
	ID    int      `json:"id"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Score float64  `json:"score"`
	OK    bool     `json:"ok"`
}

func kvPhase(a *core.Agent, n int, tag string) {
	timed(tag+"e.kv.set", seq(n), func(i, _ int) error {
		return a.KV.Set(ctx, fmt.Sprintf("key:%d", i), kvVal{ID: i, Name: fmt.Sprintf("item-%d", i), Tags: []string{"alpha", "beta"}, Score: float64(i) * 0.5, OK: i%2 == 0})
	}, 0)
	timed(tag+"e.kv.get random", shuffled(n, 4), func(i, _ int) error {
		raw, err := a.KV.GetJSON(ctx, fmt.Sprintf("key:%d", i))
		if err != nil {
			return err
		}
		var v kvVal
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		return check(v.ID == i, "kv")
	}, 0)
	if tag == "" {
		timed(`e.kv.list prefix "key:1" (x5)`, seq(5), func(int, int) error {
			l, err := a.KV.List(ctx, "key:1", 0)
			if err != nil {
				return err
			}
			return check(len(l) > 0, "kv.list")
		}, 0)
	}
}

func toolsPhase(a *core.Agent, n int, tag string) {
	const base = 1_700_000_000
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%d", i)
	}
	ids := make([]int64, 0, n)
	type params struct {
		Path string `json:"path"`
		N    int    `json:"n"`
	}
	type result struct {
		OK    bool `json:"ok"`
		Bytes int  `json:"bytes"`
	}
	timed(tag+"f.tools.record", seq(n), func(i, _ int) error {
		p, err := json.Marshal(params{Path: fmt.Sprintf("/data/%d.txt", i), N: i})
		if err != nil {
			return err
		}
		r, err := json.Marshal(result{OK: true, Bytes: i * 3})
		if err != nil {
			return err
		}
		id, err := a.Tools.Record(ctx, names[i%10], time.Unix(int64(base+i), 0), time.Unix(int64(base+i+1), 0), p, r, nil)
		ids = append(ids, id)
		return err
	}, 0)
	if tag != "" {
		return
	}
	rep := seq(5)
	list := func(f toolcalls.Filter, ok func(int) bool, msg string) func(int, int) error {
		return func(int, int) error {
			l, err := a.Tools.List(ctx, f)
			if err != nil {
				return err
			}
			return check(ok(len(l)), msg)
		}
	}
	timed("f.tools.getStats (x5)", rep, func(int, int) error {
		s, err := a.Tools.Stats(ctx)
		if err != nil {
			return err
		}
		return check(len(s) == 10, "stats")
	}, 0)
	timed("f.tools.getByName all 1000 (x5)", rep, list(toolcalls.Filter{Name: "tool_3"}, func(l int) bool { return float64(l) == float64(n)/10 }, "byName"), 0)
	timed("f.tools.getByName limit 100 (x5)", rep, list(toolcalls.Filter{Name: "tool_3", Limit: 100}, func(l int) bool { return l == 100 }, "byName100"), 0)
	timed("f.tools.getRecent all 10k (x5)", rep, list(toolcalls.Filter{Since: time.Unix(0, 0)}, func(l int) bool { return l == n }, "recent"), 0)
	timed("f.tools.getRecent limit 100 (x5)", rep, list(toolcalls.Filter{Since: time.Unix(int64(base+n-1000), 0), Limit: 100}, func(l int) bool { return l == 100 }, "recent100"), 0)
	r := rng(5)
	pick := make([]int64, 1000)
	for i := range pick {
		pick[i] = ids[int(math.Floor(r()*float64(len(ids))))]
	}
	timed("f.tools.get(id) random", pick, func(id int64, _ int) error {
		t, err := a.Tools.Get(ctx, id)
		if err != nil {
			return err
		}
		return check(t.ID == id, "get")
	}, 0)
}

// fsyncBaseline is the disk's cost of one 4 KiB write + fsync, as in
// workloads.mjs, to tell a slow disk from a slow engine.
func fsyncBaseline(dir, label string) {
	f, err := os.OpenFile(filepath.Join(dir, "fsync.bin"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		fatalf("%v", err)
	}
	buf := bytes.Repeat([]byte{1}, 4096)
	timed("disk: 4KiB write+fsync ("+label+")", seq(300), func(i, _ int) error {
		if _, err := f.WriteAt(buf, int64(i)*4096); err != nil {
			return err
		}
		return f.Sync()
	}, 0)
	f.Close()
}

// ---------- main ----------

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func driverVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tursodatabase/go-libsql" {
				return d.Path + "@" + d.Version
			}
		}
	}
	return "go-libsql"
}

func main() {
	durFlag := flag.String("durability", "normal", "commit durability of the measured databases: normal or full")
	phasesFlag := flag.String("phases", "cold,disk,small,big,kv,tools", "comma-separated phases to run: cold, disk, small (a-c), big (d), kv (e), tools (f)")
	coldChildDB := flag.String("cold-child", "", "internal: run as the cold-start child on this database")
	flag.Parse()
	if *coldChildDB != "" {
		coldChild(*coldChildDB)
		return
	}
	switch *durFlag {
	case "normal":
		durability = store.DurabilityNormal
	case "full":
		durability = store.DurabilityFull
	default:
		fatalf("-durability %q: want normal or full", *durFlag)
	}
	phases := map[string]bool{}
	for _, p := range strings.Split(*phasesFlag, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case "cold", "disk", "small", "big", "kv", "tools":
			phases[p] = true
		case "":
		default:
			fatalf("-phases: unknown phase %q", p)
		}
	}

	nFiles = int(envNum("N_FILES", 10000))
	nDirs = int(envNum("N_DIRS", 100))
	bigMiB = envNum("BIG_MIB", 64)
	nPread = int(envNum("N_PREAD", 1000))
	nKV = int(envNum("N_KV", 10000))
	nTools = int(envNum("N_TOOLS", 10000))
	warm = int(envNum("WARM", 500))
	nCold = int(envNum("COLD_RUNS", 5))
	big := int(bigMiB * mib)

	dir := os.Getenv("BENCH_DIR")
	if dir == "" {
		dir = filepath.Join("tmp", fmt.Sprintf("run-%d", os.Getpid()))
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	bin := os.Getenv("AGENTFS_BIN")
	if bin == "" {
		bin = filepath.Join("bin", "agentfs")
	}
	if abs, err := filepath.Abs(bin); err == nil && bin != "none" {
		bin = abs
	}

	R.Env.set("node", "n/a ("+runtime.Version()+")") // key read by workloads.mjs --summarize
	R.Env.set("go", runtime.Version())
	R.Env.set("sdk", "agentfs-go core (in-process)")
	R.Env.set("engine", driverVersion())
	R.Env.set("durability", *durFlag)
	R.Env.set("phases", *phasesFlag)
	R.Env.set("cpu", fmt.Sprintf("%s x%d", cpuModel(), runtime.NumCPU()))
	R.Env.set("dir", dir)
	R.Env.set("agentfs_bin", bin)
	envJSON, _ := json.Marshal(R.Env)
	fmt.Println("env", string(envJSON))

	if phases["cold"] {
		if bin == "none" {
			R.ColdError = "AGENTFS_BIN=none: CLI cold start not measured"
			fmt.Println("cold start (agentfs CLI): skipped: AGENTFS_BIN=none")
		}
		for i := 0; i < nCold && bin != "none"; i++ {
			c, err := coldCLI(bin, filepath.Join(dir, fmt.Sprintf("cold-cli%d.db", i)))
			if err != nil {
				R.ColdError = err.Error()
				fmt.Printf("cold start (agentfs CLI): skipped: %v\n", err)
				break
			}
			R.Cold = append(R.Cold, c)
			fmt.Printf("cold start #%d (agentfs CLI): spawn->exit after fs write %.1fms\n", i+1, c.ExitMs)
		}
		for i := 0; i < nCold; i++ {
			c, err := coldEngine(filepath.Join(dir, fmt.Sprintf("cold-engine%d.db", i)))
			if err != nil {
				fatalf("cold start (engine): %v", err)
			}
			R.ColdEngine = append(R.ColdEngine, c)
			fmt.Printf("cold start #%d (engine process): spawn->first writeFile %.1fms (in-process %.1fms), exit %.1fms\n", i+1, c.SpawnToWriteMs, *c.InprocMs, c.ExitMs)
		}
	}

	if phases["disk"] {
		fsyncBaseline(dir, "start")
	}
	{ // warm-up: every op type at small scale in a throwaway db
		p := filepath.Join(dir, "warmup.db")
		a := open(p)
		if phases["small"] {
			smallFiles(a, warm, p, "warm:")
		}
		if phases["big"] {
			bigFile(a, 1*mib, 200, p, "warm:")
		}
		if phases["kv"] {
			kvPhase(a, warm, "warm:")
		}
		if phases["tools"] {
			toolsPhase(a, warm, "warm:")
		}
		closeAgent(a)
		fmt.Println("--- warm-up done ---")
	}
	if phases["small"] {
		p := filepath.Join(dir, "fs_small.db")
		a := open(p)
		smallFiles(a, nFiles, p, "")
		closeAgent(a)
	}
	if phases["big"] {
		p := filepath.Join(dir, "fs_big.db")
		a := open(p)
		bigFile(a, big, nPread, p, "")
		closeAgent(a)
	}
	if phases["kv"] {
		p := filepath.Join(dir, "kv.db")
		a := open(p)
		kvPhase(a, nKV, "")
		closeAgent(a)
		rss("e")
	}
	if phases["tools"] {
		p := filepath.Join(dir, "tools.db")
		a := open(p)
		toolsPhase(a, nTools, "")
		closeAgent(a)
		rss("f")
	}
	if phases["disk"] {
		fsyncBaseline(dir, "end")
	}
	out, err := json.Marshal(R)
	if err != nil {
		fatalf("%v", err)
	}
	fmt.Println("JSON " + string(out))
	if os.Getenv("KEEP") == "" {
		os.RemoveAll(dir)
	}
}

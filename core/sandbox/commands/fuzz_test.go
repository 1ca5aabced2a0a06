package commands_test

// Fuzz targets for the little languages of the utilities: each runs the
// utility in a real sandbox (Hardened limits, a short wall time) over a
// temporary agent, the way a script would, and checks that whatever the
// program, pattern, format or archive, the utility answers with an exit
// status and never with a panic (a panic the sandbox recovered prints
// "internal error" and counts as a failure here), and that it writes
// nothing outside the directory it was given.
//
// Plain "go test" runs the seeds; "go test -fuzz=FuzzSed ./sandbox/commands"
// explores.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/vfs"
)

var fixedTime = time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)

var fuzzFixture = map[string]string{
	"/data/a.txt":       "apple\nbanana\ncherry\napple\n",
	"/data/csv.txt":     "name,age,city\nalice,30,paris\nbob,25,london\n",
	"/data/nums.txt":    "10\n2\n33\n-5\n1.5\n",
	"/data/data.json":   `{"count":3,"items":[1,2,3],"name":"demo","nested":{"k":"v"}}` + "\n",
	"/data/sub/c.md":    "# Title\nTODO: fix\n",
	"/data/sub/d/e.txt": "deep\n",
	"/tmp/.keep":        "",
}

// fuzzEnv is an agent with the fixture and a sandbox over it.
type fuzzEnv struct {
	a  *core.Agent
	sb *sandbox.Sandbox
}

// newFuzzEnv opens a fresh agent in a temporary directory. writable
// limits the sandbox's writes (nil: the whole agent filesystem, for the
// targets that check themselves that nothing else changed).
func newFuzzEnv(tb testing.TB, writable []string) *fuzzEnv {
	ctx := tb.Context()
	tb.Helper()
	dir, err := os.MkdirTemp("", "fuzz-commands-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	a, err := core.Open(context.Background(), filepath.Join(dir, "a.db"), core.Options{Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() })
	for p, content := range fuzzFixture {
		if err := a.FS.MkdirAll(ctx, filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := a.FS.WriteFile(ctx, p, []byte(content), vfs.WriteOptions{Perm: 0o644}); err != nil {
			tb.Fatal(err)
		}
	}
	limits := sandbox.Hardened
	limits.WallTime = 3 * time.Second
	sb, err := sandbox.New(a, sandbox.Options{
		Limits: limits,
		Now:    func() time.Time { return fixedTime },
		Policy: sandbox.Policy{Writable: writable},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return &fuzzEnv{a: a, sb: sb}
}

// shellQuote quotes s for the shell; NUL cannot be in an argument.
func shellQuote(s string) string {
	s = strings.ReplaceAll(s, "\x00", "")
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// argv joins args as one quoted command line.
func argv(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// fields splits a fuzzed option string into at most 16 arguments.
func fields(s string) []string {
	f := strings.Fields(s)
	if len(f) > 16 {
		f = f[:16]
	}
	return f
}

// run runs script with stdin in /data and checks the outcome is an
// ordinary one.
func (e *fuzzEnv) run(t *testing.T, script string, stdin []byte) sandbox.Result {
	t.Helper()
	var res sandbox.Result
	var err error
	hangGuard(t, script, func() {
		res, err = e.sb.Exec(context.Background(), script, sandbox.ExecOptions{Dir: "/data", Stdin: bytes.NewReader(stdin)})
	})
	if err != nil {
		t.Fatalf("Exec(%q): %v", script, err)
	}
	if strings.Contains(res.Stderr, "internal error") {
		t.Fatalf("%s: a panic was recovered: %s", script, res.Stderr)
	}
	if res.ExitCode < 0 || res.ExitCode > 255 {
		t.Fatalf("%s: exit status %d", script, res.ExitCode)
	}
	return res
}

// hangGuard runs fn and fails the input if it has not returned long
// after the sandbox's wall time should have stopped it: the fuzzing
// engine has no timeout of its own and would record a hang as nothing.
// A utility that ignores the end of its context keeps Exec waiting.
func hangGuard(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(hangAfter):
		buf := make([]byte, 1<<16)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%s: still running %v after it started (wall time 3s); goroutines:\n%s", what, hangAfter, buf)
	}
}

// hangAfter is far beyond the wall time, so that only a real hang (not
// a loaded machine) trips it.
const hangAfter = 60 * time.Second

// tree lists every path of the agent filesystem with its type and size,
// except those below skip.
func (e *fuzzEnv) tree(t *testing.T, skip string) []string {
	ctx := t.Context()
	t.Helper()
	var out []string
	err := e.a.FS.Walk(ctx, "/", func(p string, st vfs.Stat) error {
		if p == skip || strings.HasPrefix(p, skip+"/") {
			return nil
		}
		out = append(out, p+" "+itoa(int64(st.Mode))+" "+itoa(st.Size))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// confined runs script and fails if anything outside dir changed.
func (e *fuzzEnv) confined(t *testing.T, dir, script string, stdin []byte) sandbox.Result {
	t.Helper()
	before := strings.Join(e.tree(t, dir), "\n")
	res := e.run(t, script, stdin)
	if after := strings.Join(e.tree(t, dir), "\n"); after != before {
		t.Fatalf("%s changed the filesystem outside %s:\nbefore:\n%s\nafter:\n%s", script, dir, before, after)
	}
	return res
}

// FuzzSed: sed scripts, on stdin or a file, with the options that change
// parsing (-E, -z, -n, -s).
func FuzzSed(f *testing.F) {
	for _, s := range []string{
		"p", "s/a/b/g", `s/\(a\)\(p\)/\2\1/2`, "1~2d", "0,/re/s//X/", "$!N;P;D", "/a/,+2{s/a/A/;t x;:x}",
		"y/abc/xyz/", "a\\\nadded", "i hello", "c\\", "s/a/b/w /tmp/w.txt", "w /tmp/out", "w /nodir/f",
		"r /data/a.txt", "R /data/csv.txt", "=;l;L", "n;N;g;G;h;H;x;z", "q5", "Q", "s/x*/-/g", "s/[[:alpha:]]\\+/<&>/3g",
		"s/./\\U&/;s/$/\\E/", "b end; :end", "b nowhere", "{p", "}", "s/a", "s/a/b/e", "/[/p", `s/\(/x/`, "1,$ {/a/ !d}",
		"e date", "F", "v", "W /tmp/w2", "#n\np", "s/\n/x/", "M", "0~0p", "2,1p", "/x/I,/y/Mp", "s/a/b/gpw /dev/stdout",
	} {
		f.Add(s, "apple\nbanana\n\ncherry", uint8(0))
	}
	f.Add("s/a/b/", "a\x00b\x00", uint8(4))
	f.Add("p", "x", uint8(0x10))
	f.Add("s/(a|b)+/X/g", "abba", uint8(2))
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, script, input string, opts uint8) {
		args := []string{"sed"}
		for i, o := range []string{"-n", "-E", "-z", "-s"} {
			if opts&(1<<i) != 0 {
				args = append(args, o)
			}
		}
		args = append(args, "-e", script)
		if opts&0x10 != 0 {
			args = append(args, "/data/a.txt", "/data/csv.txt")
		}
		env.run(t, argv(args...), []byte(input))
	})
}

// FuzzAwk: awk programs, with -F and -v.
func FuzzAwk(f *testing.F) {
	for _, s := range []string{
		"{print $1}", "BEGIN{FS=\",\"}{s+=$2}END{print s}", "NR%2", "/a/,/c/", "{a[$1]++}END{for(k in a)print k,a[k]}",
		`{printf "%5.2f %s %c %d\n", $1, $2, 65, "x"}`, "BEGIN{print substr(\"hello\",2,3), index(\"abc\",\"c\"), length()}",
		`{gsub(/a+/,"<&>"); print}`, "{print > \"/tmp/o.txt\"}", "{print | \"cat\"}", "BEGIN{system(\"ls\")}",
		"BEGIN{getline x < \"/data/a.txt\"; print x}", "BEGIN{while((\"echo hi\" | getline l)>0) print l}",
		"function f(n){return n<2?n:f(n-1)+f(n-2)} BEGIN{print f(15)}", "BEGIN{printf \"%*d\", 5}", "BEGIN{printf \"%\"}",
		"BEGIN{x=sprintf(\"%c\", 256); print x}", "{$5=\"x\"; print NF}", "{NF=1000000}", "BEGIN{print 1/0}", "BEGIN { print -\"\" % 0 }",
		"BEGIN{print substr(\"x\", -1e18, 1e18)}", "BEGIN{split(\"a b\", arr); print arr[1]; delete arr; print length(arr)}",
		"BEGIN{print toupper(sprintf(\"%x\", -1))}", "{print $(-1)}", "BEGIN{srand(1); print rand() < 1}", "BEGIN{getline; print}",
		"BEGIN{close(\"x\"); fflush()}", "BEGIN{print ENVIRON[\"HOME\"]}", "BEGIN { while (1) {} }", "BEGIN{print > \"/nodir/x\"}",
		"{", "BEGIN{print 1", "@include \"x\"", "BEGIN{printf \"%d %d\\n\"}", "BEGIN{x[1]=1; x=2}",
	} {
		f.Add(s, "a,1 x\nb,2 y\nc,3 z\n", "")
	}
	f.Add("{print $2}", "a:b:c\n", ":")
	f.Add("{print}", "a\n", "[")
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, prog, input, fs string) {
		args := []string{"awk"}
		if fs != "" {
			args = append(args, "-F", fs, "-v", "v="+fs)
		}
		args = append(args, prog)
		env.run(t, argv(args...), []byte(input))
	})
}

// FuzzJq: jq filters over JSON (or not) input.
func FuzzJq(f *testing.F) {
	for _, s := range []string{
		".", ".items[]", ".nested.k", "[.items[] | . * 2] | add", "keys", "to_entries", "map(select(. > 1))",
		`.name | test("d.m")`, `.name | sub("(?<x>e)"; "\(.x)\(.x)")`, "paths", "[limit(3; repeat(1))]", "range(1e9) | empty",
		"def f: f; f", "reduce range(5) as $x (0; . + $x)", "input", "inputs", "$__loc__", "env", "$ENV.PATH", "input_filename",
		`@base64d`, `@sh`, `"\(1,2)"`, "tojson|fromjson", "getpath([\"a\",0,\"b\"])", "setpath([1e9]; 1)", ".[1e18]",
		"ltrimstr(1)", "splits(\"\")", "implode", "[.[]?]", "..", "tostream", "fromstream(tostream)", "ascii", "@text \"\\(.)\"",
		"limit(-1; 1)", "nth(-1)", "pow(2; 1e6)", "-(1e308*10)", "infinite|floor", "nan < 1", "gsub(\"\"; \"x\")", "$x", "include \"a\"; .",
		"import \"a\" as a; .", "input_line_number", "halt_error", "error(null)", "try error catch .", "label $f | break $f",
		"getpath(1)", "splits(1)", "@json \"\\(.)\" | fromjson", "[range(10)] | .[2:1e18]", ".[-1e18:]", "walk(.)", "debug", "stderr",
		"{(\"a\",\"b\"): 1}", "{$__loc__}", "ltrimstr", "significand", "getpath([1e300])", "tojson | .[1e18:]",
	} {
		f.Add(s, `{"count":3,"items":[1,2,3],"name":"demo","nested":{"k":"v"}}`, uint8(0))
	}
	f.Add(".", "[1,", uint8(0))
	f.Add(".[0]", "1 2 3", uint8(2))
	f.Add("$x", "null", uint8(8))
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, filter, input string, opts uint8) {
		args := []string{"jq"}
		for i, o := range []string{"-r", "-s", "-n", "-c", "-e", "-S", "-j", "-R"} {
			if opts&(1<<i) != 0 {
				args = append(args, o)
			}
		}
		if opts&8 != 0 {
			args = append(args, "--arg", "x", input)
		}
		args = append(args, filter)
		env.run(t, argv(args...), []byte(input))
	})
}

// FuzzFind: find expressions (operators, tests, actions).
func FuzzFind(f *testing.F) {
	for _, s := range []string{
		"-name *.txt", "-type f -size +1k", "( -name a -o -name b ) -print", "! -path */sub/* -maxdepth 2", "-newer a.txt",
		"-mtime -1 -mmin +5", "-regex .*\\.md -iregex .*A.*", "-perm -644 -empty", "-exec wc -l {} ;", "-exec echo {} +",
		"-execdir echo {} ;", "-delete", "-printf %p\\t%s\\t%M\\t%TY\\n", "-printf %", "-printf %Z", "-fprint /tmp/f.txt",
		"-links 1 -inum 1 -user agent -group agent -nouser", "(", ")", "-o", "!", "-name", "-size 1Q", "-mindepth -1", "-depth -prune",
		"-samefile a.txt", "-L -follow", "-quit", "-ok rm {} ;", "-exec", "-exec sh -c 'rm -rf /' ;", "-newerXY x", "-newermt 2024-01-01",
		"-name [", "-path ***", "-maxdepth 99999999999999999999", "-printf %-10.3p|%+d|%k|%b|%y|%l|%f|%h|%H|%P\\n", "-ls", "-print0",
	} {
		f.Add(s, "/data")
	}
	f.Add("-name *.txt", "/nonexistent")
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, expr, start string) {
		args := append([]string{"find", start}, fields(expr)...)
		env.run(t, argv(args...), nil)
	})
}

// FuzzGrep: grep patterns and flags, on stdin and recursively.
func FuzzGrep(f *testing.F) {
	for _, s := range []string{
		"a", "^a.*e$", `\(ap\)\1`, "a\\{2,\\}", "[[:upper:]]", "[]", "[z-a]", "\\", "*", "a**", "(a|b", "x{1000}", "x{1001}",
		`\bword\b`, `\<a`, "[[=a=]]", "[[.hyphen.]]", "(?i)a", `\p{Greek}`, "a{,}", "\\w+\\s", "a|", "()", "$^",
	} {
		f.Add(s, "-n", "apple\nbanana\ncherry\n")
		f.Add(s, "-E -o -i", "apple\nbanana\ncherry\n")
	}
	for _, fl := range []string{"-F -x", "-P", "-c -v", "-r -l --include=*.txt .", "-A 2 -B1 -C 3", "-m 1 -b -H",
		"-w -L -q -s", "-e x -e y", "-f /data/a.txt", "-z", "--color=always", "-A -1", "-m -5", "-R --exclude-dir=sub ."} {
		f.Add("a", fl, "apple\nxa\n")
	}
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, pattern, flags, input string) {
		args := append(append([]string{"grep"}, fields(flags)...), "-e", pattern)
		env.run(t, argv(args...), []byte(input))
	})
}

// FuzzRg: ripgrep patterns and flags (Rust regex syntax, globs, types).
func FuzzRg(f *testing.F) {
	for _, s := range []string{
		"a", "(?i)APPLE", `\d+`, "[[:alpha:]]+", "a{2,}", "(", "\\", "[", "x{100000}", `\p{L}`, "(?P<n>a)", "a(?=b)", "$",
	} {
		f.Add(s, "-n")
		f.Add(s, "-F -w --count")
	}
	for _, fl := range []string{"-g *.txt", "-g !**/sub/**", "-t md", "-t nosuchtype", "-T txt", "--files", "-l -i", "-C 2 -m1",
		"--hidden --no-ignore", "-o -r X", "--json", "-e b -e c", "-U --multiline-dotall", "-g [", "-A -1", "--max-depth=1", "-S", "-z"} {
		f.Add("a", fl)
	}
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, pattern, flags string) {
		args := append(append([]string{"rg"}, fields(flags)...), "-e", pattern, ".")
		env.run(t, argv(args...), nil)
	})
}

// tarSeed builds an archive from (name, type, linkname, body) entries.
func tarSeed(tb testing.TB, gz bool, entries ...[4]string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e[0], Typeflag: e[1][0], Linkname: e[2], Size: int64(len(e[3])), Mode: 0o644, ModTime: fixedTime}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(e[3]))
		}
	}
	tw.Close()
	if !gz {
		return b.Bytes()
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b.Bytes())
	zw.Close()
	return z.Bytes()
}

// FuzzTar: archives as input of tar -t and tar -x. Extraction stays in
// its directory whatever the names and links in the archive: nothing
// else in the agent filesystem changes.
func FuzzTar(f *testing.F) {
	ctx := f.Context()
	reg, dir, sym, hard := string(tar.TypeReg), string(tar.TypeDir), string(tar.TypeSymlink), string(tar.TypeLink)
	for _, gz := range []bool{false, true} {
		f.Add(tarSeed(f, gz, [4]string{"a.txt", reg, "", "hello\n"}, [4]string{"d/", dir, "", ""}, [4]string{"d/b", reg, "", "b"}))
		f.Add(tarSeed(f, gz, [4]string{"../escape.txt", reg, "", "x"}))
		f.Add(tarSeed(f, gz, [4]string{"/data/abs.txt", reg, "", "x"}))
		f.Add(tarSeed(f, gz, [4]string{"l", sym, "/data", ""}, [4]string{"l/planted.txt", reg, "", "x"}))
		f.Add(tarSeed(f, gz, [4]string{"up", sym, "../../data", ""}, [4]string{"up/a.txt", reg, "", "overwritten"}))
		f.Add(tarSeed(f, gz, [4]string{"h", hard, "/data/a.txt", ""}, [4]string{"h", reg, "", "through the link"}))
		f.Add(tarSeed(f, gz, [4]string{"h2", hard, "../../data/a.txt", ""}))
		f.Add(tarSeed(f, gz, [4]string{"a/b/../../../c", reg, "", "x"}, [4]string{".", dir, "", ""}, [4]string{"", reg, "", ""}))
	}
	f.Add([]byte{})
	f.Add(make([]byte, 1024))
	f.Add([]byte("\x1f\x8b\x08\x00garbage"))
	env := newFuzzEnv(f, nil)
	f.Fuzz(func(t *testing.T, archive []byte) {
		if err := env.a.FS.WriteFile(ctx, "/in.tar", archive, vfs.WriteOptions{Perm: 0o644}); err != nil {
			t.Fatal(err)
		}
		env.run(t, "rm -rf /tmp/x && mkdir -p /tmp/x/1 /tmp/x/2", nil)
		env.run(t, "tar -tvf /in.tar; tar -tzf /in.tar", nil)
		// Two fresh directories: as GNU tar, ours follows a symbolic link
		// that was already in the directory before the extraction.
		env.confined(t, "/tmp/x", "tar -xf /in.tar -C /tmp/x/1; cd /tmp/x/2 && tar -xzf /in.tar", nil)
	})
}

// FuzzPatch: patch text applied in a directory of its own; whatever the
// file names in the patch, nothing outside it changes.
func FuzzPatch(f *testing.F) {
	for _, s := range []string{
		"--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n",
		"--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-one\n+uno\n",
		"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n",
		"--- a/f.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n",
		"--- a/../../data/a.txt\n+++ b/../../data/a.txt\n@@ -1 +1 @@\n-apple\n+pwned\n",
		"--- /data/a.txt\n+++ /data/a.txt\n@@ -1 +1 @@\n-apple\n+pwned\n",
		"--- a/f.txt\n+++ b/f.txt\n@@ -99999999999,1 +1,99999999999 @@\n-x\n",
		"--- a/f.txt\n+++ b/f.txt\n@@ -1,-1 +1 @@\n",
		"--- a/f.txt\n+++ b/f.txt\n@@ -2,0 +3,1 @@\n+added\n\\ No newline at end of file\n",
		"diff --git a/f.txt b/g.txt\nrename from f.txt\nrename to g.txt\n",
		"diff --git a/f.txt b/../x\nsimilarity index 100%\nrename from f.txt\nrename to ../x\n",
		"*** f.txt\n--- f.txt\n***************\n*** 1 ****\n! one\n--- 1 ----\n! uno\n",
		"1c1\n< one\n---\n> uno\n",
		"@@ -1 +1 @@\n", "---", "+++ ", "@@", "--- a\n+++ b\n@@ -1 +1 @@",
	} {
		f.Add(s, "-p1")
		f.Add(s, "-p0 -R")
	}
	f.Add("--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-one\n+uno\n", "-o /data/out.txt")
	f.Add("--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-one\n+uno\n", "-d /data")
	f.Add("--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-one\n+uno\n", "--dry-run -N -f -s -F3 -b")
	env := newFuzzEnv(f, nil)
	f.Fuzz(func(t *testing.T, patch, flags string) {
		env.run(t, "rm -rf /tmp/p && mkdir /tmp/p && printf 'one\\ntwo\\nthree\\n' > /tmp/p/f.txt", nil)
		args := []string{"patch"}
		for _, a := range fields(flags) {
			// Arguments that name what to write (a file to patch, -o, -d,
			// -B, -r, -i...) may legitimately point elsewhere: only the
			// patch text is judged.
			long := strings.HasPrefix(a, "--")
			if !strings.HasPrefix(a, "-") || long && a != "--dry-run" && a != "--reverse" && a != "--forward" ||
				!long && strings.ContainsAny(a[1:], "odBrYzi") {
				continue
			}
			args = append(args, a)
		}
		env.confined(t, "/tmp/p", "cd /tmp/p && "+argv(args...), []byte(patch))
	})
}

// FuzzPrintf: printf formats and arguments (the builtin of the shell and
// the utility's, which share Sprintf).
func FuzzPrintf(f *testing.F) {
	for _, s := range []string{
		"%s\\n", "%d %i %x %o %X %u", "%5.2f|%-8e|%G", "%c%c", "%b", "\\101\\x42\\u00e9\\U0001F600", "%%", "%*.*d", "%q",
		"%", "%.", "%-", "%99999999999d", "%.99999999999f", "%*d", "%1$s", "%hhd %ld %lld %zd %jd", "%n", "%p", "%a", "\\c",
		"\\x", "\\0777", "%(%Y)T", "%.0s", "%'d", "%#x %#o", "% d %+d", "%.*s",
	} {
		f.Add(s, "1 2.5 abc 'A -3")
	}
	f.Add("%d", "99999999999999999999999999 0x10 010 1e5")
	f.Add("%.2147483648f", "1")
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, format, args string) {
		a := append([]string{"printf", format}, fields(args)...)
		env.run(t, argv(a...)+"; /usr/bin/"+argv(a...), nil)
	})
}

// FuzzDate: date formats and the dates -d parses.
func FuzzDate(f *testing.F) {
	for _, s := range []string{
		"+%Y-%m-%d %H:%M:%S", "+%s %N %z %:z %::z %Z", "+%a %A %b %B %c %C %D %e %F %g %G %h %I %j %k %l", "+%-d %_m %05Y %^a %#b",
		"+%", "+%E", "+%O", "+%q %u %V %w %W %U %x %X %y %R %T %r %p %P %n %t", "+%999999999Y", "+%-", "+%.3N",
	} {
		f.Add(s, "2024-01-15 10:30:00")
		f.Add(s, "@1700000000")
	}
	for _, d := range []string{"", "now", "yesterday", "tomorrow", "next monday", "last year", "1 day ago", "+3 hours",
		"2024-02-30", "@-99999999999999999", "@99999999999999999999", "TZ=\"Europe/Paris\" 2024-01-01", "9999999-01-01",
		"2024-01-15T10:30:00Z", "2024-01-15 25:61:61", "Jan 15 2024", "15 Jan", "1e9 seconds", "-999999999999 days"} {
		f.Add("+%F %T", d)
	}
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, format, date string) {
		env.run(t, argv("date", "-u", "-d", date, format)+"; "+argv("date", "-u", format)+"; "+argv("touch", "-d", date, "/tmp/t"), nil)
	})
}

// FuzzTr: tr sets (ranges, classes, equivalences, repeats).
func FuzzTr(f *testing.F) {
	for _, p := range [][2]string{
		{"a-z", "A-Z"}, {"[:lower:]", "[:upper:]"}, {"a-c", "[x*]"}, {"abc", "[x*2]y"}, {"\\n", "\\t"}, {"\\", "x"}, {"z-a", "x"},
		{"[=a=]", "b"}, {"[:alpha:]", ""}, {"[a*99999999999]", "b"}, {"[", "]"}, {"[:", ":]"}, {"[:foo:]", "x"}, {"\\777", "\\0"},
		{"a", "[:upper:]"}, {"[:upper:]", "[:lower:][:digit:]"}, {"-", "-"}, {"a-", "-z"}, {"\\x41", "b"}, {"é", "e"},
	} {
		f.Add(p[0], p[1], uint8(0), "Hello, World 123\n")
	}
	f.Add("a-z", "", uint8(1), "abc")
	f.Add("a", "b", uint8(6), "aab")
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, set1, set2 string, opts uint8, input string) {
		args := []string{"tr"}
		for i, o := range []string{"-d", "-s", "-c", "-t"} {
			if opts&(1<<i) != 0 {
				args = append(args, o)
			}
		}
		args = append(args, set1)
		if set2 != "" || opts&1 == 0 {
			args = append(args, set2)
		}
		env.run(t, argv(args...), []byte(input))
	})
}

// FuzzSort: sort keys, separators and orderings.
func FuzzSort(f *testing.F) {
	for _, s := range []string{
		"-k2,2n -t,", "-k1.2,1.3r", "-n", "-g", "-h", "-V", "-M", "-R", "-u -f", "-k3 -k1,1", "-k0", "-k1.0", "-k99999999999",
		"-k", "-t", "-t ab", "-k1,1bn -s", "-z", "-c", "-C", "-o /tmp/s.txt", "-S 1G --parallel=8", "-k2.1b,2.1b", "-k1n,1r",
		"-m /data/a.txt /data/nums.txt", "-d -i", "-k 1,1 -k 2,2", "-t \\0",
	} {
		f.Add(s, "b,2,x\na,10,y\nc,1.5K,z\nJan 3\n-1e3\nv1.10\nv1.9\n")
	}
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, opts, input string) {
		env.run(t, argv(append([]string{"sort"}, fields(opts)...)...), []byte(input))
	})
}

// FuzzCut: cut lists and delimiters.
func FuzzCut(f *testing.F) {
	for _, s := range []string{"1", "1,3", "2-", "-2", "1-3,5-", "3-1", "0", "-", "", ",", "1,,2", "99999999999999999999",
		"1-99999999999", "a", "1-2-3", "--", "-0"} {
		f.Add(s, ",", uint8(0), "a,b,c,d\n1,2,3\nno delim\n")
		f.Add(s, "", uint8(1), "héllo wörld\n")
	}
	f.Add("1", "ab", uint8(0), "x")
	f.Add("2", ",", uint8(6), "a,b\n")
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, list, delim string, mode uint8, input string) {
		args := []string{"cut", []string{"-f", "-c", "-b"}[int(mode)%3], list}
		if mode%3 == 0 && delim != "" {
			args = append(args, "-d", delim)
		}
		if mode&4 != 0 {
			args = append(args, "-s", "--complement")
		}
		if mode&8 != 0 {
			args = append(args, "--output-delimiter="+delim)
		}
		env.run(t, argv(args...), []byte(input))
	})
}

// FuzzXargs: xargs options and input splitting (quotes, -0, -d, -I, -n,
// -L, -s); the commands it runs are the sandbox's.
func FuzzXargs(f *testing.F) {
	for _, s := range []string{
		"", "-n 1", "-n 2 echo", "-L 1", "-I {} echo [{}]", "-I {}", "-0", "-d ,", "-d \\n", "-s 10", "-s 0", "-n 0", "-n -1",
		"-P 4 -n 1 echo", "-r", "-t", "-x -s 5", "-a /data/a.txt", "-E END", "-i", "-l", "-n 99999999999999999999", "-I {} sh -c 'echo {}'",
		"-d", "-I", "--max-args=1 --null", "-p", "--show-limits", "-n1 wc -l",
	} {
		f.Add(s, "a b 'c d' \"e f\" g\\ h\nEND\ni\n")
	}
	f.Add("-0", "a\x00b\x00")
	f.Add("", "unterminated 'quote\n")
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, opts, input string) {
		env.run(t, argv(append([]string{"xargs"}, fields(opts)...)...), []byte(input))
	})
}

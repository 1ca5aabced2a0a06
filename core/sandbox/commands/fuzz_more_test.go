package commands_test

import (
	"archive/zip"
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzBc runs bc programs: no panic, no hang past the wall time, limits
// hold (huge powers, scales and loops stop with an error or a limit).
func FuzzBc(f *testing.F) {
	for _, s := range []string{
		"1+2*3", "scale=3; 10/3", "obase=16; 255; -255.5", "ibase=16; FF.8", "2^1000000", "2^-3", "scale=100000; 1/3",
		"sqrt(2); sqrt(-1)", "1/0", "5%0", "x=1; while (1) x++", "for (i=0; i<10; i++) { if (i==5) break; i }",
		"define f(n) { if (n<2) return (n); return (f(n-1)+f(n-2)); }\nf(15)", "define g(n) { return (g(n)); }\ng(1)",
		"a[1]=2; a[99999999]", "length(0.000); scale(1.50)", "\"str\"; print \"a\\n\", 1, \"\\q\"", "/* open", "\"open",
		"s(1); c(1); a(1e5); l(0); l(-1); e(1000000); e(-50)", "quit", "2+", "((((((((((1))))))))))", "last; .", "x++ + ++x",
		"obase=1000; 123456789", "obase=1", "ibase=1", "scale=-1", "auto x", "return 5", "@", "1 \\\n+ 2",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, prog string, lib bool) {
		args := []string{"bc"}
		if lib {
			args = append(args, "-l")
		}
		env.run(t, argv(args...), []byte(prog))
	})
}

// FuzzDd parses dd operands: any operand string runs or is refused,
// within /tmp and the limits.
func FuzzDd(f *testing.F) {
	for _, s := range []string{
		"bs=1 count=3", "if=/data/a.txt of=/tmp/o bs=2 skip=1", "of=/tmp/o seek=5 conv=notrunc", "bs=1x2x3 count=1",
		"ibs=3 obs=5", "bs=1G", "bs=0", "count=-1", "skip=99999999999999999999", "conv=ucase,lcase", "conv=sync bs=7",
		"iflag=skip_bytes,count_bytes skip=3 count=4", "oflag=seek_bytes,append of=/tmp/o seek=2", "status=none",
		"status=bogus", "of=/data/a.txt", "if=/nope", "bs=1kB count=2K", "bs=1E", "if=/dev/zero bs=1M count=100",
		"of=/dev/stdout", "if=/dev/stdin", "seek=9223372036854775807 of=/tmp/o", "=", "x", "bs=1b",
	} {
		f.Add(s, "hello world\n")
	}
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, ops, input string) {
		env.run(t, argv(append([]string{"dd"}, fields(ops)...)...), []byte(input))
	})
}

func zipOf(t testing.TB, members map[string]string, method uint16) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range members {
		h := &zip.FileHeader{Name: name, Method: method}
		if strings.HasPrefix(name, "link:") {
			h.Name = strings.TrimPrefix(name, "link:")
			h.SetMode(os.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	zw.Close()
	return b.Bytes()
}

// FuzzUnzip reads arbitrary archives: extraction stays below its
// directory (/tmp here: anything else is refused by the policy and must
// not crash), a bomb stops at the limits, garbage is an error.
func FuzzUnzip(f *testing.F) {
	ctx := f.Context()
	f.Add(zipOf(f, map[string]string{"a.txt": "hello", "d/": "", "d/b": "x"}, zip.Deflate), uint8(0))
	f.Add(zipOf(f, map[string]string{"../../evil": "x", "/abs/evil": "y", "./ok": "z"}, zip.Store), uint8(0))
	f.Add(zipOf(f, map[string]string{"link:l": "/data", "l/planted": "x"}, zip.Store), uint8(1))
	f.Add(zipOf(f, map[string]string{"bomb": strings.Repeat("\x00", 4<<20)}, zip.Deflate), uint8(2))
	f.Add([]byte("PK\x05\x06"+strings.Repeat("\x00", 18)), uint8(0))
	f.Add([]byte("not a zip"), uint8(3))
	env := newFuzzEnv(f, []string{"/tmp"})
	f.Fuzz(func(t *testing.T, archive []byte, opts uint8) {
		mode := []string{"-o -q -d /tmp/x", "-l", "-t", "-p", "-Z1", "-n -d /tmp/y", "-j -o -d /tmp/z", "-qq -o"}[opts%8]
		res := env.run(t, "cat > /tmp/a.zip && unzip "+mode+" /tmp/a.zip", archive)
		_ = res
		// Nothing of the archive lands outside /tmp.
		if _, err := env.a.FS.Stat(ctx, "/abs"); err == nil {
			t.Fatalf("an absolute member was written outside the extraction directory")
		}
		if _, err := env.a.FS.Stat(ctx, "/evil"); err == nil {
			t.Fatalf("a ../ member escaped")
		}
		if _, err := env.a.FS.Stat(ctx, "/data/planted"); err == nil {
			t.Fatalf("a member was written through a planted link")
		}
	})
}

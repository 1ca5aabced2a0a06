package commands

import (
	"regexp"
	"testing"
)

func TestPosixToGo(t *testing.T) {
	cases := []struct {
		re      string
		ere     bool
		in      string
		match   string
		wantErr bool
	}{
		{`a\(b\)*c`, false, "xabbc", "abbc", false},
		{`a(b)c`, false, "a(b)c", "a(b)c", false},
		{`x\{2\}`, false, "xxx", "xx", false},
		{`a{2}`, false, "a{2}", "a{2}", false},
		{`a+`, false, "aa+", "a+", false},
		{`a\+`, false, "aaa", "aaa", false},
		{`^*a`, false, "*a", "*a", false},
		{`[]a]`, false, "]", "]", false},
		{`[\n]`, false, `\`, `\`, false},
		{`[[:digit:]]\+`, false, "ab123", "123", false},
		{`\<the\>`, false, "other the", "the", false},
		{`a$b`, false, "a$b", "a$b", false},
		{`(a|b)+`, true, "xabba", "abba", false},
		{`a{,`, true, "a{,", "a{,", false},
		{`\(a\)\1`, false, "", "", true},
	}
	for _, c := range cases {
		goRe, err := posixToGo(c.re, c.ere)
		if c.wantErr {
			if err == nil {
				t.Errorf("posixToGo(%q) = %q, want an error", c.re, goRe)
			}
			continue
		}
		if err != nil {
			t.Errorf("posixToGo(%q): %v", c.re, err)
			continue
		}
		re, err := regexp.Compile(goRe)
		if err != nil {
			t.Errorf("posixToGo(%q) = %q: %v", c.re, goRe, err)
			continue
		}
		re.Longest()
		if got := re.FindString(c.in); got != c.match {
			t.Errorf("%q (as %q) on %q matched %q, want %q", c.re, goRe, c.in, got, c.match)
		}
	}
}

func TestSprintf(t *testing.T) {
	cases := []struct {
		format string
		args   []string
		want   string
		status int
	}{
		{"%s|%5s|%-5s|\n", []string{"a", "b", "c"}, "a|    b|c    |\n", 0},
		{"%d %i %x %o %X\n", []string{"10", "-3", "255", "8", "255"}, "10 -3 ff 10 FF\n", 0},
		{"%.3f %e %g\n", []string{"3.14159", "1000", "0.0001"}, "3.142 1.000000e+03 0.0001\n", 0},
		{"%s\n", []string{"a", "b"}, "a\nb\n", 0},
		{"%d\n", []string{"x"}, "0\n", 1},
		{"%c%c\n", []string{"hello", "w"}, "hw\n", 0},
		{"%b\n", []string{`a\tb\c ignored`}, "a\tb", 0},
		{`\101\x42\n`, nil, "AB\n", 0},
		{"%%%s%%\n", []string{"p"}, "%p%\n", 0},
		{"%*d|%-*d|\n", []string{"4", "7", "3", "1"}, "   7|1  |\n", 0},
		{"%d\n", []string{"'A"}, "65\n", 0},
		{"%q\n", []string{"a b'c"}, `a\ b\'c` + "\n", 0},
	}
	for _, c := range cases {
		got, status := Sprintf(c.format, c.args, func(string) {})
		if got != c.want || status != c.status {
			t.Errorf("Sprintf(%q, %q) = %q, %d; want %q, %d", c.format, c.args, got, status, c.want, c.status)
		}
	}
}

func TestParseCount(t *testing.T) {
	for s, want := range map[string]int64{"10": 10, "2k": 2048, "1K": 1024, "3M": 3 << 20, "1KB": 1000, "2b": 1024} {
		if n, _, ok := parseCount(s); !ok || n != want {
			t.Errorf("parseCount(%q) = %d, %v; want %d", s, n, ok, want)
		}
	}
	if _, sign, ok := parseCount("-5"); !ok || sign != '-' {
		t.Errorf("parseCount(-5): sign %c ok %v", sign, ok)
	}
	if _, _, ok := parseCount("x"); ok {
		t.Error("parseCount(x) succeeded")
	}
}

func TestParseMode(t *testing.T) {
	cases := []struct {
		s    string
		base uint32
		want uint32
	}{
		{"755", 0, 0o755}, {"u+x", 0o644, 0o744}, {"go-w", 0o666, 0o644}, {"a=r", 0o777, 0o444}, {"+x", 0o600, 0o711},
	}
	for _, c := range cases {
		if got, ok := parseMode(c.s, c.base); !ok || got != c.want {
			t.Errorf("parseMode(%q, %o) = %o, %v; want %o", c.s, c.base, got, ok, c.want)
		}
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1023: "1023", 1024: "1.0K", 1536: "1.5K", 10240: "10K", 1 << 20: "1.0M", 1<<20 + 1: "1.1M"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOptsParse(t *testing.T) {
	s := spec{short: "nk:i::", long: map[string]string{"numeric": "n", "key=": "k", "in-place": "i"}}
	o, ops, err := s.parse([]string{"-nk2", "file", "--key=3", "-i.bak", "-i", "--num", "--", "-x"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.has("n") || o.count("n") != 2 || len(o.vals("k")) != 2 || o.vals("k")[1] != "3" || o.vals("i")[0] != ".bak" || o.vals("i")[1] != "" {
		t.Errorf("options %+v", o.list)
	}
	if len(ops) != 2 || ops[0] != "file" || ops[1] != "-x" {
		t.Errorf("operands %q", ops)
	}
	if _, _, err := s.parse([]string{"-z"}); err == nil {
		t.Error("unknown option accepted")
	}
	if _, _, err := s.parse([]string{"-k"}); err == nil {
		t.Error("missing argument accepted")
	}
}

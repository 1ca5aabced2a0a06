package sandbox_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/sandbox/commands"
)

// commandCases test each utility on the fixture in /data (see
// helpers_test.go), with the sandbox's clock fixed at fixedTime.
var commandCases = []struct {
	cmd, script, want string
	code              int
}{
	// curl without a network rule: denied (the network tests are in net_test.go).
	{"curl", "curl -sS http://example.com/; echo rc=$?", "rc=7\n", 0},
	{"curl", "curl; echo rc=$?", "rc=2\n", 0},
	// node: JavaScript in the engine (its own tests are in jsnode/).
	{"node", "node -e 'console.log(require(\"fs\").readFileSync(\"a.txt\", \"utf8\").split(\"\\n\")[0])'", "apple\n", 0},
	{"cat", "cat -n b.txt", "     1\tline one\n     2\tline two\n     3\tline three\n", 0},
	{"cat", "cat -s <<< $'a\\n\\n\\n\\nb'", "a\n\nb\n", 0},
	{"cat", "cat nope a.txt | head -1", "apple\n", 0},
	{"cat", "cat /dev/null; echo x | cat /dev/stdin", "x\n", 0},
	{"ls", "ls -1 sub", "c.md\nd.log\ndeep\n", 0},
	{"ls", "ls -l sub/c.md", "-rw-r--r-- 1 root root 33 Jan 15 10:30 sub/c.md\n", 0},
	{"ls", "ls -lh sizes.txt code.go | awk '{print $5, $9}'", "81 code.go\n27 sizes.txt\n", 0},
	{"ls", "ls -R sub", "sub:\nc.md\nd.log\ndeep\n\nsub/deep:\ne.txt\n", 0},
	{"ls", "ls -t a.txt; touch -d '2030-01-01' b.txt; ls -t a.txt b.txt", "a.txt\nb.txt\na.txt\n", 0},
	{"ls", "ls nope", "", 2},
	{"mkdir", "mkdir -p q/r/s && mkdir -v q/t && ls q", "mkdir: created directory 'q/t'\nr\nt\n", 0},
	{"mkdir", "mkdir -m 700 m && stat -c %a m", "700\n", 0},
	{"rmdir", "mkdir -p p1/p2 && rmdir -p p1/p2 && ls -d p1", "", 2},
	{"rm", "rm -rv sub/deep", "removed 'sub/deep/e.txt'\nremoved directory 'sub/deep'\n", 0},
	{"rm", "rm -rf / ; echo $?", "1\n", 0},
	{"mv", "mv -v a.txt z.txt", "renamed 'a.txt' -> 'z.txt'\n", 0},
	{"mv", "mkdir t && mv a.txt b.txt t && ls t", "a.txt\nb.txt\n", 0},
	{"mv", "mv sub sub/deep", "", 1},
	{"cp", "cp -v a.txt c1.txt", "'a.txt' -> 'c1.txt'\n", 0},
	{"cp", "cp -a sub s2 && stat -c '%n %Y' s2/c.md", "s2/c.md 1705314600\n", 0},
	{"cp", "cp -n a.txt b.txt && head -1 b.txt", "line one\n", 0},
	{"ln", "ln -s /data/a.txt abs && cat abs | head -1 && readlink abs", "apple\n/data/a.txt\n", 0},
	{"ln", "ln sub hl", "", 1},
	{"touch", "touch -d '2020-02-03 04:05:06' a.txt && stat -c %y a.txt", "2020-02-03 04:05:06.000000000 +0000\n", 0},
	{"touch", "touch -t 202101020304.05 a.txt && date -r a.txt +%FT%T", "2021-01-02T03:04:05\n", 0},
	{"touch", "touch -r sub/c.md new && stat -c %Y new", "1705314600\n", 0},
	{"stat", "stat a.txt", "  File: a.txt\n  Size: 26        \tBlocks: 8          IO Block: 4096   regular file\nDevice: 0,0\tInode: ", 0},
	{"stat", "stat -c '%U %G %h %A' a.txt", "root root 1 -rw-r--r--\n", 0},
	{"stat", "stat --printf '%s\\n' b.txt", "29\n", 0},
	{"readlink", "readlink -f sub/../link", "/data/a.txt\n", 0},
	{"readlink", "readlink a.txt; echo $?", "1\n", 0},
	{"readlink", "readlink -m /x/../y/z", "/y/z\n", 0},
	{"realpath", "realpath link sub/deep/..", "/data/a.txt\n/data/sub\n", 0},
	{"realpath", "realpath --relative-to=sub other/x.txt", "../other/x.txt\n", 0},
	{"realpath", "realpath -e nope", "", 1},
	{"basename", "basename -s .txt a.txt b.txt", "a\nb\n", 0},
	{"dirname", "dirname a/b c", "a\n.\n", 0},
	{"pwd", "cd sub/deep && pwd && pwd -P", "/data/sub/deep\n/data/sub/deep\n", 0},
	{"pwd", "ln -s sub/deep dl && cd dl && pwd && pwd -P", "/data/dl\n/data/sub/deep\n", 0},
	{"echo", "echo -n a; echo -e 'b\\tc'; echo", "ab\tc\n\n", 0},
	// shell beside bash and GNU (issue 12)
	{"chmod", "chmod 600 a.txt && chmod -R go+w sub && chmod u+x,g-w a.txt && stat -c '%a %n' a.txt sub sub/c.md", "700 a.txt\n777 sub\n666 sub/c.md\n", 0},
	{"chmod", "chmod 999 a.txt", "", 1},
	{"chown", "chown 1000:1000 a.txt && chown root a.txt && chown -h 5 link && chown -R 7:8 sub && stat -c '%u:%g' a.txt link sub/deep/e.txt", "0:1000\n5:0\n7:8\n", 0},
	{"chown", "chown nobody a.txt", "", 1},
	{"chgrp", "chgrp 42 a.txt && stat -c %g a.txt", "42\n", 0},
	{"cmp", "cmp a.txt other/x.txt; cmp -l a.txt other/x.txt; cmp -s a.txt a.txt && echo same", "a.txt other/x.txt differ: byte 26, line 4\n26  12  40\nsame\n", 0},
	{"dd", "printf XXXXXXXXXX > p; printf ab | dd of=p bs=1 seek=3 conv=notrunc status=none; cat p; dd if=a.txt bs=2 skip=1 count=2 status=none", "XXXabXXXXXple\n", 0},
	{"shuf", "shuf -i 1-5 | sort -n | tr -d '\\n'; head -c 64 /dev/zero > s; shuf -e a b c d --random-source=s > o1; shuf -e a b c d --random-source=s > o2; cmp o1 o2 && echo", "12345\n", 0},
	{"envsubst", "FOO=bar envsubst <<< 'a $FOO ${FOO} $NOPE'; echo '$FOO $HOME' | FOO=x envsubst '$FOO'", "a bar bar \nx $HOME\n", 0},
	{"time", "{ time -p true; } 2>&1 | cut -d' ' -f1; time false; echo rc=$?", "real\nuser\nsys\nrc=1\n", 0},
	{"bc", "echo 'scale=3; 10/3; obase=16; 255' | bc; echo 's(1)' | bc -l", "3.333\nFF\n.84147098480789650665\n", 0},
	{"zip", "zip -q -r t.zip a.txt sub && unzip -Z1 t.zip | head -3", "a.txt\nsub/\nsub/.hidden\n", 0},
	{"unzip", "zip -q t.zip a.txt && mkdir o && unzip -q t.zip -d o && cmp a.txt o/a.txt && unzip -p t.zip | head -1", "apple\n", 0},
	{"xz", "xz -k a.txt && xz -dc a.txt.xz | head -1", "apple\n", 0},
	{"unxz", "xz a.txt && unxz a.txt.xz && head -1 a.txt", "apple\n", 0},
	{"xzcat", "xz -c b.txt | xzcat | tail -1", "line three\n", 0},
	{"bzcat", "echo QlpoOTFBWSZTWatrofEAAALZgAAQQAAQABJkwBAgADEA000EAB6j705RogeLuSKcKEhVtdD4gA== | base64 -d | bzcat", "hello bzip2\n", 0},
	{"bunzip2", "echo QlpoOTFBWSZTWatrofEAAALZgAAQQAAQABJkwBAgADEA000EAB6j705RogeLuSKcKEhVtdD4gA== | base64 -d > h.bz2 && bunzip2 h.bz2 && cat h", "hello bzip2\n", 0},
	{"bzip2", "bzip2 a.txt; echo rc=$?; ls a.txt*", "rc=1\na.txt\n", 0},
	{"printf", "printf '%5.1f|%-4d|%04x|%s\\n' 2.25 7 255 a b", "  2.2|7   |00ff|a\n  0.0|0   |0000|\n", 1},
	{"printf", "printf '%q %b\\n' 'a b' 'x\\ty'", "a\\ b x\ty\n", 0},
	{"printf", "printf -v v '%03d' 5; echo $v", "005\n", 0},
	{"test", "test -d sub && [ -f a.txt ] && [ ! -e nope ] && echo ok", "ok\n", 0},
	{"head", "head -c 3 a.txt; echo; head -n1 -q a.txt b.txt", "app\napple\nline one\n", 0},
	{"head", "head -n 1 a.txt b.txt", "==> a.txt <==\napple\n\n==> b.txt <==\nline one\n", 0},
	{"tail", "tail -n +4 a.txt; tail -c 3 noeol.txt; echo", "apple\nend\n", 0},
	{"tail", "tail -q -n1 a.txt b.txt", "apple\nline three\n", 0},
	{"wc", "wc -L words.txt; wc -l a.txt b.txt", "23 words.txt\n 4 a.txt\n 3 b.txt\n 7 total\n", 0},
	{"sort", "sort -V <<< $'v1.10\\nv1.2\\nv1.9'", "v1.2\nv1.9\nv1.10\n", 0},
	{"sort", "sort -c a.txt; echo $?", "1\n", 0},
	{"sort", "sort -o out a.txt && cat out", "apple\napple\nbanana\ncherry\n", 0},
	{"sort", "sort -k2,2n -t' ' <<< $'x 10\\ny 9'", "y 9\nx 10\n", 0},
	{"uniq", "uniq -D dup.txt", "a\na\nc\nc\nc\n", 0},
	{"uniq", "uniq -c -i <<< $'A\\na\\nB'", "      2 A\n      1 B\n", 0},
	{"cut", "cut -d, -f1,3 --output-delimiter=' ' csv.txt | head -2", "name city\nalice paris\n", 0},
	{"cut", "cut -b 2-3 <<< abcd; cut -d: -s -f1 <<< $'a:b\\nnone'", "bc\na\n", 0},
	{"tr", "echo 'hello   world' | tr -s ' ' | tr ' ' _", "hello_world\n", 0},
	{"tr", "echo abc | tr -c 'a\\n' X", "aXX\n", 0},
	{"grep", "grep -rn --include='*.md' TODO .", "./sub/c.md:3:TODO: fix this\n", 0},
	{"grep", "grep -r --exclude-dir=deep TODO sub", "sub/c.md:TODO: fix this\n", 0},
	{"grep", "grep -ow the words.txt", "the\nthe\n", 0},
	{"grep", "grep -c x a.txt; echo $?", "0\n1\n", 0},
	{"grep", "echo 'a\\b' | grep -F 'a\\b'", "a\\b\n", 0},
	{"grep", "grep -P '\\d+' nums.txt | head -2", "10\n2\n", 0},
	{"grep", "grep -e '(' a.txt; echo $?", "1\n", 0},
	{"egrep", "egrep 'ba|ch' a.txt", "banana\ncherry\n", 0},
	{"fgrep", "fgrep -c a. a.txt", "0\n", 1},
	{"find", "find sub -name '*.md' -o -name '*.log' | sort", "sub/c.md\nsub/d.log\n", 0},
	{"find", "find . -maxdepth 1 -type l -printf '%p -> %l\\n'", "./link -> a.txt\n", 0},
	{"find", "find sub -type f -exec echo f: {} + | tr ' ' '\\n' | sort", "f:\nsub/.hidden\nsub/c.md\nsub/d.log\nsub/deep/e.txt\n", 0},
	{"find", "find . -newer a.txt; touch -d 2023-01-01 a.txt; find . -mtime +30 -type f", "./a.txt\n", 0},
	{"find", "find sub -depth -type d", "sub/deep\nsub\n", 0},
	{"find", "find . -size +1k", "", 0},
	{"find", "find . -name '*.txt' -quit -print | wc -l", "0\n", 0},
	{"find", "find . -bogus", "", 1},
	{"xargs", "printf 'a b\\nc\\n' | xargs -L1 echo", "a b\nc\n", 0},
	{"xargs", "echo 1 2 3 | xargs -t -n2 echo 2>&1", "echo 1 2\n1 2\necho 3\n3\n", 0},
	{"xargs", "printf 'x:y' | xargs -d: -n1 echo", "x\ny\n", 0},
	{"xargs", "echo a | xargs nosuch; echo $?", "127\n", 0},
	{"tee", "echo t | tee -a a.txt | cat; tail -1 a.txt", "t\nt\n", 0},
	{"seq", "seq 0.5 0.5 2", "0.5\n1.0\n1.5\n2.0\n", 0},
	{"true", "true", "", 0},
	{"false", "false", "", 1},
	{"env", "env -i A=1 env", "A=1\n", 0},
	{"env", "env -u HOME printenv HOME; echo $?", "1\n", 0},
	{"printenv", "printenv USER HOME", "agent\n/\n", 0},
	{"date", "date", "Mon Jan 15 10:30:00 UTC 2024\n", 0},
	{"date", "date +%s; date -I; date -d '1 day ago' +%F", "1705314600\n2024-01-15\n2024-01-14\n", 0},
	{"sleep", "sleep 0.01s; echo ok", "ok\n", 0},
	{"which", "which grep sed; which nope; echo $?", "/usr/bin/grep\n/usr/bin/sed\n1\n", 0},
	{"whoami", "whoami", "agent\n", 0},
	{"hostname", "hostname", "sandbox\n", 0},
	{"yes", "yes no | head -2", "no\nno\n", 0},
	{"tac", "tac b.txt", "line three\nline two\nline one\n", 0},
	{"rev", "echo héllo | rev", "olléh\n", 0},
	{"nl", "nl -w2 -s: b.txt", " 1:line one\n 2:line two\n 3:line three\n", 0},
	{"base64", "base64 -w 8 b.txt | head -2; echo aGk= | base64 -d", "bGluZSBv\nbmUKbGlu\nhi", 0},
	{"md5sum", "md5sum a.txt > sums && md5sum -c sums", "a.txt: OK\n", 0},
	{"sha1sum", "echo -n abc | sha1sum", "a9993e364706816aba3e25717850c26c9cd0d89d  -\n", 0},
	{"sha256sum", "echo -n abc | sha256sum", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -\n", 0},
	{"sha512sum", "echo -n abc | sha512sum | cut -c1-16", "ddaf35a193617aba\n", 0},
	{"sed", "sed -n '/two/{=;p}' b.txt", "2\nline two\n", 0},
	{"sed", "sed 's/line/X/w changed.txt' b.txt > /dev/null; cat changed.txt", "X one\nX two\nX three\n", 0},
	{"sed", "sed '1r noeol.txt' b.txt | head -4", "line one\nfirst\nno newline at end\nline two\n", 0},
	{"sed", "sed 's/\\(.*\\)/\\U\\1/' b.txt | head -1", "LINE ONE\n", 0},
	{"sed", "sed -E 's/([a-z]+) ([a-z]+)/\\2 \\1/' b.txt | head -1", "one line\n", 0},
	{"sed", "sed '0,/apple/s//APPLE/' a.txt", "APPLE\nbanana\ncherry\napple\n", 0},
	{"sed", "sed -n '2,+1p' a.txt", "banana\ncherry\n", 0},
	{"sed", "sed ':a;N;$!ba;s/\\n/,/g' a.txt", "apple,banana,cherry,apple\n", 0},
	{"sed", "sed 'e id' a.txt", "", 1},
	{"sed", "sed 's/a/b/I' <<< A", "b\n", 0},
	{"awk", "awk 'FNR==1 {print FILENAME}' a.txt b.txt", "a.txt\nb.txt\n", 0},
	{"awk", "awk -F: '{print $1}' <<< 'x:y'", "x\n", 0},
	{"awk", "awk 'BEGIN {system(\"id\")}'", "", 2},
	{"awk", "awk '{print > \"out\"}' a.txt", "", 2},
	{"awk", "awk 'BEGIN {getline l < \"a.txt\"; print l}'", "", 2},
	{"awk", "X=1 awk 'BEGIN {print ENVIRON[\"USER\"]}'", "agent\n", 0},
	{"jq", "jq -n --argjson v '{\"a\":[1,2]}' '$v.a[1]'", "2\n", 0},
	{"jq", "jq -s 'length' data.json users.json", "2\n", 0},
	{"jq", "jq -r '.tags[]' data.json", "x\ny\n", 0},
	{"jq", "jq -n '[inputs.count]' data.json", "[\n  3\n]\n", 0},
	{"jq", "jq -R . <<< 'raw'", "\"raw\"\n", 0},
	{"jq", "jq '.[' data.json", "", 3},
	{"diff", "diff b.txt words.txt", "1,3c1,3\n< line one\n< line two\n< line three\n---\n> the quick brown fox\n> jumps over the lazy dog\n> The End\n", 1},
	{"diff", "mkdir d2 && cp sub/c.md d2/ && diff -r sub d2", "Only in sub: .hidden\nOnly in sub: d.log\nOnly in sub: deep\n", 1},
	{"diff", "diff -u --label a --label b a.txt other/x.txt", "--- a\n+++ b\n@@ -1,4 +1,4 @@\n apple\n banana\n cherry\n-apple\n+apple pie\n", 1},
	{"comm", "comm -12 a.txt a.txt; echo $?", "apple\nbanana\ncherry\napple\n1\n", 0},
	{"comm", "sort -u a.txt > s; printf 'apple\nzebra\n' > t; comm s t", "\t\tapple\nbanana\ncherry\n\tzebra\n", 0},
	{"paste", "seq 4 | paste - -", "1\t2\n3\t4\n", 0},
	{"fold", "echo abcdef | fold -w 4", "abcd\nef\n", 0},
	{"expand", "printf 'a\tb\n' | expand -t 2", "a b\n", 0},
	{"unexpand", "printf '        x\n' | unexpand", "\tx\n", 0},
	{"column", "printf 'a bb\nccc d\n' | column -t", "a    bb\nccc  d\n", 0},
	{"join", "printf '1 a\n2 b\n' > l; printf '2 x\n' > r; join -v1 l r", "1 a\n", 0},
	{"strings", "printf 'ab\\0cdef\\0g' | strings -n 3", "cdef\n", 0},
	{"od", "printf 'AB' | od -A d -t x1", "0000000 41 42\n0000002\n", 0},
	{"du", "du -sb sub/deep", "4116\tsub/deep\n", 0},
	{"df", "df | head -1", "Filesystem     1K-blocks      Used Available Use% Mounted on\n", 0},
	{"truncate", "truncate -s 1K z && stat -c %s z", "1024\n", 0},
	{"tree", "tree sub", "sub\n├── c.md\n├── d.log\n└── deep\n    └── e.txt\n\n1 directory, 3 files\n", 0},
	{"tree", "tree -a -L 1 -d .", ".\n├── other\n└── sub\n\n2 directories\n", 0},
	{"file", "file data.json; printf '\\211PNG\\r\\n\\032\\nxxxx' > i.png; file -b i.png", "data.json: JSON text data\nPNG image data\n", 0},
	{"split", "seq 5 | split -l 2 - pp && cat ppab && ls pp*", "3\n4\nppaa\nppab\nppac\n", 0},
	{"timeout", "timeout 0.05 yes > /dev/null; echo $?", "124\n", 0},
	{"timeout", "timeout 5 sh -c 'exit 3'; echo $?", "3\n", 0},
	{"expr", "expr 1 + 2; expr 0; echo $?", "3\n0\n1\n", 0},
	{"gzip", "gzip -9 a.txt && gzip -t a.txt.gz && echo ok && ls a.txt*", "ok\na.txt.gz\n", 0},
	{"gunzip", "gzip -c b.txt > b.gz && gunzip -c b.gz | head -1", "line one\n", 0},
	{"zcat", "gzip -k a.txt && zcat a.txt.gz | wc -l", "4\n", 0},
	{"tar", "tar cvf t.tar sub/deep && tar tvf t.tar | awk '{print $1, $6}'", "sub/deep/\nsub/deep/e.txt\ndrwxr-xr-x sub/deep/\n-rw-r--r-- sub/deep/e.txt\n", 0},
	{"tar", "tar cf - sub/c.md | tar xf - -C other && cat other/sub/c.md | head -1", "# Title\n", 0},
	{"tar", "tar xf nope.tar", "", 2},
	{"patch", "diff -u b.txt words.txt > p; patch -s --dry-run b.txt p && head -1 b.txt && patch -s b.txt p && head -1 b.txt", "line one\nthe quick brown fox\n", 0},
	{"patch", "printf -- '--- /dev/null\\n+++ new/n.txt\\n@@ -0,0 +1 @@\\n+created\\n' | patch -p1 && cat n.txt", "patching file n.txt\ncreated\n", 0},
	{"rg", "rg TODO", "code.go:\t// TODO: more\nsub/c.md:TODO: fix this\nsub/deep/e.txt:TODO deep\n", 0},
	{"rg", "rg -n -g '*.md' TODO sub", "sub/c.md:3:TODO: fix this\n", 0},
	{"rg", "echo 'sub/deep/' > .gitignore; rg -l TODO", "code.go\nsub/c.md\n", 0},
	{"rg", "rg -c secret; echo $?; rg --hidden -c secret", "1\nsub/.hidden:1\n", 0},
	{"rg", "rg -i 'the end' words.txt", "The End\n", 0},
	{"sh", "sh -c 'echo $1-$2' zero one two", "one-two\n", 0},
	{"sh", "echo 'echo piped' | sh", "piped\n", 0},
	{"bash", "bash -e -c 'false; echo no'; echo $?", "1\n", 0},
}

func TestCommands(t *testing.T) {
	for _, c := range commandCases {
		t.Run(c.cmd, func(t *testing.T) {
			_, sb := newSandbox(t, sandbox.Options{})
			res := run(t, sb, c.script)
			got := res.Stdout
			if c.cmd == "stat" && strings.HasPrefix(c.script, "stat a.txt") {
				got = got[:min(len(got), len(c.want))]
			}
			if got != c.want || res.ExitCode != c.code {
				t.Errorf("%s\ngot  (exit %d) %q\nwant (exit %d) %q\nstderr: %s", c.script, res.ExitCode, got, c.code, c.want, res.Stderr)
			}
		})
	}
}

// Every registered utility has at least one case above.
func TestCommands_AllTested(t *testing.T) {
	tested := map[string]bool{}
	for _, c := range commandCases {
		tested[c.cmd] = true
	}
	var missing []string
	for _, n := range commands.Default.Names() {
		if !tested[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("commands without a unit test: %v", missing)
	}
}

package sandbox_test

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
)

// shellSeeds are scripts that reach the parser's and the interpreter's
// corners: expansions, redirections, functions, traps, arithmetic, and
// the attacks found so far.
var shellSeeds = []string{
	`echo hello | tr a-z A-Z`,
	`for i in 1 2 3; do echo $i; done | sort -r | head -1`,
	`f() { f; }; f`,
	`f() { echo $(( $1 < 50 ? $(f $(( $1 + 1 ))) : $1 )); }; f 0`,
	`x=$(yes | head -c 100000); echo ${#x}`,
	`while :; do :; done`,
	`echo $(( 1 / 0 )) $(( 2 ** 63 )) $(( -9223372036854775808 / -1 )) $(( 1 << 64 ))`,
	`a=(1 2 3); echo ${a[@]:1} ${#a[@]} ${a[-1]} ${!a[@]}`,
	`declare -A m=([k]=v); echo ${m[k]} ${!m[@]}`,
	`declare -n r=x; x=1; echo $r`,
	`echo ${x:?unset} ; echo after`,
	`set -e; false; echo no`,
	`set -u; echo $nope`,
	`trap 'echo bye' EXIT; exit 3`,
	`cat <<EOF
$(echo in heredoc) ${HOME}
EOF`,
	`cat <<< "here string"`,
	`echo x > /tmp/f; cat < /tmp/f; exec 3>/tmp/g; echo y >&3; exec 3>&-; cat /tmp/g`,
	`echo x > /dev/tcp/127.0.0.1/80`,
	`diff <(echo a) <(echo b)`,
	`coproc cat; echo hi >&${COPROC[1]}`,
	`eval 'echo $((1+'`,
	`source /data/script.sh arg`,
	`. /nonexistent`,
	`shopt -s extglob; echo @(a|b)*.txt !(x)`,
	`echo {1..10} {a..e..2} {1..99999999}`,
	`printf -v v '%s-%d' a 5; echo $v`,
	`read -r a b <<< "1 2"; echo $b`,
	`mapfile -t arr < /data/a.txt; echo ${#arr[@]}`,
	`getopts ab: o -b x; echo $o $OPTARG`,
	`case x in (x|y) echo m;; *) echo n;; esac`,
	`[[ abc =~ ^a(b)c$ ]] && echo ${BASH_REMATCH[1]}`,
	`[[ -f /data/a.txt && ! -d /data/a.txt ]]; echo $?`,
	`cd /data/sub/../..; pwd; cd -; cd /nope`,
	`echo x | sed "w /nodir/f"`,
	`echo x | sed 's/x/y/w /tmp/w'`,
	`awk 'BEGIN { while (1) {} }'`,
	`jq -n 'def f: f; f'`,
	`find / -name '*.txt' -exec cat {} +`,
	`ls -la / /data | wc -l`,
	`sleep 100`,
	`(sleep 1; echo bg) & wait`,
	`kill -9 $$; echo survived`,
	`ulimit -n; umask 077; touch /tmp/m; stat -c %a /tmp/m`,
	`exec echo replaced`,
	`command -v ls; type cd; hash; which sed`,
	`x='$(echo injected)'; echo $x "$x"`,
	`IFS=:; set -- a:b:c; echo $2; unset IFS`,
	`local x=1`,
	`return 5`,
	`break 2`,
	`echo $RANDOM $SECONDS $LINENO $BASHPID $PPID $$ $!`,
	`time echo x`,
	`select x in a b; do break; done`,
	`let x=5/0`,
	`echo ${x/#/pre} ${x//[a-z]/X} ${x^^} ${x,,} ${x@Q} ${!x} ${x:-${y:=z}}`,
	`echo $'\x41\u00e9\n' "${@:2}" "$*"`,
	"echo `echo nested \\`echo deeper\\``",
	`f() { local -a x=(1); echo ${x[0]}; }; f; declare -f f; unset -f f; f`,
	`alias ll='ls -l'; ll /data`,
	`exit 300`,
	`exit -1`,
	`true &&`,
	`if then fi`,
	`$(`,
	`echo "unterminated`,
	"\x00\xff\xfe",
	`tar cf - /data | tar tf -`,
	`printf '%s\n' "${BASH_VERSION}" "${PIPESTATUS[@]}"`,
	`wait -n; jobs; fg; bg; disown`,
	`ln -s /data /data/sub/loop; ls -R /data/sub | head -3`,
}

// FuzzShell runs random scripts in a sandbox under the Hardened limits
// with a short wall time. Whatever the script: no panic (a recovered
// "internal error" counts as one), an exit status in 0..255 (124 exactly
// when a limit stopped it), no goroutine left running after Exec, and no
// host file touched: the process's working directory and $TMPDIR are
// empty directories that must stay empty.
func FuzzShell(f *testing.F) {
	for _, s := range shellSeeds {
		f.Add(s)
	}
	limits := sandbox.Hardened
	limits.WallTime = 2 * time.Second
	_, sb := newSandbox(f, sandbox.Options{Limits: limits}) // its database lives in its own temporary directory
	hostCwd, hostTmp := tempDir(f), tempDir(f)
	f.Chdir(hostCwd)
	f.Setenv("TMPDIR", hostTmp)
	baseline := -1
	f.Fuzz(func(t *testing.T, script string) {
		var res sandbox.Result
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			res, err = sb.Exec(ctx, script, sandbox.ExecOptions{Dir: "/data", Stdin: strings.NewReader("line one\nline two\n")})
		}()
		// The fuzzing engine has no timeout of its own: a script that
		// outlives the wall time by far is a hang and fails here, so the
		// input is kept.
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			buf := make([]byte, 1<<16)
			t.Fatalf("Exec still running 60s after it started (wall time 2s); goroutines:\n%s", buf[:runtime.Stack(buf, true)])
		}
		if err != nil {
			t.Fatalf("Exec: %v", err)
		}
		if strings.Contains(res.Stderr, "internal error") {
			t.Fatalf("a panic was recovered: %s", res.Stderr)
		}
		if res.ExitCode < 0 || res.ExitCode > 255 {
			t.Fatalf("exit status %d", res.ExitCode)
		}
		if (res.Limit != nil) != (res.ExitCode == sandbox.ExitLimit && res.Limit != nil) {
			t.Fatalf("limit %v with exit status %d", res.Limit, res.ExitCode)
		}
		for _, d := range []string{hostCwd, hostTmp} {
			if ents, err := os.ReadDir(d); err != nil || len(ents) != 0 {
				t.Fatalf("host directory %s: %d entries (%v)", d, len(ents), err)
			}
		}
		// Goroutines of the script (pipelines, background jobs) end with
		// Exec, some just after it returns: wait for them to settle
		// rather than for a time.
		if baseline < 0 {
			baseline = settledGoroutines(-1)
			return
		}
		if n := settledGoroutines(baseline); n > baseline {
			t.Fatalf("%d goroutines after Exec, %d before", n, baseline)
		}
	})
}

// settledGoroutines returns the number of goroutines once it is at most
// want (want < 0: once it stops changing), yielding between looks; it
// gives up after many looks and returns the last count.
func settledGoroutines(want int) int {
	n, last := runtime.NumGoroutine(), -1
	for i := 0; i < 500; i++ {
		if want >= 0 && n <= want || want < 0 && n == last {
			return n
		}
		last = n
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

package sandbox_test

import (
	"testing"

	"github.com/agentfs-go/agentfs/core/sandbox"
)

// BenchmarkExec_EchoHi is a new shell plus "echo hi", without and with
// the audit record.
func BenchmarkExec_EchoHi(b *testing.B) {
	for _, audit := range []bool{false, true} {
		name := "no-audit"
		if audit {
			name = "audit"
		}
		b.Run(name, func(b *testing.B) {
			_, sb := newSandbox(b, sandbox.Options{NoAudit: !audit})
			b.ReportAllocs()
			for b.Loop() {
				res, err := sb.Exec(ctx, "echo hi", sandbox.ExecOptions{})
				if err != nil || res.Stdout != "hi\n" {
					b.Fatal(res, err)
				}
			}
		})
	}
}

func BenchmarkExec_Pipeline(b *testing.B) {
	_, sb := newSandbox(b, sandbox.Options{NoAudit: true})
	for b.Loop() {
		res, err := sb.Exec(ctx, "grep -r TODO /data | sort | uniq -c | wc -l", sandbox.ExecOptions{})
		if err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}

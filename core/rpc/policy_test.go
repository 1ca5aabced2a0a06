package rpc

import (
	"context"
	"testing"

	"connectrpc.com/connect"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
)

// limit_values may lower the profile's limits, never pass the server's
// ceiling; Policy shows the limits that apply, the ceiling's when the
// caller chose none.
func TestPolicy_LimitValuesAndCeiling(t *testing.T) {
	ctx := context.Background()
	hard, err := ParseLimitCeiling("hardened")
	if err != nil {
		t.Fatal(err)
	}
	srv := startHTTPCeiling(t, hard)
	sb := agentfsv1connect.NewSandboxServiceClient(srv.Client(), srv.URL, headers("", "a"))
	p, err := sb.Policy(ctx, &v1.PolicyRequest{Exec: &v1.ExecRequest{}})
	if err != nil || p.Policy.LimitsProfile != "hardened" || p.Policy.Limits.WallTimeMs != 10_000 {
		t.Fatalf("policy under a hardened ceiling: %v %v", p, err)
	}
	lower := &v1.SandboxLimits{WallTimeMs: 2000, MaxOutputBytes: 4}
	res, err := sb.Exec(ctx, &v1.ExecRequest{Script: "echo 123456", Limits: "hardened", LimitValues: lower})
	if err != nil || res.ExitCode != 124 || string(res.Stdout) != "1234" {
		t.Errorf("lower limit_values: %v %v", res, err)
	}
	for _, above := range []*v1.SandboxLimits{{WallTimeMs: 3_600_000}, {MaxMemoryBytes: 8 << 30}} {
		_, err := sb.Exec(ctx, &v1.ExecRequest{Script: "echo ran", Limits: "hardened", LimitValues: above})
		if connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("limit_values %v above the ceiling: %v, want PERMISSION_DENIED", above, err)
		}
		if _, err := sb.Policy(ctx, &v1.PolicyRequest{Exec: &v1.ExecRequest{Limits: "hardened", LimitValues: above}}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("policy of limit_values %v above the ceiling: %v", above, err)
		}
	}
	_, err = sb.Exec(ctx, &v1.ExecRequest{Script: "echo ran", LimitValues: &v1.SandboxLimits{MaxCommands: -1}})
	if e := apiError(t, err); e.Code != "EINVAL" || e.Syscall != "policy" {
		t.Errorf("negative limit: %v", err)
	}
	// Bindings are listed by Policy even where they cannot be called.
	p, err = sb.Policy(ctx, &v1.PolicyRequest{Exec: &v1.ExecRequest{Bindings: []*v1.BindingSpec{{Name: "lookup"}}}})
	if err != nil || len(p.Policy.Bindings) != 1 || p.Policy.Bindings[0] != "lookup" {
		t.Errorf("policy with bindings over HTTP: %v %v", p, err)
	}
	if _, err := sb.Policy(ctx, &v1.PolicyRequest{Exec: &v1.ExecRequest{Bindings: []*v1.BindingSpec{{Name: "cd"}}}}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("policy with a binding named after a builtin: %v", err)
	}
}

package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
	"github.com/agentfs-go/agentfs/core/sandbox"
)

// Exec runs a script in the in-process sandbox. Bindings call back into
// the client through HostService.CallBinding, so they need a transport
// that can call the client (stdio).
func (s *Service) Exec(ctx context.Context, r *v1.ExecRequest) (*v1.ExecResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	opts, err := s.sandboxOptions(sess, r)
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.New(sess.Agent, opts)
	if err != nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "exec: %v", err)
	}
	res, err := sb.Exec(ctx, r.Script, sandbox.ExecOptions{Dir: r.Dir, Stdin: bytes.NewReader(r.Stdin)})
	if err != nil {
		return nil, err
	}
	out := &v1.ExecResponse{ExitCode: int32(res.ExitCode), Stdout: []byte(res.Stdout), Stderr: []byte(res.Stderr), DurationNs: int64(res.Duration)}
	if res.Limit != nil {
		out.Limit = res.Limit.Error()
	}
	return out, nil
}

// sandboxOptions are the policy, limits and bindings of an ExecRequest
// (Exec, and the processes and shells of ProcessService).
func (s *Service) sandboxOptions(sess *Session, r *v1.ExecRequest) (sandbox.Options, error) {
	opts := sandbox.Options{Policy: sandbox.Policy{Allow: nilIfEmpty(r.Allow), Deny: r.Deny, Env: r.Env, DefaultDeny: r.DefaultDeny}, NoAudit: r.NoAudit}
	if r.RestrictPaths || r.DefaultDeny {
		opts.Policy.Readable = append([]string{}, r.Readable...)
		opts.Policy.Writable = append([]string{}, r.Writable...)
	} else if len(r.Readable) > 0 || len(r.Writable) > 0 {
		// Lists without restrict_paths used to be ignored silently: a
		// client that sets them means them.
		opts.Policy.Readable = nilIfEmpty(r.Readable)
		opts.Policy.Writable = nilIfEmpty(r.Writable)
		if opts.Policy.Readable != nil && opts.Policy.Writable == nil {
			opts.Policy.Writable = []string{}
		}
	}
	for _, n := range r.Net {
		opts.Policy.Net = append(opts.Policy.Net, sandbox.NetRule{Prefix: n.Prefix, Methods: n.Methods, Headers: n.Headers, AllowPrivate: n.AllowPrivate})
	}
	// A policy that says nothing clearly is refused before anything runs
	// (EINVAL, naming the entry).
	if err := opts.Policy.Validate(); err != nil {
		return opts, err
	}
	var err error
	if opts.Limits, err = s.execLimits(r.Limits, r.LimitValues); err != nil {
		return opts, err
	}
	if len(r.Bindings) > 0 && sess.Peer == nil {
		return opts, errorf(v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION, "exec: bindings need a connection the engine can call back (stdio); this one cannot")
	}
	for _, b := range r.Bindings {
		opts.Bindings = append(opts.Bindings, binding(b, agentfsv1rpc.NewHostServiceClient(sess.Peer)))
	}
	return opts, nil
}

// execLimits are the limits of an Exec that asked for the profile name,
// within the server's ceiling.
func (s *Service) execLimits(name string, values *v1.SandboxLimits) (sandbox.Limits, error) {
	want, err := s.profileLimits(name)
	if err != nil || values == nil {
		return want, err
	}
	if err := checkLimitValues(values); err != nil {
		return want, err
	}
	want = withLimitValues(want, values)
	if ceil := s.MaxLimits; ceil != nil && ceil.Name != "none" && !want.Within(ceil.Limits) {
		return want, errorf(v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED, "exec: limit_values are above this server's ceiling %q (see agentfs sh --print-policy --profile %s for its values)", ceil.Name, ceil.Name)
	}
	return want, nil
}

// checkLimitValues refuses negative limits (EINVAL): 0 keeps the
// profile's value, and "no limit" is the profile "none".
func checkLimitValues(v *v1.SandboxLimits) error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"max_commands", v.MaxCommands}, {"max_steps", v.MaxSteps}, {"max_call_depth", v.MaxCallDepth}, {"wall_time_ms", v.WallTimeMs},
		{"max_output_bytes", v.MaxOutputBytes}, {"max_stream_bytes", v.MaxStreamBytes}, {"max_fs_write_bytes", v.MaxFsWriteBytes},
		{"max_response_bytes", v.MaxResponseBytes}, {"net_timeout_ms", v.NetTimeoutMs}, {"max_memory_bytes", v.MaxMemoryBytes},
		{"max_background", v.MaxBackground}} {
		if f.v < 0 || (f.name == "max_call_depth" || f.name == "max_background") && f.v > 1<<30 {
			return &sandbox.PolicyError{Field: "limit_values." + f.name, Value: fmt.Sprint(f.v), Msg: "must be 0 (the profile's) or a positive number"}
		}
	}
	return nil
}

// withLimitValues replaces the limits of l that v sets.
func withLimitValues(l sandbox.Limits, v *v1.SandboxLimits) sandbox.Limits {
	set := func(dst *int64, x int64) {
		if x > 0 {
			*dst = x
		}
	}
	set(&l.MaxCommands, v.MaxCommands)
	set(&l.MaxSteps, v.MaxSteps)
	set(&l.MaxOutputBytes, v.MaxOutputBytes)
	set(&l.MaxStreamBytes, v.MaxStreamBytes)
	set(&l.MaxFSWriteBytes, v.MaxFsWriteBytes)
	set(&l.MaxResponseBytes, v.MaxResponseBytes)
	set(&l.MaxMemoryBytes, v.MaxMemoryBytes)
	if v.MaxCallDepth > 0 {
		l.MaxCallDepth = int(v.MaxCallDepth)
	}
	if v.MaxBackground > 0 {
		l.MaxBackground = int(v.MaxBackground)
	}
	if v.WallTimeMs > 0 {
		l.WallTime = time.Duration(v.WallTimeMs) * time.Millisecond
	}
	if v.NetTimeoutMs > 0 {
		l.NetTimeout = time.Duration(v.NetTimeoutMs) * time.Millisecond
	}
	return l
}

// LimitsProto is l in the shared form of the policy.
func LimitsProto(l sandbox.Limits) *v1.SandboxLimits {
	return &v1.SandboxLimits{MaxCommands: l.MaxCommands, MaxSteps: l.MaxSteps, MaxCallDepth: int64(l.MaxCallDepth),
		WallTimeMs: l.WallTime.Milliseconds(), MaxOutputBytes: l.MaxOutputBytes, MaxStreamBytes: l.MaxStreamBytes,
		MaxFsWriteBytes: l.MaxFSWriteBytes, MaxResponseBytes: l.MaxResponseBytes, NetTimeoutMs: l.NetTimeout.Milliseconds(),
		MaxMemoryBytes: l.MaxMemoryBytes, MaxBackground: int64(l.MaxBackground)}
}

// EffectivePolicy is the policy of a sandbox's options, as audited: the
// one representation the RPC, the CLI (--print-policy) and every SDK's
// policy() show. Header values of network rules are secrets and are left
// out.
func EffectivePolicy(opts sandbox.Options, profile string) *v1.EffectivePolicy {
	p := opts.Policy.Effective()
	out := &v1.EffectivePolicy{
		DefaultDeny:   p.DefaultDeny,
		RestrictReads: p.Readable != nil, Readable: p.Readable,
		RestrictWrites: p.Writable != nil, Writable: p.Writable,
		RestrictCommands: p.Allow != nil, Allow: p.Allow, Deny: p.Deny,
		Env: p.Env, User: p.User, Uid: p.UID, Gid: p.GID, Hostname: p.Hostname, Umask: p.Umask,
		LimitsProfile: profile, Limits: LimitsProto(opts.Limits),
	}
	for _, r := range p.Net {
		er := &v1.EffectiveNetRule{Prefix: r.Prefix, Methods: r.Methods, AllowPrivate: r.AllowPrivate}
		for k := range r.Headers {
			er.HeaderNames = append(er.HeaderNames, k)
		}
		sort.Strings(er.HeaderNames)
		out.Net = append(out.Net, er)
	}
	for _, b := range opts.Bindings {
		out.Bindings = append(out.Bindings, b.Name)
	}
	sort.Strings(out.Bindings)
	return out
}

// Policy returns the effective policy of an ExecRequest without running
// anything.
func (s *Service) Policy(ctx context.Context, r *v1.PolicyRequest) (*v1.PolicyResponse, error) {
	if _, err := sessionFrom(ctx); err != nil {
		return nil, err
	}
	req := r.GetExec()
	if req == nil {
		req = &v1.ExecRequest{}
	}
	// Bindings are listed, not called: no peer is needed to audit them.
	noBinds := proto.Clone(req).(*v1.ExecRequest)
	noBinds.Bindings = nil
	opts, err := s.sandboxOptions(&Session{}, noBinds)
	if err != nil {
		return nil, err
	}
	for _, b := range req.Bindings {
		// Refused as Exec would refuse it, without registering anything.
		if err := sandbox.CheckBinding(b.Name, json.RawMessage(b.SchemaJson)); err != nil {
			return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "exec: %v", err)
		}
		opts.Bindings = append(opts.Bindings, sandbox.Binding{Name: b.Name})
	}
	profile := req.Limits
	if profile == "" {
		profile = "normal"
		if c := s.MaxLimits; c != nil && c.Name != "none" && !sandbox.Normal.Within(c.Limits) {
			profile = c.Name
		}
	}
	return &v1.PolicyResponse{Policy: EffectivePolicy(opts, profile)}, nil
}

// profileLimits are the limits of a profile name, within the server's
// ceiling.
func (s *Service) profileLimits(name string) (sandbox.Limits, error) {
	ceil := s.MaxLimits
	var want sandbox.Limits
	switch name {
	case "":
		// No choice made: the normal profile, or the ceiling when it is
		// lower.
		want = sandbox.Normal
		if ceil != nil && ceil.Name != "none" && !want.Within(ceil.Limits) {
			want = ceil.Limits
		}
		return want, nil
	case "none":
		if ceil != nil && ceil.Name != "none" {
			return want, errorf(v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED, "exec: limits \"none\" are not allowed by this server (its ceiling is %q; the operator allows them with --max-limits none)", ceil.Name)
		}
		return want, nil
	}
	want, err := sandbox.Profile(name)
	if err != nil {
		return want, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "exec: %v (want normal, hardened or none)", err)
	}
	if ceil != nil && ceil.Name != "none" && !want.Within(ceil.Limits) {
		return want, errorf(v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED, "exec: limits %q are above this server's ceiling %q (ask for %q or less)", name, ceil.Name, ceil.Name)
	}
	return want, nil
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// binding makes a sandbox command that forwards its arguments to the
// client's function of the same name.
func binding(b *v1.BindingSpec, host *agentfsv1rpc.HostServiceClient) sandbox.Binding {
	var schema json.RawMessage
	if b.SchemaJson != "" {
		schema = json.RawMessage(b.SchemaJson)
	}
	return sandbox.Binding{
		Name: b.Name, Description: b.Description, Schema: schema,
		Func: func(ctx context.Context, args json.RawMessage) (any, error) {
			resp, err := host.CallBinding(ctx, &v1.CallBindingRequest{Name: b.Name, ArgsJson: string(args)})
			if err != nil {
				return nil, err
			}
			if resp.Error != "" {
				return nil, errors.New(resp.Error)
			}
			if resp.ResultJson == "" {
				return nil, nil
			}
			// Each SDK's JSON encoder spaces and orders differently: the
			// script sees one form (keys sorted, compact), whichever SDK
			// answered.
			dec := json.NewDecoder(strings.NewReader(resp.ResultJson))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil || dec.More() {
				return nil, errors.New("the host returned a result that is not JSON")
			}
			return v, nil
		},
	}
}

package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

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
	opts := sandbox.Options{Policy: sandbox.Policy{Allow: nilIfEmpty(r.Allow), Deny: r.Deny, Env: r.Env}, NoAudit: r.NoAudit}
	if r.RestrictPaths {
		opts.Policy.Readable = append([]string{}, r.Readable...)
		opts.Policy.Writable = append([]string{}, r.Writable...)
	}
	var err error
	if opts.Limits, err = s.execLimits(r.Limits); err != nil {
		return opts, err
	}
	for _, n := range r.Net {
		opts.Policy.Net = append(opts.Policy.Net, sandbox.NetRule{Prefix: n.Prefix, Methods: n.Methods, Headers: n.Headers})
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
func (s *Service) execLimits(name string) (sandbox.Limits, error) {
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
			if !json.Valid([]byte(resp.ResultJson)) {
				return nil, errors.New("the host returned a result that is not JSON")
			}
			return json.RawMessage(resp.ResultJson), nil
		},
	}
}

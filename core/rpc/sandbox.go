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
	opts := sandbox.Options{Policy: sandbox.Policy{Allow: nilIfEmpty(r.Allow), Deny: r.Deny, Env: r.Env}}
	if r.RestrictPaths {
		opts.Policy.Readable = append([]string{}, r.Readable...)
		opts.Policy.Writable = append([]string{}, r.Writable...)
	}
	switch r.Limits {
	case "", "normal":
		opts.Limits = sandbox.Normal
	case "none":
	default:
		if opts.Limits, err = sandbox.Profile(r.Limits); err != nil {
			return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "exec: %v (want normal, hardened or none)", err)
		}
	}
	for _, n := range r.Net {
		opts.Policy.Net = append(opts.Policy.Net, sandbox.NetRule{Prefix: n.Prefix, Methods: n.Methods, Headers: n.Headers})
	}
	if len(r.Bindings) > 0 && sess.Peer == nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION, "exec: bindings need a connection the engine can call back (stdio); this one cannot")
	}
	for _, b := range r.Bindings {
		opts.Bindings = append(opts.Bindings, binding(b, agentfsv1rpc.NewHostServiceClient(sess.Peer)))
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

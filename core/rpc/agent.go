package rpc

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/overlay"
	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/store"
)

// Service implements every service of the API over the agent of each
// call's Session. The same value serves stdio and HTTP.
type Service struct {
	// Version is the engine version reported by Info and the handshake.
	Version string
	// Agents is the HTTP server's directory of agents (ListAgents,
	// CreateAgent); nil on stdio, where the session's agent is the only one.
	Agents *AgentDir
	// QueryLimits bound each Query: the step budget (default
	// core.DefaultQuerySteps) and the result's size (default
	// core.DefaultQueryMaxBytes: the result is held in memory).
	QueryLimits core.QueryLimits
	// MaxLimits is the most a caller may ask of Exec (nil: anything,
	// "none" included, for stdio where the caller is the local user).
	// A request above it is refused with PERMISSION_DENIED; a request
	// without limits gets the ceiling itself when it is below Normal.
	MaxLimits *LimitCeiling
	// FixedModelEndpoint makes SessionService refuse a base URL or API
	// key from the caller (HTTP): the engine's environment names the
	// model server, so a caller cannot point the engine (and its key) at
	// an address of its choosing.
	FixedModelEndpoint bool
}

// LimitCeiling is the most a remote caller may ask of Exec.
type LimitCeiling struct {
	// Name is the profile the ceiling is ("hardened", "normal", "none").
	Name string
	// Limits are its limits (zero for "none": no limit at all).
	Limits sandbox.Limits
}

// ParseLimitCeiling reads a ceiling from a profile name: "hardened",
// "normal" or "none" (the operator allows scripts without limits).
func ParseLimitCeiling(name string) (*LimitCeiling, error) {
	if name == "none" {
		return &LimitCeiling{Name: name}, nil
	}
	l, err := sandbox.Profile(name)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = "normal"
	}
	return &LimitCeiling{Name: name, Limits: l}, nil
}

// Info describes the session's agent.
func (s *Service) Info(ctx context.Context, _ *v1.InfoRequest) (*v1.InfoResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	return s.info(ctx, sess)
}

func (s *Service) info(ctx context.Context, sess *Session) (*v1.InfoResponse, error) {
	a := sess.Agent
	var pageSize int64
	err := a.DB.Do(ctx, func(c *store.Conn) error { return c.QueryRow("PRAGMA page_size").Scan(&pageSize) })
	if err != nil {
		return nil, err
	}
	id := sess.ID
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(a.Path()), ".db")
	}
	return &v1.InfoResponse{
		Id: id, Path: a.Path(), SchemaVersion: a.Info.AgentFSVersion, ChunkSize: int64(a.FS.ChunkSize()),
		PageSize: pageSize, ReadOnly: sess.ReadOnly, OverlayBase: a.Info.OverlayBase, EngineVersion: s.Version,
	}, nil
}

func snapshotProto(sn core.Snapshot) *v1.Snapshot {
	return &v1.Snapshot{Name: sn.Name, CreatedAtNs: sn.CreatedAt.UnixNano(), Size: sn.Size}
}

func (s *Service) CreateSnapshot(ctx context.Context, r *v1.CreateSnapshotRequest) (*v1.CreateSnapshotResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	sn, err := sess.Agent.CreateSnapshot(ctx, r.Name)
	if err != nil {
		return nil, err
	}
	return &v1.CreateSnapshotResponse{Snapshot: snapshotProto(sn)}, nil
}

func (s *Service) ListSnapshots(ctx context.Context, _ *v1.ListSnapshotsRequest) (*v1.ListSnapshotsResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	sns, err := sess.Agent.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*v1.Snapshot, len(sns))
	for i, sn := range sns {
		out[i] = snapshotProto(sn)
	}
	return &v1.ListSnapshotsResponse{Snapshots: out}, nil
}

func (s *Service) RestoreSnapshot(ctx context.Context, r *v1.RestoreSnapshotRequest) (*v1.RestoreSnapshotResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.RestoreSnapshotResponse{}, sess.Agent.RestoreSnapshot(ctx, r.Name)
}

// Query runs one read-only statement (core.Agent.Query) on a connection
// of its own: the session's context stops it (a client that went away),
// and the whole result, held in memory, is bounded by QueryLimits.
func (s *Service) Query(ctx context.Context, r *v1.QueryRequest) (*v1.QueryResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	args := make([]any, len(r.Params))
	for i, p := range r.Params {
		args[i] = valueArg(p)
	}
	lim := s.QueryLimits
	if lim.MaxBytes == 0 {
		lim.MaxBytes = core.DefaultQueryMaxBytes
	}
	out := &v1.QueryResponse{}
	err = sess.Agent.Query(ctx, r.Sql, args, lim, func(cols []string, row []any) error {
		if row == nil {
			out.Columns = cols
			return nil
		}
		pr := &v1.Row{Values: make([]*v1.Value, len(row))}
		for i, v := range row {
			pr.Values[i] = valueProto(v)
		}
		out.Rows = append(out.Rows, pr)
		return nil
	})
	if err != nil {
		return nil, queryError(err)
	}
	return out, nil
}

// queryError gives a failed query its class: a refused statement is
// PERMISSION_DENIED, an invalid one INVALID_ARGUMENT, a result or step
// budget exceeded RESOURCE_EXHAUSTED, a cancelled one CANCELED.
func queryError(err error) error {
	var kind v1.ErrorKind
	switch {
	case errors.Is(err, core.ErrQueryNotAllowed):
		kind = v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED
	case errors.Is(err, core.ErrQueryInvalid):
		kind = v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT
	case errors.Is(err, core.ErrQueryTooLarge):
		kind = v1.ErrorKind_ERROR_KIND_RESOURCE_EXHAUSTED
	case errors.Is(err, core.ErrQueryStopped):
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			kind = v1.ErrorKind_ERROR_KIND_CANCELED
		} else {
			kind = v1.ErrorKind_ERROR_KIND_RESOURCE_EXHAUSTED
		}
	default:
		return err
	}
	return errorf(kind, "%s", err.Error())
}

func valueArg(v *v1.Value) any {
	switch k := v.GetKind().(type) {
	case *v1.Value_Integer:
		return k.Integer
	case *v1.Value_Real:
		return k.Real
	case *v1.Value_Text:
		return k.Text
	case *v1.Value_Blob:
		return k.Blob
	default:
		return nil
	}
}

func valueProto(v any) *v1.Value {
	switch x := v.(type) {
	case nil:
		return &v1.Value{Kind: &v1.Value_Null{Null: true}}
	case int64:
		return &v1.Value{Kind: &v1.Value_Integer{Integer: x}}
	case float64:
		return &v1.Value{Kind: &v1.Value_Real{Real: x}}
	case string:
		return &v1.Value{Kind: &v1.Value_Text{Text: x}}
	case []byte:
		return &v1.Value{Kind: &v1.Value_Blob{Blob: x}}
	case bool:
		var i int64
		if x {
			i = 1
		}
		return &v1.Value{Kind: &v1.Value_Integer{Integer: i}}
	default:
		return &v1.Value{Kind: &v1.Value_Null{Null: true}}
	}
}

func (s *Service) Fsck(ctx context.Context, r *v1.FsckRequest) (*v1.FsckResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := sess.Agent.Fsck(ctx, r.Repair)
	if err != nil {
		return nil, err
	}
	out := &v1.FsckResponse{Ok: rep.Clean()}
	for _, p := range rep.Problems {
		out.Problems = append(out.Problems, &v1.FsckProblem{Rule: p.Rule, Message: p.Detail, Repaired: r.Repair && p.Repairable})
	}
	return out, nil
}

func (s *Service) Checkpoint(ctx context.Context, _ *v1.CheckpointRequest) (*v1.CheckpointResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.CheckpointResponse{}, sess.Agent.Checkpoint(ctx)
}

func (s *Service) ListAgents(ctx context.Context, _ *v1.ListAgentsRequest) (*v1.ListAgentsResponse, error) {
	if s.Agents == nil {
		sess, err := sessionFrom(ctx)
		if err != nil {
			return nil, err
		}
		info, err := s.info(ctx, sess)
		if err != nil {
			return nil, err
		}
		return &v1.ListAgentsResponse{Agents: []*v1.AgentSummary{{Id: info.Id}}}, nil
	}
	return s.Agents.list()
}

func (s *Service) CreateAgent(ctx context.Context, r *v1.CreateAgentRequest) (*v1.CreateAgentResponse, error) {
	if s.Agents == nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED, "this connection serves one agent; create agents with the HTTP server or with the handshake's open options")
	}
	sess, err := s.Agents.create(ctx, r)
	if err != nil {
		return nil, err
	}
	info, err := s.info(ctx, sess)
	if err != nil {
		return nil, err
	}
	return &v1.CreateAgentResponse{Info: info}, nil
}

var changeKinds = map[overlay.Op]v1.ChangeKind{
	overlay.Added:    v1.ChangeKind_CHANGE_KIND_ADDED,
	overlay.Modified: v1.ChangeKind_CHANGE_KIND_MODIFIED,
	overlay.Deleted:  v1.ChangeKind_CHANGE_KIND_DELETED,
}

// Diff lists what an overlay database changed relative to its base
// directory.
func (s *Service) Diff(ctx context.Context, _ *v1.DiffRequest) (*v1.DiffResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	if sess.Agent.Info.OverlayBase == "" {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION, "diff: the agent is not an overlay over a host directory (create one with agentfs init ID --base DIR)")
	}
	changes, err := overlay.Diff(ctx, sess.Agent)
	if err != nil {
		return nil, err
	}
	out := &v1.DiffResponse{Changes: make([]*v1.Change, len(changes))}
	for i, c := range changes {
		out.Changes[i] = &v1.Change{Path: c.Path, Kind: changeKinds[c.Op], Type: c.Type}
	}
	return out, nil
}

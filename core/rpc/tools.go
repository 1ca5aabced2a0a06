package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

// optJSON checks optional JSON text and returns it raw (nil when unset).
func optJSON(s *string, what string) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	if !json.Valid([]byte(*s)) {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "%s is not valid JSON", what)
	}
	return json.RawMessage(*s), nil
}

func optString(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

var statusNames = map[string]v1.ToolStatus{
	"pending": v1.ToolStatus_TOOL_STATUS_PENDING,
	"success": v1.ToolStatus_TOOL_STATUS_SUCCESS,
	"error":   v1.ToolStatus_TOOL_STATUS_ERROR,
}

func callProto(c toolcalls.Call) *v1.ToolCall {
	return &v1.ToolCall{
		Id: c.ID, Name: c.Name,
		ParametersJson: optString(c.Parameters), ResultJson: optString(c.Result), Error: c.Error,
		Status: statusNames[c.Status], StartedAt: c.StartedAt, CompletedAt: c.CompletedAt, DurationMs: c.DurationMs,
	}
}

func toolsFrom(ctx context.Context) (*toolcalls.Log, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	return sess.Agent.Tools, nil
}

// notFound turns the log's missing-id error into the API's NOT_FOUND.
func notFound(err error, id int64) error {
	if errors.Is(err, toolcalls.ErrNotFound) {
		return errorf(v1.ErrorKind_ERROR_KIND_NOT_FOUND, "tool call %d does not exist", id)
	}
	return err
}

func (s *Service) ToolStart(ctx context.Context, r *v1.ToolStartRequest) (*v1.ToolStartResponse, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	params, err := optJSON(r.ParametersJson, "parameters")
	if err != nil {
		return nil, err
	}
	id, err := l.Start(ctx, r.Name, params)
	if err != nil {
		return nil, err
	}
	return &v1.ToolStartResponse{Id: id}, nil
}

func (s *Service) ToolSuccess(ctx context.Context, r *v1.ToolSuccessRequest) (*v1.ToolSuccessResponse, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	res, err := optJSON(r.ResultJson, "result")
	if err != nil {
		return nil, err
	}
	return &v1.ToolSuccessResponse{}, notFound(l.Success(ctx, r.Id, res), r.Id)
}

func (s *Service) ToolFail(ctx context.Context, r *v1.ToolFailRequest) (*v1.ToolFailResponse, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.ToolFailResponse{}, notFound(l.Fail(ctx, r.Id, r.Error), r.Id)
}

func (s *Service) ToolRecord(ctx context.Context, r *v1.ToolRecordRequest) (*v1.ToolRecordResponse, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	params, err := optJSON(r.ParametersJson, "parameters")
	if err != nil {
		return nil, err
	}
	res, err := optJSON(r.ResultJson, "result")
	if err != nil {
		return nil, err
	}
	id, err := l.Record(ctx, r.Name, time.Unix(r.StartedAt, 0), time.Unix(r.CompletedAt, 0), params, res, r.Error)
	if err != nil {
		return nil, err
	}
	return &v1.ToolRecordResponse{Id: id}, nil
}

func (s *Service) ToolGet(ctx context.Context, r *v1.ToolGetRequest) (*v1.ToolGetResponse, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	c, err := l.Get(ctx, r.Id)
	if notFoundCall(err) {
		return &v1.ToolGetResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &v1.ToolGetResponse{Found: true, Call: callProto(c)}, nil
}

// notFoundCall is whether err says there is no such call: ToolGet then
// answers found = false.
func notFoundCall(err error) bool { return errors.Is(err, toolcalls.ErrNotFound) }

// toolFilter is the log's filter of a ToolList request.
func toolFilter(r *v1.ToolListRequest) toolcalls.Filter {
	f := toolcalls.Filter{Name: r.Name, Limit: int(r.Limit), Ascending: r.Ascending}
	for name, st := range statusNames {
		if st == r.Status {
			f.Status = name
		}
	}
	if r.Since != 0 {
		f.Since = time.Unix(r.Since, 0)
	}
	if r.Until != 0 {
		f.Until = time.Unix(r.Until, 0)
	}
	return f
}

func (s *Service) ToolList(ctx context.Context, r *v1.ToolListRequest) (*v1.ToolListResponse, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	calls, err := l.List(ctx, toolFilter(r))
	if err != nil {
		return nil, err
	}
	out := make([]*v1.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = callProto(c)
	}
	return &v1.ToolListResponse{Calls: out}, nil
}

func (s *Service) ToolStats(ctx context.Context, r *v1.ToolStatsRequest) (*v1.ToolStatsResponse, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	st, err := l.Stats(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*v1.ToolStats, len(st))
	for i, x := range st {
		out[i] = &v1.ToolStats{Name: x.Name, TotalCalls: x.TotalCalls, Successful: x.Successful, Failed: x.Failed, Pending: x.Pending, AvgDurationMs: x.AvgDurationMs}
	}
	return &v1.ToolStatsResponse{Stats: out}, nil
}

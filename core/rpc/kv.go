package rpc

import (
	"context"
	"encoding/json"
	"errors"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/kv"
)

func (s *Service) KvSet(ctx context.Context, r *v1.KvSetRequest) (*v1.KvSetResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !json.Valid([]byte(r.ValueJson)) {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "kv set %q: the value is not valid JSON", r.Key)
	}
	return &v1.KvSetResponse{}, sess.Agent.KV.SetJSON(ctx, r.Key, []byte(r.ValueJson))
}

func (s *Service) KvGet(ctx context.Context, r *v1.KvGetRequest) (*v1.KvGetResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	v, err := sess.Agent.KV.GetJSON(ctx, r.Key)
	if errors.Is(err, kv.ErrNotFound) {
		return &v1.KvGetResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &v1.KvGetResponse{Found: true, ValueJson: string(v)}, nil
}

func (s *Service) KvList(ctx context.Context, r *v1.KvListRequest) (*v1.KvListResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	es, err := sess.Agent.KV.List(ctx, r.Prefix, int(r.Limit))
	if err != nil {
		return nil, err
	}
	out := make([]*v1.KvEntry, len(es))
	for i, e := range es {
		out[i] = &v1.KvEntry{Key: e.Key, ValueJson: string(e.Value), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	}
	return &v1.KvListResponse{Entries: out}, nil
}

func (s *Service) KvDelete(ctx context.Context, r *v1.KvDeleteRequest) (*v1.KvDeleteResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	ok, err := sess.Agent.KV.Delete(ctx, r.Key)
	if err != nil {
		return nil, err
	}
	return &v1.KvDeleteResponse{Deleted: ok}, nil
}

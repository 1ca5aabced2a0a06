package rpc

import (
	"context"
	"errors"
	"os"
	"strings"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	agentsync "github.com/agentfs-go/agentfs/core/sync"
)

// The sync methods of AgentService: the SDKs' pull(), push(), sync() and
// stats() run core/sync on the session's agent, as `agentfs sync` does
// on the command line (docs/SYNC.md).

// syncOptions is what a sync of the session's agent needs: its path and
// the token (the handshake's sync_token, else TURSO_DB_AUTH_TOKEN of the
// engine's environment, the variable Turso's AgentFS reads).
func syncOptions(sess *Session) (string, agentsync.Options) {
	token := sess.SyncToken
	if token == "" {
		token = os.Getenv("TURSO_DB_AUTH_TOKEN")
	}
	return sess.Agent.Path(), agentsync.Options{Token: token, Encryption: sess.Agent.DB.Encryption()}
}

// syncError classifies a failure of core/sync, whose messages name the
// errno in parentheses, and keeps its message (which says what to do).
func syncError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	kind := v1.ErrorKind_ERROR_KIND_INTERNAL
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, errors.ErrUnsupported):
		kind = v1.ErrorKind_ERROR_KIND_UNIMPLEMENTED
	case strings.Contains(msg, "not set up for sync"):
		kind = v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION
	case strings.Contains(msg, "(EACCES"):
		kind = v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED
	case strings.Contains(msg, "(EHOSTUNREACH)"), strings.Contains(msg, "(EIO)"), strings.Contains(msg, "(EBUSY)"):
		kind = v1.ErrorKind_ERROR_KIND_UNAVAILABLE
	case strings.Contains(msg, "(EINVAL)"):
		kind = v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT
	case strings.Contains(msg, "(ENOENT"):
		kind = v1.ErrorKind_ERROR_KIND_NOT_FOUND
	case strings.Contains(msg, "(EPROTO)"):
		kind = v1.ErrorKind_ERROR_KIND_FAILED_PRECONDITION
	}
	return errorf(kind, "%s", msg)
}

func pullResponse(r agentsync.PullResult) *v1.SyncPullResponse {
	return &v1.SyncPullResponse{Revision: r.Revision, Changed: r.Changed, Applied: int64(r.Applied), Kept: int64(r.Kept)}
}

func (s *Service) SyncPull(ctx context.Context, _ *v1.SyncPullRequest) (*v1.SyncPullResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	path, o := syncOptions(sess)
	res, err := agentsync.Pull(ctx, path, o)
	if err != nil {
		return nil, syncError(err)
	}
	return pullResponse(res), nil
}

func (s *Service) SyncPush(ctx context.Context, _ *v1.SyncPushRequest) (*v1.SyncPushResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	path, o := syncOptions(sess)
	res, err := agentsync.Push(ctx, path, o)
	if err != nil {
		return nil, syncError(err)
	}
	return &v1.SyncPushResponse{Rows: int64(res.Rows), Revision: res.Revision}, nil
}

func (s *Service) Sync(ctx context.Context, _ *v1.SyncRequest) (*v1.SyncResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	path, o := syncOptions(sess)
	pr, res, err := agentsync.Sync(ctx, path, o)
	if err != nil {
		return nil, syncError(err)
	}
	return &v1.SyncResponse{Pull: pullResponse(pr), Push: &v1.SyncPushResponse{Rows: int64(res.Rows), Revision: res.Revision}}, nil
}

func (s *Service) SyncStats(ctx context.Context, _ *v1.SyncStatsRequest) (*v1.SyncStatsResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	path, o := syncOptions(sess)
	st, err := agentsync.GetStats(ctx, path, o)
	if err != nil {
		return nil, syncError(err)
	}
	out := &v1.SyncStatsResponse{
		CdcOperations: st.CDCOperations, MainWalSize: st.MainWALSize, RevertWalSize: st.RevertWALSize,
		Revision: st.Revision, NetworkSentBytes: st.NetworkSentBytes, NetworkReceivedBytes: st.NetworkReceivedBytes,
		RemoteUrl: st.RemoteURL,
	}
	if st.LastPullUnixTime != nil {
		out.LastPullUnixTime = *st.LastPullUnixTime
	}
	if st.LastPushUnixTime != nil {
		out.LastPushUnixTime = *st.LastPushUnixTime
	}
	return out, nil
}

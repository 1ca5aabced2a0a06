package agentfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentfs-go/agentfs/core/kv"
	"github.com/agentfs-go/agentfs/core/toolcalls"
	"github.com/agentfs-go/agentfs/core/vfs"
)

// localFS is FileSystem on the in-process engine. The engine's calls do
// not block on the network, so ctx is only checked before each call.
type localFS struct{ f *vfs.FS }

func (l *localFS) Stat(ctx context.Context, name string) (Stat, error) {
	if err := ctx.Err(); err != nil {
		return Stat{}, err
	}
	return l.f.Stat(ctx, name)
}

func (l *localFS) Lstat(ctx context.Context, name string) (Stat, error) {
	if err := ctx.Err(); err != nil {
		return Stat{}, err
	}
	return l.f.Lstat(ctx, name)
}

func (l *localFS) Access(ctx context.Context, name string, mode uint32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Access(ctx, name, mode)
}

func (l *localFS) Exists(ctx context.Context, name string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return l.f.Exists(ctx, name)
}

func (l *localFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return l.f.ReadFile(ctx, name)
}

func (l *localFS) WriteFile(ctx context.Context, name string, data []byte, o WriteOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	return l.f.WriteFile(ctx, name, data, vfs.WriteOptions{Perm: perm, CreateParents: o.CreateParents, Append: o.Append, Exclusive: o.Exclusive})
}

func (l *localFS) Readdir(ctx context.Context, name string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return l.f.Readdir(ctx, name)
}

func (l *localFS) ReaddirPlus(ctx context.Context, name string) ([]DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return l.f.ReaddirPlus(ctx, name)
}

func (l *localFS) Mkdir(ctx context.Context, name string, perm uint32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Mkdir(ctx, name, dirPerm(perm))
}

func (l *localFS) MkdirAll(ctx context.Context, name string, perm uint32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.MkdirAll(ctx, name, dirPerm(perm))
}

func dirPerm(p uint32) uint32 {
	if p == 0 {
		return 0o755
	}
	return p
}

func (l *localFS) Rmdir(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Rmdir(ctx, name)
}

func (l *localFS) Unlink(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Unlink(ctx, name)
}

func (l *localFS) Remove(ctx context.Context, name string, o RemoveOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Remove(ctx, name, o.Recursive, o.Force)
}

func (l *localFS) RemoveAll(ctx context.Context, name string) error {
	return l.Remove(ctx, name, RemoveOptions{Recursive: true, Force: true})
}

func (l *localFS) Rename(ctx context.Context, oldname, newname string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Rename(ctx, oldname, newname)
}

func (l *localFS) CopyFile(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.CopyFile(ctx, src, dst)
}

func (l *localFS) Symlink(ctx context.Context, target, linkname string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Symlink(ctx, target, linkname)
}

func (l *localFS) Readlink(ctx context.Context, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return l.f.Readlink(ctx, name)
}

func (l *localFS) Link(ctx context.Context, oldname, newname string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Link(ctx, oldname, newname)
}

func (l *localFS) Chmod(ctx context.Context, name string, perm uint32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Chmod(ctx, name, perm)
}

func (l *localFS) Chown(ctx context.Context, name string, uid, gid int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Chown(ctx, name, uid, gid, true)
}

func (l *localFS) Lchown(ctx context.Context, name string, uid, gid int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Chown(ctx, name, uid, gid, false)
}

func (l *localFS) Utimes(ctx context.Context, name string, atime, mtime time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Utimens(ctx, name, optTime(atime), optTime(mtime), true)
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (l *localFS) Truncate(ctx context.Context, name string, size int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.f.Truncate(ctx, name, size)
}

func (l *localFS) Statfs(ctx context.Context) (FSStat, error) {
	if err := ctx.Err(); err != nil {
		return FSStat{}, err
	}
	return l.f.Statfs(ctx)
}

func (l *localFS) Open(ctx context.Context, name string, flag int, perm uint32) (File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if perm == 0 {
		perm = 0o644
	}
	f, err := l.f.Open(ctx, name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// localKV is KVStore on the in-process engine.
type localKV struct{ s *kv.Store }

func (l *localKV) Set(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("kv set %q: %w", key, err)
	}
	return l.s.SetJSON(ctx, key, b)
}

func (l *localKV) Get(ctx context.Context, key string, out any) error {
	b, err := l.GetJSON(ctx, key)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func (l *localKV) GetJSON(ctx context.Context, key string) (json.RawMessage, error) {
	b, err := l.s.GetJSON(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, fmt.Errorf("kv key %q: %w", key, ErrNotFound)
	}
	return b, err
}

func (l *localKV) List(ctx context.Context, prefix string) ([]KVEntry, error) {
	return l.s.List(ctx, prefix, 0)
}

func (l *localKV) Delete(ctx context.Context, key string) (bool, error) {
	return l.s.Delete(ctx, key)
}

// localTools is ToolLog on the in-process engine.
type localTools struct{ l *toolcalls.Log }

func (l *localTools) Start(ctx context.Context, name string, params any) (int64, error) {
	p, err := encodeJSON(params)
	if err != nil {
		return 0, fmt.Errorf("tool %q parameters: %w", name, err)
	}
	return l.l.Start(ctx, name, p)
}

func (l *localTools) Success(ctx context.Context, id int64, result any) error {
	r, err := encodeJSON(result)
	if err != nil {
		return fmt.Errorf("tool call %d result: %w", id, err)
	}
	return toolErr(id, l.l.Success(ctx, id, r))
}

func (l *localTools) Error(ctx context.Context, id int64, message string) error {
	return toolErr(id, l.l.Fail(ctx, id, message))
}

func (l *localTools) Record(ctx context.Context, r ToolRecord) (int64, error) {
	p, err := encodeJSON(r.Parameters)
	if err != nil {
		return 0, fmt.Errorf("tool %q parameters: %w", r.Name, err)
	}
	res, err := encodeJSON(r.Result)
	if err != nil {
		return 0, fmt.Errorf("tool %q result: %w", r.Name, err)
	}
	var msg *string
	if r.Error != "" {
		msg = &r.Error
	}
	return l.l.Record(ctx, r.Name, r.StartedAt, r.CompletedAt, p, res, msg)
}

func (l *localTools) Get(ctx context.Context, id int64) (ToolCall, error) {
	c, err := l.l.Get(ctx, id)
	return c, toolErr(id, err)
}

func (l *localTools) List(ctx context.Context, f ToolFilter) ([]ToolCall, error) {
	return l.l.List(ctx, f)
}

func (l *localTools) Stats(ctx context.Context) ([]ToolStats, error) {
	return l.l.Stats(ctx)
}

// toolErr maps the engine's sentinel errors to the SDK's.
func toolErr(id int64, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, toolcalls.ErrNotFound):
		return fmt.Errorf("tool call %d: %w", id, ErrNotFound)
	case errors.Is(err, toolcalls.ErrFinished):
		return fmt.Errorf("tool call %d: %w", id, ErrFinished)
	}
	return err
}

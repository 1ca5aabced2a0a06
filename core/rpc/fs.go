package rpc

import (
	"context"
	"io"
	"syscall"
	"time"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func statProto(st vfs.Stat) *v1.Stat {
	return &v1.Stat{
		Ino: st.Ino, Mode: st.Mode, Nlink: st.Nlink, Uid: st.UID, Gid: st.GID,
		Size: st.Size, Rdev: st.Rdev,
		AtimeNs: st.Atime.UnixNano(), MtimeNs: st.Mtime.UnixNano(), CtimeNs: st.Ctime.UnixNano(),
		Blksize: st.Blksize, Blocks: st.Blocks(),
	}
}

func entriesProto(es []vfs.DirEntry) []*v1.DirEntry {
	out := make([]*v1.DirEntry, len(es))
	for i, e := range es {
		out[i] = &v1.DirEntry{Name: e.Name, Stat: statProto(e.Stat)}
	}
	return out
}

func (s *Service) Stat(ctx context.Context, r *v1.StatRequest) (*v1.StatResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat(ctx, r.Path)
	if err != nil {
		return nil, fail(err, "stat", r.Path)
	}
	return &v1.StatResponse{Stat: statProto(st)}, nil
}

func (s *Service) Lstat(ctx context.Context, r *v1.LstatRequest) (*v1.LstatResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	st, err := f.Lstat(ctx, r.Path)
	if err != nil {
		return nil, fail(err, "lstat", r.Path)
	}
	return &v1.LstatResponse{Stat: statProto(st)}, nil
}

func (s *Service) Access(ctx context.Context, r *v1.AccessRequest) (*v1.AccessResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.AccessResponse{}, fail(f.Access(ctx, r.Path, r.Mode), "access", r.Path)
}

func (s *Service) ReadFile(ctx context.Context, r *v1.ReadFileRequest) (*v1.ReadFileResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	b, err := f.ReadFileInto(ctx, r.Path, allocatorFrom(ctx))
	if err != nil {
		return nil, fail(err, "open", r.Path)
	}
	return &v1.ReadFileResponse{Data: b}, nil
}

func (s *Service) WriteFile(ctx context.Context, r *v1.WriteFileRequest) (*v1.WriteFileResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	err = f.WriteFile(ctx, r.Path, r.Data, vfs.WriteOptions{Perm: r.Mode, CreateParents: r.CreateParents, Append: r.Append, Exclusive: r.Exclusive})
	return &v1.WriteFileResponse{}, fail(err, "open", r.Path)
}

func (s *Service) Readdir(ctx context.Context, r *v1.ReaddirRequest) (*v1.ReaddirResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	names, err := f.Readdir(ctx, r.Path)
	if err != nil {
		return nil, fail(err, "scandir", r.Path)
	}
	return &v1.ReaddirResponse{Names: names}, nil
}

func (s *Service) ReaddirPlus(ctx context.Context, r *v1.ReaddirPlusRequest) (*v1.ReaddirPlusResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	es, err := f.ReaddirPlus(ctx, r.Path)
	if err != nil {
		return nil, fail(err, "scandir", r.Path)
	}
	return &v1.ReaddirPlusResponse{Entries: entriesProto(es)}, nil
}

func orDefault(mode, def uint32) uint32 {
	if mode == 0 {
		return def
	}
	return mode
}

func (s *Service) Mkdir(ctx context.Context, r *v1.MkdirRequest) (*v1.MkdirResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	mode := orDefault(r.Mode, 0o755)
	if r.Recursive {
		err = f.MkdirAll(ctx, r.Path, mode)
	} else {
		err = f.Mkdir(ctx, r.Path, mode)
	}
	return &v1.MkdirResponse{}, fail(err, "mkdir", r.Path)
}

func (s *Service) Rmdir(ctx context.Context, r *v1.RmdirRequest) (*v1.RmdirResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.RmdirResponse{}, fail(f.Rmdir(ctx, r.Path), "rmdir", r.Path)
}

func (s *Service) Unlink(ctx context.Context, r *v1.UnlinkRequest) (*v1.UnlinkResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.UnlinkResponse{}, fail(f.Unlink(ctx, r.Path), "unlink", r.Path)
}

// Remove is rm (vfs.Remove, one transaction): a file or symlink goes
// with unlink; a directory needs recursive (EISDIR otherwise, as rm
// without -r); a missing path is an error unless force.
func (s *Service) Remove(ctx context.Context, r *v1.RemoveRequest) (*v1.RemoveResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.RemoveResponse{}, fail(f.Remove(ctx, r.Path, r.Recursive, r.Force), "rm", r.Path)
}

func (s *Service) Rename(ctx context.Context, r *v1.RenameRequest) (*v1.RenameResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	var flags int
	switch r.Flags {
	case v1.RenameFlags_RENAME_FLAGS_UNSPECIFIED:
	case v1.RenameFlags_RENAME_FLAGS_NOREPLACE:
		flags = vfs.RenameNoReplace
	case v1.RenameFlags_RENAME_FLAGS_EXCHANGE:
		flags = vfs.RenameExchange
	default:
		return nil, fail(syscall.EINVAL, "rename", r.OldPath, r.NewPath)
	}
	return &v1.RenameResponse{}, fail(f.Rename2(ctx, r.OldPath, r.NewPath, flags), "rename", r.OldPath, r.NewPath)
}

func (s *Service) CopyFile(ctx context.Context, r *v1.CopyFileRequest) (*v1.CopyFileResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.CopyFileResponse{}, fail(f.CopyFile(ctx, r.Src, r.Dst), "copyfile", r.Src, r.Dst)
}

func (s *Service) Symlink(ctx context.Context, r *v1.SymlinkRequest) (*v1.SymlinkResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.SymlinkResponse{}, fail(f.Symlink(ctx, r.Target, r.LinkPath), "symlink", r.Target, r.LinkPath)
}

func (s *Service) Readlink(ctx context.Context, r *v1.ReadlinkRequest) (*v1.ReadlinkResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	t, err := f.Readlink(ctx, r.Path)
	if err != nil {
		return nil, fail(err, "readlink", r.Path)
	}
	return &v1.ReadlinkResponse{Target: t}, nil
}

func (s *Service) Link(ctx context.Context, r *v1.LinkRequest) (*v1.LinkResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.LinkResponse{}, fail(f.Link(ctx, r.OldPath, r.NewPath), "link", r.OldPath, r.NewPath)
}

func (s *Service) Chmod(ctx context.Context, r *v1.ChmodRequest) (*v1.ChmodResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.ChmodResponse{}, fail(f.Chmod(ctx, r.Path, r.Mode), "chmod", r.Path)
}

func (s *Service) Chown(ctx context.Context, r *v1.ChownRequest) (*v1.ChownResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.ChownResponse{}, fail(f.Chown(ctx, r.Path, r.Uid, r.Gid, !r.NoFollow), "chown", r.Path)
}

func (s *Service) Utimes(ctx context.Context, r *v1.UtimesRequest) (*v1.UtimesResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	var at, mt *time.Time
	if r.AtimeNs != nil {
		t := time.Unix(0, *r.AtimeNs)
		at = &t
	}
	if r.MtimeNs != nil {
		t := time.Unix(0, *r.MtimeNs)
		mt = &t
	}
	return &v1.UtimesResponse{}, fail(f.Utimens(ctx, r.Path, at, mt, !r.NoFollow), "utime", r.Path)
}

func (s *Service) Truncate(ctx context.Context, r *v1.TruncateRequest) (*v1.TruncateResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.TruncateResponse{}, fail(f.Truncate(ctx, r.Path, r.Size), "truncate", r.Path)
}

func (s *Service) Mknod(ctx context.Context, r *v1.MknodRequest) (*v1.MknodResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.MknodResponse{}, fail(f.Mknod(ctx, r.Path, r.Mode, r.Rdev), "mknod", r.Path)
}

func (s *Service) Statfs(ctx context.Context, r *v1.StatfsRequest) (*v1.StatfsResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	st, err := f.Statfs(ctx)
	if err != nil {
		return nil, fail(err, "statfs", "/")
	}
	return &v1.StatfsResponse{
		Inodes: st.Files, BytesUsed: st.DataBytes, BlockSize: st.BlockSize,
		Blocks: st.Blocks, BlocksFree: st.BlocksFree, FilesFree: st.FilesFree, NameMax: st.NameMax,
	}, nil
}

func (s *Service) GetXattr(ctx context.Context, r *v1.GetXattrRequest) (*v1.GetXattrResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	v, err := f.Getxattr(ctx, r.Path, r.Name, !r.NoFollow)
	if err != nil {
		return nil, fail(err, "getxattr", r.Path)
	}
	return &v1.GetXattrResponse{Value: v}, nil
}

func (s *Service) SetXattr(ctx context.Context, r *v1.SetXattrRequest) (*v1.SetXattrResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	var flags int
	switch r.Flags {
	case v1.XattrFlags_XATTR_FLAGS_CREATE:
		flags = vfs.XattrCreate
	case v1.XattrFlags_XATTR_FLAGS_REPLACE:
		flags = vfs.XattrReplace
	}
	return &v1.SetXattrResponse{}, fail(f.Setxattr(ctx, r.Path, r.Name, r.Value, flags, !r.NoFollow), "setxattr", r.Path)
}

func (s *Service) ListXattr(ctx context.Context, r *v1.ListXattrRequest) (*v1.ListXattrResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	names, err := f.Listxattr(ctx, r.Path, !r.NoFollow)
	if err != nil {
		return nil, fail(err, "listxattr", r.Path)
	}
	return &v1.ListXattrResponse{Names: names}, nil
}

func (s *Service) RemoveXattr(ctx context.Context, r *v1.RemoveXattrRequest) (*v1.RemoveXattrResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &v1.RemoveXattrResponse{}, fail(f.Removexattr(ctx, r.Path, r.Name, !r.NoFollow), "removexattr", r.Path)
}

func (s *Service) Walk(ctx context.Context, r *v1.WalkRequest) (*v1.WalkResponse, error) {
	f, err := fsFrom(ctx)
	if err != nil {
		return nil, err
	}
	var out []*v1.DirEntry
	err = f.Walk(ctx, r.Path, func(p string, st vfs.Stat) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		out = append(out, &v1.DirEntry{Name: p, Stat: statProto(st)})
		return nil
	})
	if err != nil {
		return nil, fail(err, "scandir", r.Path)
	}
	return &v1.WalkResponse{Entries: out}, nil
}

func (s *Service) Open(ctx context.Context, r *v1.OpenRequest) (*v1.OpenResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	h, err := sess.Agent.FS.Open(ctx, r.Path, int(r.Flags), orDefault(r.Mode, 0o644))
	if err != nil {
		return nil, fail(err, "open", r.Path)
	}
	st, err := h.Stat()
	if err != nil {
		h.Close()
		return nil, fail(err, "open", r.Path)
	}
	return &v1.OpenResponse{Handle: sess.addHandle(h), Stat: statProto(st)}, nil
}

// fileFrom finds the handle of a positional call.
func fileFrom(ctx context.Context, id uint64, op string) (*vfs.File, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	return sess.handle(id, op)
}

// maxPread bounds one Pread so that a bad size cannot exhaust memory.
const maxPread = 256 << 20

func (s *Service) Pread(ctx context.Context, r *v1.PreadRequest) (*v1.PreadResponse, error) {
	h, err := fileFrom(ctx, r.Handle, "read")
	if err != nil {
		return nil, err
	}
	if r.Size < 0 || r.Offset < 0 || r.Size > maxPread {
		return nil, fail(syscall.EINVAL, "read", h.Name())
	}
	buf := make([]byte, r.Size)
	n, err := h.ReadAt(buf, r.Offset)
	if err != nil && err != io.EOF {
		return nil, fail(err, "read", h.Name())
	}
	return &v1.PreadResponse{Data: buf[:n]}, nil
}

func (s *Service) Pwrite(ctx context.Context, r *v1.PwriteRequest) (*v1.PwriteResponse, error) {
	h, err := fileFrom(ctx, r.Handle, "write")
	if err != nil {
		return nil, err
	}
	n, err := h.WriteAt(r.Data, r.Offset)
	if err != nil {
		return nil, fail(err, "write", h.Name())
	}
	return &v1.PwriteResponse{Written: int64(n)}, nil
}

func (s *Service) Ftruncate(ctx context.Context, r *v1.FtruncateRequest) (*v1.FtruncateResponse, error) {
	h, err := fileFrom(ctx, r.Handle, "ftruncate")
	if err != nil {
		return nil, err
	}
	return &v1.FtruncateResponse{}, fail(h.Truncate(r.Size), "ftruncate", h.Name())
}

func (s *Service) Fsync(ctx context.Context, r *v1.FsyncRequest) (*v1.FsyncResponse, error) {
	h, err := fileFrom(ctx, r.Handle, "fsync")
	if err != nil {
		return nil, err
	}
	return &v1.FsyncResponse{}, fail(h.Sync(), "fsync", h.Name())
}

func (s *Service) Fstat(ctx context.Context, r *v1.FstatRequest) (*v1.FstatResponse, error) {
	h, err := fileFrom(ctx, r.Handle, "fstat")
	if err != nil {
		return nil, err
	}
	st, err := h.Stat()
	if err != nil {
		return nil, fail(err, "fstat", h.Name())
	}
	return &v1.FstatResponse{Stat: statProto(st)}, nil
}

func (s *Service) Close(ctx context.Context, r *v1.CloseRequest) (*v1.CloseResponse, error) {
	sess, err := sessionFrom(ctx)
	if err != nil {
		return nil, err
	}
	h := sess.dropHandle(r.Handle)
	if h == nil {
		return nil, errorf(v1.ErrorKind_ERROR_KIND_NOT_FOUND, "close: no open file handle %d", r.Handle)
	}
	return &v1.CloseResponse{}, fail(h.Close(), "close", h.Name())
}

// Batch runs the operations in order through the same methods as single
// calls, so a batched operation behaves exactly like its single call.
func (s *Service) Batch(ctx context.Context, r *v1.BatchRequest) (*v1.BatchResponse, error) {
	out := &v1.BatchResponse{Results: make([]*v1.BatchResult, len(r.Ops))}
	failed := false
	for i, op := range r.Ops {
		res := &v1.BatchResult{}
		out.Results[i] = res
		if failed && r.StopOnError {
			res.Skipped = true
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		switch o := op.Op.(type) {
		case *v1.BatchOp_Stat:
			var x *v1.StatResponse
			if x, err = s.Stat(ctx, o.Stat); err == nil {
				res.Result = &v1.BatchResult_Stat{Stat: x}
			}
		case *v1.BatchOp_Lstat:
			var x *v1.LstatResponse
			if x, err = s.Lstat(ctx, o.Lstat); err == nil {
				res.Result = &v1.BatchResult_Lstat{Lstat: x}
			}
		case *v1.BatchOp_ReadFile:
			var x *v1.ReadFileResponse
			if x, err = s.ReadFile(ctx, o.ReadFile); err == nil {
				res.Result = &v1.BatchResult_ReadFile{ReadFile: x}
			}
		case *v1.BatchOp_ReaddirPlus:
			var x *v1.ReaddirPlusResponse
			if x, err = s.ReaddirPlus(ctx, o.ReaddirPlus); err == nil {
				res.Result = &v1.BatchResult_ReaddirPlus{ReaddirPlus: x}
			}
		case *v1.BatchOp_WriteFile:
			_, err = s.WriteFile(ctx, o.WriteFile)
		case *v1.BatchOp_Mkdir:
			_, err = s.Mkdir(ctx, o.Mkdir)
		case *v1.BatchOp_Unlink:
			_, err = s.Unlink(ctx, o.Unlink)
		case *v1.BatchOp_Remove:
			_, err = s.Remove(ctx, o.Remove)
		case *v1.BatchOp_Rename:
			_, err = s.Rename(ctx, o.Rename)
		case *v1.BatchOp_Symlink:
			_, err = s.Symlink(ctx, o.Symlink)
		case *v1.BatchOp_Chmod:
			_, err = s.Chmod(ctx, o.Chmod)
		case *v1.BatchOp_Rmdir:
			_, err = s.Rmdir(ctx, o.Rmdir)
		case *v1.BatchOp_Utimes:
			_, err = s.Utimes(ctx, o.Utimes)
		default:
			err = errorf(v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, "batch op %d: empty or unknown operation", i)
		}
		if err != nil {
			res.Error = ToProto(err)
			failed = true
		}
	}
	return out, nil
}

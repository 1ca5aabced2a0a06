package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// Encodings of file content.
const (
	EncodingUTF8   = "utf8"
	EncodingBase64 = "base64"
)

var encodings = []any{EncodingUTF8, EncodingBase64}

// agentPath makes p absolute in the agent filesystem; the engine does the
// rest of the resolution (".." , symlinks) with its own rules.
func agentPath(p string) (string, error) {
	if p == "" {
		return "", errorf(syscall.ENOENT, "empty path")
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p, nil
}

func permString(st vfs.Stat) string { return fmt.Sprintf("%04o", st.Perm()) }

func timeString(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// --- read_file

type ReadFileInput struct {
	Path     string `json:"path" jsonschema:"absolute path of the file in the agent filesystem, e.g. /notes/todo.md"`
	Encoding string `json:"encoding,omitempty" jsonschema:"how to return the content: utf8 (text; fails on binary content) or base64"`
}

type ReadFileOutput struct {
	Path     string `json:"path"`
	Content  string `json:"content" jsonschema:"the file content in the requested encoding"`
	Encoding string `json:"encoding"`
	Size     int64  `json:"size" jsonschema:"size of the file in bytes"`
}

// --- write_file

type WriteFileInput struct {
	Path       string `json:"path" jsonschema:"absolute path of the file; it is created or replaced"`
	Content    string `json:"content" jsonschema:"the new content, in the given encoding"`
	Encoding   string `json:"encoding,omitempty" jsonschema:"encoding of content: utf8 (text) or base64 (binary)"`
	CreateDirs bool   `json:"create_dirs,omitempty" jsonschema:"create missing parent directories, like mkdir -p"`
	Append     bool   `json:"append,omitempty" jsonschema:"append to the file instead of replacing its content"`
}

type WriteFileOutput struct {
	Path    string `json:"path"`
	Written int64  `json:"written" jsonschema:"bytes written"`
	Size    int64  `json:"size" jsonschema:"size of the file after the write"`
}

// --- readdir

type ReaddirInput struct {
	Path string `json:"path,omitempty" jsonschema:"absolute path of the directory"`
}

type DirEntry struct {
	Name  string `json:"name"`
	Type  string `json:"type" jsonschema:"file, dir, symlink, fifo, char, block or socket"`
	Size  int64  `json:"size"`
	Mode  string `json:"mode" jsonschema:"permission bits in octal, e.g. 0644"`
	Mtime string `json:"mtime" jsonschema:"modification time, RFC 3339"`
}

type ReaddirOutput struct {
	Path    string     `json:"path"`
	Entries []DirEntry `json:"entries" jsonschema:"the entries sorted by name, without . and ..; symlinks are not followed"`
}

// --- mkdir

type MkdirInput struct {
	Path      string `json:"path" jsonschema:"absolute path of the new directory"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"create missing parents and accept an existing directory, like mkdir -p"`
}

type PathOutput struct {
	Path string `json:"path"`
}

// --- remove

type RemoveInput struct {
	Path      string `json:"path" jsonschema:"absolute path to remove: a file, a symlink (not its target) or an empty directory"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"remove a directory with everything below it, like rm -r"`
}

// --- rename

type RenameInput struct {
	From string `json:"from" jsonschema:"existing path"`
	To   string `json:"to" jsonschema:"new path; an existing file there is replaced, as rename(2)"`
}

type RenameOutput struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// --- stat

type StatInput struct {
	Path           string `json:"path" jsonschema:"absolute path"`
	FollowSymlinks bool   `json:"follow_symlinks,omitempty" jsonschema:"describe the target of a final symlink (stat) rather than the link itself (lstat)"`
}

type StatOutput struct {
	Path   string `json:"path"`
	Type   string `json:"type" jsonschema:"file, dir, symlink, fifo, char, block or socket"`
	Size   int64  `json:"size"`
	Mode   string `json:"mode" jsonschema:"permission bits in octal, e.g. 0644"`
	Ino    int64  `json:"ino"`
	Nlink  uint32 `json:"nlink"`
	UID    uint32 `json:"uid"`
	GID    uint32 `json:"gid"`
	Atime  string `json:"atime" jsonschema:"RFC 3339"`
	Mtime  string `json:"mtime" jsonschema:"RFC 3339"`
	Ctime  string `json:"ctime" jsonschema:"RFC 3339"`
	Target string `json:"target,omitempty" jsonschema:"the target of a symlink (when not followed)"`
}

// --- access

type AccessInput struct {
	Path string `json:"path" jsonschema:"absolute path"`
}

type AccessOutput struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists" jsonschema:"whether the path exists (following symlinks)"`
}

func init() {
	define(spec[ReadFileInput, ReadFileOutput]{
		name: "read_file", title: "Read a file",
		desc:     "Read a whole file of the agent filesystem. Text comes back as is with encoding utf8 (the default); use encoding base64 for binary content.",
		defaults: map[string]any{"encoding": EncodingUTF8},
		enums:    map[string][]any{"encoding": encodings},
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in ReadFileInput) (ReadFileOutput, error) {
			p, err := agentPath(in.Path)
			if err != nil {
				return ReadFileOutput{}, err
			}
			data, err := s.agent.FS.ReadFile(ctx, p)
			if err != nil {
				return ReadFileOutput{}, err
			}
			out := ReadFileOutput{Path: p, Encoding: in.Encoding, Size: int64(len(data))}
			switch in.Encoding {
			case EncodingBase64:
				out.Content = base64.StdEncoding.EncodeToString(data)
			default:
				if !utf8.Valid(data) {
					return ReadFileOutput{}, errorf(syscall.EILSEQ, "read %s: the content is not valid UTF-8 text; read it with encoding base64", p)
				}
				out.Encoding = EncodingUTF8
				out.Content = string(data)
			}
			return out, nil
		},
		summary: func(_ ReadFileInput, out ReadFileOutput) any {
			return map[string]any{"path": out.Path, "size": out.Size, "encoding": out.Encoding}
		},
	})

	define(spec[WriteFileInput, WriteFileOutput]{
		name: "write_file", title: "Write a file", writes: true, destructive: true,
		desc:     "Create or replace a file of the agent filesystem (or append to it). content is text with encoding utf8 (the default) or base64 for binary data; create_dirs creates missing parent directories.",
		defaults: map[string]any{"encoding": EncodingUTF8},
		enums:    map[string][]any{"encoding": encodings},
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in WriteFileInput) (WriteFileOutput, error) {
			p, err := agentPath(in.Path)
			if err != nil {
				return WriteFileOutput{}, err
			}
			data := []byte(in.Content)
			if in.Encoding == EncodingBase64 {
				if data, err = base64.StdEncoding.DecodeString(strings.TrimSpace(in.Content)); err != nil {
					return WriteFileOutput{}, errorf(syscall.EINVAL, "write %s: content is not valid base64: %v", p, err)
				}
			}
			if err := s.agent.FS.WriteFile(ctx, p, data, vfs.WriteOptions{CreateParents: in.CreateDirs, Append: in.Append}); err != nil {
				return WriteFileOutput{}, err
			}
			out := WriteFileOutput{Path: p, Written: int64(len(data)), Size: int64(len(data))}
			if in.Append {
				st, err := s.agent.FS.Stat(ctx, p)
				if err != nil {
					return WriteFileOutput{}, err
				}
				out.Size = st.Size
			}
			return out, nil
		},
	})

	define(spec[ReaddirInput, ReaddirOutput]{
		name: "readdir", title: "List a directory",
		desc:     "List a directory of the agent filesystem: name, type, size, mode and modification time of each entry.",
		defaults: map[string]any{"path": "/"},
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in ReaddirInput) (ReaddirOutput, error) {
			if in.Path == "" {
				in.Path = "/"
			}
			p, err := agentPath(in.Path)
			if err != nil {
				return ReaddirOutput{}, err
			}
			ents, err := s.agent.FS.ReaddirPlus(ctx, p)
			if err != nil {
				return ReaddirOutput{}, err
			}
			out := ReaddirOutput{Path: p, Entries: make([]DirEntry, 0, len(ents))}
			for _, e := range ents {
				out.Entries = append(out.Entries, DirEntry{
					Name: e.Name, Type: e.Stat.TypeName(), Size: e.Stat.Size,
					Mode: permString(e.Stat), Mtime: timeString(e.Stat.Mtime),
				})
			}
			return out, nil
		},
		summary: func(_ ReaddirInput, out ReaddirOutput) any {
			return map[string]any{"path": out.Path, "entries": len(out.Entries)}
		},
	})

	define(spec[MkdirInput, PathOutput]{
		name: "mkdir", title: "Create a directory", writes: true,
		desc: "Create a directory in the agent filesystem; recursive creates missing parents and accepts an existing directory (mkdir -p).",
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in MkdirInput) (PathOutput, error) {
			p, err := agentPath(in.Path)
			if err != nil {
				return PathOutput{}, err
			}
			if in.Recursive {
				err = s.agent.FS.MkdirAll(ctx, p, 0o755)
			} else {
				err = s.agent.FS.Mkdir(ctx, p, 0o755)
			}
			return PathOutput{Path: p}, err
		},
	})

	define(spec[RemoveInput, PathOutput]{
		name: "remove", title: "Remove a path", writes: true, destructive: true,
		desc: "Remove a file, symlink or empty directory of the agent filesystem; recursive removes a directory and everything below it (rm -r).",
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in RemoveInput) (PathOutput, error) {
			p, err := agentPath(in.Path)
			if err != nil {
				return PathOutput{}, err
			}
			fsys := s.agent.FS
			if in.Recursive {
				// RemoveAll accepts a missing path (rm -rf); this tool
				// reports it, as rm -r does.
				if _, err := fsys.Lstat(ctx, p); err != nil {
					return PathOutput{}, err
				}
				return PathOutput{Path: p}, fsys.RemoveAll(ctx, p)
			}
			err = fsys.Unlink(ctx, p)
			if vfs.Errno(err) == syscall.EISDIR {
				err = fsys.Rmdir(ctx, p)
			}
			return PathOutput{Path: p}, err
		},
	})

	define(spec[RenameInput, RenameOutput]{
		name: "rename", title: "Rename or move a path", writes: true, destructive: true,
		desc: "Rename or move a file or directory of the agent filesystem, replacing an existing destination file as rename(2) does.",
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in RenameInput) (RenameOutput, error) {
			from, err := agentPath(in.From)
			if err != nil {
				return RenameOutput{}, err
			}
			to, err := agentPath(in.To)
			if err != nil {
				return RenameOutput{}, err
			}
			return RenameOutput{From: from, To: to}, s.agent.FS.Rename(ctx, from, to)
		},
	})

	define(spec[StatInput, StatOutput]{
		name: "stat", title: "Describe a path",
		desc:     "Attributes of a path of the agent filesystem: type, size, mode, owner, times. follow_symlinks (default true) describes the target of a final symlink; false describes the link and gives its target.",
		defaults: map[string]any{"follow_symlinks": true},
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in StatInput) (StatOutput, error) {
			p, err := agentPath(in.Path)
			if err != nil {
				return StatOutput{}, err
			}
			var st vfs.Stat
			if in.FollowSymlinks {
				st, err = s.agent.FS.Stat(ctx, p)
			} else {
				st, err = s.agent.FS.Lstat(ctx, p)
			}
			if err != nil {
				return StatOutput{}, err
			}
			out := StatOutput{
				Path: p, Type: st.TypeName(), Size: st.Size, Mode: permString(st), Ino: st.Ino,
				Nlink: st.Nlink, UID: st.UID, GID: st.GID,
				Atime: timeString(st.Atime), Mtime: timeString(st.Mtime), Ctime: timeString(st.Ctime),
			}
			if st.IsSymlink() {
				if out.Target, err = s.agent.FS.Readlink(ctx, p); err != nil {
					return StatOutput{}, err
				}
			}
			return out, nil
		},
		summary: func(_ StatInput, out StatOutput) any {
			return map[string]any{"path": out.Path, "type": out.Type, "size": out.Size}
		},
	})

	define(spec[AccessInput, AccessOutput]{
		name: "access", title: "Check that a path exists",
		desc: "Report whether a path exists in the agent filesystem (following symlinks). A missing path is exists=false, not an error.",
		run: func(ctx context.Context, s *Server, _ *mcp.CallToolRequest, in AccessInput) (AccessOutput, error) {
			p, err := agentPath(in.Path)
			if err != nil {
				return AccessOutput{}, err
			}
			ok, err := s.agent.FS.Exists(ctx, p)
			return AccessOutput{Path: p, Exists: ok}, err
		},
	})
}

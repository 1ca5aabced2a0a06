package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentfs-go/agentfs/core"
	"github.com/agentfs-go/agentfs/core/hostcopy"
	"github.com/agentfs-go/agentfs/core/schema"
	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() { register(newFSCmd) }

func newFSCmd() *cobra.Command {
	return newGroupCmd("fs", "Read and change the filesystem of an agent",
		`Read and change the filesystem of an agent, without mounting it.

Paths are absolute inside the agent filesystem ("notes.md" means
"/notes.md"). Examples:

  agentfs fs my-agent ls -l /
  agentfs fs my-agent write /notes.md "hello"
  echo hello | agentfs fs my-agent write /notes.md
  agentfs fs my-agent cat /notes.md
  agentfs fs my-agent import ./project /work
  agentfs fs my-agent export /work ./out`,
		func(id string) []*cobra.Command {
			return []*cobra.Command{
				newFSLsCmd(id), newFSCatCmd(id), newFSWriteCmd(id), newFSMkdirCmd(id),
				newFSRmCmd(id), newFSMvCmd(id), newFSCpCmd(id), newFSLnCmd(id),
				newFSStatCmd(id), newFSImportCmd(id), newFSExportCmd(id),
			}
		})
}

// writeStream makes the content of r the content of the file p (created
// with perm if missing, with its parents too when parents), atomically
// whatever the size and with bounded memory (vfs.FS.WriteFileFrom): if r
// fails, the command is interrupted or the process killed, the file keeps
// its old content.
func writeStream(ctx context.Context, f *vfs.FS, p string, r io.Reader, perm uint32, parents bool) error {
	_, err := f.WriteFileFrom(ctx, p, r, vfs.WriteOptions{Perm: perm, CreateParents: parents})
	return err
}

func pathError(op, p string, errno syscall.Errno) error {
	return &fs.PathError{Op: op, Path: p, Err: errno}
}

func isErrno(err error, errno syscall.Errno) bool { return vfs.Errno(err) == errno }

// ---- ls ----

func newFSLsCmd(id string) *cobra.Command {
	var long, recursive, literal bool
	c := &cobra.Command{
		Use:   "ls [PATH]",
		Short: "List a directory (default /)",
		Long: `List a directory, one entry per line with its type: "f name" for a file,
"d name" for a directory, "l name" for a symbolic link (p, c, b, s for
FIFOs, devices and sockets). -R lists the whole tree with paths relative
to PATH; -l prints mode, links, owner, size and modification time.

A name holding a control character (a newline, an escape), invalid UTF-8
or a single quote is printed as a shell word, as GNU ls
--quoting-style=shell-escape does ('a'$'\n''b' for "a", newline, "b"), so
every line is one entry and nothing reaches the terminal raw; --literal
prints names as they are.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := "/"
			if len(args) == 1 {
				arg = args[0]
			}
			return readAgent(cmd, id, func(a *core.Agent) error {
				w := bufio.NewWriter(cmd.OutOrStdout())
				err := listPath(cmd.Context(), a.FS, w, arg, long, recursive, nameQuoter(literal))
				if ferr := w.Flush(); err == nil {
					err = ferr
				}
				return err
			})
		},
	}
	c.Flags().BoolVarP(&long, "long", "l", false, "long format: mode, links, uid, gid, size, mtime")
	c.Flags().BoolVarP(&recursive, "recursive", "R", false, "list subdirectories recursively")
	c.Flags().BoolVar(&literal, "literal", false, "print names raw, without quoting control characters")
	return c
}

type lsEntry struct {
	name   string
	st     vfs.Stat
	target string // of a symlink, in long format
}

func listPath(ctx context.Context, f *vfs.FS, w io.Writer, arg string, long, recursive bool, q func(string) string) error {
	p := agentPath(arg)
	st, err := f.Stat(ctx, p)
	if err != nil {
		return err
	}
	if long {
		// As ls -l: a symlink named on the command line is shown itself.
		lst, err := f.Lstat(ctx, p)
		if err != nil {
			return err
		}
		if lst.IsSymlink() {
			st = lst
		}
	}
	if !st.IsDir() {
		e := lsEntry{name: arg, st: st}
		if long {
			if st.IsSymlink() {
				if e.target, err = f.Readlink(ctx, p); err != nil {
					return err
				}
			}
			return printLong(w, []lsEntry{e}, q)
		}
		_, err := fmt.Fprintf(w, "%s %s\n", st.TypeLetter(), q(arg))
		return err
	}
	var entries []lsEntry
	emit := func(e lsEntry) error {
		if long {
			entries = append(entries, e)
			return nil
		}
		_, err := fmt.Fprintf(w, "%s %s\n", e.st.TypeLetter(), q(e.name))
		return err
	}
	var walk func(dir, rel string) error
	walk = func(dir, rel string) error {
		list, err := f.ReaddirPlus(ctx, dir)
		if err != nil {
			return err
		}
		for _, de := range list {
			e := lsEntry{name: path.Join(rel, de.Name), st: de.Stat}
			child := path.Join(dir, de.Name)
			if long && de.Stat.IsSymlink() {
				if e.target, err = f.Readlink(ctx, child); err != nil {
					return err
				}
			}
			if err := emit(e); err != nil {
				return err
			}
			if recursive && de.Stat.IsDir() {
				if err := walk(child, e.name); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(p, ""); err != nil {
		return err
	}
	if long {
		return printLong(w, entries, q)
	}
	return nil
}

// printLong prints entries as ls -l does, with long-iso times in local
// time: "drwxr-xr-x 2 0 0 4096 2026-01-02 15:04 name".
func printLong(w io.Writer, entries []lsEntry, q func(string) string) error {
	sizes := make([]string, len(entries))
	var wl, wu, wg, ws int
	for i, e := range entries {
		sizes[i] = sizeField(e.st)
		wl = max(wl, len(strconv.FormatUint(uint64(e.st.Nlink), 10)))
		wu = max(wu, len(strconv.FormatUint(uint64(e.st.UID), 10)))
		wg = max(wg, len(strconv.FormatUint(uint64(e.st.GID), 10)))
		ws = max(ws, len(sizes[i]))
	}
	for i, e := range entries {
		name := q(e.name)
		if e.st.IsSymlink() {
			name += " -> " + q(e.target)
		}
		if _, err := fmt.Fprintf(w, "%s %*d %*d %*d %*s %s %s\n", e.st.ModeString(), wl, e.st.Nlink, wu, e.st.UID, wg, e.st.GID,
			ws, sizes[i], e.st.Mtime.Local().Format("2006-01-02 15:04"), name); err != nil {
			return err
		}
	}
	return nil
}

func sizeField(st vfs.Stat) string {
	if t := st.Type(); t == schema.ModeChar || t == schema.ModeBlock {
		return fmt.Sprintf("%d, %d", devMajor(st.Rdev), devMinor(st.Rdev))
	}
	return strconv.FormatInt(st.Size, 10)
}

// Linux encoding of device numbers.
func devMajor(rdev uint64) uint64 { return (rdev>>8)&0xfff | (rdev>>32)&^0xfff }
func devMinor(rdev uint64) uint64 { return rdev&0xff | (rdev>>12)&^0xff }

// ---- cat ----

func newFSCatCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "cat PATH...",
		Short: "Print the content of files (raw bytes)",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readAgent(cmd, id, func(a *core.Agent) error {
				buf := make([]byte, hostcopy.PieceSize(a.FS))
				for _, arg := range args {
					if err := catFile(cmd.Context(), a.FS, agentPath(arg), cmd.OutOrStdout(), buf); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

func catFile(ctx context.Context, f *vfs.FS, p string, w io.Writer, buf []byte) error {
	h, err := f.Open(ctx, p, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer h.Close()
	_, err = hostcopy.CopyPieces(w, h, buf, nil)
	return err
}

// ---- write ----

func newFSWriteCmd(id string) *cobra.Command {
	c := &cobra.Command{
		Use:   "write PATH [CONTENT|-]",
		Short: "Write a file from an argument or standard input",
		Long: `Replace the content of a file (creating it and its parent directories if
needed) with CONTENT, or with standard input when CONTENT is "-" or
absent. Large input is streamed, not held in memory, and the file changes
at once when the input ends: if the input fails or the command is
interrupted or killed, the file keeps its old content.`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				p := agentPath(args[0])
				if len(args) == 2 && args[1] != "-" {
					return a.FS.WriteFile(cmd.Context(), p, []byte(args[1]), vfs.WriteOptions{CreateParents: true})
				}
				return writeStream(cmd.Context(), a.FS, p, cmd.InOrStdin(), 0o644, true)
			})
		},
	}
	// Flags end at PATH: content such as "- ship it" or "--x" is content.
	c.Flags().SetInterspersed(false)
	return c
}

// ---- mkdir ----

func newFSMkdirCmd(id string) *cobra.Command {
	var parents bool
	c := &cobra.Command{
		Use:   "mkdir PATH...",
		Short: "Create directories",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				for _, arg := range args {
					var err error
					if parents {
						err = a.FS.MkdirAll(cmd.Context(), agentPath(arg), 0o755)
					} else {
						err = a.FS.Mkdir(cmd.Context(), agentPath(arg), 0o755)
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	c.Flags().BoolVarP(&parents, "parents", "p", false, "create missing parents; an existing directory is not an error")
	return c
}

// ---- rm ----

func newFSRmCmd(id string) *cobra.Command {
	var recursive, force bool
	c := &cobra.Command{
		Use:   "rm PATH...",
		Short: "Remove files, or directory trees with -r",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				for _, arg := range args {
					// vfs.Remove: the check and the removal in one
					// transaction, as every other way in.
					p := agentPath(arg)
					err := a.FS.Remove(cmd.Context(), p, recursive, force)
					if isErrno(err, syscall.EISDIR) && !recursive {
						return userError{
							msg:  describe(pathError("rm", p, syscall.EISDIR)),
							hint: fmt.Sprintf("agentfs fs %s rm -r %s", id, arg),
						}
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	c.Flags().BoolVarP(&recursive, "recursive", "r", false, "remove directories and their contents")
	c.Flags().BoolVarP(&force, "force", "f", false, "ignore missing paths")
	return c
}

// ---- mv ----

func newFSMvCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "mv SRC DST",
		Short: "Move or rename; into DST when it is a directory",
		Args:  usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				src, dst := agentPath(args[0]), agentPath(args[1])
				dst, err := intoDir(cmd.Context(), a.FS, src, dst)
				if err != nil {
					return err
				}
				return a.FS.Rename(cmd.Context(), src, dst)
			})
		},
	}
}

// intoDir returns dst/base(src) when dst is an existing directory (as mv,
// cp and ln do), else dst.
func intoDir(ctx context.Context, f *vfs.FS, src, dst string) (string, error) {
	st, err := f.Stat(ctx, dst)
	if err != nil {
		if isErrno(err, syscall.ENOENT) {
			return dst, nil
		}
		return "", err
	}
	if !st.IsDir() {
		return dst, nil
	}
	base := path.Base(src)
	if base == "/" || base == "." || base == ".." {
		return dst, nil
	}
	return path.Join(dst, base), nil
}

// ---- cp ----

func newFSCpCmd(id string) *cobra.Command {
	var recursive bool
	c := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "Copy a file, or a tree with -r",
		Long: `Copy a file, inside the database (the data does not pass through memory).
When DST is an existing directory the copy goes into it. With -r, a
directory is copied with everything below it, keeping modes and
symbolic links; a new DST appears whole at the end or not at all (see
fs import).`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				src := agentPath(args[0])
				st, err := a.FS.Stat(cmd.Context(), src)
				if err != nil {
					return err
				}
				dst, err := intoDir(cmd.Context(), a.FS, src, agentPath(args[1]))
				if err != nil {
					return err
				}
				if !st.IsDir() {
					return a.FS.CopyFile(cmd.Context(), src, dst)
				}
				if !recursive {
					return userError{
						msg:  describe(pathError("cp", src, syscall.EISDIR)),
						hint: fmt.Sprintf("agentfs fs %s cp -r %s %s", id, args[0], args[1]),
					}
				}
				var n hostcopy.Stats
				return a.FS.StageTree(cmd.Context(), dst, func(dst string) error { return copyTree(cmd.Context(), a.FS, src, dst, &n) },
					func() string { return n.String() })
			})
		},
	}
	c.Flags().BoolVarP(&recursive, "recursive", "r", false, "copy directories recursively")
	return c
}

// copyTree copies the directory src (following it if it is a symlink) to
// dst with vfs.CopyTree, counting what it copies. When dst exists the
// trees are merged: files and links in the way are replaced, directories
// kept (with their own modes, as cp -r).
func copyTree(ctx context.Context, f *vfs.FS, src, dst string, n *hostcopy.Stats) error {
	cs, cd := path.Clean(src), path.Clean(dst)
	if cd == cs || strings.HasPrefix(cd, strings.TrimSuffix(cs, "/")+"/") {
		return userError{msg: describe(pathError("cp", dst, syscall.EINVAL)) + ": cannot copy a directory into itself"}
	}
	return vfs.CopyTree(f.Bind(ctx), src, dst, vfs.CopyOptions{FollowTop: true, Done: func(_ string, st vfs.Stat, _ bool) {
		switch {
		case st.IsDir():
			n.Dirs++
		case st.IsRegular():
			n.Files++
			n.Bytes += st.Size
		case st.IsSymlink():
			n.Symlinks++
		}
	}})
}

// ---- ln ----

func newFSLnCmd(id string) *cobra.Command {
	var symbolic bool
	c := &cobra.Command{
		Use:   "ln TARGET LINK",
		Short: "Make a hard link, or a symbolic link with -s",
		Long: `Make LINK a new name for TARGET (a hard link), or with -s a symbolic link
whose target is stored exactly as given. When LINK is an existing
directory the link is made inside it.`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgent(cmd, id, core.Options{}, func(a *core.Agent) error {
				link, err := intoDir(cmd.Context(), a.FS, args[0], agentPath(args[1]))
				if err != nil {
					return err
				}
				if symbolic {
					return a.FS.Symlink(cmd.Context(), args[0], link)
				}
				return a.FS.Link(cmd.Context(), agentPath(args[0]), link)
			})
		},
	}
	c.Flags().BoolVarP(&symbolic, "symbolic", "s", false, "make a symbolic link")
	return c
}

// ---- stat ----

func newFSStatCmd(id string) *cobra.Command {
	return &cobra.Command{
		Use:   "stat PATH...",
		Short: "Show the attributes of files, as stat(1)",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readAgent(cmd, id, func(a *core.Agent) error {
				w := bufio.NewWriter(cmd.OutOrStdout())
				defer w.Flush()
				for _, arg := range args {
					p := agentPath(arg)
					st, err := a.FS.Lstat(cmd.Context(), p)
					if err != nil {
						return err
					}
					target := ""
					if st.IsSymlink() {
						if target, err = a.FS.Readlink(cmd.Context(), p); err != nil {
							return err
						}
					}
					writeStat(w, p, st, target)
				}
				return w.Flush()
			})
		},
	}
}

const statTime = "2006-01-02 15:04:05.000000000 -0700"

func writeStat(w io.Writer, p string, st vfs.Stat, target string) {
	name := p
	if st.IsSymlink() {
		name += " -> " + target
	}
	fmt.Fprintf(w, "  File: %s\n", name)
	fmt.Fprintf(w, "  Size: %-15d Blocks: %-10d IO Block: %-6d %s\n", st.Size, st.Blocks(), st.Blksize, st.FileType())
	fmt.Fprintf(w, " Inode: %-15d Links: %d", st.Ino, st.Nlink)
	if t := st.Type(); t == schema.ModeChar || t == schema.ModeBlock {
		fmt.Fprintf(w, "     Device type: %d,%d", devMajor(st.Rdev), devMinor(st.Rdev))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Access: (%04o/%s)  Uid: (%5d)   Gid: (%5d)\n", st.Perm(), st.ModeString(), st.UID, st.GID)
	fmt.Fprintf(w, "Access: %s\n", st.Atime.Local().Format(statTime))
	fmt.Fprintf(w, "Modify: %s\n", st.Mtime.Local().Format(statTime))
	fmt.Fprintf(w, "Change: %s\n", st.Ctime.Local().Format(statTime))
}

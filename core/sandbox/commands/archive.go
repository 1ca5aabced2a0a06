package commands

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("gzip", "gzip [-cdkfnv] [-1..-9] [FILE]...", func(c *Cmd) int { return runGzip(c, false, false) })
	register("gunzip", "gunzip [-ckf] [FILE]...", func(c *Cmd) int { return runGzip(c, true, false) })
	register("zcat", "zcat [FILE]...", func(c *Cmd) int { return runGzip(c, true, true) })
	register("tar", "tar -c|-x|-t [-z] [-v] [-f ARCHIVE] [-C DIR] [FILE]...", runTar)
}

func gzipBytes(data []byte, level int, name string, mtime vfs.Stat) ([]byte, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		return nil, err
	}
	zw.Name = name
	zw.ModTime = mtime.Mtime
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func gunzipBytes(c *Cmd, data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not in gzip format")
	}
	defer zr.Close()
	// What a small archive expands to is counted: a gzip bomb stops at
	// the memory limit.
	return c.ReadAllFrom(zr, 0)
}

func runGzip(c *Cmd, decompress, toStdout bool) int {
	o, files, code, ok := c.parseOpts(spec{short: "cdkfnvlqrt123456789", long: map[string]string{
		"stdout": "c", "decompress": "d", "keep": "k", "force": "f", "no-name": "n", "verbose": "v", "quiet": "q", "test": "t",
	}}, 1)
	if !ok {
		return code
	}
	decompress = decompress || o.has("d") || o.has("t")
	toStdout = toStdout || o.has("c") || len(files) == 0
	level := gzip.DefaultCompression
	for _, x := range o.list {
		if len(x.key) == 1 && x.key[0] >= '1' && x.key[0] <= '9' {
			level = int(x.key[0] - '0')
		}
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := 0
	for _, f := range files {
		data, err := c.ReadAll(f)
		if err != nil {
			c.PathError(f, err)
			status = 1
			continue
		}
		var st vfs.Stat
		if f != "-" {
			st, _ = c.Stat(f)
		}
		var out []byte
		if decompress {
			if !toStdout && f != "-" && !strings.HasSuffix(f, ".gz") && !strings.HasSuffix(f, ".tgz") {
				c.Errorf("%s: unknown suffix -- ignored", f)
				status = 2
				continue
			}
			out, err = gunzipBytes(c, data)
		} else {
			out, err = gzipBytes(data, level, baseName(f, ""), st)
		}
		if err != nil {
			c.Errorf("%s: %v", f, err)
			status = 1
			continue
		}
		if o.has("t") {
			continue
		}
		if toStdout || f == "-" {
			if _, err := c.Stdout.Write(out); err != nil {
				return exitWrite(c, err, 1)
			}
			continue
		}
		dst := f + ".gz"
		if decompress {
			dst = strings.TrimSuffix(f, ".gz")
			if strings.HasSuffix(f, ".tgz") {
				dst = strings.TrimSuffix(f, ".tgz") + ".tar"
			}
		}
		if _, err := c.FS.Lstat(c.Abs(dst)); err == nil && !o.has("f") {
			c.Errorf("%s already exists; not overwritten", dst)
			status = 2
			continue
		}
		if err := c.FS.WriteFile(c.Abs(dst), out, vfs.WriteOptions{Perm: st.Perm()}); err != nil {
			c.PathError(dst, err)
			status = 1
			continue
		}
		c.FS.Utimens(c.Abs(dst), &st.Atime, &st.Mtime, true)
		if !o.has("k") {
			c.FS.Unlink(c.Abs(f))
		}
	}
	return status
}

func runTar(c *Cmd) int {
	args := append([]string{}, c.Args[1:]...)
	// Old style: "tar czf out.tgz dir" has no dash.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args[0] = "-" + args[0]
	}
	c2 := *c
	c2.Args = append([]string{"tar"}, args...)
	o, files, code, ok := c2.parseOpts(spec{short: "cxtzvf:C:pO", long: map[string]string{
		"create": "c", "extract": "x", "list": "t", "gzip": "z", "verbose": "v", "file=": "f", "directory=": "C", "to-stdout": "O",
	}}, 2)
	if !ok {
		return code
	}
	mode := o.last("c", "x", "t")
	if mode == "" {
		c.Errorf("You must specify one of the '-ctx' options")
		return 2
	}
	archive, _ := o.val("f")
	if archive == "" {
		archive = "-"
	}
	dir := c.Dir
	if d, ok := o.val("C"); ok {
		dir = c.Abs(d)
	}
	switch mode {
	case "c":
		if len(files) == 0 {
			c.Errorf("Cowardly refusing to create an empty archive")
			return 2
		}
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		status := 0
		c3 := *c
		c3.Dir = dir
		// The listing goes to stdout unless the archive does.
		var verbose io.Writer
		if o.has("v") {
			verbose = c.Stdout
			if archive == "-" {
				verbose = c.Stderr
			}
		}
		for _, f := range files {
			if err := c3.tarAdd(tw, f, verbose); err != nil {
				status = 2
			}
		}
		if err := tw.Close(); err != nil {
			return c.Fail("%v", err)
		}
		data := buf.Bytes()
		if o.has("z") {
			var err error
			if data, err = gzipBytes(data, gzip.DefaultCompression, "", vfs.Stat{Mtime: c.Now()}); err != nil {
				return c.Fail("%v", err)
			}
		}
		if archive == "-" {
			c.Stdout.Write(data)
		} else if err := c.FS.WriteFile(c.Abs(archive), data, vfs.WriteOptions{}); err != nil {
			c.PathError(archive, err)
			return 2
		}
		return status
	}
	data, err := c.ReadAll(archive)
	if err != nil {
		c.Errorf("%s: Cannot open: %s", archive, ErrText(err))
		return 2
	}
	// The archive is decompressed and its members read as a stream, and
	// every read checks the context: a small archive may expand to far
	// more than memory (a gzip bomb, a sparse member of terabytes), and
	// what it expands to is bounded only by the sandbox's limits on the
	// bytes written and on the wall time.
	var src io.Reader = bytes.NewReader(data)
	if o.has("z") || len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(src)
		if err != nil {
			c.Errorf("not in gzip format")
			return 2
		}
		defer zr.Close()
		src = zr
	}
	tr := tar.NewReader(ctxReader{c, src})
	want := map[string]bool{}
	for _, f := range files {
		want[strings.TrimSuffix(f, "/")] = true
	}
	status := 0
	// Symbolic links are created after every other member, as GNU tar
	// does for the dangerous ones: a member may then never be written
	// through a link the same archive planted ("l -> /etc", then
	// "l/passwd"), whatever the order of the members.
	type delayedLink struct {
		name, target, linkname string
		mtime                  time.Time
	}
	var delayed []delayedLink
	dropDelayed := func(target string) {
		for i := range delayed {
			if delayed[i].target == target {
				delayed[i].target = "" // a later member of that name wins
			}
		}
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			c.Errorf("This does not look like a tar archive")
			return 2
		}
		name := strings.TrimSuffix(h.Name, "/")
		if len(want) > 0 {
			match := false
			for w := range want {
				if name == w || strings.HasPrefix(name, w+"/") {
					match = true
				}
			}
			if !match {
				continue
			}
		}
		if mode == "t" {
			if o.has("v") {
				st := vfs.Stat{Mode: uint32(h.Mode) | tarType(h.Typeflag), Size: h.Size, Mtime: h.ModTime}
				fmt.Fprintf(c.Stdout, "%s %s/%s %8d %s %s\n", st.ModeString(), orNum(h.Uname, h.Uid), orNum(h.Gname, h.Gid), h.Size, h.ModTime.Local().Format("2006-01-02 15:04"), h.Name)
			} else {
				fmt.Fprintln(c.Stdout, h.Name)
			}
			continue
		}
		// Extract: member names stay below the target directory.
		clean := path.Clean("/" + name)
		dotdot := false
		for _, comp := range strings.Split(name, "/") {
			dotdot = dotdot || comp == ".."
		}
		if dotdot {
			c.Errorf("%s: Member name contains '..'", h.Name)
			status = 2
			continue
		}
		target := joinPath(dir, strings.TrimPrefix(clean, "/"))
		if o.has("v") {
			fmt.Fprintln(c.Stdout, h.Name)
		}
		if o.has("O") {
			if h.Typeflag == tar.TypeReg {
				io.Copy(c.Stdout, tr)
			}
			continue
		}
		if h.Typeflag == tar.TypeSymlink {
			dropDelayed(target)
			delayed = append(delayed, delayedLink{h.Name, target, h.Linkname, h.ModTime})
			continue
		}
		if h.Typeflag == tar.TypeDir || h.Typeflag == tar.TypeLink || h.Typeflag == tar.TypeReg {
			dropDelayed(target)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = c.FS.MkdirAll(target, uint32(h.Mode)&0o7777|0o700)
		case tar.TypeLink:
			c.FS.Unlink(target)
			err = c.FS.Link(joinPath(dir, strings.TrimPrefix(path.Clean("/"+h.Linkname), "/")), target)
		case tar.TypeReg: // the reader turns old archives' TypeRegA into TypeReg
			c.FS.MkdirAll(dirName(target), 0o755)
			// An existing file is replaced, not written through: it may be
			// a symbolic link or a hard link (another member's, or the
			// directory's own) to a file elsewhere. GNU tar unlinks it the
			// same way.
			if st, lerr := c.FS.Lstat(target); lerr == nil && !st.IsDir() {
				c.FS.Unlink(target)
			}
			var f File
			f, err = c.FS.Open(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, uint32(h.Mode)&0o7777)
			if err == nil {
				// Written in large pieces (each write is a transaction),
				// as the member arrives, never whole in memory.
				bw := bufio.NewWriterSize(f, 1<<20)
				_, err = io.Copy(bw, tr)
				if ferr := bw.Flush(); err == nil {
					err = ferr
				}
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				c.FS.Chmod(target, uint32(h.Mode)&0o7777)
			}
		default:
			continue
		}
		if err != nil {
			c.Errorf("%s: Cannot extract: %s", h.Name, ErrText(err))
			status = 2
			continue
		}
		mt := h.ModTime
		c.FS.Utimens(target, &mt, &mt, false)
	}
	for _, l := range delayed {
		if l.target == "" {
			continue
		}
		if st, err := c.FS.Lstat(l.target); err == nil && !st.IsDir() {
			c.FS.Unlink(l.target)
		}
		c.FS.MkdirAll(dirName(l.target), 0o755)
		if err := c.FS.Symlink(l.linkname, l.target); err != nil {
			c.Errorf("%s: Cannot create symlink to %s: %s", l.name, q(l.linkname), ErrText(err))
			status = 2
			continue
		}
		c.FS.Utimens(l.target, &l.mtime, &l.mtime, false)
	}
	return status
}

func orNum(name string, id int) string {
	if name != "" {
		return name
	}
	return fmt.Sprint(id)
}

func tarType(t byte) uint32 {
	switch t {
	case tar.TypeDir:
		return 0o040000
	case tar.TypeSymlink:
		return 0o120000
	}
	return 0o100000
}

func (c *Cmd) tarAdd(tw *tar.Writer, name string, verbose io.Writer) error {
	st, err := c.Lstat(name)
	if err != nil {
		c.Errorf("%s: Cannot stat: %s", name, ErrText(err))
		return err
	}
	memberName := strings.TrimPrefix(name, "/")
	h := &tar.Header{Name: memberName, Mode: int64(st.Perm()), ModTime: st.Mtime, Uid: int(st.UID), Gid: int(st.GID),
		Uname: c.userName(st.UID, false), Gname: c.groupName(st.GID, false), Format: tar.FormatGNU}
	switch {
	case st.IsDir():
		h.Typeflag, h.Name = tar.TypeDir, strings.TrimSuffix(memberName, "/")+"/"
	case st.IsSymlink():
		h.Typeflag = tar.TypeSymlink
		h.Linkname, _ = c.FS.Readlink(c.Abs(name))
	case st.IsRegular():
		h.Typeflag, h.Size = tar.TypeReg, st.Size
	default:
		return nil
	}
	if verbose != nil {
		fmt.Fprintln(verbose, h.Name)
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if st.IsRegular() {
		data, err := c.ReadAll(name)
		if err != nil {
			c.Errorf("%s: Read error: %s", name, ErrText(err))
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if st.IsDir() {
		entries, err := c.FS.ReaddirPlus(c.Abs(name))
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := c.tarAdd(tw, joinPath(strings.TrimSuffix(name, "/"), e.Name), verbose); err != nil {
				return err
			}
		}
	}
	return nil
}

// ctxReader ends a read with the context's error once the command is
// cancelled or stopped by a limit.
type ctxReader struct {
	c *Cmd
	r io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if r.c.Cancelled() {
		return 0, r.c.Ctx.Err()
	}
	return r.r.Read(p)
}

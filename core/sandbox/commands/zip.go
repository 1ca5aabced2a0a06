package commands

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("zip", "zip [-rqjd] [-0..-9] ARCHIVE[.zip] FILE...", runZip)
	register("unzip", "unzip [-lqotnpjZ1] [-d DIR] ARCHIVE[.zip] [MEMBER]...", runUnzip)
}

// zipMember is one entry of an archive being written: its header and
// its data, already compressed.
type zipMember struct {
	h    zip.FileHeader
	data []byte // compressed (raw) data
}

func runZip(c *Cmd) int {
	o, ops, code, ok := c.parseOpts(spec{short: "rqjdv0123456789", long: map[string]string{
		"recurse-paths": "r", "quiet": "q", "junk-paths": "j", "delete": "d",
	}}, 16)
	if !ok {
		return code
	}
	if len(ops) == 0 {
		return c.Usage(16, "missing archive name")
	}
	archive := ops[0]
	if path.Ext(archive) == "" {
		archive += ".zip"
	}
	files := ops[1:]
	level := 6
	for _, x := range o.list {
		if len(x.key) == 1 && x.key[0] >= '0' && x.key[0] <= '9' {
			level = int(x.key[0] - '0')
		}
	}
	quiet := o.has("q")
	// An existing archive is updated: its members are kept in their
	// order, those named again are replaced in place.
	var members []*zipMember
	index := map[string]int{}
	if data, err := c.ReadAll(archive); err == nil {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			fmt.Fprintf(c.Stdout, "\nzip error: Zip file structure invalid (%s)\n", archive)
			return 3
		}
		for _, f := range zr.File {
			raw, err := f.OpenRaw()
			if err != nil {
				fmt.Fprintf(c.Stdout, "\nzip error: Zip file structure invalid (%s)\n", archive)
				return 3
			}
			b, err := c.ReadAllFrom(raw, int64(f.CompressedSize64))
			if err != nil {
				return c.Fail("%s: %s", archive, ErrText(err))
			}
			index[f.Name] = len(members)
			members = append(members, &zipMember{h: f.FileHeader, data: b})
		}
	} else if Errno(err) != 2 /* ENOENT */ {
		c.PathError(archive, err)
		return 15
	}
	if o.has("d") {
		deleted := 0
		for _, pat := range files {
			for name, i := range index {
				if ok, _ := path.Match(pat, name); ok || name == pat {
					if members[i] != nil {
						if !quiet {
							fmt.Fprintf(c.Stdout, "deleting: %s\n", name)
						}
						members[i] = nil
						deleted++
					}
				}
			}
		}
		if deleted == 0 {
			fmt.Fprintf(c.Stdout, "\nzip error: Nothing to do! (%s)\n", archive)
			return 12
		}
		return c.writeZip(archive, members)
	}
	if len(files) == 0 {
		fmt.Fprintf(c.Stdout, "\nzip error: Nothing to do! (%s)\n", archive)
		return 12
	}
	added := 0
	status := 0
	var add func(name string, top bool) error
	add = func(name string, top bool) error {
		if c.Cancelled() {
			return ErrStop
		}
		st, err := c.Stat(name)
		if err != nil {
			if top {
				fmt.Fprintf(c.Stderr, "\tzip warning: name not matched: %s\n", name)
				status = 12
			}
			return nil
		}
		member := strings.TrimPrefix(path.Clean(name), "/")
		for strings.HasPrefix(member, "../") {
			member = member[3:]
		}
		if o.has("j") {
			member = path.Base(member)
		}
		if st.IsDir() {
			if o.has("j") {
				member = ""
			} else {
				member += "/"
			}
		}
		if member != "" && member != "./" {
			m := &zipMember{h: zip.FileHeader{Name: member, Method: zip.Store}}
			//lint:ignore SA1019 DOS time fields only, as Info-ZIP writes them (Modified would add an extended timestamp field)
			m.h.ModifiedDate, m.h.ModifiedTime = dosTime(st.Mtime.Local())
			m.h.SetMode(st.FileMode())
			method := "stored 0%"
			if st.IsRegular() {
				data, err := c.ReadAll(name)
				if err != nil {
					c.Errorf("zip warning: could not open for reading: %s", name)
					status = 18
					return nil
				}
				m.h.CRC32 = crc32.ChecksumIEEE(data)
				m.h.UncompressedSize64 = uint64(len(data))
				m.data = data
				if level > 0 && len(data) > 0 {
					var b bytes.Buffer
					fw, _ := flate.NewWriter(&b, level)
					fw.Write(data)
					fw.Close()
					if b.Len() < len(data) {
						if err := c.Reserve(int64(b.Len())); err != nil {
							return err
						}
						m.data, m.h.Method = b.Bytes(), zip.Deflate
						method = fmt.Sprintf("deflated %d%%", int(float64(len(data)-b.Len())*100/float64(len(data))+0.5))
					}
				}
				m.h.CompressedSize64 = uint64(len(m.data))
			}
			verb := "adding"
			if i, ok := index[member]; ok {
				verb = "updating"
				members[i] = m
			} else {
				index[member] = len(members)
				members = append(members, m)
			}
			if !quiet {
				fmt.Fprintf(c.Stdout, "  %s: %s (%s)\n", verb, member, method)
			}
			added++
		}
		if st.IsDir() && o.has("r") {
			entries, err := c.FS.ReaddirPlus(c.Abs(name))
			if err != nil {
				c.PathError(name, err)
				status = 18
				return nil
			}
			for _, e := range entries {
				if err := add(joinPath(strings.TrimSuffix(name, "/"), e.Name), false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, f := range files {
		if err := add(f, true); err != nil {
			return 1
		}
	}
	if added == 0 {
		fmt.Fprintf(c.Stdout, "\nzip error: Nothing to do! (%s)\n", archive)
		return 12
	}
	if rc := c.writeZip(archive, members); rc != 0 {
		return rc
	}
	return status
}

func (c *Cmd) writeZip(archive string, members []*zipMember) int {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		if m == nil {
			continue
		}
		w, err := zw.CreateRaw(&m.h)
		if err == nil {
			_, err = w.Write(m.data)
		}
		if err != nil {
			return c.Fail("%s: %v", archive, err)
		}
	}
	if err := zw.Close(); err != nil {
		return c.Fail("%s: %v", archive, err)
	}
	if err := c.Reserve(int64(buf.Len())); err != nil {
		return 1
	}
	if err := c.FS.WriteFile(c.Abs(archive), buf.Bytes(), vfs.WriteOptions{Perm: 0o666}); err != nil {
		fmt.Fprintf(c.Stdout, "\nzip error: Could not create output file (%s)\n", archive)
		return 15
	}
	return 0
}

// zipMemberPath is where a member goes below dir, or "" with a warning
// when nothing of its name is left: absolute names and ".." components
// are dropped, as unzip does, so that nothing lands outside dir.
func zipMemberPath(name string) (clean string, stripped bool) {
	var parts []string
	for _, p := range strings.Split(strings.ReplaceAll(name, "\\", "/"), "/") {
		switch p {
		case "", ".":
			continue
		case "..":
			stripped = true
			continue
		}
		parts = append(parts, p)
	}
	stripped = stripped || strings.HasPrefix(name, "/")
	return strings.Join(parts, "/"), stripped
}

func runUnzip(c *Cmd) int {
	o, ops, code, ok := c.parseOpts(spec{short: "lqotnpjvd:Z1", long: map[string]string{}}, 10)
	if !ok {
		return code
	}
	if len(ops) == 0 {
		return c.Usage(10, "missing archive name")
	}
	archive := ops[0]
	data, err := c.ReadAll(archive)
	if err != nil && path.Ext(archive) == "" {
		if d, err2 := c.ReadAll(archive + ".zip"); err2 == nil {
			data, err, archive = d, nil, archive+".zip"
		}
	}
	if err != nil {
		c.Errorf(" cannot find or open %s, %s.zip or %s.ZIP.", archive, archive, archive)
		return 9
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		fmt.Fprintf(c.Stderr, "  End-of-central-directory signature not found.  Either this file is not\n  a zipfile, or it constitutes one disk of a multi-part archive.\nunzip:  cannot find zipfile directory in %s.\n", archive)
		return 9
	}
	selected := func(name string) bool {
		if len(ops) == 1 {
			return true
		}
		for _, p := range ops[1:] {
			if ok, _ := path.Match(p, name); ok || p == name {
				return true
			}
		}
		return false
	}
	quiet := o.count("q")
	w := c.bufOut()
	defer w.Flush()
	if o.has("Z") || o.has("1") {
		for _, f := range zr.File {
			if selected(f.Name) {
				fmt.Fprintln(w, f.Name)
			}
		}
		return exitWrite(c, w.Flush(), 0)
	}
	if o.has("l") {
		if quiet == 0 {
			fmt.Fprintf(w, "Archive:  %s\n  Length      Date    Time    Name\n---------  ---------- -----   ----\n", archive)
		}
		var total uint64
		n := 0
		for _, f := range zr.File {
			if !selected(f.Name) {
				continue
			}
			fmt.Fprintf(w, "%9d  %s   %s\n", f.UncompressedSize64, f.Modified.Local().Format("2006-01-02 15:04"), f.Name)
			total += f.UncompressedSize64
			n++
		}
		if quiet == 0 {
			plural := "s"
			if n == 1 {
				plural = ""
			}
			fmt.Fprintf(w, "---------                     -------\n%9d                     %d file%s\n", total, n, plural)
		}
		return exitWrite(c, w.Flush(), 0)
	}
	if o.has("t") {
		if quiet == 0 {
			fmt.Fprintf(w, "Archive:  %s\n", archive)
		}
		bad := 0
		for _, f := range zr.File {
			if !selected(f.Name) {
				continue
			}
			err := c.zipCheck(f)
			if quiet == 0 {
				res := "OK"
				if err != nil {
					res = "bad CRC or data"
				}
				fmt.Fprintf(w, "    testing: %-23s  %s\n", f.Name, res)
			}
			if err != nil {
				if errors.Is(err, ErrStop) || c.Cancelled() {
					return 1
				}
				bad++
			}
		}
		if bad > 0 {
			fmt.Fprintf(w, "At least one error was detected in %s.\n", archive)
			w.Flush()
			return 2
		}
		if quiet < 2 {
			fmt.Fprintf(w, "No errors detected in compressed data of %s.\n", archive)
		}
		return exitWrite(c, w.Flush(), 0)
	}
	if o.has("p") {
		for _, f := range zr.File {
			if !selected(f.Name) || strings.HasSuffix(f.Name, "/") {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				c.Errorf("%s: %v", f.Name, err)
				return 2
			}
			_, err = io.Copy(w, ctxReader{c, rc})
			rc.Close()
			if err != nil {
				if IsWriteStop(err) || c.Cancelled() {
					return 1
				}
				w.Flush()
				c.Errorf("%s: %v", f.Name, err)
				return 2
			}
		}
		return exitWrite(c, w.Flush(), 0)
	}
	dir := c.Dir
	if d, ok := o.val("d"); ok {
		dir = c.Abs(d)
		if err := c.FS.MkdirAll(dir, 0o777); err != nil {
			c.Errorf("cannot create extraction directory: %s", d)
			return 50
		}
	}
	shown := func(target string) string {
		if d, ok := o.val("d"); ok {
			return path.Join(d, strings.TrimPrefix(target, dir+"/"))
		}
		return strings.TrimPrefix(target, dir+"/")
	}
	if quiet == 0 {
		fmt.Fprintf(w, "Archive:  %s\n", archive)
	}
	status := 0
	// Symbolic links are made after every other member, as tar does, so
	// that no member is written through a link the archive planted.
	type link struct{ target, dest string }
	var links []link
	never := o.has("n")
	for _, f := range zr.File {
		if c.Cancelled() {
			return 1
		}
		if !selected(f.Name) {
			continue
		}
		name, stripped := zipMemberPath(f.Name)
		if stripped {
			w.Flush()
			c.Errorf("warning:  skipped \"../\" or \"/\" path component(s) in %s", f.Name)
			status = max(status, 1)
		}
		isDir := strings.HasSuffix(f.Name, "/") || f.Mode().IsDir()
		if o.has("j") {
			if isDir {
				continue
			}
			name = path.Base(name)
		}
		if name == "" {
			continue
		}
		target := joinPath(dir, name)
		if isDir {
			if st, err := c.FS.Stat(target); err == nil && st.IsDir() {
				continue // unzip says "creating" only when it does
			}
			if err := c.FS.MkdirAll(target, 0o777); err != nil {
				w.Flush()
				c.Errorf("cannot create %s: %s", shown(target), ErrText(err))
				status = max(status, 1)
				continue
			}
			if quiet == 0 {
				fmt.Fprintf(w, "   creating: %s/\n", shown(target))
			}
			continue
		}
		if st, err := c.FS.Lstat(target); err == nil {
			if never || (!o.has("o") && !st.IsDir()) {
				if !never {
					// No terminal to ask: as unzip with its input at
					// end of file, answer "[N]one".
					w.Flush()
					fmt.Fprintf(c.Stderr, "replace %s? [y]es, [n]o, [A]ll, [N]one, [r]ename:  NULL\n(EOF or read error, treating as \"[N]one\" ...)\n", shown(target))
					status = max(status, 1)
					never = true
				}
				continue
			}
			if !st.IsDir() {
				c.FS.Unlink(target)
			}
		}
		c.FS.MkdirAll(dirName(target), 0o777)
		if f.Mode()&os.ModeSymlink != 0 {
			rc, err := f.Open()
			if err == nil {
				var b []byte
				b, err = io.ReadAll(io.LimitReader(rc, 4096))
				rc.Close()
				links = append(links, link{target, string(b)})
			}
			if err != nil {
				status = max(status, 2)
			}
			continue
		}
		verb := " extracting"
		if f.Method == zip.Deflate {
			verb = "  inflating"
		}
		if quiet == 0 {
			fmt.Fprintf(w, "%s: %-23s \n", verb, shown(target))
		}
		if err := c.zipExtract(f, target); err != nil {
			if errors.Is(err, ErrStop) || c.Cancelled() {
				return 1
			}
			w.Flush()
			c.Errorf("%s: %s", shown(target), ErrText(err))
			status = max(status, 2)
		}
	}
	for _, l := range links {
		if st, err := c.FS.Lstat(l.target); err == nil && !st.IsDir() {
			c.FS.Unlink(l.target)
		}
		if err := c.FS.Symlink(l.dest, l.target); err != nil {
			w.Flush()
			c.Errorf("%s: %s", shown(l.target), ErrText(err))
			status = max(status, 2)
		}
	}
	return exitWrite(c, w.Flush(), status)
}

// zipExtract writes a member as it inflates, in large pieces, never
// whole in memory: a zip bomb is bounded by the sandbox's limits on
// written bytes and time. archive/zip checks the size and CRC.
func (c *Cmd) zipExtract(f *zip.File, target string) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	perm := uint32(f.Mode().Perm())
	if perm == 0 {
		perm = 0o644
	}
	out, err := c.FS.Open(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	_, err = io.Copy(bw, ctxReader{c, rc})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	c.FS.Chmod(target, perm)
	mt := f.Modified
	if mt.IsZero() {
		mt = time.Unix(0, 0)
	}
	return c.FS.Utimens(target, &mt, &mt, false)
}

// zipCheck reads a member through, checking its CRC.
func (c *Cmd) zipCheck(f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, ctxReader{c, rc})
	return err
}

// dosTime is the MS-DOS date and time of t (2-second steps, from 1980):
// what unzip -l shows.
func dosTime(t time.Time) (date, tm uint16) {
	if t.Year() < 1980 {
		t = time.Date(1980, 1, 1, 0, 0, 0, 0, t.Location())
	}
	date = uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	tm = uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
	return date, tm
}

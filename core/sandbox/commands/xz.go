package commands

import (
	"bufio"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ulikunitz/xz"

	"github.com/agentfs-go/agentfs/core/vfs"
)

func init() {
	register("xz", "xz [-cdkfqtvz] [-0..-9] [FILE]...", func(c *Cmd) int { return runCodec(c, xzCodec, false, false) })
	register("unxz", "unxz [-ckf] [FILE]...", func(c *Cmd) int { return runCodec(c, xzCodec, true, false) })
	register("xzcat", "xzcat [FILE]...", func(c *Cmd) int { return runCodec(c, xzCodec, true, true) })
	register("bzip2", "bzip2 -d [-ckfqtv] [FILE]...  (decompression only)", func(c *Cmd) int { return runCodec(c, bzip2Codec, false, false) })
	register("bunzip2", "bunzip2 [-ckf] [FILE]...", func(c *Cmd) int { return runCodec(c, bzip2Codec, true, false) })
	register("bzcat", "bzcat [FILE]...", func(c *Cmd) int { return runCodec(c, bzip2Codec, true, true) })
}

// codec is a compression format of xz and bzip2. compress is nil when
// the sandbox can only decompress the format.
type codec struct {
	name       string // the compressor's command name
	suffix     string
	tarSuffix  []string // ".txz": a compressed tar
	compress   func(w io.Writer) (io.WriteCloser, error)
	decompress func(r io.Reader) (io.Reader, error)
	notFormat  string // the message for input of another format
	corrupt    string // ... and for damaged data
	badStatus  int    // the exit status for bad input
}

var xzCodec = codec{
	name: "xz", suffix: ".xz", tarSuffix: []string{".txz"},
	compress:   func(w io.Writer) (io.WriteCloser, error) { return xz.NewWriter(w) },
	decompress: func(r io.Reader) (io.Reader, error) { return xz.NewReader(r) },
	notFormat:  "File format not recognized",
	corrupt:    "Compressed data is corrupt",
	badStatus:  1,
}

// bzip2 compression has no maintained pure-Go implementation the
// project can pin (the standard library only reads the format): the
// sandbox's bzip2 decompresses, and says so when asked to compress.
var bzip2Codec = codec{
	name: "bzip2", suffix: ".bz2", tarSuffix: []string{".tbz2", ".tbz"},
	decompress: func(r io.Reader) (io.Reader, error) { return bzip2.NewReader(r), nil },
	notFormat:  "not a bzip2 file",
	corrupt:    "data integrity (CRC) error in data",
	badStatus:  2,
}

func runCodec(c *Cmd, k codec, decompress, toStdout bool) int {
	o, files, code, ok := c.parseOpts(spec{short: "cdkfqtvzT:0123456789eh", long: map[string]string{
		"stdout": "c", "to-stdout": "c", "decompress": "d", "uncompress": "d", "keep": "k", "force": "f", "quiet": "q",
		"test": "t", "verbose": "v", "compress": "z", "threads=": "T", "help": "h", "extreme": "e",
	}}, 1)
	if !ok {
		return code
	}
	if o.has("h") {
		u, _ := Default.Lookup(c.Name())
		fmt.Fprintln(c.Stdout, "Usage: "+u.Usage)
		if k.compress == nil {
			fmt.Fprintf(c.Stdout, "The sandbox's %s decompresses only: no maintained pure-Go %s compressor is available.\n", k.name, k.name)
		}
		return 0
	}
	decompress = (decompress || o.has("d") || o.has("t")) && !o.has("z")
	toStdout = toStdout || o.has("c") || len(files) == 0
	if !decompress && k.compress == nil {
		c.Errorf("compression is not available in the sandbox (no maintained pure-Go %s compressor); %s -d decompresses; use gzip or xz to compress", k.name, k.name)
		return 1
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := 0
	for _, f := range files {
		if c.Cancelled() {
			return 1
		}
		dst := ""
		if !toStdout && f != "-" && !o.has("t") {
			if decompress {
				for _, ts := range k.tarSuffix {
					if strings.HasSuffix(f, ts) {
						dst = strings.TrimSuffix(f, ts) + ".tar"
					}
				}
				if dst == "" && strings.HasSuffix(f, k.suffix) {
					dst = strings.TrimSuffix(f, k.suffix)
				}
				if dst == "" {
					c.Errorf("%s: Filename has an unknown suffix, skipping", f)
					status = max(status, 2)
					continue
				}
			} else {
				if strings.HasSuffix(f, k.suffix) {
					c.Errorf("%s: File already has '%s' suffix, skipping", f, k.suffix)
					status = max(status, 2)
					continue
				}
				dst = f + k.suffix
			}
			if _, err := c.FS.Lstat(c.Abs(dst)); err == nil && !o.has("f") {
				c.Errorf("%s: File exists", dst)
				status = 1
				continue
			}
		}
		var st vfs.Stat
		if f != "-" {
			var err error
			if st, err = c.Stat(f); err == nil && st.IsDir() {
				c.Errorf("%s: Is a directory, skipping", f)
				status = max(status, 2)
				continue
			}
		}
		in, err := c.Open(f, true)
		if err != nil {
			c.PathError(f, err)
			status = 1
			continue
		}
		out, err := c.codecRun(k, decompress, in, o.has("t"), toStdout, f, dst, st)
		in.Close()
		if err != nil {
			if IsWriteStop(err) || c.Cancelled() {
				return 1
			}
			if out != "" {
				c.FS.Unlink(c.Abs(out))
			}
			c.Errorf("%s: %s", f, err)
			status = max(status, k.badStatus)
			continue
		}
		if dst != "" {
			c.FS.Utimens(c.Abs(dst), &st.Atime, &st.Mtime, true)
			if !o.has("k") {
				c.FS.Unlink(c.Abs(f))
			}
		}
	}
	return status
}

// codecRun streams one input through the codec to stdout, to dst, or
// nowhere (-t). It returns the file it created, for removal on error.
func (c *Cmd) codecRun(k codec, decompress bool, in io.Reader, test, toStdout bool, name, dst string, st vfs.Stat) (string, error) {
	var w io.Writer = c.Stdout
	var closer io.Closer
	created := ""
	switch {
	case test:
		w = io.Discard
	case !toStdout && dst != "":
		f, err := c.Create(dst, false)
		if err != nil {
			return "", errors.New(ErrText(err))
		}
		created = dst
		if st.Perm() != 0 {
			c.FS.Chmod(c.Abs(dst), st.Perm())
		}
		w, closer = f, f
	}
	var err error
	if decompress {
		var r io.Reader
		r, err = k.decompress(bufio.NewReaderSize(in, 64<<10))
		if err != nil {
			err = errors.New(k.notFormat)
		} else {
			// A bomb is bounded by the stream, write and time limits:
			// nothing is held whole.
			_, err = io.Copy(w, ctxReader{c, r})
			if err != nil && !IsWriteStop(err) && !c.Cancelled() {
				if k.name == "bzip2" && strings.Contains(err.Error(), "bad magic") {
					err = errors.New(k.notFormat)
				} else {
					err = errors.New(k.corrupt)
				}
			}
		}
	} else {
		var zw io.WriteCloser
		zw, err = k.compress(w)
		if err == nil {
			_, err = io.Copy(zw, ctxReader{c, in})
			if cerr := zw.Close(); err == nil {
				err = cerr
			}
		}
	}
	if closer != nil {
		if cerr := closer.Close(); err == nil {
			err = cerr
		}
	}
	return created, err
}

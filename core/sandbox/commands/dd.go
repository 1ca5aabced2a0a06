package commands

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func init() {
	register("dd", "dd [if=FILE] [of=FILE] [bs=N] [ibs=N] [obs=N] [count=N] [skip=N] [seek=N] [conv=notrunc,ucase,lcase,sync,noerror,fsync] [iflag=skip_bytes,count_bytes] [oflag=seek_bytes,append] [status=none|noxfer|progress]", runDd)
}

type ddOpts struct {
	in, out               string
	ibs, obs              int64
	count, skip, seek     int64 // -1: not given
	notrunc, ucase, lcase bool
	sync                  bool
	skipBytes, countBytes bool
	seekBytes, appendMode bool
	status                string
}

// parseDd reads dd's operands (KEY=VALUE); an error names the bad one.
func parseDd(args []string) (ddOpts, error) {
	o := ddOpts{ibs: 512, obs: 512, count: -1, skip: 0, seek: 0}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return o, fmt.Errorf("unrecognized operand %s", q(a))
		}
		size := func() (int64, error) {
			n, ok := parseDdNumber(v)
			if !ok {
				return 0, fmt.Errorf("invalid number: %s", q(v))
			}
			return n, nil
		}
		var err error
		switch k {
		case "if":
			o.in = v
		case "of":
			o.out = v
		case "bs":
			var n int64
			if n, err = size(); err == nil {
				o.ibs, o.obs = n, n
			}
		case "ibs":
			o.ibs, err = size()
		case "obs":
			o.obs, err = size()
		case "count":
			o.count, err = size()
		case "skip", "iseek":
			o.skip, err = size()
		case "seek", "oseek":
			o.seek, err = size()
		case "conv":
			for _, f := range strings.Split(v, ",") {
				switch f {
				case "notrunc":
					o.notrunc = true
				case "ucase":
					o.ucase = true
				case "lcase":
					o.lcase = true
				case "sync":
					o.sync = true
				case "noerror", "fsync", "fdatasync", "excl", "nocreat", "sparse":
				default:
					return o, fmt.Errorf("invalid conversion: %s", q(f))
				}
			}
		case "iflag", "oflag":
			for _, f := range strings.Split(v, ",") {
				switch f {
				case "skip_bytes":
					o.skipBytes = true
				case "count_bytes":
					o.countBytes = true
				case "seek_bytes":
					o.seekBytes = true
				case "append":
					o.appendMode = true
				case "fullblock", "direct", "dsync", "sync", "nonblock", "noatime", "nocache", "binary", "text":
				default:
					return o, fmt.Errorf("invalid input flag: %s", q(f))
				}
			}
		case "status":
			switch v {
			case "none", "noxfer", "progress":
				o.status = v
			default:
				return o, fmt.Errorf("invalid status level: %s", q(v))
			}
		default:
			return o, fmt.Errorf("unrecognized operand %s", q(a))
		}
		if err != nil {
			return o, err
		}
	}
	if o.ibs <= 0 || o.obs <= 0 {
		return o, fmt.Errorf("invalid number: %s", q("0"))
	}
	if o.ucase && o.lcase {
		return o, fmt.Errorf("cannot combine lcase and ucase")
	}
	return o, nil
}

// parseDdNumber is a size that may be a product: "2x512", "1Kx4".
func parseDdNumber(s string) (int64, bool) {
	n := int64(1)
	for _, part := range strings.Split(s, "x") {
		v, ok := parseSize(part)
		if !ok || (v != 0 && n > (1<<62)/v) {
			return 0, false
		}
		n *= v
	}
	return n, true
}

// maxDdBlock bounds a block: it is held in memory.
const maxDdBlock = 64 << 20

func runDd(c *Cmd) int {
	for _, a := range c.Args[1:] {
		if a == "--help" {
			fmt.Fprintln(c.Stdout, "Usage: "+ddUsage())
			return 0
		}
	}
	o, err := parseDd(c.Args[1:])
	if err != nil {
		c.Errorf("%v", err)
		return 1
	}
	if o.ibs > maxDdBlock || o.obs > maxDdBlock {
		c.Errorf("memory exhausted by input buffer of size %d bytes", max(o.ibs, o.obs))
		return 1
	}
	if err := c.Reserve(o.ibs + o.obs); err != nil {
		return 1
	}
	start := time.Now()
	var in io.Reader = c.Stdin
	inName := "standard input"
	if o.in != "" {
		f, err := c.Open(o.in, false)
		if err != nil {
			c.Errorf("failed to open %s: %s", q(o.in), ErrText(err))
			return 1
		}
		defer f.Close()
		in, inName = f, o.in
	}
	var out io.Writer = c.Stdout
	if o.out != "" {
		p := c.Abs(o.out)
		var f File
		var err error
		if dev, ok := OpenDevice(p, c.Stdin, c.Stdout, c.Stderr); ok {
			f = dev
		} else {
			flags := os.O_WRONLY | os.O_CREATE
			if o.appendMode {
				flags |= os.O_APPEND
			}
			f, err = c.FS.Open(p, flags, 0o666)
			if err == nil && !o.notrunc && !o.appendMode {
				// GNU truncates at the seek point, keeping what is before.
				off := o.seek
				if !o.seekBytes {
					off *= o.obs
				}
				if st, serr := f.Stat(); serr == nil && st.IsRegular() {
					err = c.FS.Truncate(p, off)
				}
			}
		}
		if err != nil {
			c.Errorf("failed to open %s: %s", q(o.out), ErrText(err))
			return 1
		}
		defer f.Close()
		out = f
	}
	// skip= on the input: seek when it can, else read and drop.
	skip := o.skip
	if !o.skipBytes {
		skip *= o.ibs
	}
	if skip > 0 {
		if s, ok := in.(io.Seeker); ok {
			if _, err := s.Seek(skip, io.SeekStart); err != nil {
				c.Errorf("%s: cannot skip: %s", q(inName), ErrText(err))
				return 1
			}
		} else if n, err := io.CopyN(io.Discard, in, skip); err != nil && err != io.EOF {
			c.Errorf("%s: cannot skip: %s", q(inName), ErrText(err))
			return 1
		} else if n < skip {
			c.Errorf("%s: cannot skip to specified offset", q(inName))
		}
	}
	seek := o.seek
	if !o.seekBytes {
		seek *= o.obs
	}
	if seek > 0 && !o.appendMode {
		s, ok := out.(io.Seeker)
		if !ok {
			c.Errorf("%s: cannot seek: Illegal seek", q(o.out))
			return 1
		}
		if _, err := s.Seek(seek, io.SeekStart); err != nil {
			c.Errorf("%s: cannot seek: %s", q(o.out), ErrText(err))
			return 1
		}
	}
	limit := o.count
	if limit >= 0 && o.countBytes {
		// count= in bytes: whole blocks, then the rest.
		in = io.LimitReader(in, limit)
		limit = -1
	}
	buf := make([]byte, o.ibs)
	var pending bytes.Buffer
	var fullIn, partIn, fullOut, partOut, total int64
	status := 0
	flush := func(all bool) error {
		for pending.Len() >= int(o.obs) || (all && pending.Len() > 0) {
			n := min(pending.Len(), int(o.obs))
			w, err := out.Write(pending.Next(n))
			total += int64(w)
			if w == int(o.obs) {
				fullOut++
			} else if w > 0 {
				partOut++
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	for limit < 0 || fullIn+partIn < limit {
		if c.Cancelled() {
			return 1
		}
		n, err := io.ReadFull(in, buf)
		if n > 0 {
			if int64(n) == o.ibs {
				fullIn++
			} else {
				partIn++
				if o.sync {
					clear(buf[n:])
					n = int(o.ibs)
				}
			}
			block := buf[:n]
			if o.ucase {
				block = bytes.ToUpper(block)
			} else if o.lcase {
				block = bytes.ToLower(block)
			}
			pending.Write(block)
			if werr := flush(false); werr != nil {
				if IsWriteStop(werr) {
					return 1
				}
				c.Errorf("error writing %s: %s", q(o.out), ErrText(werr))
				status = 1
				break
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			c.Errorf("error reading %s: %s", q(inName), ErrText(err))
			status = 1
			break
		}
	}
	if werr := flush(true); werr != nil && status == 0 {
		if IsWriteStop(werr) {
			return 1
		}
		c.Errorf("error writing %s: %s", q(o.out), ErrText(werr))
		status = 1
	}
	if o.status != "none" {
		fmt.Fprintf(c.Stderr, "%d+%d records in\n%d+%d records out\n", fullIn, partIn, fullOut, partOut)
		if o.status != "noxfer" {
			secs := time.Since(start).Seconds()
			fmt.Fprintf(c.Stderr, "%d bytes%s copied, %.6g s, %s/s\n", total, ddHuman(total), secs, ddRate(float64(total)/max(secs, 1e-9)))
		}
	}
	return status
}

func ddUsage() string {
	c, _ := Default.Lookup("dd")
	return c.Usage
}

// ddHuman is GNU dd's " (2.0 kB, 2.0 KiB)" after the byte count.
func ddHuman(n int64) string {
	if n < 1000 {
		return ""
	}
	si := humanUnit(float64(n), 1000, []string{"kB", "MB", "GB", "TB", "PB", "EB"})
	iec := humanUnit(float64(n), 1024, []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"})
	if n < 1024 {
		return " (" + si + ")"
	}
	return " (" + si + ", " + iec + ")"
}

func humanUnit(v, base float64, units []string) string {
	i := -1
	for v >= base && i < len(units)-1 {
		v /= base
		i++
	}
	if i < 0 {
		return fmt.Sprintf("%.0f B", v)
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.0f %s", v, units[i])
}

func ddRate(r float64) string {
	if r < 1000 {
		return fmt.Sprintf("%.0f B", r)
	}
	return humanUnit(r, 1000, []string{"kB", "MB", "GB", "TB", "PB", "EB"})
}

package commands

import (
	"bufio"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
)

func init() {
	register("md5sum", "md5sum [-c] [FILE]...", func(c *Cmd) int { return runSum(c, md5.New) })
	register("sha1sum", "sha1sum [-c] [FILE]...", func(c *Cmd) int { return runSum(c, sha1.New) })
	register("sha256sum", "sha256sum [-c] [FILE]...", func(c *Cmd) int { return runSum(c, sha256.New) })
	register("sha512sum", "sha512sum [-c] [FILE]...", func(c *Cmd) int { return runSum(c, sha512.New) })
	register("base64", "base64 [-d] [-w COLS] [-i] [FILE]", runBase64)
}

func runSum(c *Cmd, newHash func() hash.Hash) int {
	o, files, code, ok := c.parseOpts(spec{short: "cbtwz", long: map[string]string{
		"check": "c", "binary": "b", "text": "t", "quiet": "q", "status": "s", "warn": "w", "tag": "T", "zero": "z",
	}}, 1)
	if !ok {
		return code
	}
	w := c.bufOut()
	if o.has("c") {
		bad, status := 0, 0
		st := c.Inputs(files, func(name string, r io.Reader) error {
			return Lines(r, func(line string, _ bool) error {
				sum, file, ok := strings.Cut(line, "  ")
				if !ok {
					sum, file, ok = strings.Cut(line, " *")
				}
				if !ok {
					return nil
				}
				f, err := c.Open(file, false)
				if err != nil {
					fmt.Fprintf(w, "%s: FAILED open or read\n", file)
					bad++
					return nil
				}
				h := newHash()
				io.Copy(h, f)
				f.Close()
				if hex.EncodeToString(h.Sum(nil)) == strings.ToLower(sum) {
					if !o.has("q") && !o.has("s") {
						fmt.Fprintf(w, "%s: OK\n", file)
					}
				} else {
					if !o.has("s") {
						fmt.Fprintf(w, "%s: FAILED\n", file)
					}
					bad++
				}
				return nil
			})
		})
		if bad > 0 {
			if !o.has("s") {
				w.Flush()
				c.Errorf("WARNING: %d computed checksum did NOT match", bad)
			}
			status = 1
		}
		return exitWrite(c, w.Flush(), max(st, status))
	}
	status := c.Inputs(files, func(name string, r io.Reader) error {
		h := newHash()
		if _, err := io.Copy(h, r); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
		return nil
	})
	return exitWrite(c, w.Flush(), status)
}

func runBase64(c *Cmd) int {
	o, files, code, ok := c.parseOpts(spec{short: "dw:i", long: map[string]string{"decode": "d", "wrap=": "w", "ignore-garbage": "i"}}, 1)
	if !ok {
		return code
	}
	if len(files) > 1 {
		return c.Usage(1, "extra operand %s", q(files[1]))
	}
	wrap := 76
	if v, ok := o.val("w"); ok {
		if _, err := fmt.Sscanf(v, "%d", &wrap); err != nil || wrap < 0 {
			return c.Fail("invalid wrap size: %s", q(v))
		}
	}
	w := c.bufOut()
	status := c.Inputs(files, func(name string, r io.Reader) error {
		data, err := c.ReadAllFrom(r, 0)
		if err != nil {
			return err
		}
		if o.has("d") {
			clean := strings.Map(func(r rune) rune {
				if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
					return -1
				}
				if o.has("i") && !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", r) {
					return -1
				}
				return r
			}, string(data))
			out, err := base64.StdEncoding.DecodeString(clean)
			if err != nil {
				out, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "="))
			}
			w.Write(out)
			if err != nil {
				return fmt.Errorf("invalid input")
			}
			return nil
		}
		enc := base64.StdEncoding.EncodeToString(data)
		bw := bufio.NewWriter(w)
		for wrap > 0 && len(enc) > wrap {
			bw.WriteString(enc[:wrap] + "\n")
			enc = enc[wrap:]
		}
		if enc != "" {
			bw.WriteString(enc + "\n")
		}
		return bw.Flush()
	})
	return exitWrite(c, w.Flush(), status)
}

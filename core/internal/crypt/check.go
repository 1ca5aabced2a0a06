package crypt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Errors of Check and Sniff; each says what to do.
var (
	ErrNeedKey      = errors.New("the database is encrypted: give its key (--key-file, AGENTFS_KEY or --key) and cipher (--cipher or AGENTFS_CIPHER)")
	ErrWrongKey     = errors.New("wrong key: the database does not decrypt with it; check the key (and --cipher)")
	ErrNotEncrypted = errors.New("the database is not encrypted: open it without a key, or encrypt it first with `agentfs encrypt ID`")
)

// File is what Sniff and Check read a database file through.
type File interface {
	io.ReaderAt
	io.Closer
}

// OpenFile opens a database file for Sniff and Check. It is os.Open
// unless this process links a SQLite that locks files with POSIX locks:
// closing an *os.File of a database releases every such lock this
// process holds on it, those of its open connections included, and
// internal/sqlite then sets a reader that goes through SQLite's own
// files (see its dbfile.c).
var OpenFile = func(path string) (File, error) { return os.Open(path) }

// Sniff reports the cipher a database file at path is encrypted with in
// Turso's format, "" for a file that is not (or is empty or missing).
func Sniff(path string) (string, error) {
	f, err := OpenFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	defer f.Close()
	return SniffReader(f), nil
}

// SniffReader is Sniff of the database file r (the WebAssembly build's
// databases are in memory or in host files, not at a path).
func SniffReader(r io.ReaderAt) string {
	var h [tursoHeader]byte
	if n, _ := r.ReadAt(h[:], 0); n < tursoHeader {
		return ""
	}
	if !bytes.HasPrefix(h[:], tursoMagic) || h[5] != 0 {
		return ""
	}
	if c := byID(h[6]); c != nil {
		return c.Name
	}
	return fmt.Sprintf("unknown cipher id %d", h[6])
}

// Check verifies, reading only, that the database file at path opens with
// the codec: page 1 decrypts. A missing or empty file passes (it will be
// created encrypted).
func (k *Codec) Check(path string) error {
	f, err := OpenFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	return k.CheckReader(f)
}

// CheckReader is Check of the database file r.
func (k *Codec) CheckReader(r io.ReaderAt) error {
	var h [headerSize]byte
	n, _ := r.ReadAt(h[:], 0)
	if n == 0 {
		return nil
	}
	if n < headerSize {
		return ErrWrongKey
	}
	if bytes.HasPrefix(h[:], sqliteMagic) {
		return ErrNotEncrypted
	}
	if !bytes.HasPrefix(h[:], tursoMagic) {
		return ErrWrongKey
	}
	if h[6] != k.c.id {
		if c := byID(h[6]); c != nil {
			return fmt.Errorf("the database is encrypted with %s, not %s: give --cipher %s (or AGENTFS_CIPHER=%s)", c.Name, k.c.Name, c.Name, c.Name)
		}
		return fmt.Errorf("the database is encrypted with a cipher this build does not know (id %d)", h[6])
	}
	ps := int(h[16])<<8 | int(h[17])
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return ErrWrongKey
	}
	if int(h[20]) != k.c.Meta() {
		return fmt.Errorf("the database reserves %d bytes per page, not the %d of %s: check --cipher", h[20], k.c.Meta(), k.c.Name)
	}
	page := make([]byte, ps)
	if n, _ := r.ReadAt(page, 0); n < ps {
		return ErrWrongKey
	}
	if err := k.decrypt(page, 1); err != nil {
		return ErrWrongKey
	}
	return nil
}

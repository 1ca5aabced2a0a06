package crypt

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

const (
	headerSize  = 100 // SQLite's database header on page 1
	tursoHeader = 16  // "Turso", version, cipher id, 9 zeros
)

var (
	sqliteMagic = []byte("SQLite format 3\x00")
	tursoMagic  = []byte("Turso")
)

// Codec encrypts and decrypts pages with one key and cipher.
type Codec struct {
	c    *Cipher
	aead cipher.AEAD
	hdr  [tursoHeader]byte // page 1's first 16 bytes as stored
}

// New makes the codec of cipher name with key. Errors name the fix and
// never contain the key.
func New(name string, key []byte) (*Codec, error) {
	c, err := lookup(name)
	if err != nil {
		return nil, err
	}
	if len(key) != c.key {
		return nil, fmt.Errorf("%s needs a %d-byte key (%d hex digits), got %d bytes: give a key of that length or choose the cipher it was made for", c.Name, c.key, 2*c.key, len(key))
	}
	a, err := c.newAEAD(key)
	if err != nil {
		return nil, err
	}
	k := &Codec{c: c, aead: a}
	copy(k.hdr[:], tursoMagic)
	k.hdr[6] = c.id
	return k, nil
}

// Cipher is the codec's cipher.
func (k *Codec) Cipher() *Cipher { return k.c }

// header is page 1's first 16 bytes as stored.
func (k *Codec) header() []byte { return k.hdr[:] }

// encrypt writes page pgno (plain, len = page size) encrypted into out.
func (k *Codec) encrypt(out, page []byte, pgno int64) error {
	ps, meta, ns := len(page), k.c.Meta(), k.c.nonce
	if ps <= headerSize+meta {
		return errors.New("crypt: page too small")
	}
	// A fresh random nonce per page write, as Turso's engine does: the
	// format has no counter to derive one from, and crypto/rand is a
	// vDSO call, a small part of a page's cost.
	nonce := out[ps-ns:]
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	if pgno == 1 {
		if !bytes.HasPrefix(page, sqliteMagic) {
			return errors.New("crypt: page 1 without SQLite's header")
		}
		copy(out[:tursoHeader], k.header())
		copy(out[tursoHeader:headerSize], page[tursoHeader:headerSize])
		k.aead.Seal(out[headerSize:headerSize], nonce, page[headerSize:ps-meta], out[:headerSize])
		return nil
	}
	k.aead.Seal(out[:0], nonce, page[:ps-meta], nil)
	return nil
}

// errAuth: a page that does not decrypt (another key, or damage).
var errAuth = errors.New("crypt: page does not decrypt with this key")

// decrypt turns the stored page pgno (in place) into the plain page.
func (k *Codec) decrypt(page []byte, pgno int64) error { return k.open(page, page, pgno) }

// DecryptPage writes the plain page pgno of the stored page src into dst
// (of the same length, and either src itself or not overlapping it). It
// never writes to src, which may be read-only memory (the cgo VFS opens
// pages straight from a memory mapping of the database file).
func (k *Codec) DecryptPage(dst, src []byte, pgno int64) error {
	if len(dst) != len(src) {
		return errors.New("crypt: page and buffer differ in length")
	}
	return k.open(dst, src, pgno)
}

// open writes the plain page pgno of the stored page src into dst: the
// same slice, or one that does not overlap it.
func (k *Codec) open(dst, src []byte, pgno int64) error {
	ps, meta, ns := len(src), k.c.Meta(), k.c.nonce
	if ps <= headerSize+meta {
		return errors.New("crypt: page too small")
	}
	var nb [32]byte // the largest nonce; copied out as Open may overwrite src (dst)
	nonce := nb[:copy(nb[:], src[ps-ns:])]
	if pgno == 1 {
		if !bytes.Equal(src[:tursoHeader], k.header()) {
			return errAuth
		}
		if _, err := k.aead.Open(dst[headerSize:headerSize], nonce, src[headerSize:ps-ns], src[:headerSize]); err != nil {
			return errAuth
		}
		copy(dst[tursoHeader:headerSize], src[tursoHeader:headerSize])
		copy(dst, sqliteMagic)
	} else if _, err := k.aead.Open(dst[:0], nonce, src[:ps-ns], nil); err != nil {
		return errAuth
	}
	clear(dst[ps-meta:])
	return nil
}

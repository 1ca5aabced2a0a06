// Package crypt encrypts a database at rest in the page format of Turso's
// database engine (the one Turso's AgentFS uses for --key/--cipher), so a
// file encrypted by either opens in the other with the same key and
// cipher. It is the codec (page.go, format.go) and an ncruces/go-sqlite3
// VFS that wraps the operating system's (vfs.go); the cgo driver's VFS
// (internal/sqlite/cryptvfs.c) calls the same codec. SQLite above either
// sees plain pages.
//
// The format (facts read from Turso's core/storage/encryption.rs):
//   - Every page keeps its last nonce+tag bytes free (SQLite's "reserved
//     bytes" per page, header byte 20): the cipher's metadata size.
//   - A page other than page 1 is stored as AEAD(page[:size-meta]) with
//     no associated data: ciphertext, then the 16-byte tag, then the
//     random nonce in the last nonce-size bytes.
//   - Page 1: bytes 0..16 become "Turso", a version byte 0, the cipher's
//     id and 9 zero bytes; bytes 16..100 of SQLite's header stay in the
//     clear; bytes 100..size-meta are encrypted with the 100 bytes as
//     stored (Turso header included) as associated data; tag and nonce
//     follow as for other pages.
//   - WAL frames carry pages encrypted the same way (frame headers in the
//     clear).
package crypt

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// A Cipher names one of Turso's page ciphers.
type Cipher struct {
	Name    string
	id      byte
	key     int // key length in bytes
	nonce   int
	newAEAD func(key []byte) (cipher.AEAD, error)
}

const tagSize = 16

// Meta is the number of bytes reserved at the end of every page.
func (c *Cipher) Meta() int { return c.nonce + tagSize }

// KeySize is the length of the cipher's key in bytes.
func (c *Cipher) KeySize() int { return c.key }

func gcm(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// ciphers by Turso's names and header ids (CipherMode::cipher_id).
var ciphers = map[string]*Cipher{
	"aes128gcm":  {Name: "aes128gcm", id: 1, key: 16, nonce: 12, newAEAD: gcm},
	"aes256gcm":  {Name: "aes256gcm", id: 2, key: 32, nonce: 12, newAEAD: gcm},
	"aegis256":   {Name: "aegis256", id: 3, key: 32, nonce: 32, newAEAD: newAegis256},
	"aegis256x2": {Name: "aegis256x2", id: 4, key: 32, nonce: 32, newAEAD: newAegis256X2},
	"aegis256x4": {Name: "aegis256x4", id: 5, key: 32, nonce: 32, newAEAD: newAegis256X4},
	"aegis128l":  {Name: "aegis128l", id: 6, key: 16, nonce: 16, newAEAD: newAegis128L},
	"aegis128x2": {Name: "aegis128x2", id: 7, key: 16, nonce: 16, newAEAD: newAegis128X2},
	"aegis128x4": {Name: "aegis128x4", id: 8, key: 16, nonce: 16, newAEAD: newAegis128X4},
}

// Ciphers lists the names of the ciphers this build can use.
func Ciphers() []string {
	var out []string
	for n, c := range ciphers {
		if c.newAEAD != nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// lookup finds a cipher by Turso's name (case-insensitive, dashes and
// underscores allowed as Turso allows them).
func lookup(name string) (*Cipher, error) {
	n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(strings.TrimSpace(name)))
	c, ok := ciphers[n]
	if !ok {
		return nil, fmt.Errorf("unknown cipher %q: use one of %s", name, strings.Join(Ciphers(), ", "))
	}
	if c.newAEAD == nil {
		return nil, fmt.Errorf("cipher %s is not available in this build: use one of %s", c.Name, strings.Join(Ciphers(), ", "))
	}
	return c, nil
}

func byID(id byte) *Cipher {
	for _, c := range ciphers {
		if c.id == id {
			return c
		}
	}
	return nil
}

// ParseKey decodes a key given in hex (as --key and AGENTFS_KEY take it).
// The error never repeats the key.
func ParseKey(s string) ([]byte, error) {
	k, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("the key is not hexadecimal: give 32 hex digits (16 bytes) or 64 (32 bytes)")
	}
	return k, nil
}

package crypt

// AEGIS-128L, AEGIS-128X2/X4, AEGIS-256 and AEGIS-256X2/X4
// (draft-irtf-cfrg-aegis-aead), written from the specification, tag
// length 16 as Turso uses. An X variant is D (2 or 4) copies of the base
// state side by side ("lanes"), told apart by a context block during
// initialization; each lane sees its own blocks of every message chunk,
// so the lanes never interact between initialization and the tag. That
// is what lets one kernel, run once per lane over the whole message with
// the chunk size as its stride, serve x1, x2 and x4 alike.
//
// The kernels (absorb, encrypt, decrypt over n chunks) are in
// aegis_generic.go (pure Go, table-driven AES round) and, where the CPU
// has AES instructions, in assembly (aegis_amd64.s with AES-NI,
// aegis_arm64.s with the ARMv8 crypto extension); the `purego` build tag
// keeps the pure-Go ones. kernels.go picks.

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

type block [16]byte

// state is one lane: 8 blocks for AEGIS-128L, the first 6 for AEGIS-256.
// The assembly kernels read and write it in place.
type state [8]block

// maxRate is the largest chunk an update absorbs: AEGIS-128X4, two
// blocks in each of 4 lanes.
const maxRate = 32 * 4

var (
	c0 = block{0x00, 0x01, 0x01, 0x02, 0x03, 0x05, 0x08, 0x0d, 0x15, 0x22, 0x37, 0x59, 0x90, 0xe9, 0x79, 0x62}
	c1 = block{0xdb, 0x3d, 0x18, 0x55, 0x6d, 0xc2, 0x2f, 0xf1, 0x20, 0x11, 0x31, 0x42, 0x73, 0xb5, 0x28, 0xdd}
)

var errOpen = errors.New("message authentication failed")

func xor(a, b *block) (o block) {
	for i := range o {
		o[i] = a[i] ^ b[i]
	}
	return o
}

// aegis is one AEGIS variant with its key. wide selects the AEGIS-256
// family (32-byte key and nonce, 6-block state, one block per lane per
// update) over AEGIS-128L's (16-byte key and nonce, 8 blocks, two).
type aegis struct {
	k0, k1 block // k1 only for AEGIS-256
	lanes  int
	wide   bool
}

func newAegis128L(key []byte) (cipher.AEAD, error)  { return newAegis(key, false, 1) }
func newAegis128X2(key []byte) (cipher.AEAD, error) { return newAegis(key, false, 2) }
func newAegis128X4(key []byte) (cipher.AEAD, error) { return newAegis(key, false, 4) }
func newAegis256(key []byte) (cipher.AEAD, error)   { return newAegis(key, true, 1) }
func newAegis256X2(key []byte) (cipher.AEAD, error) { return newAegis(key, true, 2) }
func newAegis256X4(key []byte) (cipher.AEAD, error) { return newAegis(key, true, 4) }

func newAegis(key []byte, wide bool, lanes int) (cipher.AEAD, error) {
	a := &aegis{lanes: lanes, wide: wide}
	if len(key) != a.NonceSize() {
		if wide {
			return nil, errors.New("aegis256: key must be 32 bytes")
		}
		return nil, errors.New("aegis128: key must be 16 bytes")
	}
	copy(a.k0[:], key)
	if wide {
		copy(a.k1[:], key[16:])
	}
	return a, nil
}

// NonceSize is also the key size: 16 for AEGIS-128*, 32 for AEGIS-256*.
func (a *aegis) NonceSize() int {
	if a.wide {
		return 32
	}
	return 16
}

func (*aegis) Overhead() int { return tagSize }

// rate is the bytes absorbed per update: one (AEGIS-256) or two blocks
// per lane. Within a chunk, lane i takes block i (and block lanes+i).
func (a *aegis) rate() int {
	if a.wide {
		return 16 * a.lanes
	}
	return 32 * a.lanes
}

// The kernels of the family: n chunks of stride bytes from src (which
// starts at the lane's first block), for one lane.
func (a *aegis) absorb(s *state, src []byte, n, stride int) {
	if a.wide {
		absorb256(s, src, n, stride)
	} else {
		absorb128(s, src, n, stride)
	}
}

func (a *aegis) enc(s *state, dst, src []byte, n, stride int) {
	if a.wide {
		enc256(s, dst, src, n, stride)
	} else {
		enc128(s, dst, src, n, stride)
	}
}

func (a *aegis) dec(s *state, dst, src []byte, n, stride int) {
	if a.wide {
		dec256(s, dst, src, n, stride)
	} else {
		dec128(s, dst, src, n, stride)
	}
}

// ctx is lane i's context block: byte i, then byte lanes-1 (all zero for
// a single lane, which makes its xor a no-op).
func ctx(i, lanes int) (c block) {
	c[0], c[1] = byte(i), byte(lanes-1)
	return c
}

func (a *aegis) init(s []state, nonce []byte) {
	if len(nonce) != a.NonceSize() {
		panic("crypt: aegis: wrong nonce length") // as crypto/cipher's AEADs do
	}
	if !a.wide {
		n := block(nonce)
		kn := xor(&a.k0, &n)
		m := [2]block{n, a.k0} // Update(nonce, key)
		for i := range s {
			s[i] = state{kn, c1, c0, c1, kn, xor(&a.k0, &c0), xor(&a.k0, &c1), xor(&a.k0, &c0)}
			c := ctx(i, a.lanes)
			init128(&s[i], &m, &c)
		}
		return
	}
	n0, n1 := block(nonce[:16]), block(nonce[16:32])
	kn0, kn1 := xor(&a.k0, &n0), xor(&a.k1, &n1)
	m := [4]block{a.k0, a.k1, kn0, kn1}
	for i := range s {
		s[i] = state{kn0, kn1, c1, c0, xor(&a.k0, &c0), xor(&a.k1, &c1)}
		c := ctx(i, a.lanes)
		init256(&s[i], &m, &c)
	}
}

// absorbAD absorbs the associated data, the last chunk zero-padded.
func (a *aegis) absorbAD(s []state, ad []byte) {
	r := a.rate()
	full := len(ad) / r * r
	if full > 0 {
		for i := range s {
			a.absorb(&s[i], ad[16*i:full], full/r, r)
		}
	}
	if full < len(ad) {
		var m [maxRate]byte
		copy(m[:], ad[full:])
		for i := range s {
			a.absorb(&s[i], m[16*i:r], 1, r)
		}
	}
}

// z is lane i's keystream for its next chunk, placed where its blocks go
// in the chunk out.
func (a *aegis) z(s *state, i int, out []byte) {
	if a.wide {
		for j := range 16 {
			out[16*i+j] = s[1][j] ^ s[4][j] ^ s[5][j] ^ s[2][j]&s[3][j]
		}
		return
	}
	d := 16 * a.lanes
	for j := range 16 {
		out[16*i+j] = s[6][j] ^ s[1][j] ^ s[2][j]&s[3][j]
		out[d+16*i+j] = s[2][j] ^ s[5][j] ^ s[6][j]&s[7][j]
	}
}

func (a *aegis) finalize(s []state, adLen, msgLen int) (tag block) {
	var l block
	binary.LittleEndian.PutUint64(l[:8], uint64(adLen)*8)
	binary.LittleEndian.PutUint64(l[8:], uint64(msgLen)*8)
	for i := range s {
		if a.wide {
			t := xor(&s[i][3], &l)
			for range 7 {
				absorb256(&s[i], t[:], 1, 16)
			}
			for j := range tag {
				tag[j] ^= s[i][0][j] ^ s[i][1][j] ^ s[i][2][j] ^ s[i][3][j] ^ s[i][4][j] ^ s[i][5][j]
			}
			continue
		}
		t := xor(&s[i][2], &l)
		var m [32]byte // Update(t, t)
		copy(m[:16], t[:])
		copy(m[16:], t[:])
		for range 7 {
			absorb128(&s[i], m[:], 1, 32)
		}
		for j := range tag {
			tag[j] ^= s[i][0][j] ^ s[i][1][j] ^ s[i][2][j] ^ s[i][3][j] ^ s[i][4][j] ^ s[i][5][j] ^ s[i][6][j]
		}
	}
	return tag
}

func (a *aegis) Seal(dst, nonce, plaintext, ad []byte) []byte {
	var st [4]state
	s := st[:a.lanes]
	a.init(s, nonce)
	a.absorbAD(s, ad)
	ret, out := sliceForAppend(dst, len(plaintext)+tagSize)
	r := a.rate()
	full := len(plaintext) / r * r
	if full > 0 {
		for i := range s {
			a.enc(&s[i], out[16*i:full], plaintext[16*i:full], full/r, r)
		}
	}
	if rem := len(plaintext) - full; rem > 0 {
		// The last chunk zero-padded: encrypting the padding too
		// absorbs it, as the specification does.
		var m, c [maxRate]byte
		copy(m[:], plaintext[full:])
		for i := range s {
			a.enc(&s[i], c[16*i:r], m[16*i:r], 1, r)
		}
		copy(out[full:], c[:rem])
	}
	tag := a.finalize(s, len(ad), len(plaintext))
	copy(out[len(plaintext):], tag[:])
	return ret
}

func (a *aegis) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(ciphertext) < tagSize {
		return nil, errOpen
	}
	var st [4]state
	s := st[:a.lanes]
	a.init(s, nonce)
	a.absorbAD(s, ad)
	ct, want := ciphertext[:len(ciphertext)-tagSize], ciphertext[len(ciphertext)-tagSize:]
	ret, out := sliceForAppend(dst, len(ct))
	r := a.rate()
	full := len(ct) / r * r
	if full > 0 {
		for i := range s {
			a.dec(&s[i], out[16*i:full], ct[16*i:full], full/r, r)
		}
	}
	if rem := len(ct) - full; rem > 0 {
		// The last chunk: the plaintext is absorbed zero-padded, not
		// ciphertext padding xor keystream, so it cannot go through dec.
		var m [maxRate]byte
		for i := range s {
			a.z(&s[i], i, m[:r])
		}
		for j, c := range ct[full:] {
			m[j] ^= c
		}
		clear(m[rem:])
		copy(out[full:], m[:rem])
		for i := range s {
			a.absorb(&s[i], m[16*i:r], 1, r)
		}
	}
	tag := a.finalize(s, len(ad), len(ct))
	if subtle.ConstantTimeCompare(tag[:], want) != 1 {
		clear(out)
		return nil, errOpen
	}
	return ret, nil
}

func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	return head, head[len(in):]
}

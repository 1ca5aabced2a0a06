package crypt

// AEGIS-128L and AEGIS-256 (draft-irtf-cfrg-aegis-aead), written from the
// specification: Go's crypto/aes does not expose the AES round function
// AEGIS is built on, and no pure-Go AEGIS is pinned here. The round is a
// table-driven AES encryption round (SubBytes, ShiftRows, MixColumns, xor
// round key). Tag length 16, as Turso uses.

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

type block [16]byte

var te [4][256]uint32

func init() {
	// The S-box from the multiplicative inverse in GF(2^8) and the affine
	// map, then the four round tables.
	mul := func(a, b byte) byte {
		var p byte
		for b != 0 {
			if b&1 != 0 {
				p ^= a
			}
			hi := a & 0x80
			a <<= 1
			if hi != 0 {
				a ^= 0x1b
			}
			b >>= 1
		}
		return p
	}
	rotl := func(x byte, n uint) byte { return x<<n | x>>(8-n) }
	for x := 0; x < 256; x++ {
		inv := byte(0)
		if x != 0 {
			inv = 1
			for i := 0; i < 254; i++ {
				inv = mul(inv, byte(x))
			}
		}
		s := inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ 0x63
		s2, s3 := mul(s, 2), mul(s, 3)
		// Column contribution of an input byte in row r: MixColumns'
		// column r applied to s, packed little-endian (row 0 lowest).
		te[0][x] = uint32(s2) | uint32(s)<<8 | uint32(s)<<16 | uint32(s3)<<24
		te[1][x] = uint32(s3) | uint32(s2)<<8 | uint32(s)<<16 | uint32(s)<<24
		te[2][x] = uint32(s) | uint32(s3)<<8 | uint32(s2)<<16 | uint32(s)<<24
		te[3][x] = uint32(s) | uint32(s)<<8 | uint32(s3)<<16 | uint32(s2)<<24
	}
}

// aesRound is AESRound(in, rk) of the specification.
func aesRound(in, rk *block) (out block) {
	for c := 0; c < 4; c++ {
		w := te[0][in[4*c]] ^ te[1][in[4*((c+1)&3)+1]] ^ te[2][in[4*((c+2)&3)+2]] ^ te[3][in[4*((c+3)&3)+3]]
		w ^= binary.LittleEndian.Uint32(rk[4*c:])
		binary.LittleEndian.PutUint32(out[4*c:], w)
	}
	return out
}

func xor(a, b *block) (o block) {
	for i := range o {
		o[i] = a[i] ^ b[i]
	}
	return o
}

func and(a, b *block) (o block) {
	for i := range o {
		o[i] = a[i] & b[i]
	}
	return o
}

var (
	c0 = block{0x00, 0x01, 0x01, 0x02, 0x03, 0x05, 0x08, 0x0d, 0x15, 0x22, 0x37, 0x59, 0x90, 0xe9, 0x79, 0x62}
	c1 = block{0xdb, 0x3d, 0x18, 0x55, 0x6d, 0xc2, 0x2f, 0xf1, 0x20, 0x11, 0x31, 0x42, 0x73, 0xb5, 0x28, 0xdd}
)

var errOpen = errors.New("message authentication failed")

func lengths(ad, msg int) (t block) {
	binary.LittleEndian.PutUint64(t[:8], uint64(ad)*8)
	binary.LittleEndian.PutUint64(t[8:], uint64(msg)*8)
	return t
}

// aegis128L is AEGIS-128L as a cipher.AEAD (nonce 16 bytes).
type aegis128L struct{ key block }

func newAegis128L(key []byte) (cipher.AEAD, error) {
	if len(key) != 16 {
		return nil, errors.New("aegis128l: key must be 16 bytes")
	}
	a := &aegis128L{}
	copy(a.key[:], key)
	return a, nil
}

func (*aegis128L) NonceSize() int { return 16 }
func (*aegis128L) Overhead() int  { return tagSize }

type state128L [8]block

func (s *state128L) update(m0, m1 *block) {
	t0 := xor(&s[0], m0)
	t4 := xor(&s[4], m1)
	n := state128L{
		aesRound(&s[7], &t0), aesRound(&s[0], &s[1]), aesRound(&s[1], &s[2]), aesRound(&s[2], &s[3]),
		aesRound(&s[3], &t4), aesRound(&s[4], &s[5]), aesRound(&s[5], &s[6]), aesRound(&s[6], &s[7]),
	}
	*s = n
}

func (a *aegis128L) init(nonce []byte) *state128L {
	var n block
	copy(n[:], nonce)
	kn := xor(&a.key, &n)
	s := &state128L{kn, c1, c0, c1, kn, xor(&a.key, &c0), xor(&a.key, &c1), xor(&a.key, &c0)}
	for range 10 {
		s.update(&n, &a.key)
	}
	return s
}

func (s *state128L) z() (z0, z1 block) {
	a := and(&s[2], &s[3])
	b := and(&s[6], &s[7])
	for i := range z0 {
		z0[i] = s[6][i] ^ s[1][i] ^ a[i]
		z1[i] = s[2][i] ^ s[5][i] ^ b[i]
	}
	return
}

func (s *state128L) absorb(ad []byte) {
	for len(ad) > 0 {
		var m [32]byte
		n := copy(m[:], ad)
		ad = ad[n:]
		m0, m1 := block(m[:16]), block(m[16:])
		s.update(&m0, &m1)
	}
}

func (s *state128L) finalize(adLen, msgLen int) (tag block) {
	l := lengths(adLen, msgLen)
	t := xor(&s[2], &l)
	for range 7 {
		s.update(&t, &t)
	}
	for i := range tag {
		tag[i] = s[0][i] ^ s[1][i] ^ s[2][i] ^ s[3][i] ^ s[4][i] ^ s[5][i] ^ s[6][i]
	}
	return tag
}

func (a *aegis128L) Seal(dst, nonce, plaintext, ad []byte) []byte {
	s := a.init(nonce)
	s.absorb(ad)
	ret, out := sliceForAppend(dst, len(plaintext)+tagSize)
	for i := 0; i < len(plaintext); i += 32 {
		var m [32]byte
		n := copy(m[:], plaintext[i:])
		z0, z1 := s.z()
		m0, m1 := block(m[:16]), block(m[16:])
		c0, c1 := xor(&m0, &z0), xor(&m1, &z1)
		var c [32]byte
		copy(c[:16], c0[:])
		copy(c[16:], c1[:])
		copy(out[i:i+n], c[:n])
		s.update(&m0, &m1)
	}
	tag := s.finalize(len(ad), len(plaintext))
	copy(out[len(plaintext):], tag[:])
	return ret
}

func (a *aegis128L) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(ciphertext) < tagSize {
		return nil, errOpen
	}
	ct, want := ciphertext[:len(ciphertext)-tagSize], ciphertext[len(ciphertext)-tagSize:]
	s := a.init(nonce)
	s.absorb(ad)
	ret, out := sliceForAppend(dst, len(ct))
	for i := 0; i < len(ct); i += 32 {
		var c [32]byte
		n := copy(c[:], ct[i:])
		z0, z1 := s.z()
		cb0, cb1 := block(c[:16]), block(c[16:])
		m0, m1 := xor(&cb0, &z0), xor(&cb1, &z1)
		var m [32]byte
		copy(m[:16], m0[:])
		copy(m[16:], m1[:])
		clear(m[n:]) // a partial last block is absorbed zero-padded
		copy(out[i:i+n], m[:n])
		m0, m1 = block(m[:16]), block(m[16:])
		s.update(&m0, &m1)
	}
	tag := s.finalize(len(ad), len(ct))
	if subtle.ConstantTimeCompare(tag[:], want) != 1 {
		clear(out)
		return nil, errOpen
	}
	return ret, nil
}

// aegis256 is AEGIS-256 as a cipher.AEAD (nonce 32 bytes).
type aegis256 struct{ k0, k1 block }

func newAegis256(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, errors.New("aegis256: key must be 32 bytes")
	}
	a := &aegis256{}
	copy(a.k0[:], key[:16])
	copy(a.k1[:], key[16:])
	return a, nil
}

func (*aegis256) NonceSize() int { return 32 }
func (*aegis256) Overhead() int  { return tagSize }

type state256 [6]block

func (s *state256) update(m *block) {
	t0 := xor(&s[0], m)
	*s = state256{
		aesRound(&s[5], &t0), aesRound(&s[0], &s[1]), aesRound(&s[1], &s[2]),
		aesRound(&s[2], &s[3]), aesRound(&s[3], &s[4]), aesRound(&s[4], &s[5]),
	}
}

func (a *aegis256) init(nonce []byte) *state256 {
	n0, n1 := block(nonce[:16]), block(nonce[16:32])
	kn0, kn1 := xor(&a.k0, &n0), xor(&a.k1, &n1)
	s := &state256{kn0, kn1, c1, c0, xor(&a.k0, &c0), xor(&a.k1, &c1)}
	for range 4 {
		s.update(&a.k0)
		s.update(&a.k1)
		s.update(&kn0)
		s.update(&kn1)
	}
	return s
}

func (s *state256) z() (z block) {
	a := and(&s[2], &s[3])
	for i := range z {
		z[i] = s[1][i] ^ s[4][i] ^ s[5][i] ^ a[i]
	}
	return z
}

func (s *state256) absorb(ad []byte) {
	for len(ad) > 0 {
		var m block
		n := copy(m[:], ad)
		ad = ad[n:]
		s.update(&m)
	}
}

func (s *state256) finalize(adLen, msgLen int) (tag block) {
	l := lengths(adLen, msgLen)
	t := xor(&s[3], &l)
	for range 7 {
		s.update(&t)
	}
	for i := range tag {
		tag[i] = s[0][i] ^ s[1][i] ^ s[2][i] ^ s[3][i] ^ s[4][i] ^ s[5][i]
	}
	return tag
}

func (a *aegis256) Seal(dst, nonce, plaintext, ad []byte) []byte {
	s := a.init(nonce)
	s.absorb(ad)
	ret, out := sliceForAppend(dst, len(plaintext)+tagSize)
	for i := 0; i < len(plaintext); i += 16 {
		var m block
		n := copy(m[:], plaintext[i:])
		z := s.z()
		c := xor(&m, &z)
		copy(out[i:i+n], c[:n])
		s.update(&m)
	}
	tag := s.finalize(len(ad), len(plaintext))
	copy(out[len(plaintext):], tag[:])
	return ret
}

func (a *aegis256) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(ciphertext) < tagSize {
		return nil, errOpen
	}
	ct, want := ciphertext[:len(ciphertext)-tagSize], ciphertext[len(ciphertext)-tagSize:]
	s := a.init(nonce)
	s.absorb(ad)
	ret, out := sliceForAppend(dst, len(ct))
	for i := 0; i < len(ct); i += 16 {
		var c block
		n := copy(c[:], ct[i:])
		z := s.z()
		m := xor(&c, &z)
		clear(m[n:])
		copy(out[i:i+n], m[:n])
		s.update(&m)
	}
	tag := s.finalize(len(ad), len(ct))
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

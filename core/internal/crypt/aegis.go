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

// aegis128 is AEGIS-128L (lanes 1) and AEGIS-128X2/X4 (lanes 2, 4): that
// many AEGIS-128L states side by side, told apart by a context block
// during initialization. Nonce 16 bytes.
type aegis128 struct {
	key   block
	lanes int
}

func newAegis128L(key []byte) (cipher.AEAD, error)  { return newAegis128(key, 1) }
func newAegis128X2(key []byte) (cipher.AEAD, error) { return newAegis128(key, 2) }
func newAegis128X4(key []byte) (cipher.AEAD, error) { return newAegis128(key, 4) }

func newAegis128(key []byte, lanes int) (cipher.AEAD, error) {
	if len(key) != 16 {
		return nil, errors.New("aegis128: key must be 16 bytes")
	}
	a := &aegis128{lanes: lanes}
	copy(a.key[:], key)
	return a, nil
}

func (*aegis128) NonceSize() int { return 16 }
func (*aegis128) Overhead() int  { return tagSize }

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

func (s *state128L) z() (z0, z1 block) {
	a := and(&s[2], &s[3])
	b := and(&s[6], &s[7])
	for i := range z0 {
		z0[i] = s[6][i] ^ s[1][i] ^ a[i]
		z1[i] = s[2][i] ^ s[5][i] ^ b[i]
	}
	return
}

// ctx is lane i's context block: byte i, then byte lanes-1.
func ctx(i, lanes int) (c block) {
	c[0], c[1] = byte(i), byte(lanes-1)
	return c
}

type states128 []state128L

func (a *aegis128) init(nonce []byte) states128 {
	var n block
	copy(n[:], nonce)
	kn := xor(&a.key, &n)
	s := make(states128, a.lanes)
	for i := range s {
		s[i] = state128L{kn, c1, c0, c1, kn, xor(&a.key, &c0), xor(&a.key, &c1), xor(&a.key, &c0)}
	}
	for range 10 {
		for i := range s {
			c := ctx(i, a.lanes)
			s[i][3] = xor(&s[i][3], &c)
			s[i][7] = xor(&s[i][7], &c)
			s[i].update(&n, &a.key)
		}
	}
	return s
}

// rate is the bytes absorbed per update: two blocks per lane.
func (s states128) rate() int { return 32 * len(s) }

// update absorbs one rate-sized chunk m: lane i takes blocks i and
// lanes+i.
func (s states128) update(m []byte) {
	d := len(s)
	for i := range s {
		m0, m1 := block(m[16*i:]), block(m[16*(d+i):])
		s[i].update(&m0, &m1)
	}
}

func (s states128) z(out []byte) {
	d := len(s)
	for i := range s {
		z0, z1 := s[i].z()
		copy(out[16*i:], z0[:])
		copy(out[16*(d+i):], z1[:])
	}
}

func (s states128) absorb(ad []byte) {
	m := make([]byte, s.rate())
	for len(ad) > 0 {
		clear(m)
		n := copy(m, ad)
		ad = ad[n:]
		s.update(m)
	}
}

func (s states128) finalize(adLen, msgLen int) (tag block) {
	l := lengths(adLen, msgLen)
	t := make([]byte, s.rate())
	for i := range s {
		ti := xor(&s[i][2], &l)
		copy(t[16*i:], ti[:])
		copy(t[16*(len(s)+i):], ti[:])
	}
	for range 7 {
		s.update(t)
	}
	for i := range s {
		for j := range tag {
			tag[j] ^= s[i][0][j] ^ s[i][1][j] ^ s[i][2][j] ^ s[i][3][j] ^ s[i][4][j] ^ s[i][5][j] ^ s[i][6][j]
		}
	}
	return tag
}

func (a *aegis128) Seal(dst, nonce, plaintext, ad []byte) []byte {
	s := a.init(nonce)
	s.absorb(ad)
	return sealLanes(s, dst, plaintext, ad)
}

func (a *aegis128) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	s := a.init(nonce)
	s.absorb(ad)
	return openLanes(s, dst, ciphertext, ad)
}

// lanes is what Seal and Open need of a multi-lane AEGIS state.
type lanes interface {
	rate() int
	z(out []byte)
	update(m []byte)
	finalize(adLen, msgLen int) block
}

func sealLanes(s lanes, dst, plaintext, ad []byte) []byte {
	ret, out := sliceForAppend(dst, len(plaintext)+tagSize)
	r := s.rate()
	m, z := make([]byte, r), make([]byte, r)
	for i := 0; i < len(plaintext); i += r {
		clear(m)
		n := copy(m, plaintext[i:])
		s.z(z)
		for j := 0; j < n; j++ {
			out[i+j] = m[j] ^ z[j]
		}
		s.update(m)
	}
	tag := s.finalize(len(ad), len(plaintext))
	copy(out[len(plaintext):], tag[:])
	return ret
}

func openLanes(s lanes, dst, ciphertext, ad []byte) ([]byte, error) {
	if len(ciphertext) < tagSize {
		return nil, errOpen
	}
	ct, want := ciphertext[:len(ciphertext)-tagSize], ciphertext[len(ciphertext)-tagSize:]
	ret, out := sliceForAppend(dst, len(ct))
	r := s.rate()
	m, z := make([]byte, r), make([]byte, r)
	for i := 0; i < len(ct); i += r {
		clear(m)
		n := copy(m, ct[i:])
		s.z(z)
		for j := 0; j < n; j++ {
			m[j] ^= z[j]
		}
		clear(m[n:]) // a partial last block is absorbed zero-padded
		copy(out[i:i+n], m[:n])
		s.update(m)
	}
	tag := s.finalize(len(ad), len(ct))
	if subtle.ConstantTimeCompare(tag[:], want) != 1 {
		clear(out)
		return nil, errOpen
	}
	return ret, nil
}

// aegis256 is AEGIS-256 (lanes 1) and AEGIS-256X2/X4. Nonce 32 bytes.
type aegis256 struct {
	k0, k1 block
	lanes  int
}

func newAegis256(key []byte) (cipher.AEAD, error)   { return newAegis256N(key, 1) }
func newAegis256X2(key []byte) (cipher.AEAD, error) { return newAegis256N(key, 2) }
func newAegis256X4(key []byte) (cipher.AEAD, error) { return newAegis256N(key, 4) }

func newAegis256N(key []byte, lanes int) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, errors.New("aegis256: key must be 32 bytes")
	}
	a := &aegis256{lanes: lanes}
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

type states256 []state256

func (a *aegis256) init(nonce []byte) states256 {
	n0, n1 := block(nonce[:16]), block(nonce[16:32])
	kn0, kn1 := xor(&a.k0, &n0), xor(&a.k1, &n1)
	s := make(states256, a.lanes)
	for i := range s {
		s[i] = state256{kn0, kn1, c1, c0, xor(&a.k0, &c0), xor(&a.k1, &c1)}
	}
	for range 4 {
		for _, m := range []*block{&a.k0, &a.k1, &kn0, &kn1} {
			for i := range s {
				c := ctx(i, a.lanes)
				s[i][3] = xor(&s[i][3], &c)
				s[i][5] = xor(&s[i][5], &c)
				s[i].update(m)
			}
		}
	}
	return s
}

func (s states256) rate() int { return 16 * len(s) }

func (s states256) update(m []byte) {
	for i := range s {
		b := block(m[16*i:])
		s[i].update(&b)
	}
}

func (s states256) z(out []byte) {
	for i := range s {
		a := and(&s[i][2], &s[i][3])
		for j := range 16 {
			out[16*i+j] = s[i][1][j] ^ s[i][4][j] ^ s[i][5][j] ^ a[j]
		}
	}
}

func (s states256) absorb(ad []byte) {
	m := make([]byte, s.rate())
	for len(ad) > 0 {
		clear(m)
		n := copy(m, ad)
		ad = ad[n:]
		s.update(m)
	}
}

func (s states256) finalize(adLen, msgLen int) (tag block) {
	l := lengths(adLen, msgLen)
	t := make([]byte, s.rate())
	for i := range s {
		ti := xor(&s[i][3], &l)
		copy(t[16*i:], ti[:])
	}
	for range 7 {
		s.update(t)
	}
	for i := range s {
		for j := range tag {
			tag[j] ^= s[i][0][j] ^ s[i][1][j] ^ s[i][2][j] ^ s[i][3][j] ^ s[i][4][j] ^ s[i][5][j]
		}
	}
	return tag
}

func (a *aegis256) Seal(dst, nonce, plaintext, ad []byte) []byte {
	s := a.init(nonce)
	s.absorb(ad)
	return sealLanes(s, dst, plaintext, ad)
}

func (a *aegis256) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	s := a.init(nonce)
	s.absorb(ad)
	return openLanes(s, dst, ciphertext, ad)
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

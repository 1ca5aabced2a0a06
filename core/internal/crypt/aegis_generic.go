package crypt

// The pure-Go AEGIS kernels: for other CPUs, the purego build tag, and
// as the reference the assembly is fuzzed against. Go's crypto/aes does
// not expose the AES round function AEGIS is built on, so it is a
// table-driven AES encryption round (SubBytes, ShiftRows, MixColumns,
// xor round key).

import "encoding/binary"

var te [4][256]uint32

func init() {
	// The S-box from the multiplicative inverse in GF(2^8) and the affine
	// map, then the four round tables. Inverses come from logarithms to
	// the base 3 (a generator of the field's multiplicative group): x^254
	// by repeated multiplication cost about a millisecond of every
	// process's start, the Node addon's cold start included.
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
	var exp [255]byte
	var log [256]int
	for i, p := 0, byte(1); i < 255; i++ {
		exp[i] = p
		log[p] = i
		p = mul(p, 3)
	}
	rotl := func(x byte, n uint) byte { return x<<n | x>>(8-n) }
	for x := 0; x < 256; x++ {
		inv := byte(0)
		if x != 0 {
			inv = exp[(255-log[x])%255]
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

// update128 is AEGIS-128L's Update(m0, m1).
func (s *state) update128(m0, m1 *block) {
	t0 := xor(&s[0], m0)
	t4 := xor(&s[4], m1)
	*s = state{
		aesRound(&s[7], &t0), aesRound(&s[0], &s[1]), aesRound(&s[1], &s[2]), aesRound(&s[2], &s[3]),
		aesRound(&s[3], &t4), aesRound(&s[4], &s[5]), aesRound(&s[5], &s[6]), aesRound(&s[6], &s[7]),
	}
}

// update256 is AEGIS-256's Update(m).
func (s *state) update256(m *block) {
	t0 := xor(&s[0], m)
	*s = state{
		aesRound(&s[5], &t0), aesRound(&s[0], &s[1]), aesRound(&s[1], &s[2]),
		aesRound(&s[2], &s[3]), aesRound(&s[3], &s[4]), aesRound(&s[4], &s[5]),
	}
}

// The kernels below run one lane over n chunks of stride bytes; src (and
// dst) start at the lane's first block. An AEGIS-128L lane's second block
// is half a chunk later (the chunk is all lanes' first blocks, then all
// their second ones). op is 0 to absorb src, 1 to encrypt it into dst, 2
// to decrypt it into dst; dst may be src.

func kernel128Generic(op int, s *state, dst, src []byte, n, stride int) {
	for k := range n {
		at, at1 := k*stride, k*stride+stride/2
		m0, m1 := block(src[at:]), block(src[at1:])
		if op != 0 {
			var z0, z1 block
			for j := range 16 {
				z0[j] = s[6][j] ^ s[1][j] ^ s[2][j]&s[3][j]
				z1[j] = s[2][j] ^ s[5][j] ^ s[6][j]&s[7][j]
			}
			o0, o1 := xor(&m0, &z0), xor(&m1, &z1)
			copy(dst[at:at+16], o0[:])
			copy(dst[at1:at1+16], o1[:])
			if op == 2 {
				m0, m1 = o0, o1
			}
		}
		s.update128(&m0, &m1)
	}
}

func kernel256Generic(op int, s *state, dst, src []byte, n, stride int) {
	for k := range n {
		at := k * stride
		m := block(src[at:])
		if op != 0 {
			var z block
			for j := range 16 {
				z[j] = s[1][j] ^ s[4][j] ^ s[5][j] ^ s[2][j]&s[3][j]
			}
			o := xor(&m, &z)
			copy(dst[at:at+16], o[:])
			if op == 2 {
				m = o
			}
		}
		s.update256(&m)
	}
}

// init128Generic is AEGIS-128L's initialization rounds for one lane:
// ten times S3 ^= ctx, S7 ^= ctx, Update(m[0], m[1]) (nonce, key).
func init128Generic(s *state, m *[2]block, ctx *block) {
	for range 10 {
		s[3] = xor(&s[3], ctx)
		s[7] = xor(&s[7], ctx)
		s.update128(&m[0], &m[1])
	}
}

// init256Generic is AEGIS-256's: four times, for each of m (k0, k1,
// k0^n0, k1^n1), S3 ^= ctx, S5 ^= ctx, Update(m[i]).
func init256Generic(s *state, m *[4]block, ctx *block) {
	for range 4 {
		for i := range m {
			s[3] = xor(&s[3], ctx)
			s[5] = xor(&s[5], ctx)
			s.update256(&m[i])
		}
	}
}

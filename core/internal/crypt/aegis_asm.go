//go:build (amd64 || arm64) && !purego

package crypt

// The assembly kernels (aegis_amd64.s, aegis_arm64.s) where the CPU has
// AES instructions (aegisAsm, per architecture), else the pure-Go ones.
// Each runs one lane over n chunks: the state stays in registers and
// every AES round is one instruction (two on arm64). The wrappers check
// bounds; the assembly does not.

//go:noescape
func aegis128Absorb(s *state, src *byte, n, stride int)

//go:noescape
func aegis128Enc(s *state, dst, src *byte, n, stride int)

//go:noescape
func aegis128Dec(s *state, dst, src *byte, n, stride int)

//go:noescape
func aegis256Absorb(s *state, src *byte, n, stride int)

//go:noescape
func aegis256Enc(s *state, dst, src *byte, n, stride int)

//go:noescape
func aegis256Dec(s *state, dst, src *byte, n, stride int)

//go:noescape
func aegis128Init(s *state, m *[2]block, ctx *block)

//go:noescape
func aegis256Init(s *state, m *[4]block, ctx *block)

func init128(s *state, m *[2]block, ctx *block) {
	if aegisAsm {
		aegis128Init(s, m, ctx)
	} else {
		init128Generic(s, m, ctx)
	}
}

func init256(s *state, m *[4]block, ctx *block) {
	if aegisAsm {
		aegis256Init(s, m, ctx)
	} else {
		init256Generic(s, m, ctx)
	}
}

// last128 and last256 are the index of the last byte a kernel touches.
func last128(n, stride int) int { return (n-1)*stride + stride/2 + 15 }
func last256(n, stride int) int { return (n-1)*stride + 15 }

func absorb128(s *state, src []byte, n, stride int) {
	if !aegisAsm {
		kernel128Generic(0, s, nil, src, n, stride)
	} else if n > 0 {
		_ = src[last128(n, stride)]
		aegis128Absorb(s, &src[0], n, stride)
	}
}

func enc128(s *state, dst, src []byte, n, stride int) {
	if !aegisAsm {
		kernel128Generic(1, s, dst, src, n, stride)
	} else if n > 0 {
		_, _ = src[last128(n, stride)], dst[last128(n, stride)]
		aegis128Enc(s, &dst[0], &src[0], n, stride)
	}
}

func dec128(s *state, dst, src []byte, n, stride int) {
	if !aegisAsm {
		kernel128Generic(2, s, dst, src, n, stride)
	} else if n > 0 {
		_, _ = src[last128(n, stride)], dst[last128(n, stride)]
		aegis128Dec(s, &dst[0], &src[0], n, stride)
	}
}

func absorb256(s *state, src []byte, n, stride int) {
	if !aegisAsm {
		kernel256Generic(0, s, nil, src, n, stride)
	} else if n > 0 {
		_ = src[last256(n, stride)]
		aegis256Absorb(s, &src[0], n, stride)
	}
}

func enc256(s *state, dst, src []byte, n, stride int) {
	if !aegisAsm {
		kernel256Generic(1, s, dst, src, n, stride)
	} else if n > 0 {
		_, _ = src[last256(n, stride)], dst[last256(n, stride)]
		aegis256Enc(s, &dst[0], &src[0], n, stride)
	}
}

func dec256(s *state, dst, src []byte, n, stride int) {
	if !aegisAsm {
		kernel256Generic(2, s, dst, src, n, stride)
	} else if n > 0 {
		_, _ = src[last256(n, stride)], dst[last256(n, stride)]
		aegis256Dec(s, &dst[0], &src[0], n, stride)
	}
}

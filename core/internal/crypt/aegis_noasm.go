//go:build purego || !(amd64 || arm64)

package crypt

// Without AES instructions (or with the purego tag): the pure-Go kernels.

const aegisAsm = false

func absorb128(s *state, src []byte, n, stride int)   { kernel128Generic(0, s, nil, src, n, stride) }
func enc128(s *state, dst, src []byte, n, stride int) { kernel128Generic(1, s, dst, src, n, stride) }
func dec128(s *state, dst, src []byte, n, stride int) { kernel128Generic(2, s, dst, src, n, stride) }
func absorb256(s *state, src []byte, n, stride int)   { kernel256Generic(0, s, nil, src, n, stride) }
func enc256(s *state, dst, src []byte, n, stride int) { kernel256Generic(1, s, dst, src, n, stride) }
func dec256(s *state, dst, src []byte, n, stride int) { kernel256Generic(2, s, dst, src, n, stride) }
func init128(s *state, m *[2]block, ctx *block)       { init128Generic(s, m, ctx) }
func init256(s *state, m *[4]block, ctx *block)       { init256Generic(s, m, ctx) }

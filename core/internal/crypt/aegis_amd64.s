//go:build !purego

#include "textflag.h"

// AEGIS kernels with AES-NI (see aegis_asm.go). One lane's state lives in
// X0..X7 (AEGIS-128L) or X0..X5 (AEGIS-256) for the whole loop.
// AESENC K, X sets X = AESRound(X, K) exactly as the specification's
// AESRound. Registers: DI state, SI src, DX dst, CX chunks left, BX
// stride, R8 half a stride (an AEGIS-128L lane's second block).

// Update: S'[j] = AESRound(S[j-1], S[j]) (S[0] and, for AEGIS-128L, S[4]
// xored with the message blocks first), computed from the last block
// down so every input is still the old value; X10 keeps the old last
// block for S'[0].
#define UPDATE128 \
	MOVO X7, X10; \
	MOVO X6, X11; AESENC X7, X11; MOVO X11, X7; \
	MOVO X5, X11; AESENC X6, X11; MOVO X11, X6; \
	MOVO X4, X11; AESENC X5, X11; MOVO X11, X5; \
	PXOR X9, X4; \
	MOVO X3, X11; AESENC X4, X11; MOVO X11, X4; \
	MOVO X2, X11; AESENC X3, X11; MOVO X11, X3; \
	MOVO X1, X11; AESENC X2, X11; MOVO X11, X2; \
	MOVO X0, X11; AESENC X1, X11; MOVO X11, X1; \
	PXOR X8, X0; AESENC X0, X10; MOVO X10, X0

// z0 = S6 ^ S1 ^ (S2 & S3) into X12, z1 = S2 ^ S5 ^ (S6 & S7) into X13.
#define Z128 \
	MOVO X2, X12; PAND X3, X12; PXOR X6, X12; PXOR X1, X12; \
	MOVO X6, X13; PAND X7, X13; PXOR X2, X13; PXOR X5, X13

#define LOAD128 \
	MOVOU 0(DI), X0; MOVOU 16(DI), X1; MOVOU 32(DI), X2; MOVOU 48(DI), X3; \
	MOVOU 64(DI), X4; MOVOU 80(DI), X5; MOVOU 96(DI), X6; MOVOU 112(DI), X7

#define STORE128 \
	MOVOU X0, 0(DI); MOVOU X1, 16(DI); MOVOU X2, 32(DI); MOVOU X3, 48(DI); \
	MOVOU X4, 64(DI); MOVOU X5, 80(DI); MOVOU X6, 96(DI); MOVOU X7, 112(DI)

#define UPDATE256 \
	MOVO X5, X10; \
	MOVO X4, X11; AESENC X5, X11; MOVO X11, X5; \
	MOVO X3, X11; AESENC X4, X11; MOVO X11, X4; \
	MOVO X2, X11; AESENC X3, X11; MOVO X11, X3; \
	MOVO X1, X11; AESENC X2, X11; MOVO X11, X2; \
	MOVO X0, X11; AESENC X1, X11; MOVO X11, X1; \
	PXOR X6, X0; AESENC X0, X10; MOVO X10, X0

// z = S1 ^ S4 ^ S5 ^ (S2 & S3) into X12.
#define Z256 \
	MOVO X2, X12; PAND X3, X12; PXOR X1, X12; PXOR X4, X12; PXOR X5, X12

#define LOAD256 \
	MOVOU 0(DI), X0; MOVOU 16(DI), X1; MOVOU 32(DI), X2; MOVOU 48(DI), X3; \
	MOVOU 64(DI), X4; MOVOU 80(DI), X5

#define STORE256 \
	MOVOU X0, 0(DI); MOVOU X1, 16(DI); MOVOU X2, 32(DI); MOVOU X3, 48(DI); \
	MOVOU X4, 64(DI); MOVOU X5, 80(DI)

// func aegis128Absorb(s *state, src *byte, n, stride int)
TEXT ·aegis128Absorb(SB), NOSPLIT, $0-32
	MOVQ s+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), BX
	MOVQ BX, R8
	SHRQ $1, R8
	LOAD128
loop:
	MOVOU (SI), X8
	MOVOU (SI)(R8*1), X9
	UPDATE128
	ADDQ BX, SI
	DECQ CX
	JNZ  loop
	STORE128
	RET

// func aegis128Enc(s *state, dst, src *byte, n, stride int)
TEXT ·aegis128Enc(SB), NOSPLIT, $0-40
	MOVQ s+0(FP), DI
	MOVQ dst+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), BX
	MOVQ BX, R8
	SHRQ $1, R8
	LOAD128
loop:
	MOVOU (SI), X8
	MOVOU (SI)(R8*1), X9
	Z128
	PXOR  X8, X12
	PXOR  X9, X13
	MOVOU X12, (DX)
	MOVOU X13, (DX)(R8*1)
	UPDATE128
	ADDQ BX, SI
	ADDQ BX, DX
	DECQ CX
	JNZ  loop
	STORE128
	RET

// func aegis128Dec(s *state, dst, src *byte, n, stride int)
TEXT ·aegis128Dec(SB), NOSPLIT, $0-40
	MOVQ s+0(FP), DI
	MOVQ dst+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), BX
	MOVQ BX, R8
	SHRQ $1, R8
	LOAD128
loop:
	MOVOU (SI), X8
	MOVOU (SI)(R8*1), X9
	Z128
	PXOR  X12, X8
	PXOR  X13, X9
	MOVOU X8, (DX)
	MOVOU X9, (DX)(R8*1)
	UPDATE128
	ADDQ BX, SI
	ADDQ BX, DX
	DECQ CX
	JNZ  loop
	STORE128
	RET

// func aegis256Absorb(s *state, src *byte, n, stride int)
TEXT ·aegis256Absorb(SB), NOSPLIT, $0-32
	MOVQ s+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), BX
	LOAD256
loop:
	MOVOU (SI), X6
	UPDATE256
	ADDQ BX, SI
	DECQ CX
	JNZ  loop
	STORE256
	RET

// func aegis256Enc(s *state, dst, src *byte, n, stride int)
TEXT ·aegis256Enc(SB), NOSPLIT, $0-40
	MOVQ s+0(FP), DI
	MOVQ dst+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), BX
	LOAD256
loop:
	MOVOU (SI), X6
	Z256
	PXOR  X6, X12
	MOVOU X12, (DX)
	UPDATE256
	ADDQ BX, SI
	ADDQ BX, DX
	DECQ CX
	JNZ  loop
	STORE256
	RET

// func aegis256Dec(s *state, dst, src *byte, n, stride int)
TEXT ·aegis256Dec(SB), NOSPLIT, $0-40
	MOVQ s+0(FP), DI
	MOVQ dst+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), BX
	LOAD256
loop:
	MOVOU (SI), X6
	Z256
	PXOR  X12, X6
	MOVOU X6, (DX)
	UPDATE256
	ADDQ BX, SI
	ADDQ BX, DX
	DECQ CX
	JNZ  loop
	STORE256
	RET

// func aegis128Init(s *state, m *[2]block, ctx *block)
// Ten times: S3 ^= ctx, S7 ^= ctx, Update(m[0], m[1]).
TEXT ·aegis128Init(SB), NOSPLIT, $0-24
	MOVQ  s+0(FP), DI
	MOVQ  m+8(FP), SI
	MOVQ  ctx+16(FP), AX
	LOAD128
	MOVOU (AX), X13
	MOVOU 0(SI), X8
	MOVOU 16(SI), X9
	MOVQ  $10, CX
loop:
	PXOR X13, X3
	PXOR X13, X7
	UPDATE128
	DECQ CX
	JNZ  loop
	STORE128
	RET

// func aegis256Init(s *state, m *[4]block, ctx *block)
// Four times, for each of m[0..3]: S3 ^= ctx, S5 ^= ctx, Update(m[i]).
TEXT ·aegis256Init(SB), NOSPLIT, $0-24
	MOVQ  s+0(FP), DI
	MOVQ  m+8(FP), SI
	MOVQ  ctx+16(FP), AX
	LOAD256
	MOVOU (AX), X13
	MOVQ  $4, CX
loop:
	PXOR  X13, X3
	PXOR  X13, X5
	MOVOU 0(SI), X6
	UPDATE256
	PXOR  X13, X3
	PXOR  X13, X5
	MOVOU 16(SI), X6
	UPDATE256
	PXOR  X13, X3
	PXOR  X13, X5
	MOVOU 32(SI), X6
	UPDATE256
	PXOR  X13, X3
	PXOR  X13, X5
	MOVOU 48(SI), X6
	UPDATE256
	DECQ  CX
	JNZ   loop
	STORE256
	RET

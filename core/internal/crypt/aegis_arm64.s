//go:build !purego

#include "textflag.h"

// AEGIS kernels with the ARMv8 crypto extension (see aegis_asm.go). One
// lane's state lives in V0..V7 (AEGIS-128L) or V0..V5 (AEGIS-256) for the
// whole loop. AESE xors its key before SubBytes and ShiftRows, so with a
// zero key (V20) AESRound(x, k) = AESMC(AESE(x, 0)) ^ k. Registers: R0
// state, R2 src, R1 dst, R3 chunks left, R4 stride, R5 half a stride (an
// AEGIS-128L lane's second block), R6 and R7 scratch addresses; message
// blocks V8 and V9, keystream V23 and V24, scratch V21 and V22.

// ROUND(in, k): k = AESRound(in, k), leaving in as it was.
#define ROUND(in, k) \
	VORR in.B16, in.B16, V22.B16; \
	AESE V20.B16, V22.B16; \
	AESMC V22.B16, V22.B16; \
	VEOR V22.B16, k.B16, k.B16

// Update, from the last block down so every input is still the old
// value; V21 keeps the old last block for S'[0].
#define UPDATE128 \
	VORR V7.B16, V7.B16, V21.B16; \
	ROUND(V6, V7); \
	ROUND(V5, V6); \
	ROUND(V4, V5); \
	VEOR V9.B16, V4.B16, V4.B16; \
	ROUND(V3, V4); \
	ROUND(V2, V3); \
	ROUND(V1, V2); \
	ROUND(V0, V1); \
	VEOR V8.B16, V0.B16, V0.B16; \
	ROUND(V21, V0)

// z0 = S6 ^ S1 ^ (S2 & S3) into V23, z1 = S2 ^ S5 ^ (S6 & S7) into V24.
#define Z128 \
	VAND V2.B16, V3.B16, V23.B16; \
	VEOR V6.B16, V23.B16, V23.B16; \
	VEOR V1.B16, V23.B16, V23.B16; \
	VAND V6.B16, V7.B16, V24.B16; \
	VEOR V2.B16, V24.B16, V24.B16; \
	VEOR V5.B16, V24.B16, V24.B16

#define LOAD128 \
	ADD  $64, R0, R6; \
	VLD1 (R0), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VLD1 (R6), [V4.B16, V5.B16, V6.B16, V7.B16]; \
	VEOR V20.B16, V20.B16, V20.B16

#define STORE128 \
	VST1 [V0.B16, V1.B16, V2.B16, V3.B16], (R0); \
	VST1 [V4.B16, V5.B16, V6.B16, V7.B16], (R6)

#define UPDATE256 \
	VORR V5.B16, V5.B16, V21.B16; \
	ROUND(V4, V5); \
	ROUND(V3, V4); \
	ROUND(V2, V3); \
	ROUND(V1, V2); \
	ROUND(V0, V1); \
	VEOR V8.B16, V0.B16, V0.B16; \
	ROUND(V21, V0)

// z = S1 ^ S4 ^ S5 ^ (S2 & S3) into V23.
#define Z256 \
	VAND V2.B16, V3.B16, V23.B16; \
	VEOR V1.B16, V23.B16, V23.B16; \
	VEOR V4.B16, V23.B16, V23.B16; \
	VEOR V5.B16, V23.B16, V23.B16

#define LOAD256 \
	ADD  $64, R0, R6; \
	VLD1 (R0), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	VLD1 (R6), [V4.B16, V5.B16]; \
	VEOR V20.B16, V20.B16, V20.B16

#define STORE256 \
	VST1 [V0.B16, V1.B16, V2.B16, V3.B16], (R0); \
	VST1 [V4.B16, V5.B16], (R6)

// func aegis128Absorb(s *state, src *byte, n, stride int)
TEXT ·aegis128Absorb(SB), NOSPLIT, $0-32
	MOVD s+0(FP), R0
	MOVD src+8(FP), R2
	MOVD n+16(FP), R3
	MOVD stride+24(FP), R4
	LSR  $1, R4, R5
	LOAD128
loop:
	ADD  R5, R2, R7
	VLD1 (R2), [V8.B16]
	VLD1 (R7), [V9.B16]
	UPDATE128
	ADD  R4, R2, R2
	SUBS $1, R3, R3
	BNE  loop
	STORE128
	RET

// func aegis128Enc(s *state, dst, src *byte, n, stride int)
TEXT ·aegis128Enc(SB), NOSPLIT, $0-40
	MOVD s+0(FP), R0
	MOVD dst+8(FP), R1
	MOVD src+16(FP), R2
	MOVD n+24(FP), R3
	MOVD stride+32(FP), R4
	LSR  $1, R4, R5
	LOAD128
loop:
	ADD  R5, R2, R7
	VLD1 (R2), [V8.B16]
	VLD1 (R7), [V9.B16]
	Z128
	VEOR V8.B16, V23.B16, V23.B16
	VEOR V9.B16, V24.B16, V24.B16
	ADD  R5, R1, R7
	VST1 [V23.B16], (R1)
	VST1 [V24.B16], (R7)
	UPDATE128
	ADD  R4, R2, R2
	ADD  R4, R1, R1
	SUBS $1, R3, R3
	BNE  loop
	STORE128
	RET

// func aegis128Dec(s *state, dst, src *byte, n, stride int)
TEXT ·aegis128Dec(SB), NOSPLIT, $0-40
	MOVD s+0(FP), R0
	MOVD dst+8(FP), R1
	MOVD src+16(FP), R2
	MOVD n+24(FP), R3
	MOVD stride+32(FP), R4
	LSR  $1, R4, R5
	LOAD128
loop:
	ADD  R5, R2, R7
	VLD1 (R2), [V8.B16]
	VLD1 (R7), [V9.B16]
	Z128
	VEOR V23.B16, V8.B16, V8.B16
	VEOR V24.B16, V9.B16, V9.B16
	ADD  R5, R1, R7
	VST1 [V8.B16], (R1)
	VST1 [V9.B16], (R7)
	UPDATE128
	ADD  R4, R2, R2
	ADD  R4, R1, R1
	SUBS $1, R3, R3
	BNE  loop
	STORE128
	RET

// func aegis256Absorb(s *state, src *byte, n, stride int)
TEXT ·aegis256Absorb(SB), NOSPLIT, $0-32
	MOVD s+0(FP), R0
	MOVD src+8(FP), R2
	MOVD n+16(FP), R3
	MOVD stride+24(FP), R4
	LOAD256
loop:
	VLD1 (R2), [V8.B16]
	UPDATE256
	ADD  R4, R2, R2
	SUBS $1, R3, R3
	BNE  loop
	STORE256
	RET

// func aegis256Enc(s *state, dst, src *byte, n, stride int)
TEXT ·aegis256Enc(SB), NOSPLIT, $0-40
	MOVD s+0(FP), R0
	MOVD dst+8(FP), R1
	MOVD src+16(FP), R2
	MOVD n+24(FP), R3
	MOVD stride+32(FP), R4
	LOAD256
loop:
	VLD1 (R2), [V8.B16]
	Z256
	VEOR V8.B16, V23.B16, V23.B16
	VST1 [V23.B16], (R1)
	UPDATE256
	ADD  R4, R2, R2
	ADD  R4, R1, R1
	SUBS $1, R3, R3
	BNE  loop
	STORE256
	RET

// func aegis256Dec(s *state, dst, src *byte, n, stride int)
TEXT ·aegis256Dec(SB), NOSPLIT, $0-40
	MOVD s+0(FP), R0
	MOVD dst+8(FP), R1
	MOVD src+16(FP), R2
	MOVD n+24(FP), R3
	MOVD stride+32(FP), R4
	LOAD256
loop:
	VLD1 (R2), [V8.B16]
	Z256
	VEOR V23.B16, V8.B16, V8.B16
	VST1 [V8.B16], (R1)
	UPDATE256
	ADD  R4, R2, R2
	ADD  R4, R1, R1
	SUBS $1, R3, R3
	BNE  loop
	STORE256
	RET

// func aegis128Init(s *state, m *[2]block, ctx *block)
// Ten times: S3 ^= ctx, S7 ^= ctx, Update(m[0], m[1]).
TEXT ·aegis128Init(SB), NOSPLIT, $0-24
	MOVD s+0(FP), R0
	MOVD m+8(FP), R2
	MOVD ctx+16(FP), R1
	LOAD128
	VLD1 (R1), [V25.B16]
	VLD1 (R2), [V8.B16, V9.B16]
	MOVD $10, R3
loop:
	VEOR V25.B16, V3.B16, V3.B16
	VEOR V25.B16, V7.B16, V7.B16
	UPDATE128
	SUBS $1, R3, R3
	BNE  loop
	STORE128
	RET

// func aegis256Init(s *state, m *[4]block, ctx *block)
// Four times, for each of m[0..3]: S3 ^= ctx, S5 ^= ctx, Update(m[i]).
#define INIT256(mi) \
	VEOR V25.B16, V3.B16, V3.B16; \
	VEOR V25.B16, V5.B16, V5.B16; \
	VORR mi.B16, mi.B16, V8.B16; \
	UPDATE256

TEXT ·aegis256Init(SB), NOSPLIT, $0-24
	MOVD s+0(FP), R0
	MOVD m+8(FP), R2
	MOVD ctx+16(FP), R1
	LOAD256
	VLD1 (R1), [V25.B16]
	VLD1 (R2), [V10.B16, V11.B16, V12.B16, V13.B16]
	MOVD $4, R3
loop:
	INIT256(V10)
	INIT256(V11)
	INIT256(V12)
	INIT256(V13)
	SUBS $1, R3, R3
	BNE  loop
	STORE256
	RET

#include "textflag.h"

// func intersect16(a, b []uint16, out *uint16, limit int, shuf *[256][16]byte) (k, i, j int)
//
// While both a[i:] and b[j:] hold eight values: PCMPESTRM (unsigned
// words, equal any, bit mask) sets bit n of X0 when a[i+n] is among
// b[j:j+8]; PSHUFB with shuf[mask] packs those values to the front and all
// eight lanes are stored at out[k], k advancing by the mask's population.
// Then i advances by eight when a[i+7] <= b[j+7], and j when b[j+7] <=
// a[i+7] (conditional moves: which one is unpredictable). It stops early
// once k passes limit, which sorted arrays never make it do: values out of
// order (a damaged file) cannot make it write past out[limit+7].
TEXT ·intersect16(SB), NOSPLIT, $0-96
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), R8
	MOVQ b_base+24(FP), DI
	MOVQ b_len+32(FP), R9
	MOVQ out+48(FP), R10
	MOVQ shuf+64(FP), R11
	ANDQ $-8, R8         // whole groups of eight
	ANDQ $-8, R9
	XORQ R12, R12        // i
	XORQ R13, R13        // j
	XORQ R15, R15        // k

loop:
	CMPQ R15, limit+56(FP)
	JA   done
	CMPQ R12, R8
	JAE  done
	CMPQ R13, R9
	JAE  done
	MOVOU (SI)(R12*2), X1
	MOVOU (DI)(R13*2), X2
	MOVL  $8, AX         // explicit lengths: zeros are values, not ends
	MOVL  $8, DX
	PCMPESTRM $1, X1, X2 // mask of X1's lanes found in X2, into X0
	MOVQ  X0, BX
	MOVQ  BX, CX
	SHLQ  $4, CX
	MOVOU (R11)(CX*1), X3
	PSHUFB X3, X1
	MOVOU X1, (R10)(R15*2)
	POPCNTL BX, BX
	ADDQ  BX, R15
	MOVWLZX 14(SI)(R12*2), BX // a[i+7]
	MOVWLZX 14(DI)(R13*2), CX // b[j+7]
	LEAQ  8(R12), AX
	LEAQ  8(R13), DX
	CMPL  BX, CX
	CMOVQLS AX, R12      // a[i+7] <= b[j+7]: i += 8
	CMPL  CX, BX
	CMOVQLS DX, R13      // b[j+7] <= a[i+7]: j += 8
	JMP   loop

done:
	MOVQ R15, k+72(FP)
	MOVQ R12, i+80(FP)
	MOVQ R13, j+88(FP)
	RET

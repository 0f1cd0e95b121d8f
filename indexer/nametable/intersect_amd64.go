package nametable

import "golang.org/x/sys/cpu"

// haveVec: PCMPESTRM is SSE4.2, PSHUFB SSSE3.
var haveVec = cpu.X86.HasSSE42 && cpu.X86.HasSSSE3 && cpu.X86.HasPOPCNT

// intersect16 intersects the whole groups of eight values at the start of
// a and b, writing the common values to out (which must have room for
// eight past the result, and for limit+8 values), and returns how many it
// wrote and how far into a and b it got. shuf is gatherShuffles.
//
//go:noescape
func intersect16(a, b []uint16, out *uint16, limit int, shuf *[256][16]byte) (k, i, j int)

// gatherShuffles[m] is the PSHUFB control that moves the 16-bit lanes set
// in the eight-bit mask m to the front, in order.
var gatherShuffles = func() (t [256][16]byte) {
	for m := range t {
		n := 0
		for lane := range 8 {
			if m&(1<<lane) != 0 {
				t[m][n], t[m][n+1] = byte(2*lane), byte(2*lane+1)
				n += 2
			}
		}
		for ; n < 16; n++ {
			t[m][n] = 0x80 // zero
		}
	}
	return t
}()

func intersectVec(a, b []uint16, out *[arrayMax + vecSlack]uint16) (k, i, j int) {
	return intersect16(a, b, &out[0], arrayMax, &gatherShuffles)
}

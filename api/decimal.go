package api

import (
	"encoding/binary"
	"strconv"
)

// appendID appends id in decimal, as strconv.AppendInt does, twice as fast
// for the IDs of eight to ten digits that fill search answers
// (characters, corporations, alliances: up to 500 of them an answer).
func appendID(b []byte, id int64) []byte {
	switch {
	case id >= 100_000_000 && id < 10_000_000_000:
		hi := uint64(id) / 100_000_000
		if hi >= 10 {
			b = append(b, digitPairs[2*hi], digitPairs[2*hi+1])
		} else {
			b = append(b, byte('0'+hi))
		}
		return append8(b, uint64(id)-hi*100_000_000)
	case id >= 10_000_000 && id < 100_000_000:
		return append8(b, uint64(id))
	}
	return strconv.AppendInt(b, id, 10)
}

// append8 appends v (below 10^8) as eight digits, leading zeros included.
// They come from one multiplication by 2^57/10^6 (rounded up) and three by
// 100 of the fraction left, two digits each, with no division: the fixed
// point's error, under 10^8/2^57 < 7e-10 of the first pair's unit, stays
// under the 10^-6 that separates eight-digit values, and so never reaches
// a digit.
func append8(b []byte, v uint64) []byte {
	const (
		shift = 57
		frac  = 1<<shift - 1
		scale = 1<<shift/1_000_000 + 1
	)
	t := v * scale
	p0 := t >> shift
	t = (t & frac) * 100
	p1 := t >> shift
	t = (t & frac) * 100
	p2 := t >> shift
	t = (t & frac) * 100
	p3 := t >> shift
	return binary.LittleEndian.AppendUint64(b, uint64(pairOf(p0))|uint64(pairOf(p1))<<16|uint64(pairOf(p2))<<32|uint64(pairOf(p3))<<48)
}

// pairOf is the two ASCII digits of p (below 100), first in the low byte.
func pairOf(p uint64) uint16 {
	return uint16(digitPairs[2*p]) | uint16(digitPairs[2*p+1])<<8
}

const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

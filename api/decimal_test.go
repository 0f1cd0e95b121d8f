package api

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// appendID writes what strconv.AppendInt writes, for every int64, after
// whatever the buffer holds.
func FuzzAppendID(f *testing.F) {
	for _, v := range []int64{0, 9, 9_999_999, 10_000_000, 90_000_001, 99_999_999, 100_000_000, 999_999_999, 1_000_000_000, 2_112_000_014, 9_999_999_999, 10_000_000_000, -1, math.MinInt64, math.MaxInt64} {
		f.Add(v, "[")
	}
	f.Fuzz(func(t *testing.T, v int64, prefix string) {
		if got, want := appendID([]byte(prefix), v), strconv.AppendInt([]byte(prefix), v, 10); string(got) != string(want) {
			t.Fatalf("appendID(%q, %d) = %q, want %q", prefix, v, got, want)
		}
	})
}

// Every value around each power of ten and each step of the eight-digit
// part, and a million drawn from the eight- to ten-digit range.
func TestAppendIDDigits(t *testing.T) {
	check := func(v int64) {
		if got, want := string(appendID(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("%d: %q, want %q", v, got, want)
		}
	}
	for p := int64(1); p <= 100_000_000_000; p *= 10 {
		for d := int64(-200); d <= 200; d++ {
			check(p + d)
			check(p*7 + d)
		}
	}
	for hi := int64(1); hi < 100; hi++ {
		for _, lo := range []int64{0, 1, 99, 100, 9_999, 10_000, 999_999, 1_000_000, 99_999_999} {
			check(hi*100_000_000 + lo)
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 1_000_000 {
		check(10_000_000 + rng.Int64N(9_990_000_000))
	}
}

// BenchmarkAppendIDs formats the IDs of a full answer of characters.
func BenchmarkAppendIDs(b *testing.B) {
	ids := make([]int64, 500)
	for i := range ids {
		ids[i] = 2_112_000_000 + int64(i)*7919
		if i%2 == 0 {
			ids[i] = 90_000_000 + int64(i)*7919 // the older characters' eight digits
		}
	}
	buf := make([]byte, 0, 8192)
	for _, c := range []struct {
		name string
		f    func([]byte, int64) []byte
	}{{"appendID", appendID}, {"strconv", func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				out := buf[:0]
				for _, id := range ids {
					out = c.f(append(out, ','), id)
				}
				buf = out
			}
		})
	}
}

package nametable

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// mergeIntersect is the plain two-finger intersection the others must
// agree with.
func mergeIntersect(a, b []uint16) []uint16 {
	var out []uint16
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// sortedSet returns n distinct values of 0..span-1, ascending.
func sortedSet(rng *rand.Rand, n, span int) []uint16 {
	n = min(n, span)
	var seen [bitmapWords]uint64
	out := make([]uint16, 0, n)
	for len(out) < n {
		v := uint16(rng.IntN(span))
		if seen[v>>6]&(1<<(v&63)) == 0 {
			seen[v>>6] |= 1 << (v & 63)
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// checkIntersect checks intersectArrays and each of its ways (the vector
// loop where the machine has it, marks) against mergeIntersect, and that
// marks are left clear.
func checkIntersect(t testing.TB, a, b []uint16) {
	t.Helper()
	want := mergeIntersect(a, b)
	var s blockScratch
	ways := map[string]func() int{
		"marks":       func() int { return intersectMarked(a, b, &s.arr[0], &s.marks) },
		"as walks do": func() int { return intersectArrays(a, b, &s.arr[0], &s.marks) },
	}
	if haveVec {
		ways["vector loop"] = func() int { return intersectVectors(a, b, &s.arr[0]) }
	}
	for way, intersect := range ways {
		if way == "marks" && (len(a) == 0 || len(b) == 0) {
			continue // callers do not mark nothing
		}
		if k := intersect(); !slices.Equal(s.arr[0][:k], want) {
			t.Fatalf("%s: %d values %v…, want %d %v… (a %d values, b %d)", way, k, s.arr[0][:min(k, 8)], len(want), want[:min(len(want), 8)], len(a), len(b))
		}
		if s.marks != ([bitmapWords]uint64{}) {
			t.Fatalf("%s: marks left set", way)
		}
	}
}

func TestIntersectArrays(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	sizes := []int{0, 1, 7, 8, 9, 15, 16, 17, 63, 100, 1000, 1300, 4095, 4096}
	for _, na := range sizes {
		for _, nb := range sizes {
			// Spans from dense (most values shared) to sparse (few).
			for _, span := range []int{max(na, nb, 1), 2 * max(na, nb, 1), 65536} {
				checkIntersect(t, sortedSet(rng, na, span), sortedSet(rng, nb, span))
			}
		}
	}
	all := sortedSet(rng, 4096, 4096) // 0..4095, zero included
	checkIntersect(t, all, all)
	checkIntersect(t, []uint16{0, 65535}, []uint16{0, 1, 2, 3, 4, 5, 6, 7, 65535})
	high := []uint16{65528, 65529, 65530, 65531, 65532, 65533, 65534, 65535}
	checkIntersect(t, high, high)
}

// Values out of order (a damaged table) give no meaningful intersection,
// but never a write past the output or marks left set.
func TestIntersectOutOfOrder(t *testing.T) {
	// Groups of eight that share seven values, and whose last values
	// interleave (a's 1, 3, 5, …; b's 2, 4, 6, …): the vector loop moves
	// on in a and b in turn, seven matches each time, 7,161 in all.
	var a, b []uint16
	for g := range uint16(arrayMax / 8) {
		a = append(a, 9, 9, 9, 9, 9, 9, 9, 2*g+1)
		b = append(b, 9, 9, 9, 9, 9, 9, 9, 2*g+2)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	shuffled := sortedSet(rng, 3000, 65536)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, c := range [][2][]uint16{{a, b}, {b, a}, {shuffled, shuffled}, {shuffled, a}} {
		checkBounded(t, c[0], c[1])
	}
}

// checkBounded checks that intersecting a and b, in whatever order their
// values are, writes at most an array's room, nothing past the output,
// and leaves the marks clear.
func checkBounded(t testing.TB, a, b []uint16) {
	t.Helper()
	var s blockScratch
	for i := range s.arr[1] {
		s.arr[1][i] = 0xbeef // what follows the output in memory
	}
	guard := s.arr[1]
	ways := []func() int{func() int { return intersectArrays(a, b, &s.arr[0], &s.marks) }}
	if len(a) > 0 {
		ways = append(ways, func() int { return intersectMarked(a, b, &s.arr[0], &s.marks) })
	}
	for _, intersect := range ways {
		if k := intersect(); k < 0 || k > arrayMax {
			t.Fatalf("%d values out of an output of %d", k, arrayMax)
		}
		if s.marks != ([bitmapWords]uint64{}) {
			t.Fatal("marks left set")
		}
		if s.arr[1] != guard {
			t.Fatal("written past the output")
		}
	}
}

// FuzzIntersectArrays reads two sorted sets from the input: each byte pair
// a gap to the next value, the first byte choosing the set; and the input's
// bytes as values in no order, which must not break the bounds.
func FuzzIntersectArrays(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 1, 1, 1, 2, 0, 1, 3})
	f.Add(slices.Repeat([]byte{0, 1, 1, 1}, 40))
	f.Fuzz(func(t *testing.T, in []byte) {
		var sets [2][]uint16
		var next [2]int
		for i := 0; i+2 <= len(in); i += 2 {
			s := int(in[i] & 1)
			v := next[s] + int(in[i+1]&0x3f)
			if v > 65535 || len(sets[s]) == arrayMax {
				continue
			}
			sets[s] = append(sets[s], uint16(v))
			next[s] = v + 1
		}
		checkIntersect(t, sets[0], sets[1])
		// The same bytes as values in no order, as a damaged table's.
		raw := make([]uint16, min(len(in)/2, 2*arrayMax))
		for i := range raw {
			raw[i] = uint16(in[2*i]) | uint16(in[2*i+1])<<8
		}
		checkBounded(t, raw[:len(raw)/2], raw[len(raw)/2:])
	})
}

// BenchmarkIntersectArrays times each way of intersecting two array
// containers of random values spread over a block, 64 pairs in turn:
//
//	go test -run '^$' -bench IntersectArrays ./indexer/nametable
func BenchmarkIntersectArrays(b *testing.B) {
	for _, sz := range [][2]int{{1300, 1300}, {300, 3000}, {3000, 3000}, {100, 2000}} {
		rng := rand.New(rand.NewPCG(uint64(sz[0]), uint64(sz[1])))
		var pairs [64][2][]uint16
		for i := range pairs {
			pairs[i] = [2][]uint16{sortedSet(rng, sz[0], 65536), sortedSet(rng, sz[1], 65536)}
		}
		var s blockScratch
		ways := []struct {
			name string
			f    func(a, b []uint16) int
		}{{"marks", func(a, b []uint16) int { return intersectMarked(a, b, &s.arr[0], &s.marks) }}}
		if haveVec {
			ways = append(ways, struct {
				name string
				f    func(a, b []uint16) int
			}{"vector", func(a, b []uint16) int { return intersectVectors(a, b, &s.arr[0]) }})
		}
		for _, w := range ways {
			b.Run(fmt.Sprintf("%s/%dx%d", w.name, sz[0], sz[1]), func(b *testing.B) {
				i := 0
				for b.Loop() {
					p := &pairs[i%len(pairs)]
					w.f(p[0], p[1])
					i++
				}
			})
		}
	}
}

package nametable

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// randomBitmap returns a bitmap over a few blocks whose containers are of
// every kind: sparse (arrays), dense (bitmaps) and runs.
func randomBitmap(rng *rand.Rand, blocks int) *roaring.Bitmap {
	bm := roaring.New()
	for b := 0; b < blocks; b++ {
		if rng.IntN(5) == 0 {
			continue // a block this list lacks
		}
		hi := uint32(b) << 16
		switch rng.IntN(5) {
		case 0: // sparse
			for i, n := 0, 1+rng.IntN(300); i < n; i++ {
				bm.Add(hi | uint32(rng.IntN(1<<16)))
			}
		case 1: // near the array/bitmap boundary
			for i, n := 0, 3000+rng.IntN(3000); i < n; i++ {
				bm.Add(hi | uint32(rng.IntN(1<<16)))
			}
		case 2: // dense
			for i, n := 0, 10000+rng.IntN(40000); i < n; i++ {
				bm.Add(hi | uint32(rng.IntN(1<<16)))
			}
		case 3: // runs
			for i, n := 0, 1+rng.IntN(20); i < n; i++ {
				lo := uint64(hi) | uint64(rng.IntN(1<<16))
				bm.AddRange(lo, min(lo+1+uint64(rng.IntN(5000)), uint64(hi)+1<<16))
			}
		default: // the whole block, or all but a few
			bm.AddRange(uint64(hi), uint64(hi)+1<<16)
			for i, n := 0, rng.IntN(4); i < n; i++ {
				bm.Remove(hi | uint32(rng.IntN(1<<16)))
			}
		}
	}
	bm.RunOptimize()
	return bm
}

func TestIntersectBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := new(blockScratch)
	unverified := 0 // candidates some list lacks: skipped lists, small sets
	for round := 0; round < 300; round++ {
		n := 1 + rng.IntN(5)
		bms := make([]*roaring.Bitmap, n)
		lists := make([]rlist, n)
		for i := range bms {
			bms[i] = randomBitmap(rng, 1+rng.IntN(4))
			if bms[i].IsEmpty() {
				bms[i].Add(uint32(rng.IntN(1 << 18)))
			}
			raw, err := bms[i].ToBytes()
			if err != nil {
				t.Fatal(err)
			}
			// Unaligned, as containers may be in the mapped file.
			raw = append([]byte{0}, raw...)[1:]
			if err := check(raw, 1<<18); err != nil {
				t.Fatalf("round %d: list %d: %v", round, i, err)
			}
			if !lists[i].view(raw) {
				t.Fatalf("round %d: list %d has no header", round, i)
			}
			if n := lists[i].total(); uint64(n) != bms[i].GetCardinality() {
				t.Fatalf("round %d: cardinality %d, want %d", round, n, bms[i].GetCardinality())
			}
		}
		want := roaring.FastAnd(bms...).ToArray()
		if n == 1 {
			want = bms[0].ToArray()
		}
		// A walk may start past the first ordinal; what it finds before
		// from, in from's block, its caller drops.
		from := uint32(0)
		if rng.IntN(3) == 0 {
			from = uint32(rng.IntN(1 << 18))
			want = slices.DeleteFunc(want, func(o uint32) bool { return o < from })
		}
		limit := len(want) + 1
		if rng.IntN(3) == 0 && len(want) > 0 {
			limit = 1 + rng.IntN(len(want))
		}
		var w walk
		var got []uint32
		complete := w.intersect(s, lists, from, func(o uint32) bool {
			if o < from {
				return true
			}
			// Lists that filter little may be skipped: like verification
			// in a walk, keep only what is in every list.
			for _, bm := range bms {
				if !bm.Contains(o) {
					unverified++
					return true
				}
			}
			got = append(got, o)
			return len(got) < limit
		})
		if complete != (limit > len(want)) {
			t.Fatalf("round %d: complete %v with limit %d and %d ordinals", round, complete, limit, len(want))
		}
		want = want[:min(limit, len(want))]
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("round %d (%d lists, limit %d): got %d ordinals, want %d; first difference at %d",
				round, n, limit, len(got), len(want), firstDiff(got, want))
		}
	}
	if unverified == 0 {
		t.Fatal("every candidate was in every list: the shortcuts that leave work to verification were not exercised")
	}
}

func firstDiff(a, b []uint32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// seek finds what a scan from j finds, wherever it starts looking.
func TestSeek(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 2000; round++ {
		b := make([]uint16, 1+rng.IntN(200))
		for i := range b {
			b[i] = uint16(rng.IntN(1 << 16))
		}
		slices.Sort(b)
		b = slices.Compact(b)
		j := rng.IntN(len(b))
		e := j + rng.IntN(len(b)-j)
		v := uint16(rng.IntN(1 << 16))
		if rng.IntN(2) == 0 {
			v = b[rng.IntN(len(b))]
		}
		want := j
		for want < len(b) && b[want] < v {
			want++
		}
		if got := seek(b, j, e, v); got != want {
			t.Fatalf("seek(%v, %d, %d, %d) = %d, want %d", b, j, e, v, got, want)
		}
	}
}

// The strict hash table is sized by distinct names, not entries: a set
// whose names repeat gets a table twice its distinct names, and every
// name is still found with all its ordinals.
func TestStrictIndexSizedByDistinctNames(t *testing.T) {
	var entries []Entry
	for i := range 10_000 {
		entries = append(entries, Entry{ID: int64(i), Folded: fmt.Sprintf("name %d", i%300)})
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Folded, b.Folded) })
	slots, d := strictIndex(entries)
	if len(slots) != 1024 { // 300 distinct names: the power of two at least 600
		t.Fatalf("%d slots for 300 distinct names of 10,000 entries, want 1024", len(slots))
	}
	taken := 0
	for _, v := range slots {
		if v != 0 {
			taken++
		}
	}
	if taken != 300 || len(d.keys) != 300 || len(d.list) != 10_000 {
		t.Fatalf("%d slots taken, %d duplicate groups of %d ordinals; want 300, 300, 10,000", taken, len(d.keys), len(d.list))
	}
}

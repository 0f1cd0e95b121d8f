package indexer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"gds/indexer/nametable"
)

// An idSet answers as the map of its IDs does: for IDs in it, for IDs
// beside them (consecutive IDs share hash neighbourhoods), and at the ends
// of int64.
func TestIDSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 3, 1000, 100_000} {
		var a, b []int64
		want := map[int64]bool{}
		for i := range n {
			id := 90_000_000 + int64(rng.IntN(50_000_000))
			if i%2 == 0 {
				a = append(a, id)
			} else {
				b = append(b, id)
			}
			want[id] = true
		}
		if n > 0 {
			a = append(a, math.MaxInt64, math.MinInt64, 0, -1)
			for _, id := range a[len(a)-4:] {
				want[id] = true
			}
		}
		s := newIDSet(a, b)
		if s.len() != len(want) {
			t.Fatalf("n=%d: len %d, want %d", n, s.len(), len(want))
		}
		for id := range want {
			if !s.has(id) {
				t.Fatalf("n=%d: %d missing", n, id)
			}
		}
		for range 200_000 {
			id := 90_000_000 + int64(rng.IntN(50_000_000))
			if s.has(id) != want[id] {
				t.Fatalf("n=%d: has(%d) = %v", n, id, !want[id])
			}
		}
	}
}

// ordinals finds, ascending, every ordinal of a real table whose ID is in
// the set, across the stretches it splits the table into.
func TestIDSetOrdinals(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 200_000 // three stretches of 64Ki and more
	entries := make([]nametable.Entry, n)
	for i := range entries {
		entries[i] = nametable.Entry{ID: 90_000_000 + int64(i)*3, Folded: nametable.Fold(fmt.Sprintf("pilot %x", rng.Uint64()))}
	}
	path := filepath.Join(t.TempDir(), "t.tbl")
	if err := nametable.Write(context.Background(), path, entries, nil, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := nametable.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	var ids []int64
	in := map[int64]bool{}
	for range 5000 {
		id := entries[rng.IntN(n)].ID
		ids = append(ids, id, id+1) // and IDs the table lacks
		in[id], in[id+1] = true, true
	}
	s := newIDSet(ids)
	var want []uint32
	for o := range uint32(tbl.Len()) {
		if in[tbl.ID(o)] {
			want = append(want, o)
		}
	}
	if got := s.ordinals(tbl); !slices.Equal(got, want) {
		t.Fatalf("ordinals: %d of them, want %d", len(got), len(want))
	}
	if len(want) < 4000 {
		t.Fatalf("only %d ordinals to find", len(want))
	}
}

// BenchmarkIDSet asks about every ID of a 10M-name table against a 1%
// change, as patchTables does; "map" is a plain Go map for comparison.
func BenchmarkIDSet(b *testing.B) {
	const names, changed = 10_000_000, 200_000
	rng := rand.New(rand.NewPCG(7, 8))
	ids := make([]int64, changed)
	for i := range ids {
		ids[i] = 90_000_000 + int64(rng.IntN(names))
	}
	s := newIDSet(ids)
	b.Run("idset", func(b *testing.B) {
		for b.Loop() {
			hits := 0
			for id := int64(90_000_000); id < 90_000_000+names; id++ {
				if s.has(id) {
					hits++
				}
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			hits := 0
			for id := int64(90_000_000); id < 90_000_000+names; id++ {
				if _, ok := s.ids[id]; ok {
					hits++
				}
			}
		}
	})
}

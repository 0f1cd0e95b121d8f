package nametable_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/nametable"
)

// A walk returns exactly the names its filter lets through: those the
// character may access (structures) and not hidden by an overlay's mask,
// for contains and strict alike, against a brute-force scan; a character
// with no access list gets no filter at all (callers fail closed).
func TestWalkFilters(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	words := []string{"keep", "fort", "citadel", "azbel", "kari", "otsu"}
	var entries []nametable.Entry
	for i := range 3000 {
		name := fmt.Sprintf("%s %s", words[rng.IntN(len(words))], words[rng.IntN(len(words))])
		var access []int64
		for c := int64(1); c <= 3; c++ {
			if rng.IntN(3) == 0 {
				access = append(access, c)
			}
		}
		entries = append(entries, nametable.Entry{ID: int64(1_000_000 + i), Folded: name, Access: access})
	}
	tbl := openTable(t, writeTable(t, entries))
	// Write left entries in ordinal order.
	hide := roaring.New()
	for o := range uint32(tbl.Len()) {
		if rng.IntN(4) == 0 {
			hide.Add(o)
		}
	}
	if _, ok := tbl.AccessFilter(99); ok {
		t.Fatal("a character without an access list got a filter")
	}
	for _, character := range []int64{0, 1, 2, 3} {
		f := nametable.Filter{Hide: hide}
		if character != 0 {
			var ok bool
			if f, ok = tbl.AccessFilter(character); !ok {
				t.Fatalf("character %d: no filter", character)
			}
			f.Hide = hide
		}
		allowed := func(o uint32) bool {
			if hide.Contains(o) {
				return false
			}
			return character == 0 || slices.Contains(entries[o].Access, character)
		}
		for _, text := range []string{"kari", "fort keep", "el a", "otsu otsu", "zzz"} {
			var want, wantStrict []uint32
			for o, e := range entries {
				if allowed(uint32(o)) && strings.Contains(e.Folded, text) {
					want = append(want, uint32(o))
					if e.Folded == text {
						wantStrict = append(wantStrict, uint32(o))
					}
				}
			}
			var got []uint32
			var st nametable.Stats
			tbl.Contains([]byte(text), &f, &st, func(o uint32, _ nametable.Match) bool { got = append(got, o); return true })
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("character %d, contains %q: %d ordinals, want %d", character, text, len(got), len(want))
			}
			got = got[:0]
			tbl.Strict([]byte(text), &f, &st, func(o uint32) bool { got = append(got, o); return true })
			if !slices.Equal(got, wantStrict) {
				t.Errorf("character %d, strict %q: %v, want %v", character, text, got, wantStrict)
			}
		}
	}
}

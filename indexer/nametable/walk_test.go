package nametable_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/nametable"
	"gds/snapshots/synth"
)

// A walk returns exactly the names its filter lets through: those the
// character may access (structures) and not hidden by an overlay's mask,
// for contains and strict alike, against a brute-force scan; a character
// with no access list gets no filter at all (callers fail closed).
// Character 4 may access a few names only: its list is smaller than any
// text's and the walk verifies its names without the text's lists.
func TestWalkFilters(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	words := []string{"keep", "fort", "citadel", "azbel", "kari", "otsu"}
	var entries []nametable.Entry
	access := nametable.Access{}
	for i := range 3000 {
		name := fmt.Sprintf("%s %s", words[rng.IntN(len(words))], words[rng.IntN(len(words))])
		id := int64(1_000_000 + i)
		for c := int64(1); c <= 3; c++ {
			if rng.IntN(3) == 0 {
				access[id] = append(access[id], c)
			}
		}
		if i%300 == 0 {
			access[id] = append(access[id], 4)
		}
		entries = append(entries, nametable.Entry{ID: id, Folded: name})
	}
	tbl := openTable(t, writeTable(t, entries, access))
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
	for _, character := range []int64{0, 1, 2, 3, 4} {
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
			return character == 0 || slices.Contains(access[entries[o].ID], character)
		}
		for _, text := range []string{"kari", "fort keep", "el a", "otsu otsu", "zzz", "ort", "tsu"} {
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
			tbl.Contains([]byte(text), &f, &st, 0, func(o uint32, _ nametable.Match) bool { got = append(got, o); return true })
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("character %d, contains %q: %d ordinals, want %d", character, text, len(got), len(want))
			}
			got = got[:0]
			tbl.Strict([]byte(text), &f, &st, func(o uint32, _ int64) bool { got = append(got, o); return true })
			if !slices.Equal(got, wantStrict) {
				t.Errorf("character %d, strict %q: %v, want %v", character, text, got, wantStrict)
			}
		}
	}
}

// A walk with a limit returns what a walk without one returns first, in
// the same order and classes, whichever way it gets there: contains
// matches held back while exact and prefix matches come later in the
// table (longer names rank later), the held ones dropped for them, a
// caller that stops before the limit, limits above what is held (the
// unlimited walk's way), and filters.
func TestContainsLimitMatchesUnlimited(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 150,000-name table")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	syl := []string{"ka", "ri", "ar", "i ", "sa", "to", "mi", "ra", "an", "el", "-", "é"}
	var entries []nametable.Entry
	access := nametable.Access{}
	for i := range 150_000 {
		name := synth.Syllables(rng, 2+rng.IntN(4+i%9), syl...)
		if rng.IntN(2) == 0 {
			access[int64(5_000_000+i)] = []int64{1}
		}
		entries = append(entries, nametable.Entry{ID: int64(5_000_000 + i), Folded: nametable.Fold(name)})
	}
	tbl := openTable(t, writeTable(t, entries, access))
	hide := roaring.New()
	for o := range uint32(tbl.Len()) {
		if rng.IntN(5) == 0 {
			hide.Add(o)
		}
	}
	allow, ok := tbl.AccessFilter(1)
	if !ok {
		t.Fatal("no access filter")
	}
	allowHide := allow
	allowHide.Hide = hide
	filters := map[string]*nametable.Filter{"none": nil, "hide": {Hide: hide}, "access": &allow, "access+hide": &allowHide}
	type hit struct {
		o uint32
		m nametable.Match
	}
	texts := []string{"kar", "ari", "ari ", "rakari", "saka", "a-é", "to to", "riri", "kaka", "ka", "zzz", "elel ra"}
	held, phases := 0, 0
	for name, f := range filters {
		for _, text := range texts {
			if len(text) < 3 {
				continue
			}
			var all []hit
			var st nametable.Stats
			tbl.Contains([]byte(text), f, &st, 0, func(o uint32, m nametable.Match) bool {
				all = append(all, hit{o, m})
				return true
			})
			for _, limit := range []int{1, 2, 7, 100, 500, 512, 513, 5000} {
				// The caller stops at the limit, before it, or never.
				for _, stop := range []int{limit, (limit + 1) / 2, 1 << 30} {
					var got []hit
					tbl.Contains([]byte(text), f, &st, limit, func(o uint32, m nametable.Match) bool {
						got = append(got, hit{o, m})
						return len(got) < stop
					})
					want := all[:min(stop, limit, len(all))]
					if !slices.Equal(got, want) {
						t.Fatalf("%s, %q, limit %d, caller stops at %d: %d hits, want %d; first difference at %d",
							name, text, limit, stop, len(got), len(want), firstHitDiff(got, want))
					}
					// Count the cases where a prefix match ranks first
					// but comes after contains matches in ordinal order.
					if len(want) > 0 && limit <= 512 {
						firstContains := -1
						for _, h := range all {
							if h.m == nametable.MatchContains {
								firstContains = int(h.o)
								break
							}
						}
						if firstContains >= 0 && want[len(want)-1].m != nametable.MatchContains && int(want[len(want)-1].o) > firstContains {
							phases++
						}
						if want[len(want)-1].m == nametable.MatchContains {
							held++
						}
					}
				}
			}
		}
	}
	if held == 0 || phases == 0 {
		t.Fatalf("cases with contains matches held: %d, with prefix matches past contains ones: %d; both must occur", held, phases)
	}
}

func firstHitDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

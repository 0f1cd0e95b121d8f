package nametable

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/snapshots/synth"
)

// A table searched by its four-byte gram lists (GDSTBL05) answers every
// contains search as the same table searched by its trigram lists alone
// (GDSTBL04) does, where it keeps a four-byte gram's list and where it
// leaves it out: the same ordinals, classes and order, with and without
// a limit and a filter, over several 65,536-ordinal blocks of names with
// non-ASCII letters, for texts of three bytes (trigrams either way) to
// longer than sixteen grams.
func TestQuadsAnswerAsTrigrams(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two 150,000-name tables")
	}
	rng := rand.New(rand.NewPCG(12, 12))
	syl := []string{"ka", "ri", "ar", "i ", "sa", "to", "mi", "ra", "an", "el", "-", "é", "ß", "ωa", "jun"}
	var entries []Entry
	access := Access{}
	for i := range 150_000 {
		name := synth.Syllables(rng, 2+rng.IntN(4+i%9), syl...)
		id := int64(7_000_000 + i)
		if rng.IntN(2) == 0 {
			access[id] = []int64{1}
		}
		entries = append(entries, Entry{ID: id, Folded: Fold(name)})
	}
	quads, trigrams := quadAndTrigramTables(t, entries, access)
	// Some four-byte lists are kept, some left out for a trigram's.
	kept := 0
	for i := range quads.quads.keys {
		if quads.quads.offs[2*i+1] > 0 {
			kept++
		}
	}
	if kept == 0 || kept == len(quads.quads.keys) {
		t.Fatalf("%d of %d four-byte lists kept", kept, len(quads.quads.keys))
	}
	texts := []string{"kar", "ari ", "rakari", "a-é", "ßωa", "ωajun", "to to", "zzzz", "kaka kaka", "rijun sa"}
	for len(texts) < 150 {
		r := []rune(string(quads.Name(uint32(rng.IntN(quads.Len())))))
		if len(r) < 3 {
			continue
		}
		l := 3 + rng.IntN(min(len(r)-2, 30))
		at := rng.IntN(len(r) - l + 1)
		texts = append(texts, string(r[at:at+l]))
	}
	hide := roaring.New()
	for o := range uint32(quads.Len()) {
		if rng.IntN(5) == 0 {
			hide.Add(o)
		}
	}
	type hit struct {
		o uint32
		m Match
	}
	walk := func(tbl *Table, text string, limit int, hidden bool) []hit {
		var f *Filter
		if hidden {
			f = &Filter{Hide: hide}
		}
		var hits []hit
		tbl.Contains([]byte(text), f, &Stats{}, limit, func(o uint32, m Match) bool {
			hits = append(hits, hit{o, m})
			return limit <= 0 || len(hits) < limit
		})
		return hits
	}
	found := 0
	for _, text := range texts {
		if len(text) < 3 {
			continue
		}
		for _, limit := range []int{1, 7, 500, 0} {
			for _, hidden := range []bool{false, true} {
				got, want := walk(quads, text, limit, hidden), walk(trigrams, text, limit, hidden)
				if !slices.Equal(got, want) {
					t.Fatalf("%q limit %d hidden %v: %d hits, %d by trigrams", text, limit, hidden, len(got), len(want))
				}
				found += len(got)
			}
		}
	}
	if found == 0 {
		t.Fatal("no text matched")
	}
}

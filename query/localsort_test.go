package query

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortLocal: sortLocal orders corporations as sorting them whole by
// count, name and ID does, over names that tie in their first 16 bytes,
// are prefixes of each other, empty, non-ASCII or hold zero bytes.
func TestSortLocal(t *testing.T) {
	stems := []string{"", "a", "A", "ab", "ab\x00", "Abyssal Lords", "Abyssal Lords Of", "Abyssal Lords Of Doom",
		"Abyssal Lords Of Dread", "Zz", "Ünïcode", "Ünïcode Corp", "\xff\xfe"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		corps := make([]LocalCorporation, rng.IntN(60))
		for i := range corps {
			name := stems[rng.IntN(len(stems))]
			if rng.IntN(3) == 0 {
				name += strings.Repeat("x", rng.IntN(20))
			}
			corps[i] = LocalCorporation{CorporationID: int64(rng.IntN(40)), Name: name, Count: 1 + rng.IntN(3)}
		}
		compare := func(a, b LocalCorporation) int {
			return byCount(a.Count, b.Count, a.Name, b.Name, a.CorporationID, b.CorporationID)
		}
		want := slices.Clone(corps)
		slices.SortStableFunc(want, compare)
		sortLocal(corps, func(c *LocalCorporation) uint32 { return byCountRank(c.Count) },
			func(c *LocalCorporation) string { return c.Name }, compare)
		if !slices.Equal(corps, want) {
			t.Fatalf("round %d: %v, want %v", round, corps, want)
		}
	}
}

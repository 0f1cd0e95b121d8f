package query

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortLocal: sortLocal orders corporations as sorting them whole by
// count, name and ID does, over names that tie in their first bytes, are
// prefixes of each other, empty, non-ASCII or hold zero bytes, in lists
// short, long and too long for its keys.
func TestSortLocal(t *testing.T) {
	stems := []string{"", "a", "A", "ab", "ab\x00", "Abyssal Lords", "Abyssal Lords Of", "Abyssal Lords Of Doom",
		"Abyssal Lords Of Dread", "Zz", "Ünïcode", "Ünïcode Corp", "\xff\xfe"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 201 {
		size := rng.IntN(60)
		if round%5 == 1 { // sorted by integer keys, not slices.Sort
			size = 64 + rng.IntN(3000)
		}
		if round == 200 {
			size = maxSortKeyed + 100
		}
		corps := make([]LocalCorporation, size)
		for i := range corps {
			name := stems[rng.IntN(len(stems))]
			if rng.IntN(3) == 0 {
				name += strings.Repeat("x", rng.IntN(20))
			}
			corps[i] = LocalCorporation{CorporationID: int64(rng.IntN(40)), Name: name, Count: 1 + rng.IntN(3)}
		}
		if round%2 == 0 { // all of one count: the order by name alone
			for i := range corps {
				corps[i].Count = 1
			}
		}
		compare := func(a, b *LocalCorporation) int {
			return byCount(a.Count, b.Count, a.Name, b.Name, a.CorporationID, b.CorporationID)
		}
		want := slices.Clone(corps)
		slices.SortStableFunc(want, func(a, b LocalCorporation) int { return compare(&a, &b) })
		sortLocal(corps, func(c *LocalCorporation) uint32 { return byCountRank(c.Count) },
			func(c *LocalCorporation) string { return c.Name }, compare)
		if !slices.Equal(corps, want) {
			t.Fatalf("round %d: %v, want %v", round, corps, want)
		}
	}
}

// TestRadixSort: radixSort orders signed and unsigned keys, few and
// many, spread and sharing bytes, as slices.Sort does, and radixSortFrom
// keys whose low bytes are in order already.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 100 {
		n := rng.IntN(3000)
		signed, unsigned := make([]int64, n), make([]uint64, n)
		for i := range n {
			v := rng.Uint64()
			switch round % 4 {
			case 1:
				v = 90_000_000 + v%2_000_000 // IDs: their high bytes shared
			case 2:
				v %= 5 // many repeats
			}
			signed[i], unsigned[i] = int64(v), v
		}
		wantSigned, wantUnsigned := slices.Clone(signed), slices.Clone(unsigned)
		slices.Sort(wantSigned)
		slices.Sort(wantUnsigned)
		radixSort(signed, make([]int64, n))
		radixSort(unsigned, make([]uint64, n))
		if !slices.Equal(signed, wantSigned) || !slices.Equal(unsigned, wantUnsigned) {
			t.Fatalf("round %d: %d keys out of order", round, n)
		}
		// Keys whose low bytes are their place in the list, as sortLocal
		// makes them: radixSortFrom skips those bytes.
		from := 1 + round%4
		unsigned = unsigned[:min(n, 1<<(8*from))] // places fit in the low bytes
		for i := range unsigned {
			v := rng.Uint64() << (8 * from)
			if round%3 == 0 {
				v = (v >> 60) << (8 * from) // many equal high bytes
			}
			unsigned[i] = v | uint64(i)
		}
		want := slices.Clone(unsigned)
		slices.Sort(want)
		radixSortFrom(unsigned, make([]uint64, len(unsigned)), from)
		if !slices.Equal(unsigned, want) {
			t.Fatalf("round %d: %d keys out of order from byte %d", round, len(unsigned), from)
		}
	}
}

// BenchmarkSortLocal sorts a local's thousand pilots by name and their
// corporations by count and name, as Local does.
//
//	go test -run '^$' -bench SortLocal ./query
func BenchmarkSortLocal(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	syllables := []string{"ka", "ri", "to", "an", "el", "mo", "su", "va", "ne", "dor", "ath", "ul"}
	name := func() string {
		var sb strings.Builder
		for w := range 2 + rng.IntN(2) {
			if w > 0 {
				sb.WriteByte(' ')
			}
			for range 2 + rng.IntN(3) {
				sb.WriteString(syllables[rng.IntN(len(syllables))])
			}
		}
		return sb.String()
	}
	chars, corps := make([]LocalCharacter, 1000), make([]LocalCorporation, 900)
	for i := range chars {
		chars[i] = LocalCharacter{CharacterID: 90_000_000 + rng.Int64N(2_000_000), Name: name()}
	}
	for i := range corps {
		corps[i] = LocalCorporation{CorporationID: 98_000_000 + rng.Int64N(1_000_000), Name: name(), Count: 1 + rng.IntN(3)}
	}
	c, k := slices.Clone(chars), slices.Clone(corps)
	for b.Loop() {
		copy(c, chars)
		copy(k, corps)
		sortCharacters(c)
		sortCorporations(k)
	}
}

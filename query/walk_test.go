package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gds/indexer/nametable"
	"gds/snapshots/synth"
)

// syllables returns a maker of random words of least to least+more-1
// syllables drawn from syl by rng.
func syllables(rng *rand.Rand, least, more int, syl ...string) func() string {
	return func() string { return synth.Syllables(rng, least+rng.IntN(more), syl...) }
}

// tableOf writes entries into a name table and maps it until tb ends.
func tableOf(tb testing.TB, entries []nametable.Entry) *nametable.Table {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "t.tbl")
	if err := nametable.Write(context.Background(), path, entries, nil, nil); err != nil {
		tb.Fatal(err)
	}
	tbl, err := nametable.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tbl.Close() })
	return tbl
}

// TestContainsManyBlocks checks contains against brute force on a table of
// several 65,536-ordinal blocks, with names that make posting lists of
// every container kind, and limits that stop the walk mid-block.
func TestContainsManyBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 200,000-name table")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	word := syllables(rng, 1, 3, "ka", "ri", "ki", "jun", "sa", "to", "mi", "ra", "an", "el", "o'", "-", " ", "ß", "é", "σ")
	const n = 200_000
	entries := make([]nametable.Entry, n)
	names := make([]string, n)
	for i := range entries {
		var name string
		switch rng.IntN(4) {
		case 0: // long runs of ordinals sharing trigrams
			name = fmt.Sprintf("pilot %06d", i)
		default:
			name = word() + " " + word()
			if rng.IntN(3) == 0 {
				name += " " + word()
			}
		}
		name = nametable.Fold(name)
		names[i] = name
		entries[i] = nametable.Entry{ID: int64(1_000_000 + i), Folded: name}
	}
	tbl := tableOf(t, entries)

	texts := []string{"pil", "pilot 0", "ot 1999", "kari", "ri ki", "jun sa", "o'ka", "-ri", "ssé", "kaka kaka", "a k", "zzz", "ilot 12345"}
	// Long texts have more trigrams than a walk intersects.
	byLen := slices.Clone(names)
	slices.SortFunc(byLen, func(a, b string) int { return len(b) - len(a) })
	texts = append(texts, byLen[:5]...)
	for len(texts) < 120 {
		r := []rune(names[rng.IntN(n)])
		l := 3 + rng.IntN(8)
		if l > len(r) {
			continue
		}
		at := rng.IntN(len(r) - l + 1)
		texts = append(texts, string(r[at:at+l]))
	}
	byID := make(map[int64]string, len(names))
	for i, name := range names {
		byID[int64(1_000_000+i)] = name
	}
	for _, text := range texts {
		all := bruteRanked(byID, text)
		for _, limit := range []int{MaxResults, 7, 100_000} {
			var stats Stats
			w := walker{t: tbl, text: []byte(text), limit: limit, stats: &stats}
			w.contains()
			got := w.ids()
			want := all[:min(limit, len(all))]
			if !slices.Equal(got, want) {
				t.Fatalf("%q limit %d: got %d IDs, want %d (%d match)", text, limit, len(got), len(want), len(all))
			}
		}
	}
}

// TestMergeIDs checks that merging the walks of a base table and an
// overlay (disjoint IDs) ranks as one walk over all names would.
func TestMergeIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	syl := []string{"ka", "ri", "ki", "jun", "sa", "to", "é", "σ", " "}
	names := map[int64]string{}
	var ea, eb []nametable.Entry
	for i := 0; i < 4000; i++ {
		name := strings.TrimSpace(synth.Syllables(rng, 2+rng.IntN(5), syl...))
		if len(name) < 3 {
			continue
		}
		id := int64(1 + rng.IntN(1_000_000))
		if _, dup := names[id]; dup {
			continue
		}
		names[id] = name
		if rng.IntN(4) == 0 {
			eb = append(eb, nametable.Entry{ID: id, Folded: name})
		} else {
			ea = append(ea, nametable.Entry{ID: id, Folded: name})
		}
	}
	ta, tb := tableOf(t, ea), tableOf(t, eb)
	for _, text := range []string{"kar", "ri ki", "jun", "saka", "σka", "éto", "kaka"} {
		all := bruteRanked(names, text)
		for _, limit := range []int{MaxResults, 20} {
			var stats Stats
			wa := walker{t: ta, text: []byte(text), limit: limit, stats: &stats}
			wb := walker{t: tb, text: []byte(text), limit: limit, stats: &stats}
			wa.contains()
			wb.contains()
			got := mergeIDs(&wa, &wb, limit)
			want := all[:min(limit, len(all))]
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("%q limit %d: got %v, want %v", text, limit, got, want)
			}
		}
	}
}

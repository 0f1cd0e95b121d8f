package query

import (
	"math/rand/v2"
	"testing"

	"gds/indexer/nametable"
)

// BenchmarkWalkBlocks measures contains walks over a table of 500,000
// names (eight 65,536-ordinal blocks) written directly, without a
// generation, where the hard case of a trigram index is common: one name
// in eight is "kiri kirjuun" with more words or without, so texts made of
// those words have tens of thousands of names holding every trigram of
// their parts, and few holding the text.
//
//	go test -run '^$' -bench WalkBlocks -benchmem ./query
func BenchmarkWalkBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 11))
	word := syllables(rng, 2, 2, "ka", "ri", "ki", "jun", "sa", "to", "mi", "ra", "an", "el", "no", "ha", "ru", "ko", "da", "i")
	const n = 500_000
	entries := make([]nametable.Entry, n)
	for i := range entries {
		var name string
		switch r := rng.IntN(8); {
		case r == 0 && rng.IntN(2000) == 0:
			name = "kiri kirjuun s" + word()
		case r == 0:
			name = "kiri kirjuun"
			if rng.IntN(2) == 0 { // a third word that never starts with s
				name += " x" + word()
				if rng.IntN(2) == 0 {
					name += " " + word()
				}
			}
		case r == 1:
			name = word() + " " + "sato" + word()
		default:
			name = word() + " " + word()
		}
		entries[i] = nametable.Entry{ID: int64(i + 1), Folded: name}
	}
	t := tableOf(b, entries)
	for _, c := range []struct{ name, text string }{
		{"rare3words", "kiri kirjuun s"}, // all trigrams common, few names
		{"rare2words", "kirjuun sato"},   // two common words, no name
		{"common", "iri kirj"},           // many names: the cap stops the walk
		{"short", "sato"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var stats Stats
			hits := 0
			for b.Loop() {
				w := walker{t: t, text: []byte(c.text), limit: MaxResults, stats: &stats}
				w.contains()
				hits += len(w.hits)
			}
			b.ReportMetric(float64(stats.Candidates)/float64(b.N), "candidates/op")
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}

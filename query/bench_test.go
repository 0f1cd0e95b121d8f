package query_test

import (
	"context"
	"strings"
	"testing"

	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
	"gds/snapshots/synth"
)

// Micro-benchmarks of the search hot paths over a small real generation:
// 50,000 generated characters built by the indexer (10–20 s of setup
// per top-level benchmark). They only run with -bench:
//
//	go test -run '^$' -bench . -benchmem ./query
//	go test -run '^$' -bench Contains -cpuprofile cpu.out ./query
//
// The side-by-side benchmark against PostgreSQL is ./query/bench (make
// bench-quick).

const benchCharacters = 50_000

// benchSearcher generates the characters, builds a generation and returns
// a Searcher over it with the character names.
func benchSearcher(b *testing.B) (*query.Searcher, []string) {
	b.Helper()
	snap := indexertest.Generated(b, synth.Config{
		Characters: benchCharacters, Corporations: 1000, Alliances: 50, Structures: 200, Seed: 7,
	})
	var names []string
	err := snap.Each(snapshots.Characters, func(rec snapshots.Record, _ snapshots.Line) error {
		if len(names) < 4096 {
			names = append(names, rec.(snapshots.Named).DisplayName())
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	m := indexertest.Manager(b, snap.Dir)
	return query.New(m), names
}

func benchSearch(b *testing.B, s *query.Searcher, texts []string, strict bool) {
	b.Helper()
	ctx := context.Background()
	cats := []snapshots.Category{snapshots.CategoryCharacter}
	hits, cands, i := 0, 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := s.Search(ctx, query.Request{Text: texts[i%len(texts)], Strict: strict, Categories: cats})
		if err != nil {
			b.Fatal(err)
		}
		hits += len(res.IDs[snapshots.CategoryCharacter])
		cands += res.Stats.Candidates
		i++
	}
	b.ReportMetric(float64(hits)/float64(max(i, 1)), "hits/op")
	b.ReportMetric(float64(cands)/float64(max(i, 1)), "candidates/op")
}

// BenchmarkContains: very common 3-letter texts (the 500 cap stops the
// walk early), 5-letter texts from real names, texts with punctuation and
// spaces, texts that match nothing, and rare combinations of common words
// (one name's first word and another's last: every trigram is common, few
// or no names have both; the hard case of a trigram index).
func BenchmarkContains(b *testing.B) {
	s, names := benchSearcher(b)
	var five, rare []string
	for i, n := range names {
		r := []rune(n)
		if len(r) >= 8 && len(five) < 256 {
			five = append(five, string(r[2:7]))
		}
		first, _, ok1 := strings.Cut(n, " ")
		_, last, ok2 := strings.Cut(names[(i*7919+13)%len(names)], " ")
		if ok1 && ok2 && len(rare) < 256 && !strings.Contains(last, " ") {
			rare = append(rare, first+" "+last)
		}
	}
	cases := []struct {
		name  string
		texts []string
	}{
		{"common3", []string{"ani", "ell", "the", "ara"}},
		{"letters5", five},
		{"punct", []string{"O'm", "p An", "-Ka"}},
		{"nomatch5", []string{"qzxvk", "jjjwq", "xqzpt"}},
		{"rare", rare},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { benchSearch(b, s, c.texts, false) })
	}
}

// BenchmarkStrict: whole names that exist (with changed case) and one
// that does not.
func BenchmarkStrict(b *testing.B) {
	s, names := benchSearcher(b)
	whole := make([]string, 0, 256)
	for _, n := range names[:min(256, len(names))] {
		whole = append(whole, n)
	}
	b.Run("hit", func(b *testing.B) { benchSearch(b, s, whole, true) })
	b.Run("miss", func(b *testing.B) { benchSearch(b, s, []string{"Nobody Byth Atname"}, true) })
}

// BenchmarkSample searches the committed sample snapshot (what `make run`
// serves) across all public categories, as a user's first searches would.
func BenchmarkSample(b *testing.B) {
	s := query.New(indexertest.Manager(b, "../snapshots/sample"))
	all := []snapshots.Category{
		snapshots.CategoryAgent, snapshots.CategoryAlliance, snapshots.CategoryCharacter,
		snapshots.CategoryConstellation, snapshots.CategoryCorporation, snapshots.CategoryFaction,
		snapshots.CategoryInventoryType, snapshots.CategoryRegion, snapshots.CategorySolarSystem,
		snapshots.CategoryStation,
	}
	for _, c := range []struct {
		name   string
		texts  []string
		strict bool
	}{
		{"contains", []string{"jita", "caldari", "navy", "ani", "trit", "O'm"}, false},
		{"strict", []string{"Jita", "Tritanium", "Caldari Navy", "The Forge"}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Search(ctx, query.Request{Text: c.texts[i%len(c.texts)], Strict: c.strict, Categories: all}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkNames resolves IDs to names as POST /universe/names does: 20
// characters an operation, each a record-store lookup and a decode.
func BenchmarkNames(b *testing.B) {
	s, names := benchSearcher(b)
	ctx := context.Background()
	var ids []int64
	for _, n := range names {
		res, err := s.Search(ctx, query.Request{Text: n, Strict: true, Categories: []snapshots.Category{snapshots.CategoryCharacter}})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, res.IDs[snapshots.CategoryCharacter]...)
	}
	if len(ids) < 20 {
		b.Fatalf("only %d character IDs", len(ids))
	}
	v, err := s.View()
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		at := i % (len(ids) - 20)
		found, missing := v.Names(ids[at:at+20], "en")
		if len(found) != 20 || len(missing) != 0 {
			b.Fatalf("resolved %d of 20 (missing %v)", len(found), missing)
		}
		i += 20
	}
}

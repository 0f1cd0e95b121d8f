package analyst

import (
	"context"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots"
	"gds/snapshots/synth"
)

// A pattern *lit* or lit* read whole from the list that holds exactly
// its matches (exactPattern) matches the same ordinals as the walk that
// verifies every candidate (walkPattern): on the characters' base table
// and, after an incremental build that renames and removes names, on the
// delta and the base it hides names of, for literals of three bytes, of
// four (with the four-byte list kept and left out), with letters of two
// bytes and names with a newline, which no pattern matches.
func TestExactPatternsMatchWalks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two generations of 60,000 characters")
	}
	syl := []string{"ka", "ri", "ar", "i ", "sa", "to", "mi", "ra", "an", "el", "-", "é", "ß", "ωa", "jun", "Ka", "İ"}
	name := func(i int) string {
		rng := rand.New(rand.NewPCG(uint64(i), 3))
		nm := synth.Syllables(rng, 1+rng.IntN(6), syl...)
		if i%499 == 0 {
			nm += "\nari"
		}
		return nm
	}
	m, err := indexer.Open(indexer.Options{DataDir: filepath.Join(t.TempDir(), "data"), Logger: zerolog.New(io.Discard), MaxIncrementalShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	rng := rand.New(rand.NewPCG(40, 2))
	for gen := range 2 {
		recs := indexertest.Records{}
		for i := range 60_000 {
			nm := name(i)
			if gen > 0 && i%41 == 0 {
				continue // removed
			}
			if gen > 0 && i%31 == 0 {
				nm = name(-i) + " ka"
			}
			recs[snapshots.Characters] = append(recs[snapshots.Characters],
				&snapshots.Character{Entity: indexertest.Named(90000000+int64(i), nm), CorporationID: 98000001})
		}
		res := indexertest.Build(t, m, indexer.BuildRequest{Snapshot: indexertest.Snapshot(t, recs), Trigger: "test"})
		if gen == 1 && !res.Incremental {
			t.Fatal("second build not incremental: no delta hides base names")
		}
		g := m.Acquire()
		tvs := tableViews(g, []snapshots.Category{snapshots.CategoryCharacter})
		if gen == 1 && (len(tvs) != 2 || tvs[1].hide == nil || tvs[1].hide.IsEmpty()) {
			g.Release()
			t.Fatal("no delta hides base names")
		}
		compareExactPatterns(t, rng, tvs)
		g.Release()
	}
}

// compareExactPatterns compares exactPattern with walkPattern on tvs for
// literals taken from their names.
func compareExactPatterns(t *testing.T, rng *rand.Rand, tvs []tableView) {
	t.Helper()
	for _, tv := range tvs {
		lits := []string{"ari", "kar", "ωa", "ßωa", "é-é", "i k", "ar\n", "zzz", "zzzz"}
		for len(lits) < 250 {
			r := []rune(string(tv.t.Name(uint32(rng.IntN(tv.t.Len())))))
			l := 1 + rng.IntN(4)
			if len(r) < l {
				continue
			}
			at := rng.IntN(len(r) - l + 1)
			lits = append(lits, string(r[at:at+l]))
		}
		var exact, kept, dropped int
		for _, lit := range lits {
			for _, pat := range []string{"*" + lit + "*", lit + "*"} {
				g := compileGlob(pat)
				got, ok := tv.exactPattern(g)
				if _, quad := tv.t.ContainsSet([]byte(lit)); len(lit) == 4 && pat[0] == '*' {
					if quad {
						kept++
					} else {
						dropped++
					}
				}
				if !ok {
					continue
				}
				exact++
				want, err := tv.walkPattern(context.Background(), g)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equals(want) {
					t.Fatalf("%q: %d ordinals from the exact list, %d from the walk", pat, got.GetCardinality(), want.GetCardinality())
				}
			}
		}
		if exact == 0 || kept == 0 || dropped == 0 || tv.t.LineBreaks().IsEmpty() {
			t.Fatalf("%d exact patterns, %d four-byte literals with their list kept, %d left out, %d names with a newline: want some of each",
				exact, kept, dropped, tv.t.LineBreaks().GetCardinality())
		}
	}
}

package nametable_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"gds/indexer/nametable"
	"gds/indexer/pace"
	"gds/snapshots/synth"
)

// Exact finds every ordinal of a name, however many names are equal, in
// ascending order, against a brute-force scan of the table, for every
// name it holds and a few it does not.
func TestExactFindsEveryDuplicate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var entries []nametable.Entry
	names := []string{"hara tanaka", "solene dupont", "otsu", "unique one", "søren núñez"}
	for i := range 5000 {
		name := names[rng.IntN(len(names))]
		if rng.IntN(3) == 0 {
			name = fmt.Sprintf("name %d", rng.IntN(2000)) // some repeat, most do not
		}
		entries = append(entries, nametable.Entry{ID: int64(90000000 + i), Folded: name})
	}
	tbl := openTable(t, writeTable(t, entries, nil))
	texts := append(slices.Clone(names), "name 7", "name 1999", "missing", "name")
	for o := range uint32(tbl.Len()) { // every name of the table, shared or not
		texts = append(texts, string(tbl.Name(o)))
	}
	slices.Sort(texts)
	texts = slices.Compact(texts)
	for _, text := range texts {
		var want []uint32
		for o := range uint32(tbl.Len()) {
			if string(tbl.Name(o)) == text {
				want = append(want, o)
			}
		}
		var got []uint32
		tbl.Exact([]byte(text), func(o uint32, id int64) bool {
			if id != tbl.ID(o) {
				t.Errorf("Exact(%q): ordinal %d with ID %d, its cell says %d", text, o, id, tbl.ID(o))
			}
			got = append(got, o)
			return true
		})
		if !slices.Equal(got, want) {
			t.Errorf("Exact(%q) = %d ordinals, want %d (%v / %v)", text, len(got), len(want), head(got), head(want))
		}
		if len(want) > 2 { // stopping early stops
			n := 0
			tbl.Exact([]byte(text), func(uint32, int64) bool { n++; return n < 2 })
			if n != 2 {
				t.Errorf("Exact(%q) went on after fn said stop (%d calls)", text, n)
			}
		}
	}
}

func head(s []uint32) []uint32 { return s[:min(len(s), 5)] }

// Repeats names every ordinal whose name a lower ordinal has, and no
// other, against a scan of the table.
func TestRepeatsAreLaterNamesakes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 5))
	var entries []nametable.Entry
	for i := range 3000 {
		entries = append(entries, nametable.Entry{ID: int64(90000000 + i), Folded: fmt.Sprintf("pilot %d", rng.IntN(1500))})
	}
	tbl := openTable(t, writeTable(t, entries, nil))
	var want []uint32
	first := map[string]bool{}
	for o := range uint32(tbl.Len()) {
		if name := string(tbl.Name(o)); first[name] {
			want = append(want, o)
		} else {
			first[name] = true
		}
	}
	var got []uint32
	if !tbl.Repeats(func(o uint32) { got = append(got, o) }) {
		t.Fatal("a table with a duplicate-name index cannot tell its repeats")
	}
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("Repeats: %d ordinals %v, want %d %v", len(got), head(got), len(want), head(want))
	}
}

// A table Load read into memory answers as the same file mapped by Open,
// and outlives another table loaded from the same file (one shared copy).
func TestLoadAnswersAsOpen(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	syl := []string{"ka", "ri", "jun", "an", "el", "tha", "mo", "ve", "sa", "ør"}
	var entries []nametable.Entry
	for i := range 20_000 {
		name := synth.Syllables(rng, 2+rng.IntN(5), syl...)
		entries = append(entries, nametable.Entry{ID: int64(90000000 + i), Folded: name + " " + syl[rng.IntN(len(syl))]})
	}
	path := writeTable(t, entries, nil)
	mapped := openTable(t, path)
	loaded, err := nametable.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	second, err := nametable.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	answers := func(tbl *nametable.Table, text string) []string {
		var out []string
		var st nametable.Stats
		tbl.Contains([]byte(text), nil, &st, 0, func(o uint32, m nametable.Match) bool {
			out = append(out, fmt.Sprintf("%d:%d:%s", m, tbl.ID(o), tbl.Name(o)))
			return true
		})
		tbl.Exact([]byte(text), func(_ uint32, id int64) bool { out = append(out, fmt.Sprint("=", id)); return true })
		return out
	}
	found := 0
	for _, text := range []string{"kari", "jun ", "ørsa", "thamo an", "zzz", "ka ri", "mo ve"} {
		want, got := answers(mapped, text), answers(loaded, text)
		if !slices.Equal(got, want) {
			t.Errorf("%q: loaded table answers %d, mapped %d", text, len(got), len(want))
		}
		found += len(want)
	}
	if found == 0 {
		t.Fatal("no text found anything: the comparison proves nothing")
	}
	if _, err := nametable.Load(filepath.Join(t.TempDir(), "missing.tbl")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

// writeTable writes entries to a table file of the test's and returns its
// path.
func writeTable(t *testing.T, entries []nametable.Entry, access nametable.Access) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.tbl")
	if err := nametable.Write(context.Background(), path, entries, access, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// openTable maps the table at path until the test ends.
func openTable(t *testing.T, path string) *nametable.Table {
	t.Helper()
	tbl, err := nametable.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// Write counts its names once a step in its context's work count, the
// progress a build shows while a large table is written.
func TestWriteCountsItsSteps(t *testing.T) {
	var entries []nametable.Entry
	for i := range 2000 {
		entries = append(entries, nametable.Entry{ID: int64(90000000 + i), Folded: fmt.Sprintf("pilot %d", i%700)})
	}
	var work atomic.Int64
	path := filepath.Join(t.TempDir(), "t.tbl")
	if err := nametable.Write(pace.WithWork(context.Background(), &work), path, entries, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := work.Load(), int64(nametable.WriteSteps*len(entries)); got != want {
		t.Fatalf("counted %d units of work, want %d", got, want)
	}
}

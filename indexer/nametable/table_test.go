package nametable_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"gds/indexer/nametable"
)

// Exact finds every ordinal of a name, however many names are equal, in
// ascending order, against a brute-force scan of the table.
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
	path := filepath.Join(t.TempDir(), "t.tbl")
	if err := nametable.Write(path, entries, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := nametable.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	texts := append(slices.Clone(names), "name 7", "name 1999", "missing", "name")
	for _, text := range texts {
		var want []uint32
		for o := range uint32(tbl.Len()) {
			if string(tbl.Name(o)) == text {
				want = append(want, o)
			}
		}
		var got []uint32
		tbl.Exact([]byte(text), func(o uint32) bool { got = append(got, o); return true })
		if !slices.Equal(got, want) {
			t.Errorf("Exact(%q) = %d ordinals, want %d (%v / %v)", text, len(got), len(want), head(got), head(want))
		}
		if len(want) > 2 { // stopping early stops
			n := 0
			tbl.Exact([]byte(text), func(uint32) bool { n++; return n < 2 })
			if n != 2 {
				t.Errorf("Exact(%q) went on after fn said stop (%d calls)", text, n)
			}
		}
	}
}

func head(s []uint32) []uint32 { return s[:min(len(s), 5)] }

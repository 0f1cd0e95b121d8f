package nametable

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A table keeps each name's ID and name in a cell, with four-byte gram
// lists and its namesakes' IDs (GDSTBL06), when the IDs fit a uint32 from
// the smallest, and apart (GDSTBL02) when they do not; tables written as
// GDSTBL05 (no namesakes' IDs), GDSTBL04 (cells, trigram lists only),
// GDSTBL03 (IDs beside the names' offsets) or GDSTBL02 before are read
// alike. Every ordinal gives the same ID and name, and searches the same
// ordinals and IDs, whichever way.
func TestLayoutsReadAlike(t *testing.T) {
	words := []string{"kiri", "otsu", "azbel", "sato", "kirjuun", "x", "jita ", "Ωmega", "ßü"}
	for _, c := range []struct {
		name string
		base int64
		step int64
	}{{"narrow", 90000000, 7}, {"wide", 1 << 20, math.MaxUint32 / 100}} {
		t.Run(c.name, func(t *testing.T) {
			var entries []Entry
			for i := range 500 {
				name := fmt.Sprintf("%s%s", words[i%len(words)], words[i*3%len(words)])
				if i%100 == 99 {
					name = "ωωωωωωωωω" // nine runes in eighteen bytes, among names of nine letters
				}
				entries = append(entries, Entry{ID: c.base + int64(i)*c.step, Folded: Fold(name)})
			}
			dir := t.TempDir()
			write := func(layout string) *Table {
				writeLayout = layout
				defer func() { writeLayout = "" }()
				path := filepath.Join(dir, layout+".tbl")
				if err := Write(context.Background(), path, slices.Clone(entries), nil, nil); err != nil {
					t.Fatal(err)
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				want := layout
				switch {
				case c.name == "wide":
					want = tableMagicV2
				case layout == "":
					want = tableMagicV6
				}
				if string(raw[:8]) != want {
					t.Fatalf("%s written as %q, want %q", layout, raw[:8], want)
				}
				tbl, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tbl.Close() })
				return tbl
			}
			a, v5, v4, b, v2 := write(""), write(tableMagicV5), write(tableMagicV4), write(tableMagicV3), write(tableMagicV2)
			narrow := c.name == "narrow"
			if a.cells != narrow || a.hasQuad != narrow || v4.cells != narrow || v4.hasQuad || (b.recs != nil) != narrow || v2.recs != nil || v2.cells || v2.hasQuad {
				t.Fatalf("cells %v, quads %v, GDSTBL04 cells %v, recs %v, apart %v", a.cells, a.hasQuad, v4.cells, b.recs != nil, v2.recs == nil)
			}
			if (a.dupIDs != nil) != narrow || v5.dupIDs != nil || v5.hasQuad != narrow {
				t.Fatalf("namesakes' IDs %v, GDSTBL05 namesakes' IDs %v", a.dupIDs != nil, v5.dupIDs != nil)
			}
			if c.name == "narrow" && len(a.cl.overOrd) == 0 {
				t.Fatal("no name overflows its cell")
			}
			ids := map[int64]bool{}
			for o := range uint32(a.Len()) {
				for _, other := range []*Table{v5, v4, b, v2} {
					if a.ID(o) != other.ID(o) || string(a.Name(o)) != string(other.Name(o)) {
						t.Fatalf("ordinal %d: %d %q, older layout %d %q", o, a.ID(o), a.Name(o), other.ID(o), other.Name(o))
					}
				}
				ids[a.ID(o)] = true
			}
			for _, e := range entries {
				if !ids[e.ID] {
					t.Fatalf("ID %d missing", e.ID)
				}
			}
			for _, text := range []string{"kiri", "tsu", "jita k", "Ωme", "üjit", "ωωω", "zzz", "zzzz"} {
				var got []uint32
				a.Contains([]byte(Fold(text)), nil, &Stats{}, 0, func(o uint32, _ Match) bool { got = append(got, o); return true })
				for _, other := range []*Table{v5, v4, b, v2} {
					var want []uint32
					other.Contains([]byte(Fold(text)), nil, &Stats{}, 0, func(o uint32, _ Match) bool { want = append(want, o); return true })
					if !slices.Equal(got, want) || (text[0] != 'z' && len(got) == 0) {
						t.Errorf("%q: %d hits, older layout %d", text, len(got), len(want))
					}
				}
				var strict []uint32
				a.Strict([]byte(Fold(text)), nil, &Stats{}, func(o uint32, _ int64) bool { strict = append(strict, o); return true })
				for _, o := range strict {
					if string(a.Name(o)) != Fold(text) {
						t.Errorf("strict %q found %q", text, a.Name(o))
					}
				}
			}
			// Every name, by strict search: the same ordinals and IDs,
			// from the namesakes' IDs or from the cells.
			shared := 0
			for o := range uint32(a.Len()) {
				text := a.Name(o)
				got := strictPairs(a, text)
				for _, other := range []*Table{v5, v4, b, v2} {
					if want := strictPairs(other, text); !slices.Equal(got, want) {
						t.Fatalf("strict %q: %v, older layout %v", text, got, want)
					}
				}
				if len(got) > 1 {
					shared++
				}
			}
			if shared == 0 {
				t.Fatal("no name is shared: the namesakes' IDs are not read")
			}
		})
	}
}

// strictPairs is a strict search's ordinals and IDs, as "ordinal:ID".
func strictPairs(tbl *Table, text []byte) []string {
	var out []string
	tbl.Strict(text, nil, &Stats{}, func(o uint32, id int64) bool {
		out = append(out, fmt.Sprintf("%d:%d", o, id))
		return true
	})
	return out
}

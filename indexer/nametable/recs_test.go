package nametable

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A table keeps each name's ID beside its offset (GDSTBL03) when the IDs
// fit a uint32 from the smallest, and apart (GDSTBL02) when they do not;
// tables written apart before are read alike. Every ordinal gives the
// same ID and name, and searches the same ordinals, whichever way.
func TestRecsReadAsApart(t *testing.T) {
	words := []string{"kiri", "otsu", "azbel", "sato", "kirjuun", "x", "jita ", "Ωmega"}
	for _, c := range []struct {
		name string
		base int64
		step int64
	}{{"narrow", 90000000, 7}, {"wide", 1 << 20, math.MaxUint32 / 100}} {
		t.Run(c.name, func(t *testing.T) {
			var entries []Entry
			for i := range 500 {
				name := fmt.Sprintf("%s%s", words[i%len(words)], words[i*3%len(words)])
				entries = append(entries, Entry{ID: c.base + int64(i)*c.step, Folded: Fold(name)})
			}
			dir := t.TempDir()
			write := func(file string, apart bool) *Table {
				writeApart = apart
				defer func() { writeApart = false }()
				path := filepath.Join(dir, file)
				if err := Write(path, slices.Clone(entries), nil); err != nil {
					t.Fatal(err)
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				want := tableMagic
				if apart || c.name == "wide" {
					want = tableMagicV2
				}
				if string(raw[:8]) != want {
					t.Fatalf("%s written as %q, want %q", file, raw[:8], want)
				}
				tbl, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tbl.Close() })
				return tbl
			}
			a, b := write("recs.tbl", false), write("apart.tbl", true)
			if (a.recs != nil) != (c.name == "narrow") || b.recs != nil {
				t.Fatalf("recs: %v, %v", a.recs != nil, b.recs != nil)
			}
			ids := map[int64]bool{}
			for o := range uint32(a.Len()) {
				if a.ID(o) != b.ID(o) || string(a.Name(o)) != string(b.Name(o)) {
					t.Fatalf("ordinal %d: %d %q, apart %d %q", o, a.ID(o), a.Name(o), b.ID(o), b.Name(o))
				}
				ids[a.ID(o)] = true
			}
			for _, e := range entries {
				if !ids[e.ID] {
					t.Fatalf("ID %d missing", e.ID)
				}
			}
			for _, text := range []string{"kiri", "tsu", "jita a", "Ωme", "zzz"} {
				var got, want []uint32
				a.Contains([]byte(Fold(text)), nil, &Stats{}, 0, func(o uint32, _ Match) bool { got = append(got, o); return true })
				b.Contains([]byte(Fold(text)), nil, &Stats{}, 0, func(o uint32, _ Match) bool { want = append(want, o); return true })
				if !slices.Equal(got, want) || (text != "zzz" && len(got) == 0) {
					t.Errorf("%q: %d hits, apart %d", text, len(got), len(want))
				}
			}
		})
	}
}

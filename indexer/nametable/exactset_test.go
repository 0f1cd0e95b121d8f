package nametable

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gds/snapshots/synth"
)

// ContainsSet and PrefixSet hold exactly the names that contain (start
// with) a text, as a scan of every name finds them and as the walk finds
// them, wherever one list holds them: texts of three bytes, and of four
// where the table keeps the four-byte gram's list (GDSTBL05). They refuse
// four bytes whose list is left out, four bytes in a table without
// four-byte lists (GDSTBL04), and other lengths. The names span several
// 65,536-ordinal blocks, with non-ASCII letters and a few newlines, which
// LineBreaks holds; the sets are the caller's to change.
func TestExactSets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two 140,000-name tables")
	}
	rng := rand.New(rand.NewPCG(31, 8))
	syl := []string{"ka", "ri", "ar", "i ", "sa", "to", "mi", "ra", "an", "el", "-", "é", "ß", "ωa", "jun", "ka"}
	var entries []Entry
	for i := range 140_000 {
		name := Fold(synth.Syllables(rng, 1+rng.IntN(3+i%9), syl...))
		if i%997 == 0 {
			at := rng.IntN(len(name) + 1)
			name = name[:at] + "\n" + name[at:]
		}
		entries = append(entries, Entry{ID: int64(7_000_000 + i), Folded: name})
	}
	quads, trigrams := quadAndTrigramTables(t, entries, nil)
	texts := []string{"kar", "ωa", "ßωa", "a\nk", "zzz", "zzzz", "ωaj", "karik", "é-é"}
	for len(texts) < 400 {
		name := quads.Name(uint32(rng.IntN(quads.Len())))
		if l := 3 + rng.IntN(2); len(name) >= l {
			at := rng.IntN(len(name) - l + 1) // may split a letter: the sets are of bytes
			texts = append(texts, string(name[at:at+l]))
		}
	}
	for _, tbl := range []*Table{quads, trigrams} {
		kept, dropped := 0, 0
		for _, text := range texts {
			var contains, prefix []uint32
			for o := range uint32(tbl.Len()) {
				if name := tbl.Name(o); bytes.Contains(name, []byte(text)) {
					contains = append(contains, o)
					if bytes.HasPrefix(name, []byte(text)) {
						prefix = append(prefix, o)
					}
				}
			}
			quad := tbl.quads.bytes(gram4(text + "    "))
			left := len(text) == 4 && (!tbl.hasQuad || (quad != nil && len(quad) == 0))
			switch set, ok := tbl.ContainsSet([]byte(text)); {
			case ok != (len(text) == 3 || len(text) == 4 && !left):
				t.Fatalf("%q (quads %v): ContainsSet ok %v", text, tbl.hasQuad, ok)
			case !ok:
				if len(text) == 4 {
					dropped++
				}
			case !slices.Equal(set.ToArray(), contains):
				t.Fatalf("%q (quads %v): ContainsSet has %d names, %d contain it", text, tbl.hasQuad, set.GetCardinality(), len(contains))
			default:
				if len(text) == 4 {
					kept++
				}
				var walked []uint32
				tbl.Contains([]byte(text), nil, &Stats{}, 0, func(o uint32, _ Match) bool { walked = append(walked, o); return true })
				if slices.Sort(walked); !slices.Equal(walked, contains) {
					t.Fatalf("%q (quads %v): the walk finds %d names, ContainsSet %d", text, tbl.hasQuad, len(walked), len(contains))
				}
				set.AddRange(0, uint64(tbl.Len())) // the caller's: the table's list stays
				if again, _ := tbl.ContainsSet([]byte(text)); !slices.Equal(again.ToArray(), contains) {
					t.Fatalf("%q: changing a set changed the table's", text)
				}
			}
			set, ok := tbl.PrefixSet([]byte(text))
			if ok != (len(text) == 3 || len(text) == 4 && tbl.hasQuad) {
				t.Fatalf("%q (quads %v): PrefixSet ok %v", text, tbl.hasQuad, ok)
			}
			if ok && !slices.Equal(set.ToArray(), prefix) {
				t.Fatalf("%q (quads %v): PrefixSet has %d names, %d start with it", text, tbl.hasQuad, set.GetCardinality(), len(prefix))
			}
		}
		if tbl.hasQuad && (kept == 0 || dropped == 0) {
			t.Fatalf("four-byte texts: %d with their lists kept, %d left out; want some of both", kept, dropped)
		}
		var breaks []uint32
		for o := range uint32(tbl.Len()) {
			if name := string(tbl.Name(o)); len(name) >= 3 && strings.Contains(name, "\n") {
				breaks = append(breaks, o)
			}
		}
		if got := tbl.LineBreaks().ToArray(); len(breaks) == 0 || !slices.Equal(got, breaks) {
			t.Fatalf("LineBreaks holds %d names, %d of three bytes or more hold a newline", len(got), len(breaks))
		}
	}
}

// quadAndTrigramTables writes entries and access to two tables, one of
// the layout Write writes (four-byte gram lists, GDSTBL05) and one of
// GDSTBL04 (trigram lists alone), and opens both until the test ends.
func quadAndTrigramTables(t *testing.T, entries []Entry, access Access) (quads, trigrams *Table) {
	t.Helper()
	dir := t.TempDir()
	open := func(layout string) *Table {
		path := filepath.Join(dir, layout+".tbl")
		writeLayout = layout
		defer func() { writeLayout = "" }()
		if err := Write(context.Background(), path, slices.Clone(entries), access, nil); err != nil {
			t.Fatal(err)
		}
		tbl, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tbl.Close() })
		return tbl
	}
	quads, trigrams = open(""), open(tableMagicV4)
	if !quads.hasQuad || trigrams.hasQuad {
		t.Fatal("the tables are not of the two kinds")
	}
	return quads, trigrams
}

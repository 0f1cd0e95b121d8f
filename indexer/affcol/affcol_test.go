package affcol

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layouts are the files' layouts: GDSAFF02's rows (what Writer writes)
// and GDSAFF01's columns (what generations written before it hold).
var layouts = []struct {
	name    string
	columns bool
}{{"rows", false}, {"columns", true}}

func writeRows(t testing.TB, fields Fields, rows []Row) string {
	t.Helper()
	return writeLayout(t, fields, rows, false)
}

// writeLayout writes rows in GDSAFF01's columns when columns, else in
// GDSAFF02's rows.
func writeLayout(t testing.TB, fields Fields, rows []Row, columns bool) string {
	t.Helper()
	w := NewWriter(fields, len(rows))
	w.columns = columns
	for _, r := range rows {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "characters"+Suffix)
	if err := w.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRoundTrip writes rows of each width and every set of fields in
// either layout and reads them back, mapped and in memory.
func TestRoundTrip(t *testing.T) {
	narrow := []Row{
		{Corporation: 98000001, Alliance: 99000002, Faction: 500001, Name: "Pilot One", Ticker: "P1"},
		{Corporation: 1000125, Name: "Ünïcode Pilot"},
		{},
		{Corporation: math.MaxUint32, Alliance: 1, Name: "x"},
	}
	wide := append([]Row{{Corporation: 1 << 40, Alliance: 3, Name: "wide"}}, narrow...)
	// Texts whose lengths take 2 and 4 bytes in a row.
	long := append([]Row{{Corporation: 5, Name: strings.Repeat("n", 300), Ticker: "T"}}, narrow...)
	longer := append([]Row{{Name: "a", Ticker: strings.Repeat("t", 70_000)}}, narrow...)
	// Every coding: 1-byte and 2-byte codes, uint32 and int64 values.
	many := func(n int, base int64) []Row {
		rows := make([]Row, n)
		for i := range rows {
			rows[i] = Row{Corporation: base + int64(i), Alliance: int64(i % 300), Faction: int64(i % 3), Name: "n"}
		}
		return rows
	}
	for _, layout := range layouts {
		for _, rows := range [][]Row{narrow, wide, long, longer, nil, many(maxDistinct+10, 98000000), many(maxDistinct+10, 1<<40)} {
			for _, fields := range []Fields{allField, Corporation | Alliance | Faction | Name, Corporation, Name | Ticker, Alliance | Faction | Name | Ticker} {
				roundTrip(t, fields, rows, layout.columns)
			}
		}
	}
}

// roundTrip writes rows of fields in a layout, reads them back and keeps
// every one (keepsAll).
func roundTrip(t *testing.T, fields Fields, rows []Row, columns bool) {
	t.Helper()
	path := writeLayout(t, fields, rows, columns)
	for _, mem := range []bool{false, true} {
		c, release, err := Open(path, mem, len(rows))
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != len(rows) || c.Fields() != fields || (c.rows == nil) != columns {
			t.Fatalf("len %d fields %b rows %v, want %d %b %v", c.Len(), c.Fields(), c.rows != nil, len(rows), fields, !columns)
		}
		if l := c.rows; l != nil && (l.width > 64 || l.width&(l.width-1) != 0) {
			t.Fatalf("rows of %d bytes, not a power of two of at most a cache line", l.width)
		}
		c.Warm(warmRows(c.Len())) // rows out of range are passed over
		for i, want := range rows {
			got, err := c.Row(i)
			if err != nil {
				t.Fatal(err)
			}
			if want = project(want, fields); got != want {
				t.Fatalf("row %d: %+v, want %+v", i, got, want)
			}
		}
		keepsAll(t, c, writeRows(t, fields, rows))
		release()
	}
}

// keepsAll writes a column keeping every row of c (of either layout), as
// a build carrying unchanged records does, and wants the file at path,
// written from the rows.
func keepsAll(t *testing.T, c *Column, path string) {
	t.Helper()
	w := NewWriter(c.Fields(), c.Len())
	for i := range c.Len() {
		if err := w.Keep(c, i); err != nil {
			t.Fatal(err)
		}
	}
	kept := filepath.Join(t.TempDir(), "kept"+Suffix)
	if err := w.Write(kept); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(kept); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("a column keeping every row differs from the rows' (%v)", err)
	}
}

// project keeps the fields of r a column of fields holds.
func project(r Row, fields Fields) Row {
	if fields&Corporation == 0 {
		r.Corporation = 0
	}
	if fields&Alliance == 0 {
		r.Alliance = 0
	}
	if fields&Faction == 0 {
		r.Faction = 0
	}
	if fields&Name == 0 {
		r.Name = ""
	}
	if fields&Ticker == 0 {
		r.Ticker = ""
	}
	return r
}

// TestOpenRefuses: a count other than the store's, a truncated file and a
// file of something else are errors at open.
func TestOpenRefuses(t *testing.T) {
	path := writeRows(t, allField, []Row{{Corporation: 1, Name: "a", Ticker: "A"}, {Corporation: 2, Name: "b"}})
	if _, _, err := Open(path, false, 3); err == nil {
		t.Fatal("a column of 2 rows opened for a store of 3")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{raw[:len(raw)-8], raw[:20], []byte("GDSSTO04xxxxxxxxxxxxxxxx")} {
		p := filepath.Join(t.TempDir(), "bad"+Suffix)
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Open(p, false, 2); err == nil {
			t.Fatalf("opened a damaged file of %d bytes", len(bad))
		}
	}
}

// FuzzParse: whatever the bytes, parse returns an error or a column
// whose every row reads (maybe as ErrDamaged), never a panic.
func FuzzParse(f *testing.F) {
	for _, layout := range layouts {
		for _, rows := range [][]Row{
			{{Corporation: 1, Alliance: 2, Faction: 3, Name: "abc", Ticker: "T"}},
			{{Corporation: 1 << 40, Name: "wide"}, {Name: ""}},
			{{Corporation: 7, Alliance: 2, Name: strings.Repeat("n", 300)}, {Alliance: 2, Faction: 1}},
			nil,
		} {
			raw, err := os.ReadFile(writeLayout(f, allField, rows, layout.columns))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parse(b, func(from, to int) {})
		if err != nil {
			return
		}
		c.Warm(warmRows(c.Len()))
		for i := range c.Len() {
			c.IDs(i)
			c.Text(i)
		}
	})
}

// warmRows is every row of a column of n, backwards, and rows outside it.
func warmRows(n int) []int {
	rows := []int{-1, n, n + 1, -1 << 40}
	for i := n - 1; i >= 0; i-- {
		rows = append(rows, i)
	}
	return rows
}

// BenchmarkWriter adds and writes a column of 1,000,000 characters' rows
// (20,000 corporations, 1,000 alliances, 4 factions): the build's cost of
// a column, per row.
func BenchmarkWriter(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "characters"+Suffix)
	for b.Loop() {
		w := NewWriter(Corporation|Alliance|Faction|Name, n)
		for i := range n {
			w.Add(Row{Corporation: 98000000 + int64(i*7919%20000), Alliance: 99000000 + int64(i%1000), Faction: int64(i % 4), Name: "Generated Pilot Name"})
		}
		if err := w.Write(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

// TestCheckLetsGoOfItsRows: the check of GDSAFF02's codes says it is
// done with every row, stretch by stretch and in order, and a mapped
// column whose checked pages were let go of still reads every row.
func TestCheckLetsGoOfItsRows(t *testing.T) {
	defer func(was int) { checkStretch = was }(checkStretch)
	checkStretch = 64
	rows := make([]Row, 1000)
	for i := range rows {
		rows[i] = Row{Corporation: 98000000 + int64(i), Alliance: 99000000 + int64(i%300), Name: "pilot"}
	}
	path := writeRows(t, allField, rows)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	next := -1
	c, err := parse(raw, func(from, to int) {
		if next >= 0 && from != next {
			t.Errorf("read %d-%d after a stretch that ended at %d", from, to, next)
		}
		if next < 0 && from != rowsAt {
			t.Errorf("the first stretch starts at %d, not at the rows (%d)", from, rowsAt)
		}
		next = to
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := rowsAt + len(rows)*c.rows.width; next != want {
		t.Fatalf("the check said it was done up to %d; the rows end at %d", next, want)
	}
	mapped, release, err := Open(path, false, len(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for i, want := range rows {
		if got, err := mapped.Row(i); err != nil || got != want {
			t.Fatalf("row %d: %+v, %v; want %+v", i, got, err, want)
		}
	}
}

// TestTextBufMatchesOneSlice appends texts past several pieces, the
// largest among them, and reads them back as one slice would hold them.
func TestTextBufMatchesOneSlice(t *testing.T) {
	var tb textBuf
	var want []byte
	for i := 0; len(want) < 3*textPiece; i++ {
		s := strings.Repeat(string(rune('a'+i%26)), i%300)
		if i%1000 == 999 {
			s = strings.Repeat("L", textPiece+7) // longer than a piece
		}
		appendText(&tb, s)
		want = append(want, s...)
	}
	var got bytes.Buffer
	if n, err := tb.write(&got); err != nil || n != uint64(len(want)) {
		t.Fatalf("write: %d bytes, %v; want %d", n, err, len(want))
	}
	if !bytes.Equal(got.Bytes(), want) || !bytes.Equal(tb.bytes(), want) || tb.n != len(want) {
		t.Fatal("the pieces differ from the text appended")
	}
	for _, p := range tb.pieces {
		if cap(p) > textPiece {
			t.Fatalf("a piece of %d bytes", cap(p))
		}
	}
}

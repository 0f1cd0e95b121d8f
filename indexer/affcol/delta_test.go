package affcol

import (
	"fmt"
	"testing"
)

// positions places merged positions as a store with an index delta does:
// each position is a base row or a delta row.
type positions []place

type place struct {
	j     int
	delta bool
}

func (p positions) Len() int { return len(p) }

func (p positions) Split(i int) (int, bool) { return p[i].j, p[i].delta }

// A column kept as a base and a delta reads, by merged position, as the
// column written whole: rows kept from the base, changed (the delta's row
// hides the base's), added between and around the base's, and removed
// (a base row no position names); a Writer keeping rows from it copies
// them as they read. The base is of either layout: a generation written
// before GDSAFF02 is the base of a delta written in it.
func TestDeltaReadsAsWhole(t *testing.T) {
	for _, layout := range layouts {
		t.Run("base "+layout.name, func(t *testing.T) { deltaReadsAsWhole(t, layout.columns) })
	}
}

func deltaReadsAsWhole(t *testing.T, baseColumns bool) {
	fields := Corporation | Alliance | Faction | Name
	row := func(id int, gen string) Row {
		return Row{Corporation: int64(98000000 + id), Alliance: int64(id % 7), Faction: int64(id % 3), Name: fmt.Sprintf("pilot %d %s", id, gen)}
	}
	var baseRows []Row
	for id := range 50 {
		baseRows = append(baseRows, row(id, "base"))
	}
	// merged: a new row first, base rows with every 5th changed and every
	// 7th removed, a new row after every 10th, a new row last.
	var merged []Row
	var pos positions
	var deltaRows []Row
	addDelta := func(r Row) {
		pos = append(pos, place{len(deltaRows), true})
		deltaRows, merged = append(deltaRows, r), append(merged, r)
	}
	addDelta(row(1000, "new"))
	for id := range 50 {
		switch {
		case id%7 == 3:
			continue
		case id%5 == 0:
			addDelta(row(id, "changed"))
		default:
			pos = append(pos, place{id, false})
			merged = append(merged, baseRows[id])
		}
		if id%10 == 9 {
			addDelta(row(2000+id, "new"))
		}
	}
	addDelta(row(3000, "new"))

	base, releaseBase, err := Open(writeLayout(t, fields, baseRows, baseColumns), false, len(baseRows))
	if err != nil {
		t.Fatal(err)
	}
	defer releaseBase()
	delta, releaseDelta, err := Open(writeRows(t, fields, deltaRows), true, len(deltaRows))
	if err != nil {
		t.Fatal(err)
	}
	defer releaseDelta()
	whole, releaseWhole, err := Open(writeRows(t, fields, merged), false, len(merged))
	if err != nil {
		t.Fatal(err)
	}
	defer releaseWhole()
	c, err := WithDelta(base, delta, pos)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Delta() || c.Len() != whole.Len() || c.Fields() != fields {
		t.Fatalf("delta %v, %d rows of fields %#x; written whole %d of %#x", c.Delta(), c.Len(), c.Fields(), whole.Len(), whole.Fields())
	}
	c.Warm(warmRows(c.Len())) // by the base's and the delta's rows; outside ones passed over
	w := NewWriter(fields, c.Len())
	for i := range c.Len() {
		got, err := c.Row(i)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := whole.Row(i)
		if got != want {
			t.Fatalf("row %d = %+v, written whole %+v", i, got, want)
		}
		if err := w.Keep(c, i); err != nil {
			t.Fatal(err)
		}
	}
	path := t.TempDir() + "/kept" + Suffix
	if err := w.Write(path); err != nil {
		t.Fatal(err)
	}
	kept, release, err := Open(path, false, c.Len())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for i := range kept.Len() {
		if got, _ := kept.Row(i); got != merged[i] {
			t.Fatalf("kept row %d = %+v, want %+v", i, got, merged[i])
		}
	}
	if _, err := WithDelta(base, whole, pos); err != nil {
		t.Fatal(err)
	}
	other, releaseOther, err := Open(writeRows(t, Name|Ticker, deltaRows), false, len(deltaRows))
	if err != nil {
		t.Fatal(err)
	}
	defer releaseOther()
	if _, err := WithDelta(base, other, pos); err == nil {
		t.Fatal("a delta of other fields than its base's was taken")
	}
}

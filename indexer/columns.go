package indexer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	bdoc "github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/numeric"

	"gds/indexer/nametable"
	"gds/indexer/pace"
	"gds/indexer/valuecol"
	"gds/snapshots"
	"gds/snapshots/reinforce"
)

// Beside each base and delta table, a value-column file (base.cols,
// delta.cols; package valuecol) holds every numeric and date field of the
// category's documents (and, since FieldsVersion 5, the ID keywords of the
// categories TablesOnly names) sorted by value, with the table ordinal of each
// document: the analysts' range queries become a slice of it and a bitmap
// of ordinals (package query), instead of bleve counting millions of
// matches. It is written with the tables, in the phase that goes live
// first, so ranges are fast as soon as a generation is.
//
// Each value is the int64 bleve indexes for it, the term its range
// searcher compares: the sortable bits of the float64 for a number, the
// nanoseconds since 1970 for an instant. A range computed as bleve
// computes its bounds thus selects what bleve selects, bit for bit.

// columnsVersion is the first FieldsVersion whose generations hold value
// columns; older ones are answered by bleve alone.
const columnsVersion = 3

// tablesOnlyVersion is the first FieldsVersion whose generations leave the
// categories of TablesOnly out of bleve, and hold columns of their ID
// keywords (corporation_id, alliance_id) beside the numbers and dates.
// A keyword column's value is the ID itself.
const tablesOnlyVersion = 5

// TablesOnly reports whether the analysts' queries of cat are answered
// from its name tables and value columns alone, without bleve shards
// (package query's table queries), unless a build is told otherwise
// (Options.BleveCharacters): characters, nearly all of a large
// generation's documents.
func TablesOnly(cat snapshots.Category) bool { return cat == snapshots.CategoryCharacter }

// bleveCharactersAlways indexes characters in bleve whatever the options:
// this package's tests of the bleve shards' mechanics set it, their
// snapshots being mostly characters (TestMain).
var bleveCharactersAlways = false

// TablesAnswer reports whether the generation's analysts' queries of cat
// are answered from its tables and value columns: it has cat, and no
// bleve shards for it.
func (g *Generation) TablesAnswer(cat snapshots.Category) bool {
	_, ok := g.Meta.Counts[cat]
	return ok && g.Meta.Fields >= tablesOnlyVersion && g.Meta.Shards[cat] == 0
}

// ColumnsPath is the value-column file beside a table file.
func ColumnsPath(table string) string { return strings.TrimSuffix(table, ".tbl") + ".cols" }

// HasColumns reports whether the generation holds value columns beside
// its tables.
func (g *Generation) HasColumns() bool { return g.Meta.Fields >= columnsVersion }

// openColumns opens the value columns beside a table of n names and
// checks that they hold a column for every numeric and date field of cat.
func openColumns(table string, cat snapshots.Category, n, layout int) (*valuecol.File, error) {
	f, err := valuecol.Open(ColumnsPath(table), n)
	if err != nil {
		return nil, err
	}
	for _, i := range columnFields(cat, layout) {
		if !f.Has(attributeFields[i].Name) {
			f.Close()
			return nil, fmt.Errorf("value columns of %s: no column %s", table, attributeFields[i].Name)
		}
	}
	return f, nil
}

// ColumnField reports whether documents of cat keep name's values in
// their tables' value columns: the numeric and date fields.
func ColumnField(name string, cat snapshots.Category) bool {
	for _, i := range columnFields(cat, columnsVersion) {
		if attributeFields[i].Name == name {
			return true
		}
	}
	return false
}

// KeywordColumn reports whether the generation keeps the values of the
// keyword field name of cat's documents in value columns: the ID
// keywords of a category the tables answer alone.
func (g *Generation) KeywordColumn(name string, cat snapshots.Category) bool {
	for _, i := range columnFields(cat, g.Meta.Fields) {
		if f := attributeFields[i]; f.Name == name && f.Type == Keyword {
			return true
		}
	}
	return false
}

// columnFields are the attributes of cat with value columns in a
// generation of the given FieldsVersion.
func columnFields(cat snapshots.Category, layout int) []uint8 {
	var out []uint8
	for i, f := range attributeFields {
		if !slices.Contains(f.Categories, cat) {
			continue
		}
		if f.Type == Numeric || f.Type == DateTime || layout >= tablesOnlyVersion && TablesOnly(cat) && idKeyword(uint8(i)) {
			out = append(out, uint8(i))
		}
	}
	return out
}

// idKeyword reports whether an attribute is a keyword holding an ID.
func idKeyword(field uint8) bool {
	f := attributeFields[field]
	return f.Type == Keyword && strings.HasSuffix(f.Name, "_id")
}

// TermValue is the int64 bleve indexes for v, a value of a numeric or
// date field (for a date, Unix seconds): what its range searcher compares.
// ok is false when bleve leaves the value out (instants it cannot hold).
//
// A keyword column holds the ID itself.
func TermValue(t FieldType, v float64) (term int64, ok bool) {
	if t == Keyword {
		return int64(v), true
	}
	if t == DateTime {
		dt := time.Unix(int64(v), 0)
		if dt.Before(bdoc.MinTimeRepresentable) || dt.After(bdoc.MaxTimeRepresentable) {
			return 0, false // as bleve's date field refuses it
		}
		return dt.UnixNano(), true
	}
	return numeric.Float64ToInt64(v), true
}

// tableColumns gathers a table's value columns while its entries are
// gathered: each entry's Ord is its position in the entries handed to
// nametable.Write until writeTable turns positions into ordinals.
type tableColumns struct {
	fields []uint8
	slot   [32]int8 // attribute index → position in fields, or -1
	cols   []valuecol.Column
	// spill, when set, holds each column's values on disk instead of in
	// cols (colspill.go), and cols only the names.
	spill []*spilledColumn
}

// newTableColumns makes the columns of a table of cat, each with room for
// capacity values (most records have each field: growing by appends would
// briefly hold twice the entries).
func newTableColumns(cat snapshots.Category, capacity int) *tableColumns {
	c := &tableColumns{fields: columnFields(cat, FieldsVersion)}
	for i := range c.slot {
		c.slot[i] = -1
	}
	for k, f := range c.fields {
		c.slot[f] = int8(k)
		c.cols = append(c.cols, valuecol.Column{Name: attributeFields[f].Name, Entries: make([]valuecol.Entry, 0, capacity)})
	}
	return c
}

// fit gives back the room of columns far from full (a field few records
// have, as characters' alliance), held otherwise until the table is
// written: such a column is copied to its length, which briefly holds
// both.
func (c *tableColumns) fit() {
	if c.spill != nil {
		return
	}
	for k, col := range c.cols {
		if len(col.Entries) < cap(col.Entries)*3/4 {
			c.cols[k].Entries = slices.Clone(col.Entries)
		}
	}
}

// addRecord records the values of rec, the entry at position pos.
func (c *tableColumns) addRecord(pos int, rec snapshots.Record) {
	if len(c.fields) == 0 {
		return
	}
	columnValues(rec, func(field uint8, v float64) {
		if k := c.slot[field]; k >= 0 {
			t, ok := TermValue(attributeFields[field].Type, v)
			switch {
			case !ok:
			case c.spill != nil:
				c.spill[k].add(t, pos)
			default:
				c.cols[k].Entries = append(c.cols[k].Entries, valuecol.Entry{Value: t, Ord: uint32(pos)})
			}
		}
	})
}

// columnValues calls fn with each numeric and date value (and ID keyword) of rec's
// document, as attributes gives them (a date in Unix seconds) but without
// building them all: the tables' phase reads every record without its
// attributes, which the bleve phase reads again.
func columnValues(rec snapshots.Record, fn func(field uint8, v float64)) {
	switch r := rec.(type) {
	case *snapshots.Character:
		if r.CorporationID != 0 {
			fn(attrCorporation, float64(r.CorporationID))
		}
		if r.AllianceID != 0 {
			fn(attrAlliance, float64(r.AllianceID))
		}
		if r.Birthday != nil {
			fn(attrBirthday, float64(r.Birthday.Unix()))
		}
	case *snapshots.Corporation:
		fn(attrMemberCount, float64(r.MemberCount))
	case *snapshots.Structure:
		fn(attrReinforceWeekday, float64(r.ReinforceWeekday))
		fn(attrReinforceHour, float64(r.ReinforceHour))
		if r.FuelExpires != nil {
			fn(attrFuelExpires, float64(r.FuelExpires.Unix()))
		}
		online := 0
		for _, s := range r.Services {
			if s.State == reinforce.ServiceOnline {
				online++
			}
		}
		fn(attrServicesOnline, float64(online))
	case *snapshots.SolarSystem:
		fn(attrSecurity, r.SecurityStatus)
	case *snapshots.Agent:
		if r.Level != 0 {
			fn(attrLevel, float64(r.Level))
		}
	}
}

// RecordColumnValues calls fn with each value rec's document keeps in its
// table's value columns, as the build writes them (a query reads a few
// records' values so rather than pass over a whole column).
func RecordColumnValues(rec snapshots.Record, fn func(field string, v int64)) {
	columnValues(rec, func(field uint8, v float64) {
		if t, ok := TermValue(attributeFields[field].Type, v); ok {
			fn(attributeFields[field].Name, t)
		}
	})
}

// addShifted records other's values, each at its position plus offset.
func (c *tableColumns) addShifted(other *tableColumns, offset int) {
	for k := range c.cols {
		for _, e := range other.cols[k].Entries {
			c.cols[k].Entries = append(c.cols[k].Entries, valuecol.Entry{Value: e.Value, Ord: e.Ord + uint32(offset)})
		}
	}
}

// addFrom records the values an older table's columns hold for the
// ordinals it keeps: pos[o] is the position of its ordinal o's entry, or
// -1 for an ordinal left out.
func (c *tableColumns) addFrom(f *valuecol.File, pos []int32) {
	for k := range c.cols {
		f.Each(c.cols[k].Name, func(o uint32, v int64) {
			if p := pos[o]; p >= 0 {
				c.cols[k].Entries = append(c.cols[k].Entries, valuecol.Entry{Value: v, Ord: uint32(p)})
			}
		})
	}
}

// keptPositions maps each ordinal of t to its position among the entries
// t.Entries(skip, drop) returns, or -1 for one it leaves out.
func keptPositions(t *nametable.Table, skip *roaring.Bitmap, drop func(id int64) bool, first int) []int32 {
	pos := make([]int32, t.Len())
	next := int32(first)
	for o := range uint32(t.Len()) {
		if (skip != nil && skip.Contains(o)) || (drop != nil && drop(t.ID(o))) {
			pos[o] = -1
			continue
		}
		pos[o] = next
		next++
	}
	return pos
}

// writeTable writes a name table of entries and their access lists (nil
// for a kind without them) and its value columns (cols nil: the table has
// none, as language overlays). nametable.Write orders entries
// by name length in runes, then ID; the same order computed here turns
// each column entry's position into its ordinal, and is checked against
// the order Write left (by a sum over the pairs of ordinal and ID, which
// holds nothing a name).
//
// The columns are written first and their entries let go of (cols is
// spent after it), so that a large table's columns are not held beside
// the posting lists nametable.Write builds.
func writeTable(ctx context.Context, path string, entries []nametable.Entry, access nametable.Access, mask *roaring.Bitmap, cols *tableColumns) error {
	if cols == nil {
		return nametable.Write(ctx, path, entries, access, mask)
	}
	defer cols.closeSpill()
	ord := nametable.RankOrdinals(entries)
	var want uint64
	for i, e := range entries {
		want += placeSum(ord[i], e.ID)
	}
	load := func(k int) ([]valuecol.Entry, error) { return cols.take(k, ord) }
	if err := valuecol.WriteEach(ColumnsPath(path), len(entries), cols.specs(), load); err != nil {
		return err
	}
	pace.Worked(ctx, len(entries))
	if err := nametable.Write(ctx, path, entries, access, mask); err != nil {
		return err
	}
	var got uint64
	for o, e := range entries {
		got += placeSum(uint32(o), e.ID)
	}
	if got != want {
		return fmt.Errorf("value columns of %s: the table's entries are not at the ordinals its columns give them", path)
	}
	return nil
}

// placeSum is the term of one entry (its ordinal and ID) in writeTable's
// check: a sum of such terms does not depend on the order they are
// added in, and two placements of the entries differ in it but by chance
// (splitmix64's finalizer spreads every bit of the pair).
func placeSum(o uint32, id int64) uint64 {
	return mix64(uint64(id) ^ mix64(uint64(o)+0x9e3779b97f4a7c15))
}

// mix64 is splitmix64's finalizer.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

package indexer

import (
	"context"

	"gds/snapshots"
)

// WithBeforeBleve returns o with a hook run at the start of each build's
// bleve phase, after the generation went live for searches.
func WithBeforeBleve(o Options, f func(ctx context.Context, generation uint64) error) Options {
	o.beforeBleve = f
	return o
}

// SetMemoryBudget makes the memory the process may use look like n bytes
// until restore.
func SetMemoryBudget(n int64) (restore func()) {
	old := memoryBudget
	memoryBudget = func() int64 { return n }
	return func() { memoryBudget = old }
}

// TablesOnlyForTest leaves characters out of bleve, as builds do outside
// this package's tests (see TestMain), until t ends.
func TablesOnlyForTest(t interface{ Cleanup(func()) }) {
	bleveCharactersAlways = false
	t.Cleanup(func() { bleveCharactersAlways = true })
}

// ColumnValues returns every value of a category's base column field, by ID.
func (g *Generation) ColumnValues(cat string, field string) map[int64]int64 {
	ct := g.tables[snapshots.Category(cat)]
	out := map[int64]int64{}
	ct.BaseColumns.Each(field, func(o uint32, v int64) { out[ct.Base.ID(o)] = v })
	return out
}

// AffRow is what an affiliation column keeps of rec (affRow).
var AffRow = affRow

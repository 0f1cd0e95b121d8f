package indexer

import (
	"os"
	"path/filepath"
	"testing"
)

// plan sets aside what the parts held always take of 1/AutoHoldShare of
// the memory budget, then holds, in the order requests read them, the
// name tables, the record stores and the typo indexes that are to be held
// when they fit, each while it fits what those before it left; parts
// never held take nothing.
func TestPlanFillsOneBudget(t *testing.T) {
	const tables, stores, typos = 700, 500, 150
	dir := t.TempDir()
	files := map[string]int{
		"character/base.tbl": 600, "character/base.typ": 120, "character/base.cols": 5000,
		"corporation/base.tbl": 100, "corporation/base.typ": 30,
		"records/characters.data": 300, "records/characters.idx": 150, "records/characters.aff": 4000,
		"records/corporations.data": 40, "records/corporations.idx": 10,
		"other/base.tbl": 9000, // not a category of the generation
	}
	for name, size := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cats := []string{"character", "corporation"}
	auto := inMemory{tablesWhenFit: true, storesWhenFit: true}
	for _, c := range []struct {
		what   string
		opts   inMemory
		budget int64 // in units of AutoHoldShare bytes
		want   held
	}{
		{"everything fits", auto, tables + stores + typos, held{true, true, true}},
		{"the typo indexes do not fit", auto, tables + stores + typos - 1, held{true, true, false}},
		{"the stores do not, the typo indexes do", auto, tables + typos, held{true, false, true}},
		{"only the tables fit", auto, tables + typos - 1, held{true, false, false}},
		{"the tables do not fit, the stores do", auto, tables - 1, held{false, true, true}},
		{"nothing fits", auto, typos - 1, held{}},
		{"no budget known", auto, 0, held{}},
		{"tables always count against the budget", inMemory{tables: true, storesWhenFit: true}, stores, held{true, false, true}},
		{"tables always, with their typo indexes, stores when they fit", inMemory{tables: true, storesWhenFit: true}, tables + stores + typos, held{true, true, true}},
		{"tables and typo indexes always, stores not beside them", inMemory{tables: true, storesWhenFit: true}, tables + stores + typos - 1, held{true, false, true}},
		{"tables never do not count", inMemory{storesWhenFit: true}, stores, held{false, true, false}},
		{"stores always are set aside before the tables", inMemory{tablesWhenFit: true, stores: true}, tables + stores - 1, held{false, true, true}},
		{"stores always, tables and typo indexes when they fit", inMemory{tablesWhenFit: true, stores: true}, tables + stores + typos, held{true, true, true}},
		{"tables never, stores always", inMemory{stores: true}, 0, held{false, true, false}},
		{"typo indexes never held with tables mapped", inMemory{tablesWhenFit: false, storesWhenFit: true}, 1 << 20, held{false, true, false}},
	} {
		budget := c.budget * AutoHoldShare
		restore := SetMemoryBudget(budget)
		got := c.opts.plan(dir, cats)
		restore()
		if got != c.want {
			t.Errorf("%s (%+v, memory %d): holds %+v, want %+v", c.what, c.opts, budget, got, c.want)
		}
	}
}

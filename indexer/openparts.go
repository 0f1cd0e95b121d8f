package indexer

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"gds/indexer/nametable"
	"gds/indexer/recstore"
	"gds/indexer/typo"
	"gds/snapshots"
)

// openParts opens a generation's record stores, affiliation columns and
// each category's tables, value columns and typo indexes. Opening checks
// what it maps (a value column's order, a typo index's postings against
// its table, a store's index delta against its base), which at 50M names
// is seconds of CPU, so the independent parts open at once: the stores
// and then their affiliation columns on one goroutine, each category on
// another, and a category's columns beside its typo indexes. At 50M names
// on 2 cores, the generation an incremental build switches to opens in
// about half the time (docs/performance.md).
//
// Each goroutine fills only its own fields: the stores' goroutine g.stores
// and g.affs, a category's goroutine its CategoryTables, made before it
// starts. On an error the parts opened stay for g.close.
func (g *Generation) openParts() error {
	var eg errgroup.Group
	eg.Go(g.openStores)
	for cat := range g.Meta.Counts {
		ct := &CategoryTables{Overlays: map[string]*nametable.Table{}}
		g.tables[cat] = ct
		eg.Go(func() error { return g.openTables(cat, ct) })
	}
	return eg.Wait()
}

// openStores opens every kind's record store, then the affiliation
// columns, which are read beside them.
func (g *Generation) openStores() error {
	for kind := range g.Meta.Records {
		s, err := recstore.Open(filepath.Join(g.dir, recordsDir), string(kind), g.held.stores, storeGroups(kind)...)
		if err != nil {
			return err
		}
		g.stores[kind] = s
	}
	return g.openAffiliations()
}

// openTables opens cat's tables (base, delta, language overlays), then
// its value columns beside its typo indexes.
func (g *Generation) openTables(cat snapshots.Category, ct *CategoryTables) error {
	openTable := nametable.Open
	if g.held.tables {
		openTable = nametable.Load
	}
	cdir := filepath.Join(g.dir, string(cat))
	var err error
	if ct.Base, err = openTable(filepath.Join(cdir, baseTable)); err != nil {
		return err
	}
	names := ct.Base.Len()
	if _, ok := g.Meta.Deltas[cat]; ok {
		if ct.Delta, err = openTable(filepath.Join(cdir, deltaTable)); err != nil {
			return err
		}
		names += ct.Delta.Len() - ct.Delta.Masked()
	}
	if count := g.Meta.Counts[cat]; names != count {
		return fmt.Errorf("%s: tables hold %d names, meta says %d", cat, names, count)
	}
	overlays := make(map[string]*nametable.Table, len(g.Meta.Languages[cat]))
	for _, lang := range g.Meta.Languages[cat] {
		t, err := openTable(filepath.Join(cdir, lang+".tbl"))
		if err != nil {
			ct.Overlays = overlays
			return err
		}
		overlays[lang] = t
	}
	ct.Overlays = overlays
	var eg errgroup.Group
	if g.HasColumns() {
		eg.Go(func() error { return ct.openColumns(cdir, cat, g.Meta.Fields) })
	}
	if g.Meta.Typos == typo.Version {
		eg.Go(func() error { return ct.openTypos(cdir, g.held.typos) })
	}
	return eg.Wait()
}

// openColumns opens the value columns of cat's base and delta tables.
func (ct *CategoryTables) openColumns(cdir string, cat snapshots.Category, fields int) error {
	var err error
	if ct.BaseColumns, err = openColumns(filepath.Join(cdir, baseTable), cat, ct.Base.Len(), fields); err != nil {
		return err
	}
	if ct.Delta != nil {
		if ct.DeltaColumns, err = openColumns(filepath.Join(cdir, deltaTable), cat, ct.Delta.Len(), fields); err != nil {
			return err
		}
	}
	return nil
}

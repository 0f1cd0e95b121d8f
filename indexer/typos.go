package indexer

import (
	"context"
	"path/filepath"
	"strings"

	"gds/indexer/nametable"
	"gds/indexer/pace"
	"gds/indexer/typo"
)

// Beside each name table, a typo index (base.typ, <lang>.typ, delta.typ;
// package typo) holds the distinct words of its names with their
// ordinals, their deletion neighbourhood and the names' tickers: what the
// suggest route needs to find a name despite a typo, or by its ticker. It
// is written with its table, from the same entries in ordinal order, so a
// build pays for it in the phase that goes live first. Generations whose
// Meta.Typos is not typo.Version have none; a build from one is full.

// TypoPath is the typo index beside a table file.
func TypoPath(table string) string { return strings.TrimSuffix(table, ".tbl") + typoExt }

// typoExt ends the name of a typo index file.
const typoExt = ".typ"

// writeTypos writes the typo index of a table just written from entries
// (nametable.Write leaves them in ordinal order); tickers, when not nil,
// maps IDs to their tickers.
func writeTypos(ctx context.Context, table string, entries []nametable.Entry, tickers map[int64]string) error {
	pace.Pace(ctx)
	var ticks []string
	if tickers != nil {
		ticks = make([]string, len(entries))
		for i, e := range entries {
			ticks[i] = nametable.Fold(tickers[e.ID])
		}
	}
	pace.Pace(ctx)
	if err := typo.WriteEach(TypoPath(table), len(entries), func(o int) string { return entries[o].Folded }, ticks); err != nil {
		return err
	}
	pace.Worked(ctx, len(entries))
	return nil
}

// tickersOf returns the tickers of docs by ID, or nil when none has one
// (a category without tickers).
func tickersOf(docs []docInfo) map[int64]string {
	var m map[int64]string
	for _, d := range docs {
		if d.ticker() != "" {
			if m == nil {
				m = map[int64]string{}
			}
			m[d.id] = d.ticker()
		}
	}
	return m
}

// keptTickers returns the tickers the previous tables hold, by ID (for a
// patch, whose kept entries come from those tables), with the upserts'
// own over them.
func keptTickers(prev *CategoryTables, upserts []docInfo) map[int64]string {
	m := tickersOf(upserts)
	add := func(t *nametable.Table, x *typo.Index) {
		if x == nil {
			return
		}
		for o, tick := range x.TickerOf() {
			id := t.ID(o)
			if _, ok := m[id]; !ok {
				if m == nil {
					m = map[int64]string{}
				}
				m[id] = tick
			}
		}
	}
	if prev.Delta != nil {
		add(prev.Delta, prev.DeltaTypos)
	}
	add(prev.Base, prev.BaseTypos)
	return m
}

// openTypos opens the typo indexes of a category's tables in cdir, each
// walking only the first ordinal of each of its table's names
// (typo.Index.KeepFirsts).
func (ct *CategoryTables) openTypos(cdir string, held bool) error {
	load := typo.Open
	if held {
		load = typo.Load
	}
	open := func(table string, t *nametable.Table) (*typo.Index, error) {
		x, err := load(TypoPath(filepath.Join(cdir, table)), t.Len())
		if err != nil {
			return nil, err
		}
		if err := x.KeepFirsts(t); err != nil {
			x.Close()
			return nil, err
		}
		return x, nil
	}
	var err error
	if ct.BaseTypos, err = open(baseTable, ct.Base); err != nil {
		return err
	}
	if ct.Delta != nil {
		if ct.DeltaTypos, err = open(deltaTable, ct.Delta); err != nil {
			return err
		}
	}
	for lang, t := range ct.Overlays {
		x, err := open(lang+".tbl", t)
		if err != nil {
			return err
		}
		if ct.OverlayTypos == nil {
			ct.OverlayTypos = map[string]*typo.Index{}
		}
		ct.OverlayTypos[lang] = x
	}
	return nil
}

// closeTypos closes whatever openTypos opened.
func (ct *CategoryTables) closeTypos() {
	for _, x := range []*typo.Index{ct.BaseTypos, ct.DeltaTypos} {
		if x != nil {
			_ = x.Close()
		}
	}
	for _, x := range ct.OverlayTypos {
		_ = x.Close()
	}
}

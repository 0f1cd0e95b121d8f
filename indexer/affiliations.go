package indexer

import (
	"errors"
	"os"
	"path/filepath"

	"gds/indexer/affcol"
	"gds/indexer/pace"
	"gds/snapshots"
)

// Every kind whose records an affiliation or a local reads has an
// affiliation column beside its store (indexer/affcol), written by the
// pass that writes or decodes the kind's records: a record decoded gives
// its row; a line a patched build skips (byte-identical to the previous
// generation's record) carries the previous column's row at the previous
// store position it was matched to (or, without a previous column, its
// line is decoded). A corporation's faction lives in the corporations'
// column alone, so a corporation that changes faction rewrites no
// character's row. A kind reused whole hard-links its column with its
// store (or, from a generation written without columns, has its column
// written from the store: columnFromStore); a generation without them
// answers from the stores (package query).

// affFields is what kind's column holds; false: kind has none.
func affFields(kind snapshots.Kind) (affcol.Fields, bool) {
	switch kind {
	case snapshots.Characters:
		return affcol.Corporation | affcol.Alliance | affcol.Faction | affcol.Name, true
	case snapshots.Agents:
		return affcol.Corporation, true
	case snapshots.Corporations:
		return affcol.Alliance | affcol.Faction | affcol.Name | affcol.Ticker, true
	case snapshots.Alliances:
		return affcol.Name | affcol.Ticker, true
	}
	return 0, false
}

// affRow is what an affiliation column keeps of rec.
func affRow(rec snapshots.Record) affcol.Row {
	switch r := rec.(type) {
	case *snapshots.Character:
		return affcol.Row{Corporation: r.CorporationID, Alliance: r.AllianceID, Faction: r.FactionID, Name: r.Name}
	case *snapshots.Agent:
		return affcol.Row{Corporation: r.CorporationID}
	case *snapshots.Corporation:
		return affcol.Row{Alliance: r.AllianceID, Faction: r.FactionID, Name: r.Name, Ticker: r.Ticker}
	case *snapshots.Alliance:
		return affcol.Row{Name: r.Name, Ticker: r.Ticker}
	}
	return affcol.Row{}
}

// affBuild is one kind's column being written by readKind.
type affBuild struct {
	kind snapshots.Kind
	w    *affcol.Writer
	prev *affcol.Column // the previous generation's, when it has one
}

// newAffBuild starts kind's column (nil: kind has none) of n rows.
func (b *builder) newAffBuild(kind snapshots.Kind, n int) *affBuild {
	fields, ok := affFields(kind)
	if !ok {
		return nil
	}
	a := &affBuild{kind: kind, w: affcol.NewWriter(fields, n)}
	if b.prev != nil {
		a.prev = b.prev.Affiliations(kind)
	}
	return a
}

// add appends a decoded record's row.
func (a *affBuild) add(rec snapshots.Record) error {
	if a == nil {
		return nil
	}
	return a.w.Add(affRow(rec))
}

// keep appends the row of a line identical to the previous generation's
// record at position pi.
func (a *affBuild) keep(pi int, raw []byte) error {
	if a == nil {
		return nil
	}
	if a.prev != nil {
		return a.w.Keep(a.prev, pi)
	}
	rec := a.kind.New()
	if err := snapshots.DecodeRecord(raw, rec); err != nil {
		return err
	}
	return a.w.Add(affRow(rec))
}

// write writes the column into the generation's records directory,
// checking it has a row per record.
func (a *affBuild) write(dir string, records int) error {
	if a == nil {
		return nil
	}
	if a.w.Len() != records {
		return errors.New("affiliation column: " + string(a.kind) + ": rows and records differ")
	}
	return a.w.Write(filepath.Join(dir, string(a.kind)+affcol.Suffix))
}

// columnFromStore writes kind's column from the previous generation's
// store, for a kind reused whole from a generation written without one
// (once: the generations after hard-link it).
func (b *builder) columnFromStore(kind snapshots.Kind) error {
	a := b.newAffBuild(kind, 0)
	s := b.prev.Store(kind)
	if a == nil || a.prev != nil || s == nil {
		return nil
	}
	tick := pace.Every(b.ctx, recordsPerPace)
	for i := range s.Len() {
		tick()
		rec := kind.New()
		if err := s.Read(i, func(raw []byte) error { return snapshots.DecodeRecord(raw, rec) }); err != nil {
			return err
		}
		if err := a.add(rec); err != nil {
			return err
		}
		if i%100000 == 0 {
			if err := b.ctx.Err(); err != nil {
				return err
			}
		}
	}
	return a.write(filepath.Join(b.dir, recordsDir), s.Len())
}

// openAffiliations opens the columns of the generation's stores that
// have one; a store without (a generation of an older build) is left
// without, and answered from. They are mapped, never held in memory with
// the stores: a process that answers no affiliation nor local (the
// analysts', a search-only replica) then never has their pages (about
// 250 MB at 10M characters) in its memory.
func (g *Generation) openAffiliations() error {
	for kind, s := range g.stores {
		if _, ok := affFields(kind); !ok {
			continue
		}
		path := filepath.Join(g.dir, recordsDir, string(kind)+affcol.Suffix)
		c, release, err := affcol.Open(path, false, s.Len())
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		g.affs[kind] = c
		g.affRelease = append(g.affRelease, release)
	}
	return nil
}

// Affiliations is kind's affiliation column, by its store's positions;
// nil when the generation has none (package query reads the store then).
func (g *Generation) Affiliations(k snapshots.Kind) *affcol.Column { return g.affs[k] }

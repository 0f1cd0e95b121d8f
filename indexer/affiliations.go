package indexer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gds/indexer/affcol"
	"gds/indexer/pace"
	"gds/indexer/recstore"
	"gds/snapshots"
	"gds/snapshots/disk"
)

// Every kind whose records an affiliation or a local reads has an
// affiliation column beside its store (indexer/affcol), written by the
// pass that writes or decodes the kind's records: a record decoded gives
// its row; a line a patched build skips (byte-identical to the previous
// generation's record) carries the previous column's row at the previous
// store position it was matched to (or, without a previous column, its
// line is decoded). When the store keeps its base's index and writes an
// index delta, the column keeps its base (hard-linked) and writes a delta
// of the rows of the index delta's records only (affcol.DeltaSuffix). A corporation's faction lives in the corporations'
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
	// A column written as a delta beside the previous base (split): the
	// store's writer, which writes an index delta, the previous store and
	// its directory.
	sw      *recstore.Writer
	store   *recstore.Store
	prevDir string
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

// split makes the column a delta beside the previous generation's base
// column when kind's store keeps its base's index (sw writes an index
// delta) and that column's rows are the base index's: a column with a
// delta, or one over a store without an index delta. Otherwise the column
// is written whole.
func (a *affBuild) split(sw *recstore.Writer, prev *recstore.Store, prevDir string) {
	if a == nil || a.prev == nil || sw == nil {
		return
	}
	if _, ok := sw.IndexDelta(); !ok {
		return
	}
	if _, _, ok := prev.IndexDelta(); ok && !a.prev.Delta() {
		return
	}
	a.w = affcol.NewWriter(a.prev.Fields(), 0)
	a.sw, a.store, a.prevDir = sw, prev, prevDir
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
	if a.sw != nil {
		if _, delta := a.store.Split(pi); !delta {
			return nil // the store keeps it in its base, and the base column its row
		}
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
	if a.sw != nil {
		return a.writeDelta(dir)
	}
	if a.w.Len() != records {
		return errors.New("affiliation column: " + string(a.kind) + ": rows and records differ")
	}
	return a.w.Write(filepath.Join(dir, string(a.kind)+affcol.Suffix))
}

// writeDelta writes a split column's delta, checking it has a row per
// record of the store's index delta, and links the base column beside it.
func (a *affBuild) writeDelta(dir string) error {
	if records, _ := a.sw.IndexDelta(); a.w.Len() != records {
		return errors.New("affiliation column: " + string(a.kind) + ": delta rows and records differ")
	}
	base := string(a.kind) + affcol.Suffix
	if err := disk.LinkOrCopy(filepath.Join(a.prevDir, base), filepath.Join(dir, base), disk.PrivateFile); err != nil {
		return err
	}
	return a.w.Write(filepath.Join(dir, string(a.kind)+affcol.DeltaSuffix))
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
		if base, delta, ok := s.IndexDelta(); ok {
			dpath := filepath.Join(g.dir, recordsDir, string(kind)+affcol.DeltaSuffix)
			if _, err := os.Stat(dpath); err == nil {
				if err := g.openSplitColumn(kind, s, path, dpath, base, delta); err != nil {
					return err
				}
				continue
			}
		}
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

// openSplitColumn opens kind's column kept as a base (of the store's base
// index, base rows) and a delta (of its index delta, delta rows).
func (g *Generation) openSplitColumn(kind snapshots.Kind, s *recstore.Store, path, dpath string, base, delta int) error {
	bc, release, err := affcol.Open(path, false, base)
	if err != nil {
		return err
	}
	g.affRelease = append(g.affRelease, release)
	dc, release, err := affcol.Open(dpath, false, delta)
	if err != nil {
		return err
	}
	g.affRelease = append(g.affRelease, release)
	c, err := affcol.WithDelta(bc, dc, s)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	g.affs[kind] = c
	return nil
}

// Affiliations is kind's affiliation column, by its store's positions;
// nil when the generation has none (package query reads the store then).
func (g *Generation) Affiliations(k snapshots.Kind) *affcol.Column { return g.affs[k] }

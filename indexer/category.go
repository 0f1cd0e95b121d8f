package indexer

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/nametable"
	"gds/indexer/pace"
	"gds/snapshots"
	"gds/snapshots/disk"
)

// A search category whose file changed is written in one of two steps:
// whole (buildCategory, from every record: base table, one overlay per
// language, bleve shards built or patched) or patched (patchCategory, from
// the new and changed records only, after an incremental read).
//
// An incremental build patches a category instead of rebuilding it: the
// previous generation's base table is hard-linked, and a delta table holds
// the records added or changed since that base was written, its mask hiding
// their old base entries (and removed records). Searches walk both and
// merge, as they do a language overlay. Each incremental build rewrites the
// delta (previous delta + this build's changes), so it grows with the
// changes since the last full table, never with the number of builds; past
// maxTableDelta of the base the tables are written whole again, from the
// folded names already in them (no record is decoded for that).
const (
	deltaTable = "delta.tbl"
	baseTable  = "base.tbl"
	// maxTableDelta is the largest delta (its names plus hidden base
	// names), relative to the base, that an incremental build writes.
	maxTableDelta = 0.10
)

// buildCategory writes a category's tables and bleve shards from all its
// records. Patching bleve, the tables are written on one goroutine while
// the shards are patched beside it; otherwise the shards are left to the
// second phase and the tables are written in the background (tableJob),
// while the build reads the next kinds: finishTables waits for them.
func (b *builder) buildCategory(cat snapshots.Category, docs []docInfo, cols *tableColumns, ch change) error {
	cdir := filepath.Join(b.dir, string(cat))
	if err := os.MkdirAll(cdir, disk.PrivateDir); err != nil {
		return err
	}
	for _, name := range []string{deltaTable, ColumnsPath(deltaTable), TypoPath(deltaTable)} {
		if err := os.Remove(filepath.Join(cdir, name)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	b.report(Progress{Phase: "tables", Kind: string(cat), Total: int64(len(docs))})
	shards := b.shardsFor(cat, len(docs))
	// Without bleve shards the tables answer the analysts; shards not
	// patched are built in the second phase.
	patch := shards > 0 && b.canPatch(cat, shards, len(docs), ch)
	if shards > 0 && !patch {
		b.meta.Incremental = false
		b.deferBleve(cat, shards, docs)
	}
	job := &tableJob{cat: cat, n: len(docs), shards: shards, done: make(chan struct{})}
	go func(ctx context.Context, docs []docInfo) { // docs an argument, not captured: writeTables lets go of it
		defer close(job.done)
		job.langs, job.err = writeTables(pace.WithWork(ctx, &job.work), cdir, docs, cols, !patch)
	}(b.ctx, docs)
	if !patch {
		b.tables = append(b.tables, job)
		return nil
	}
	if bounds, ok := b.prev.Meta.ShardBounds[cat]; ok {
		b.setBounds(cat, bounds)
	}
	err := b.patchBleve(cat, shards, upsertDocs(docs, ch), ch.deletes)
	if terr := b.finishTable(job); err == nil {
		err = terr
	}
	return err
}

// tableJob is a category's tables being written in the background.
type tableJob struct {
	cat       snapshots.Category
	n, shards int
	done      chan struct{}
	langs     []string
	err       error
	// work counts the names the job has gone over, tableSteps times each
	// (pace.Worked): its progress while finishTable waits for it.
	work atomic.Int64
}

// tableSteps is how many times writeTables goes over a category's names
// (pace.Worked): its value columns, the table's steps
// (nametable.WriteSteps) and the typo index. Its language overlays come
// on top, at the end.
const tableSteps = 1 + nametable.WriteSteps + 1

// tablesReportEvery is how often finishTable reports a job's progress
// while it waits for it.
const tablesReportEvery = time.Second

// progress is how far the job is, in names.
func (job *tableJob) progress() Progress {
	done := min(job.work.Load()/tableSteps, int64(job.n))
	return Progress{Phase: "tables", Kind: string(job.cat), Done: done, Total: int64(job.n)}
}

// finishTable waits for a category's tables, reporting their progress,
// and records them in the generation's meta.
func (b *builder) finishTable(job *tableJob) error {
	tick := time.NewTicker(tablesReportEvery)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-job.done:
			waiting = false
		case <-tick.C:
			b.report(job.progress())
		}
	}
	if job.err != nil {
		return job.err
	}
	b.report(Progress{Phase: "tables", Kind: string(job.cat), Done: int64(job.n), Total: int64(job.n)})
	b.meta.Counts[job.cat] = job.n
	if len(job.langs) > 0 {
		b.meta.Languages[job.cat] = job.langs
	}
	b.meta.Shards[job.cat] = job.shards
	return nil
}

// finishTables waits for every table still being written (also when the
// build failed: nothing may write into its directory afterwards) and
// returns the first error.
func (b *builder) finishTables() error {
	var first error
	for _, job := range b.tables {
		if err := b.finishTable(job); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", job.cat, err)
		}
	}
	b.tables = nil
	return first
}

// writeTables writes the base table with its value columns (cols: the
// docs' values by position) and one overlay per language whose names
// differ from the base names; it returns those languages.
//
// Past the entries, docs is not used: once the caller has let go of it
// too, the records' docs (most of a large category's memory) are freed
// while the tables are built. When own, nothing else reads docs, and each
// doc's names are let go of as soon as they are folded.
func writeTables(ctx context.Context, cdir string, docs []docInfo, cols *tableColumns, own bool) ([]string, error) {
	tickers := tickersOf(docs)
	base, overlays, access := tableEntries(docs, own)
	if err := writeTable(ctx, filepath.Join(cdir, baseTable), base, access, nil, cols); err != nil {
		return nil, err
	}
	if err := writeTypos(ctx, filepath.Join(cdir, baseTable), base, tickers); err != nil {
		return nil, err
	}
	langs := make([]string, 0, len(overlays))
	for lang := range overlays {
		langs = append(langs, lang)
	}
	sort.Strings(langs)
	for _, lang := range langs {
		// The mask names the base ordinals this overlay replaces; base is
		// sorted in ordinal order now.
		replaced := map[int64]bool{}
		for _, e := range overlays[lang] {
			replaced[e.ID] = true
		}
		mask := roaring.New()
		for o, e := range base {
			if replaced[e.ID] {
				mask.Add(uint32(o))
			}
		}
		if err := nametable.Write(ctx, filepath.Join(cdir, lang+".tbl"), overlays[lang], access, mask); err != nil {
			return nil, err
		}
		if err := writeTypos(ctx, filepath.Join(cdir, lang+".tbl"), overlays[lang], tickers); err != nil {
			return nil, err
		}
	}
	return langs, nil
}

// tableEntries returns the base entries of docs, per language the names
// that differ from them, and the docs' access lists (nil when none has
// one), which the base and the overlays share. When release, it empties
// each doc's names and fields past its ID once they are in the entries:
// beside the folded names, the names would be as much again.
func tableEntries(docs []docInfo, release bool) (base []nametable.Entry, overlays map[string][]nametable.Entry, access nametable.Access) {
	base = make([]nametable.Entry, len(docs))
	overlays = map[string][]nametable.Entry{}
	for i, d := range docs {
		if release {
			docs[i] = docInfo{id: d.id}
		}
		base[i] = nametable.Entry{ID: d.id, Folded: nametable.Fold(d.name)}
		access = addAccess(access, d)
		for lang, n := range d.names() {
			if lang == "en" || n == d.name {
				continue
			}
			overlays[lang] = append(overlays[lang], nametable.Entry{ID: d.id, Folded: nametable.Fold(n)})
		}
	}
	return base, overlays, access
}

// addAccess adds d's access list to access, made when d is the first
// with one.
func addAccess(access nametable.Access, d docInfo) nametable.Access {
	if a := d.access(); a != nil {
		if access == nil {
			access = nametable.Access{}
		}
		access[d.id] = a
	}
	return access
}

// patchCategory applies an incremental read (new and changed records
// only) to a category: delta tables and patched bleve shards, side by side.
// It reports false, having written nothing, when the category must be
// rebuilt from every record instead.
func (b *builder) patchCategory(cat snapshots.Category, rd readResult, early *shardPatcher) (bool, error) {
	n := int(b.snap.Count(cat.Kind()))
	shards := b.shardsFor(cat, n)
	prev := b.prev.Tables(cat)
	ok := prev != nil && len(prev.Overlays) == 0 && len(b.prev.Meta.Languages[cat]) == 0 && (shards == 0 || b.canPatch(cat, shards, n, rd.ch)) &&
		prev.BaseColumns != nil && (prev.Delta == nil || prev.DeltaColumns != nil) // the kept entries' values come from there
	for _, d := range rd.docs {
		for lang, name := range d.names() {
			if lang != "en" && name != d.name {
				ok = false // a localized name: overlays are built from every record
			}
		}
	}
	if !ok {
		if early != nil {
			early.discard()
		}
		return false, nil
	}
	cdir := filepath.Join(b.dir, string(cat))
	if err := os.MkdirAll(cdir, disk.PrivateDir); err != nil {
		return false, err
	}
	b.report(Progress{Phase: "tables", Kind: string(cat), Total: int64(len(rd.docs))})
	var (
		wg       sync.WaitGroup
		bleveErr error
	)
	switch {
	case shards == 0: // no bleve shards to patch
	case b.deferPatches() && early == nil:
		b.pendingBleve = append(b.pendingBleve, bleveTask{cat: cat, shards: shards, bounds: b.prev.Meta.ShardBounds[cat],
			patch: &blevePatch{upserts: rd.docs, deletes: rd.ch.deletes}})
	default:
		wg.Add(1)
		go func() {
			defer wg.Done()
			if early != nil {
				bleveErr = early.finish(rd.docs, rd.ch.deletes)
			} else {
				bleveErr = b.patchBleve(cat, shards, rd.docs, rd.ch.deletes)
			}
		}()
	}
	delta, err := patchTables(b.ctx, prev, filepath.Join(b.prev.Dir(), string(cat)), cdir, cat, rd.docs, rd.cols, rd.ch, n)
	wg.Wait()
	if err != nil {
		return false, err
	}
	if bleveErr != nil {
		return false, bleveErr
	}
	b.meta.Counts[cat] = n
	b.meta.Shards[cat] = shards
	if bounds, ok := b.prev.Meta.ShardBounds[cat]; ok && shards > 0 {
		b.setBounds(cat, bounds)
	}
	if delta >= 0 {
		if b.meta.Deltas == nil {
			b.meta.Deltas = map[snapshots.Category]int{}
		}
		b.meta.Deltas[cat] = delta
	}
	return true, nil
}

// patchTables writes a category's tables into cdir from the previous
// generation's (prev, in prevDir) and the changes: the base hard-linked
// plus a new delta, or, when the delta would pass maxTableDelta, a new
// base alone, each with its value columns (the kept entries' values from
// the previous columns, the upserts' from their records). It returns the
// delta's size, or -1 when it wrote no delta.
func patchTables(ctx context.Context, prev *CategoryTables, prevDir, cdir string, cat snapshots.Category, upserts []docInfo, upsertCols *tableColumns, ch change, want int) (int, error) {
	changed := newIDSet(ch.upserts, ch.deletes)
	isChanged := changed.has
	tickers := keptTickers(prev, upserts)
	base := prev.Base
	mask := roaring.New()
	if prev.Delta != nil && prev.Delta.Mask() != nil {
		mask = prev.Delta.Mask().Clone()
	}
	if changed.len() > 0 {
		mask.AddMany(changed.ordinals(base))
	}
	// The delta's entries: the previous delta's unchanged ones, then the
	// upserts; a new base puts the base's kept entries before them.
	var (
		entries []nametable.Entry
		access  nametable.Access
	)
	if prev.Delta != nil {
		entries, access = prev.Delta.Entries(nil, isChanged)
	}
	for _, d := range upserts {
		entries = append(entries, nametable.Entry{ID: d.id, Folded: nametable.Fold(d.name)})
		access = addAccess(access, d)
	}
	if got := base.Len() - int(mask.GetCardinality()) + len(entries); got != want {
		return -1, fmt.Errorf("patched tables would hold %d names, the snapshot has %d", got, want)
	}
	cols := newTableColumns(cat, len(entries)) // a delta's; a new base grows
	addEntries := func(first int) {
		if prev.Delta != nil {
			cols.addFrom(prev.DeltaColumns, keptPositions(prev.Delta, nil, isChanged, first))
		}
		cols.addShifted(upsertCols, first+len(entries)-len(upserts))
	}
	if float64(len(entries))+float64(mask.GetCardinality()) > maxTableDelta*float64(max(base.Len(), 1)) {
		all, allAccess := base.Entries(mask, nil)
		all = append(all, entries...)
		if len(access) > 0 && allAccess == nil {
			allAccess = nametable.Access{}
		}
		maps.Copy(allAccess, access)
		cols.addFrom(prev.BaseColumns, keptPositions(base, mask, nil, 0))
		addEntries(len(all) - len(entries))
		for _, name := range []string{deltaTable, ColumnsPath(deltaTable), TypoPath(deltaTable)} {
			if err := os.Remove(filepath.Join(cdir, name)); err != nil && !os.IsNotExist(err) {
				return -1, err
			}
		}
		if err := writeTable(ctx, filepath.Join(cdir, baseTable), all, allAccess, nil, cols); err != nil {
			return -1, err
		}
		return -1, writeTypos(ctx, filepath.Join(cdir, baseTable), all, tickers)
	}
	for _, name := range []string{baseTable, ColumnsPath(baseTable), TypoPath(baseTable)} {
		dst := filepath.Join(cdir, name)
		if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
			return -1, err
		}
		if err := disk.LinkOrCopy(filepath.Join(prevDir, name), dst, disk.PrivateFile); err != nil {
			return -1, err
		}
	}
	addEntries(0)
	if err := writeTable(ctx, filepath.Join(cdir, deltaTable), entries, access, mask, cols); err != nil {
		return -1, err
	}
	return len(entries), writeTypos(ctx, filepath.Join(cdir, deltaTable), entries, tickers)
}

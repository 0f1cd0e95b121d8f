package indexer

import (
	"math"
	"path/filepath"

	"gds/indexer/pace"
	"gds/indexer/recstore"
	"gds/snapshots"
)

// readResult is what reading one kind's file yields.
type readResult struct {
	// docs holds what the category needs of every record, or, when
	// partial, of the new and changed records only.
	docs    []docInfo
	ch      change
	partial bool
	// cols holds the value columns' values of docs, by position.
	cols *tableColumns
	// split says the store was not written: a second pass over the file
	// writes it (storeJob) while the tables are written. corps holds each
	// record's corporation then (structures' group).
	split bool
	corps []int64
}

// maxStoreDelta is the largest delta file, relative to the base file, an
// incremental build keeps adding to; past it the store is written whole.
const maxStoreDelta = 0.25

// readKind streams one kind into its store, collecting what the category
// needs and what changed since the previous generation. When partial, lines
// byte-identical to the previous generation's records are not decoded, and
// only new and changed records are collected.
func (b *builder) readKind(kind snapshots.Kind, partial bool, early *shardPatcher) (rd readResult, err error) {
	rd.partial = partial
	var prev *recstore.Store
	if b.prev != nil {
		prev = b.prev.Store(kind)
	}
	cat, searchable := categoryOf(kind)
	rd.split = searchable && !partial
	sw, err := b.storeFor(kind, partial, rd.split, prev)
	if err != nil {
		return rd, err
	}
	abort := sw // stopped, its files left to the build directory's removal, if the read fails
	defer func() {
		if err != nil && abort != nil {
			abort.Abort()
		}
	}()
	total := b.snap.Count(kind)
	if sw != nil {
		sw.Reserve(int(total))
	}
	aff := b.newAffBuild(kind, int(total))
	if prev != nil {
		aff.split(sw, prev, filepath.Join(b.prev.Dir(), recordsDir))
	}
	if searchable {
		if err := rd.collect(cat, int(total), b.dir); err != nil {
			return rd, err
		}
	}
	cur := prevCursor{s: prev}
	var opts snapshots.EachOptions
	if partial {
		opts.Skip = b.unchangedIn(prev)
	}
	var n int64
	tick := pace.Every(b.ctx, recordsPerPace)
	err = b.snap.EachWith(kind, opts, func(rec snapshots.Record, line snapshots.Line) error {
		tick()
		cur.skipTo(line.Key, &rd.ch.deletes)
		known := cur.at(line.Key)
		if rec == nil { // skipped: the previous generation's record, unchanged
			if err := sw.Keep(cur.i, line.Raw); err != nil {
				return err
			}
			if err := aff.keep(cur.i, line.Raw); err != nil {
				return err
			}
			cur.i++
		} else {
			changed := !known || prev.Hash(cur.i) != prev.HashOf(line.Raw)
			if known {
				cur.i++
			}
			if changed && prev != nil {
				rd.ch.upserts = append(rd.ch.upserts, line.Key)
			}
			if err := b.addRecord(&rd, sw, rec, line, searchable && (!partial || changed)); err != nil {
				return err
			}
			if err := aff.add(rec); err != nil {
				return err
			}
		}
		if early != nil {
			early.passed(line.Key, rd.docs, rd.ch.deletes)
		}
		if n++; n%100000 == 0 {
			b.report(Progress{Phase: "read", Kind: string(kind), Done: n, Total: total})
			if err := b.ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return rd, err
	}
	cur.skipTo(math.MaxInt64, &rd.ch.deletes)
	if cur.at(math.MaxInt64) {
		rd.ch.deletes = append(rd.ch.deletes, math.MaxInt64)
	}
	if rd.cols != nil {
		rd.cols.fit()
	}
	b.report(Progress{Phase: "read", Kind: string(kind), Done: n, Total: total})
	if err := aff.write(filepath.Join(b.dir, recordsDir), int(n)); err != nil {
		return rd, err
	}
	if sw == nil {
		return rd, nil
	}
	abort = nil // Close cleans up after itself
	return rd, sw.Close()
}

// prevCursor walks the previous generation's keys beside the snapshot's
// (ascending both): i is the position of the first previous key not yet
// passed.
type prevCursor struct {
	s *recstore.Store
	i int
}

// skipTo passes the previous keys below key, which the snapshot no longer
// has, appending them to deletes unless it is nil.
func (c *prevCursor) skipTo(key int64, deletes *[]int64) {
	for c.s != nil && c.i < c.s.Len() && c.s.Key(c.i) < key {
		if deletes != nil {
			*deletes = append(*deletes, c.s.Key(c.i))
		}
		c.i++
	}
}

// at reports whether the previous key at the cursor is key.
func (c *prevCursor) at(key int64) bool {
	return c.s != nil && c.i < c.s.Len() && c.s.Key(c.i) == key
}

// collect makes room for what a searchable kind's records give the
// category: every record's of total when read whole (the value columns
// kept in temporary files in dir), else the new and changed records'.
func (rd *readResult) collect(cat snapshots.Category, total int, dir string) error {
	if rd.partial {
		rd.docs = make([]docInfo, 0)
		rd.cols = newTableColumns(cat, 0)
		return nil
	}
	rd.docs = make([]docInfo, 0, total)
	rd.cols = newTableColumns(cat, 0)
	return rd.cols.spillColumns(dir)
}

// unchangedIn is the snapshot reader's Skip of a partial read: a line is
// skipped when prev holds its key with the same hash. It runs on the
// reader's goroutine, ahead of the records' function, and walks prev with
// a cursor of its own.
func (b *builder) unchangedIn(prev *recstore.Store) func(key int64, raw []byte) bool {
	cur := prevCursor{s: prev}
	tick := pace.Every(b.ctx, linesPerPace)
	return func(key int64, raw []byte) bool {
		tick()
		cur.skipTo(key, nil)
		return cur.at(key) && prev.Hash(cur.i) == prev.HashOf(raw)
	}
}

// storeFor opens the writer of kind's store: none for a search category
// read whole (split: buildstore.go writes its store in a second pass), a
// delta beside the previous generation's base while the delta stays small,
// else a store written whole.
func (b *builder) storeFor(kind snapshots.Kind, partial, split bool, prev *recstore.Store) (*recstore.Writer, error) {
	dir := filepath.Join(b.dir, recordsDir)
	switch {
	case split:
		return nil, nil
	case partial && prev.Compressed() && prev.DeltaShare() < maxStoreDelta:
		return recstore.NewDeltaWriter(dir, string(kind), prev, filepath.Join(b.prev.Dir(), recordsDir))
	default:
		return recstore.NewWriter(dir, string(kind), prev)
	}
}

// addRecord takes one decoded record into kind's store (or, without a
// writer, notes its group for the second pass) and, when doc, into the
// category's documents and value columns.
func (b *builder) addRecord(rd *readResult, sw *recstore.Writer, rec snapshots.Record, line snapshots.Line, doc bool) error {
	if sw == nil {
		if r, ok := rec.(*snapshots.Structure); ok {
			rd.corps = append(rd.corps, r.CorporationID)
		}
	} else {
		if err := sw.Add(line.Key, line.Raw); err != nil {
			return err
		}
		switch r := rec.(type) {
		case *snapshots.Structure:
			sw.Group(groupCorporation, r.CorporationID)
		case *snapshots.Document:
			sw.Group(groupPath, recstore.HashPath(r.Path))
		}
	}
	if doc {
		rd.docs = append(rd.docs, b.docOf(line.Key, rec, b.mayPatch()))
		rd.cols.addRecord(len(rd.docs)-1, rec)
	}
	return nil
}

// baseName is the name searched when no language is asked for: the English
// localization where there is one, else the single name.
func baseName(n snapshots.Named) string {
	if en, ok := n.LocalizedNames()["en"]; ok {
		return en
	}
	return n.DisplayName()
}

// docOf is what a category needs of one record; the analysts' fields only
// with attrs (the tables do not need them).
func (b *builder) docOf(key int64, rec snapshots.Record, attrs bool) docInfo {
	named := rec.(snapshots.Named)
	more := docMore{names: named.LocalizedNames()}
	switch r := rec.(type) {
	case *snapshots.Structure:
		more.access = r.Access
	case *snapshots.Corporation:
		more.ticker = r.Ticker
	case *snapshots.Alliance:
		more.ticker = r.Ticker
	}
	if attrs {
		more.attrs = attributes(rec, b.universe)
	}
	return newDoc(key, baseName(named), more)
}

// mayPatch reports whether the documents read in the first phase may
// patch bleve shards (an incremental build), and so need their analysts'
// fields; shards built whole read them again in the second phase.
func (b *builder) mayPatch() bool { return b.prev != nil && !b.full }

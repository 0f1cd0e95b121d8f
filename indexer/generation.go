package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"

	"gds/indexer/affcol"
	"gds/indexer/nametable"
	"gds/indexer/recstore"
	"gds/indexer/typo"
	"gds/indexer/valuecol"
	"gds/snapshots"
	"gds/snapshots/disk"
)

// Layout of a data directory:
//
//	<data>/CURRENT                          the live generation's number
//	<data>/generations/<n>/generation.json  Meta, written last
//	<data>/generations/<n>/records/         a Store per kind (<kind>.data, .delta, .idx, .by-*)
//	<data>/generations/<n>/<category>/      base.tbl, <lang>.tbl or delta.tbl, base.cols (delta.cols), bleve-<shard>/
//	<data>/generations/<n>.building/        a build in progress (removed on start)
const (
	currentFile   = "CURRENT"
	generationsIn = "generations"
	metaFile      = "generation.json"
	recordsDir    = "records"
	buildingExt   = ".building"
)

// Meta describes a complete generation.
type Meta struct {
	// ID numbers generations in the order they were built.
	ID uint64 `json:"id"`
	// Created is when the generation became complete.
	Created time.Time `json:"created"`
	// Snapshot is the directory the generation was built from.
	Snapshot string `json:"snapshot"`
	// SnapshotHash is the manifest hash of that snapshot.
	SnapshotHash string `json:"snapshot_hash"`
	// SnapshotSource and SnapshotCreated come from its manifest.
	SnapshotSource  string    `json:"snapshot_source"`
	SnapshotCreated time.Time `json:"snapshot_created"`
	// Counts holds the documents per search category.
	Counts map[snapshots.Category]int `json:"counts"`
	// Records holds the records per kind.
	Records map[snapshots.Kind]int `json:"records"`
	// Files holds the SHA-256 of each kind's snapshot file, so the next
	// build can reuse what comes from an unchanged file.
	Files map[snapshots.Kind]string `json:"files,omitempty"`
	// Languages lists, per category, the languages with localized names.
	Languages map[snapshots.Category][]string `json:"languages,omitempty"`
	// Shards is the number of bleve shards per category.
	Shards map[snapshots.Category]int `json:"shards"`
	// ShardBounds holds, per category, the first key of each bleve shard
	// after the first: shards hold contiguous key ranges. Absent for
	// generations that spread records over shards by a hash of the key.
	ShardBounds map[snapshots.Category][]int64 `json:"shard_bounds,omitempty"`
	// BleveBatch is the documents per bleve batch (and segment) of the
	// shards this build indexed whole (Options.BatchSize); patched shards
	// keep the segments of the build that wrote them.
	BleveBatch int `json:"bleve_batch,omitempty"`
	// Deltas holds, per category patched by an incremental build, the
	// names in its delta table (delta.tbl: records added or changed since
	// its base table was written, which hides their old base entries).
	Deltas map[snapshots.Category]int `json:"deltas,omitempty"`
	// Fold is the nametable.FoldVersion the name tables and bleve indexes
	// were built with; 0 (absent) is version 1. Another version than this
	// code's is rebuilt in full, even from an unchanged snapshot.
	Fold int `json:"fold,omitempty"`
	// Fields is the version of the analysts' document fields the bleve
	// shards hold (FieldsVersion); a build from a generation of another
	// version indexes everything again, even from an unchanged snapshot.
	Fields int `json:"fields,omitempty"`
	// Typos is the typo.Version of the typo indexes beside the tables
	// (0: none); a build from a generation of another version is full.
	Typos int `json:"typos,omitempty"`
	// Incremental is set when the build reused the previous generation's
	// bleve indexes and applied only the changed records.
	Incremental bool `json:"incremental"`
	// Changed counts the records that differed from the previous generation.
	Changed int `json:"changed"`
	// BuildDuration is how long the build took (both phases).
	BuildDuration Duration `json:"build_duration"`
	// SearchableAfter is how long the build took until the name tables
	// and record stores were complete, checked and live.
	SearchableAfter Duration `json:"searchable_after,omitempty"`
	// BlevePending is set while the analysts' bleve shards are not yet
	// complete and checked: the tables and record stores serve, the
	// analysts' queries are answered by an earlier generation. Absent
	// (false) in a complete generation.
	BlevePending bool `json:"bleve_pending,omitempty"`
}

// Duration marshals as seconds.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(time.Duration(d).Seconds(), 'f', 3, 64)), nil
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*d = Duration(f * float64(time.Second))
	return nil
}

// Generation is one complete, immutable build of every category. Readers
// Acquire it from the Manager and Release it when done; it is closed and
// deleted once retired and released by everyone.
type Generation struct {
	Meta Meta
	dir  string

	tables map[snapshots.Category]*CategoryTables
	stores map[snapshots.Kind]*recstore.Store
	// affs are the stores' affiliation columns (affiliations.go), and
	// what lets go of them.
	affs       map[snapshots.Kind]*affcol.Column
	affRelease []func() error
	// held says which of its parts are held in memory rather than
	// mapped.
	held held

	univOnce sync.Once
	univ     *universe // systems to regions, for FieldValues

	indexMu   sync.Mutex
	indexes   map[snapshots.Category]bleve.Index // opened on first use
	indexUses int                                // analyst queries running
	idle      time.Duration                      // close indexes this long after the last query; 0: never
	idleTimer *time.Timer
	closed    bool

	// bleveReady is set once the analysts' bleve shards are complete and
	// checked (at open for a complete generation; after the background
	// phase of a build for one just made live).
	bleveReady atomic.Bool
	// final is the Meta written when the bleve part completed (nil until
	// then, and for a generation opened complete).
	final atomic.Pointer[Meta]

	refs    atomic.Int64
	retired atomic.Bool
	remove  bool
	once    sync.Once
}

// CategoryTables is the search side of one category: the base table (the
// default names) and, per language, an overlay of the names that differ;
// or, after an incremental build, the base table of an earlier generation
// and a delta of what changed since. A category never has both.
type CategoryTables struct {
	Base     *nametable.Table
	Overlays map[string]*nametable.Table
	// Delta, when set, holds records added or changed since Base was
	// written; its Mask names the Base ordinals it hides (changed or
	// removed records).
	Delta *nametable.Table
	// BaseColumns and DeltaColumns are the value columns of Base and
	// Delta (package valuecol), in generations that have them
	// (Generation.HasColumns).
	BaseColumns, DeltaColumns *valuecol.File
	// BaseTypos, DeltaTypos and OverlayTypos are the typo indexes beside
	// the tables (package typo), in generations that have them
	// (Meta.Typos).
	BaseTypos, DeltaTypos *typo.Index
	OverlayTypos          map[string]*typo.Index
}

// BleveReady reports whether the generation's analysts' bleve shards are
// complete and checked; until then its Index refuses.
func (g *Generation) BleveReady() bool { return g.bleveReady.Load() }

// Dir is the generation's directory.
func (g *Generation) Dir() string { return g.dir }

// Tables returns a category's tables, or nil when the generation has none.
func (g *Generation) Tables(c snapshots.Category) *CategoryTables { return g.tables[c] }

// Store returns a kind's record store, or nil when the snapshot had none.
func (g *Generation) Store(k snapshots.Kind) *recstore.Store { return g.stores[k] }

// Release gives back a reference taken by Manager.Acquire.
func (g *Generation) Release() {
	if g.refs.Add(-1) == 0 {
		g.close()
	}
}

// tryAcquire takes a reference unless the generation is already closing.
func (g *Generation) tryAcquire() bool {
	for {
		n := g.refs.Load()
		if n <= 0 {
			return false
		}
		if g.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (g *Generation) close() {
	g.once.Do(func() {
		g.indexMu.Lock()
		g.closed = true
		if g.idleTimer != nil {
			g.idleTimer.Stop()
		}
		for _, idx := range g.indexes {
			_ = idx.Close()
		}
		g.indexMu.Unlock()
		for _, ct := range g.tables {
			if ct.Base != nil {
				_ = ct.Base.Close()
			}
			if ct.Delta != nil {
				_ = ct.Delta.Close()
			}
			_ = ct.BaseColumns.Close()
			_ = ct.DeltaColumns.Close()
			for _, t := range ct.Overlays {
				_ = t.Close()
			}
			ct.closeTypos()
		}
		for _, s := range g.stores {
			_ = s.Close()
		}
		for _, release := range g.affRelease {
			_ = release()
		}
		if g.remove {
			_ = os.RemoveAll(g.dir)
		}
	})
}

func readMeta(dir string) (Meta, error) {
	var m Meta
	raw, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%s: %w", metaFile, err)
	}
	return m, nil
}

// openGeneration opens a complete generation directory read-only, checking
// that it holds what its Meta says. idle is how long its bleve indexes stay
// open after the last analyst query (0: until it closes); held says what
// it may read into memory instead of mapping (inMemory.plan).
func openGeneration(dir string, idle time.Duration, held inMemory) (*Generation, error) {
	meta, err := readMeta(dir)
	if err != nil {
		return nil, fmt.Errorf("generation %s: %w", dir, err)
	}
	g := &Generation{Meta: meta, dir: dir, idle: idle, tables: map[snapshots.Category]*CategoryTables{},
		indexes: map[snapshots.Category]bleve.Index{}, stores: map[snapshots.Kind]*recstore.Store{},
		affs: map[snapshots.Kind]*affcol.Column{}}
	g.refs.Store(1)
	g.bleveReady.Store(!meta.BlevePending)
	fail := func(err error) (*Generation, error) {
		g.close()
		return nil, fmt.Errorf("generation %s: %w", dir, err)
	}
	cats := make([]string, 0, len(meta.Counts))
	for cat := range meta.Counts {
		cats = append(cats, string(cat))
	}
	g.held = held.plan(dir, cats)
	if err := g.openParts(); err != nil {
		return fail(err)
	}
	return g, nil
}

func storeGroups(k snapshots.Kind) []string {
	switch k {
	case snapshots.Structures:
		return []string{groupCorporation}
	case snapshots.Documents:
		return []string{groupPath}
	}
	return nil
}

// Group names of the stores' secondary keys.
const (
	groupCorporation = "corporation"
	groupPath        = "path"
)

// listGenerations returns the complete generation numbers under data,
// ascending; cleanup removes leftovers of builds that never finished.
func listGenerations(data string, cleanup bool) ([]uint64, error) {
	root := filepath.Join(data, generationsIn)
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []uint64
	for _, e := range ents {
		name := e.Name()
		if filepath.Ext(name) == buildingExt {
			if cleanup {
				_ = os.RemoveAll(filepath.Join(root, name))
			}
			continue
		}
		id, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// claimID reserves the next generation number after those on disk (of any
// process) by creating its build directory: Mkdir fails if another build
// took the number first, and the next one is tried.
func claimID(data string, after uint64) (uint64, string, error) {
	root := filepath.Join(data, generationsIn)
	ents, err := os.ReadDir(root)
	if err != nil {
		return 0, "", err
	}
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), buildingExt)
		if id, err := strconv.ParseUint(name, 10, 64); err == nil && id > after {
			after = id
		}
	}
	for id := after + 1; ; id++ {
		dir := generationDir(data, id) + buildingExt
		err := os.Mkdir(dir, disk.PrivateDir)
		if err == nil {
			return id, dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return 0, "", err
		}
	}
}

// buildLock is an exclusive lock on a data directory held for the length
// of a build, across processes: a second process's build waits for it, and
// leftovers of unfinished builds are only removed when nobody holds it.
// The kernel releases it when the holder dies, even by kill -9.
type buildLock = disk.Lock

func lockPath(data string) string { return filepath.Join(data, "build.lock") }

// tryLockBuilds takes the lock if it is free.
func tryLockBuilds(data string) (*buildLock, bool, error) {
	return disk.TryLock(lockPath(data), disk.PrivateFile)
}

// BuildRunning reports whether a process (this one included) holds data's
// build lock, that is, is writing a generation there now. Unfinished build
// directories without a holder are leftovers that Open removes.
func BuildRunning(data string) (bool, error) {
	if _, err := os.Stat(data); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	l, ok, err := tryLockBuilds(data)
	if err != nil || !ok {
		return !ok && err == nil, err
	}
	l.Unlock()
	return false, nil
}

// lockBuilds waits for the lock, giving up when ctx ends.
func lockBuilds(ctx context.Context, data string, waiting func()) (*buildLock, error) {
	for first := true; ; first = false {
		l, ok, err := tryLockBuilds(data)
		if err != nil || ok {
			return l, err
		}
		if first && waiting != nil {
			waiting()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func generationDir(data string, id uint64) string {
	return filepath.Join(data, generationsIn, fmt.Sprintf("%06d", id))
}

// finishDir writes a built directory's generation.json and renames it into
// place; on failure the directory is removed.
func finishDir(tmp, final string, meta Meta) error {
	err := writeMeta(tmp, meta)
	if err == nil {
		// bleve creates some files as the umask allows.
		err = disk.MakePrivate(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
	}
	return err
}

// openChecked opens the generation renamed into final and checks it
// against snap; on failure it is removed.
func (m *Manager) openChecked(final string, id uint64, snap *snapshots.Snapshot) (*Generation, error) {
	opened := m.now()
	gen, err := openGeneration(final, m.opts.AnalystIdle, m.opts.inMemory())
	if err == nil {
		err = check(gen, snap)
	}
	m.log.Debug().Uint64("generation", id).Dur("open", m.now().Sub(opened)).Msg("generation opened and checked")
	if err != nil {
		if gen != nil {
			gen.remove = true
			gen.Release()
		}
		_ = os.RemoveAll(final)
		return nil, fmt.Errorf("check of generation %d: %w", id, err)
	}
	return gen, nil
}

// check verifies a generation against its snapshot before it goes live:
// every category has as many names and bleve documents as records.
func check(g *Generation, snap *snapshots.Snapshot) error {
	for _, cat := range snapshots.Categories {
		want := snap.Count(cat.Kind())
		if !snap.Has(cat.Kind()) {
			continue
		}
		if got := g.Meta.Counts[cat]; int64(got) != want {
			return fmt.Errorf("%s: %d names indexed, snapshot has %d", cat, got, want)
		}
		if !g.BleveReady() || g.TablesAnswer(cat) {
			continue // checked once the background phase has built them, or none
		}
		n, err := g.countDocuments(cat)
		if err != nil {
			return err
		}
		if int64(n) != want {
			return fmt.Errorf("%s: bleve holds %d documents, snapshot has %d", cat, n, want)
		}
	}
	for kind, n := range g.Meta.Records {
		if s := g.Store(kind); s == nil || s.Len() != n {
			return fmt.Errorf("%s: record store does not hold %d records", kind, n)
		}
	}
	return nil
}

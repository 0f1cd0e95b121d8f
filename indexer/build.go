package indexer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"gds/snapshots"
	"gds/snapshots/disk"
)

// BuildRequest says what to build.
type BuildRequest struct {
	// Snapshot is the snapshot directory to build from.
	Snapshot string
	// Full rebuilds every bleve index even when few records changed.
	Full bool
	// Trigger says who asked: "start", "schedule", "cli", "admin".
	Trigger string
}

// How often a build's loops ask its pacer whether to pause (pace.Every):
// every this many records read from a snapshot (decoded and indexed),
// lines an incremental build only compares with the previous generation,
// or documents made for a bleve batch.
const (
	recordsPerPace = 1000
	linesPerPace   = 10000
	docsPerPace    = 500
)

// builder carries one build's state.
type builder struct {
	ctx      context.Context
	opts     Options
	snap     *snapshots.Snapshot
	prev     *Generation // may be nil
	full     bool
	dir      string
	meta     Meta
	progress func(Progress)
	docs     *documents
	log      zerolog.Logger

	// Full bleve builds run in the background, a shard per slot of
	// shardSlots across categories, while later kinds are read; run waits
	// for them (bleve) before it returns.
	shardSlots chan struct{}
	// universe maps systems to regions for the documents' derived fields.
	universe *universe
	bleve    sync.WaitGroup
	bleveErr firstErr // the first failure of a background bleve shard
	// cancel stops the whole build: a failed shard (a full disk) ends
	// it rather than letting the other kinds be read and written first.
	cancel context.CancelFunc
	// pendingBleve holds the categories whose bleve shards the second
	// phase builds (runBleve).
	pendingBleve []bleveTask
	// tables are categories' tables still being written while later
	// kinds are read (finishTables).
	tables []*tableJob
	// stores are record stores still being written by a second pass
	// over their files (writeStoreBeside).
	stores []*storeJob
}

// docInfo is what a category needs of one record to build its table and
// its bleve document.
//
// A large category's docs are held for every record while its tables are
// written, so the fields most records lack (a character has none of them
// in a full build) sit behind one pointer: 32 bytes a record, not 96.
type docInfo struct {
	id   int64
	name string
	more *docMore // nil when every field of it is empty
}

// docMore holds the fields of a docInfo that few records have.
type docMore struct {
	names  snapshots.Localized
	access []int64
	ticker string // corporations' and alliances' (typo indexes)
	attrs  []attr // the analysts' attribute fields
}

// newDoc is the docInfo of id and name with more's fields, which it
// keeps only when one of them is set.
func newDoc(id int64, name string, more docMore) docInfo {
	d := docInfo{id: id, name: name}
	if len(more.names) > 0 || len(more.access) > 0 || more.ticker != "" || len(more.attrs) > 0 {
		d.more = &more
	}
	return d
}

func (d docInfo) names() snapshots.Localized {
	if d.more == nil {
		return nil
	}
	return d.more.names
}

func (d docInfo) access() []int64 {
	if d.more == nil {
		return nil
	}
	return d.more.access
}

func (d docInfo) ticker() string {
	if d.more == nil {
		return ""
	}
	return d.more.ticker
}

func (d docInfo) attrs() []attr {
	if d.more == nil {
		return nil
	}
	return d.more.attrs
}

// change lists what differs from the previous generation for one kind.
type change struct {
	upserts []int64 // new or changed keys
	deletes []int64 // keys gone
}

func (c *change) size() int { return len(c.upserts) + len(c.deletes) }

func (b *builder) report(p Progress) {
	if b.progress != nil {
		b.progress(p)
	}
}

// run builds the generation into b.dir; the caller renames it into place.
func (b *builder) run() error {
	m, err := Mapping()
	if err != nil {
		return err
	}
	if b.docs, err = newDocuments(m); err != nil {
		return err
	}
	if err := b.prepareFields(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(b.dir, recordsDir), disk.PrivateDir); err != nil {
		return err
	}
	b.meta.Counts = map[snapshots.Category]int{}
	b.meta.Records = map[snapshots.Kind]int{}
	b.meta.Files = map[snapshots.Kind]string{}
	b.meta.Languages = map[snapshots.Category][]string{}
	b.meta.Shards = map[snapshots.Category]int{}
	b.meta.Incremental = b.prev != nil && !b.full
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	b.ctx, b.cancel = ctx, cancel
	b.shardSlots = make(chan struct{}, runtime.GOMAXPROCS(0))
	err = b.buildKinds()
	if err != nil {
		cancel() // stop the bleve builds still running
	}
	b.bleve.Wait()
	// A shard's failure cancelled the reading: its error is the cause.
	if berr := b.bleveErr.get(); berr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		return berr
	}
	return err
}

// buildKinds builds or reuses every kind of the snapshot, smallest file
// first: the bleve shards an incremental build patches in this phase (some
// as slow as several shards of names) and the tables written in the
// background (tableJob) then run while the largest is still being read,
// instead of alone at the end. (Largest first, its tables beside the
// others' reading, measured worse at 10M names: 183 against 144 CPU-seconds,
// the collector scanning its records all the while.)
func (b *builder) buildKinds() (err error) {
	defer func() {
		if terr := b.finishTables(); err == nil {
			err = terr
		}
		if serr := b.finishStores(); err == nil {
			err = serr
		}
	}()
	var kinds []snapshots.Kind
	size := map[snapshots.Kind]int64{}
	for _, kind := range snapshots.Kinds {
		if !b.snap.Has(kind) {
			continue
		}
		kinds = append(kinds, kind)
		if fi, err := os.Stat(filepath.Join(b.snap.Dir, b.snap.Manifest.Files[kind].Path)); err == nil {
			size[kind] = fi.Size()
		}
	}
	slices.SortStableFunc(kinds, func(x, y snapshots.Kind) int { return cmp.Compare(size[x], size[y]) })
	for _, kind := range kinds {
		if err := b.ctx.Err(); err != nil {
			return err
		}
		b.meta.Files[kind] = b.snap.Manifest.Files[kind].SHA256
		if b.unchanged(kind) {
			if err := b.reuse(kind); err != nil {
				return fmt.Errorf("%s: reuse: %w", kind, err)
			}
			continue
		}
		if err := b.buildKind(kind); err != nil {
			return err
		}
	}
	return nil
}

// unchanged reports whether kind's file is the very one the previous
// generation was built from.
func (b *builder) unchanged(kind snapshots.Kind) bool {
	if b.full || b.prev == nil {
		return false
	}
	sum, ok := b.prev.Meta.Files[kind]
	if cat, searchable := categoryOf(kind); searchable && b.derivedStale(cat) {
		return false
	} else if searchable && (b.prev.Meta.Shards[cat] == 0) != (b.shardsFor(cat, b.prev.Meta.Counts[cat]) == 0) {
		return false // bleve shards wanted where there are none, or the other way round
	}
	return ok && sum == b.snap.Manifest.Files[kind].SHA256 && b.prev.Store(kind) != nil
}

// reuse takes everything built from an unchanged file from the previous
// generation: its record store and, for a category, its tables and bleve
// shards. Files that never change once written are hard-linked.
func (b *builder) reuse(kind snapshots.Kind) error {
	b.report(Progress{Phase: "reuse", Kind: string(kind)})
	src, dst := filepath.Join(b.prev.Dir(), recordsDir), filepath.Join(b.dir, recordsDir)
	names, err := filepath.Glob(filepath.Join(src, string(kind)+".*"))
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := disk.LinkOrCopy(name, filepath.Join(dst, filepath.Base(name)), disk.PrivateFile); err != nil {
			return err
		}
	}
	b.meta.Records[kind] = b.prev.Meta.Records[kind]
	if err := b.columnFromStore(kind); err != nil {
		return err
	}
	cat, ok := categoryOf(kind)
	if !ok {
		return nil
	}
	if err := linkTree(filepath.Join(b.prev.Dir(), string(cat)), filepath.Join(b.dir, string(cat))); err != nil {
		return err
	}
	b.meta.Counts[cat] = b.prev.Meta.Counts[cat]
	b.meta.Shards[cat] = b.prev.Meta.Shards[cat]
	if langs := b.prev.Meta.Languages[cat]; len(langs) > 0 {
		b.meta.Languages[cat] = langs
	}
	if bounds, ok := b.prev.Meta.ShardBounds[cat]; ok {
		b.setBounds(cat, bounds)
	}
	if d, ok := b.prev.Meta.Deltas[cat]; ok {
		if b.meta.Deltas == nil {
			b.meta.Deltas = map[snapshots.Category]int{}
		}
		b.meta.Deltas[cat] = d
	}
	return nil
}

func categoryOf(k snapshots.Kind) (snapshots.Category, bool) {
	for _, c := range snapshots.Categories {
		if c.Kind() == k {
			return c, true
		}
	}
	return "", false
}

// buildKind builds one kind whose file changed: its store and, for a
// search category, its tables and bleve index. Against a previous
// generation it first reads only what changed (lines whose bytes differ
// from the records indexed before) and patches; when the category cannot
// be patched (too many changes, localized names) it reads the kind again,
// whole, and builds it from scratch.
func (b *builder) buildKind(kind snapshots.Kind) error {
	cat, searchable := categoryOf(kind)
	partial := !b.full && b.prev != nil && b.prev.Store(kind) != nil
	start := time.Now()
	defer func() {
		b.log.Debug().Str("kind", string(kind)).Dur("took", time.Since(start)).Msg("kind built")
	}()
	var early *shardPatcher
	if searchable && partial && !b.deferPatches() {
		early = b.startEarlyPatch(cat)
	}
	rd, err := b.readKind(kind, partial, early)
	if err != nil {
		if early != nil {
			early.discard()
		}
		return err
	}
	b.log.Debug().Str("kind", string(kind)).Bool("partial", rd.partial).Int("changed", rd.ch.size()).Dur("read", time.Since(start)).Msg("kind read")
	if searchable && rd.partial {
		done, err := b.patchCategory(cat, rd, early)
		if err != nil {
			return fmt.Errorf("%s: %w", cat, err)
		}
		if !done {
			b.report(Progress{Phase: "read", Kind: string(kind)})
			if rd, err = b.readKind(kind, false, nil); err != nil {
				return err
			}
		}
	}
	if rd.split {
		b.writeStoreBeside(kind, rd)
	}
	b.meta.Records[kind] = int(b.snap.Count(kind))
	b.meta.Changed += rd.ch.size()
	if searchable && !rd.partial {
		if err := b.buildCategory(cat, rd.docs, rd.cols, rd.ch); err != nil {
			return fmt.Errorf("%s: %w", cat, err)
		}
	}
	return nil
}

// linkTree copies a directory of a generation: files that never change
// once written (bleve segments *.zap, tables *.tbl, value columns *.cols,
// typo indexes *.typ) are hard-linked;
// everything else (bleve's root.bolt) is copied, since a patched index
// writes to it.
func linkTree(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, disk.PrivateDir)
		}
		if strings.HasSuffix(path, ".zap") || strings.HasSuffix(path, ".tbl") || strings.HasSuffix(path, ".cols") || strings.HasSuffix(path, ".typ") {
			return disk.LinkOrCopy(path, target, disk.PrivateFile)
		}
		return disk.CopyFile(path, target, disk.PrivateFile)
	})
}

// writeMeta writes generation.json last: a directory without it is not a
// generation.
func writeMeta(dir string, m Meta) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return disk.WriteFileAtomic(filepath.Join(dir, metaFile), append(raw, '\n'), disk.PrivateFile)
}

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
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	index "github.com/blevesearch/bleve_index_api"
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

// Progress reports how far a build is.
type Progress struct {
	Phase string `json:"phase"` // verify, read, tables, bleve, switch
	Kind  string `json:"kind,omitempty"`
	Done  int64  `json:"done"`
	Total int64  `json:"total"`
}

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
	bleveMu  sync.Mutex
	bleveErr error
	// cancel stops the whole build: a failed shard (a full disk) ends
	// it rather than letting the other kinds be read and written first.
	cancel context.CancelFunc
}

// docInfo is what a category needs of one record to build its table and
// its bleve document.
type docInfo struct {
	id     int64
	name   string
	names  snapshots.Localized
	access []int64
	attrs  []attr // the analysts' attribute fields
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
	if b.bleveErr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		return b.bleveErr
	}
	return err
}

// buildKinds builds or reuses every kind of the snapshot, smallest file
// first: the bleve shards of the smaller categories (a single shard each,
// some as slow as several shards of names) then build while the largest
// is still being read, instead of alone at the end.
func (b *builder) buildKinds() error {
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
	if searchable && partial {
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
	b.meta.Records[kind] = int(b.snap.Count(kind))
	b.meta.Changed += rd.ch.size()
	if searchable && !rd.partial {
		if err := b.buildCategory(cat, rd.docs, rd.ch); err != nil {
			return fmt.Errorf("%s: %w", cat, err)
		}
	}
	return nil
}

// shardRouter says which bleve shard of a category holds a record. Shards
// hold contiguous key ranges (records arrive in key order, so a shard is
// complete before the next starts, and at most a couple build at once):
// bounds[i] is the first key of shard i+1. (Generations of earlier
// versions spread records by a hash and recorded no bounds; they are not
// patched but rebuilt.)
type shardRouter struct {
	bounds []int64
}

func (r shardRouter) shard(id int64) int {
	return sort.Search(len(r.bounds), func(i int) bool { return r.bounds[i] > id })
}

// shardsFor is the number of shards of a category of n records.
func (b *builder) shardsFor(n int) int { return max(1, (n+b.opts.ShardSize-1)/b.opts.ShardSize) }

func (b *builder) setBounds(cat snapshots.Category, bounds []int64) {
	if b.meta.ShardBounds == nil {
		b.meta.ShardBounds = map[snapshots.Category][]int64{}
	}
	if bounds == nil {
		bounds = []int64{}
	}
	b.meta.ShardBounds[cat] = bounds
}

// buildBleve starts indexing every document (in key order) into fresh
// shards of contiguous key ranges, in the background; run waits for them.
func (b *builder) buildBleve(cat snapshots.Category, cdir string, shards int, docs []docInfo) {
	parts := make([][]int, shards)
	per := (len(docs) + shards - 1) / max(shards, 1)
	var bounds []int64
	for i, d := range docs {
		s := min(i/max(per, 1), shards-1)
		if len(parts[s]) == 0 && s > 0 {
			bounds = append(bounds, d.id)
		}
		parts[s] = append(parts[s], i)
	}
	b.setBounds(cat, bounds)
	var (
		mu   sync.Mutex
		done int64
	)
	// indexed reports n more documents in shards.
	indexed := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		done += int64(n)
		b.report(Progress{Phase: "bleve", Kind: string(cat), Done: done, Total: int64(len(docs))})
	}
	b.bleve.Add(shards)
	for s := 0; s < shards; s++ {
		go func(s int) {
			defer b.bleve.Done()
			select {
			case b.shardSlots <- struct{}{}:
			case <-b.ctx.Done():
				b.bleveFailed(b.ctx.Err())
				return
			}
			defer func() { <-b.shardSlots }()
			flushed := 0
			err := b.indexShard(b.ctx, shardDir(cdir, s), func(batch *shardBatch, flush func() error) error {
				for _, i := range parts[s] {
					d := docs[i]
					batch.update(b.docs.document(d))
					if n := batch.len(); n >= b.opts.BatchSize {
						if err := flush(); err != nil {
							return err
						}
						flushed += n
						indexed(n)
					}
				}
				return nil
			})
			if err != nil {
				b.bleveFailed(fmt.Errorf("%s: %w", cat, err))
				return
			}
			indexed(len(parts[s]) - flushed)
		}(s)
	}
}

// bleveFailed records the first error of a background bleve build.
func (b *builder) bleveFailed(err error) {
	b.bleveMu.Lock()
	defer b.bleveMu.Unlock()
	if b.bleveErr == nil {
		b.bleveErr = err
	}
	if b.cancel != nil {
		b.cancel()
	}
}

// canPatch reports whether the previous generation's bleve shards can be
// copied and patched with the changed records instead of rebuilt.
func (b *builder) canPatch(cat snapshots.Category, shards, n int, ch change) bool {
	if b.full || b.prev == nil || b.prev.Meta.Shards[cat] != shards || b.derivedStale(cat) {
		return false
	}
	if _, ok := b.prev.Meta.Counts[cat]; !ok {
		return false
	}
	if bounds, ok := b.prev.Meta.ShardBounds[cat]; shards > 1 && (!ok || len(bounds) != shards-1) {
		return false // shards of an earlier version, spread by hash
	}
	return float64(ch.size()) <= b.opts.MaxIncrementalShare*float64(max(n, 1))
}

// upsertDocs picks the new and changed records' docs out of all of them.
func upsertDocs(docs []docInfo, ch change) []docInfo {
	want := make(map[int64]bool, len(ch.upserts))
	for _, id := range ch.upserts {
		want[id] = true
	}
	out := make([]docInfo, 0, len(ch.upserts))
	for _, d := range docs {
		if want[d.id] {
			out = append(out, d)
		}
	}
	return out
}

// patchBleve copies the previous shards (hard links for the immutable
// segment files) and applies the changed records (in key order), several
// shards at once.
func (b *builder) patchBleve(cat snapshots.Category, shards int, upserts []docInfo, deletes []int64) error {
	return b.newShardPatcher(cat, shards, runtime.GOMAXPROCS(0)).finish(upserts, deletes)
}

// patchShard patches one shard with its changes.
func (b *builder) patchShard(src, dst string, upserts []docInfo, deletes []int64) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := linkTree(src, dst); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return b.indexShard(b.ctx, dst, func(batch *shardBatch, flush func() error) error {
		for _, id := range deletes {
			batch.delete(strconv.FormatInt(id, 10))
		}
		for _, d := range upserts {
			batch.update(b.docs.document(d))
			if batch.len() >= b.opts.BatchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// indexShard opens (or creates) a shard for writing, lets fill add to
// batches, and closes it once everything is persisted.
func (b *builder) indexShard(ctx context.Context, dir string, fill func(batch *shardBatch, flush func() error) error) error {
	cfg := map[string]interface{}{
		"unsafe_batch": true,
		// A shard is written once, in batches, and then only patched:
		// let it keep one segment per batch rather than merge them in
		// tiers of ten, which rewrote every document twice more.
		// Analysts' prefix and wildcard queries visit more dictionaries
		// in exchange (docs/performance.md).
		"scorchMergePlanOptions": map[string]interface{}{
			"MaxSegmentsPerTier":   b.segmentsPerShard(),
			"SegmentsPerMergeTask": 10,
			"MaxSegmentSize":       mergeplan.DefaultMergePlanOptions.MaxSegmentSize,
			"TierGrowth":           mergeplan.DefaultMergePlanOptions.TierGrowth,
			"FloorSegmentSize":     mergeplan.DefaultMergePlanOptions.FloorSegmentSize,
			"ReclaimDeletesWeight": mergeplan.DefaultMergePlanOptions.ReclaimDeletesWeight,
		},
	}
	pe, stopWatch := watchPersist(dir, cfg)
	defer stopWatch()
	var idx bleve.Index
	var err error
	if _, statErr := os.Stat(dir); statErr == nil {
		idx, err = bleve.OpenUsing(dir, cfg)
	} else {
		m, merr := Mapping()
		if merr != nil {
			return merr
		}
		idx, err = bleve.NewUsing(dir, m, scorch.Name, scorch.Name, cfg)
	}
	if err != nil {
		return err
	}
	// Batches go to the index's own level, which takes the documents the
	// builder analyses itself (see bleveDoc).
	// fail closes the index after a failure or a cancel, once bleve has
	// finished persisting what it holds (for a while at most): closing
	// while its persister hands a segment to its introducer races inside
	// bleve (go test -race caught it on a cancel).
	fail := func(err error) error {
		settle, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		if werr := waitPersisted(settle, idx, pe); werr != nil && pe.get() != nil {
			err = werr // the disk's complaint says more than a cancel
		}
		idx.Close()
		return err
	}
	adv, err := idx.Advanced()
	if err != nil {
		return fail(err)
	}
	batch := &shardBatch{b: index.NewBatch()}
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := pe.get(); err != nil {
			return err
		}
		if err := adv.Batch(batch.b); err != nil {
			return err
		}
		batch.b = index.NewBatch()
		return nil
	}
	if err := fill(batch, flush); err != nil {
		return fail(err)
	}
	if batch.len() > 0 {
		if err := flush(); err != nil {
			return fail(err)
		}
	}
	if err := waitPersisted(ctx, idx, pe); err != nil {
		return fail(err)
	}
	return idx.Close()
}

// shardBatch collects the next batch of a shard's changes. Each flush
// starts a new index.Batch rather than resetting the one flushed: scorch's
// Batch can return while a goroutine of its own still ranges over the
// flushed batch's operations (the deletes after the last document).
type shardBatch struct {
	b *index.Batch
}

func (s *shardBatch) update(d index.Document) { s.b.Update(d) }
func (s *shardBatch) delete(id string)        { s.b.Delete(id) }
func (s *shardBatch) len() int                { return len(s.b.IndexOps) }

// segmentsPerShard is how many segments a full shard holds when each
// batch is one: bleve merges only beyond that.
func (b *builder) segmentsPerShard() int {
	return max(10, (b.opts.ShardSize+b.opts.BatchSize-1)/max(b.opts.BatchSize, 1))
}

// settleTimeout bounds how long a failed shard waits for bleve to finish
// persisting before it is closed anyway.
const settleTimeout = 30 * time.Second

// linkTree copies a directory of a generation: files that never change
// once written (bleve segments *.zap, tables *.tbl) are hard-linked;
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
		if strings.HasSuffix(path, ".zap") || strings.HasSuffix(path, ".tbl") {
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

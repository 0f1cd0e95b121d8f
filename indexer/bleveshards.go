package indexer

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	index "github.com/blevesearch/bleve_index_api"

	"gds/indexer/pace"
	"gds/snapshots"
)

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

// shardsFor is the number of shards of a category of n records: at most
// ShardSize records each, and an even number for a category of more than
// half a shard. A shard is built on one core, so a category that fit one
// shard kept one core of two busy for most of the build's second phase
// while the other had nothing left to do (1M characters), and an odd
// count left one shard building alone at the end (docs/performance.md).
// The count depends on n alone, never on the machine, so an incremental
// build finds the previous generation's shards to patch wherever it runs.
//
// A category the tables answer alone (TablesOnly) has none.
func (b *builder) shardsFor(cat snapshots.Category, n int) int {
	if TablesOnly(cat) && !b.opts.BleveCharacters && !bleveCharactersAlways {
		return 0
	}
	shards := max(1, (n+b.opts.ShardSize-1)/b.opts.ShardSize)
	if shards%2 == 1 && n > b.opts.ShardSize/2 {
		shards++
	}
	return shards
}

func (b *builder) setBounds(cat snapshots.Category, bounds []int64) {
	if b.meta.ShardBounds == nil {
		b.meta.ShardBounds = map[snapshots.Category][]int64{}
	}
	if bounds == nil {
		bounds = []int64{}
	}
	b.meta.ShardBounds[cat] = bounds
}

// bleveTask is a category's bleve shards left to a build's second phase,
// which reads its documents from the snapshot again, a shard at a time;
// or, with patch, copies the previous generation's shards and applies an
// incremental build's changes to them.
type bleveTask struct {
	cat    snapshots.Category
	shards int
	bounds []int64
	patch  *blevePatch
}

// blevePatch is an incremental build's changes to a category.
type blevePatch struct {
	upserts []docInfo
	deletes []int64
}

// deferPatches reports whether an incremental build leaves patching the
// bleve shards to its second phase, so the generation goes live for
// searches without waiting for them (segments of the changed documents
// cost most of an incremental build's time). The previous generation's
// shards must be complete: they answer the analysts until then, and are
// what the patch copies.
func (b *builder) deferPatches() bool {
	return b.prev != nil && b.prev.BleveReady()
}

// deferBleve splits a category's documents (in key order) into shards of
// contiguous key ranges, records the ranges and leaves building the shards
// to the second phase (runBleve). The documents are not kept: holding a
// large category's documents (with their analysts' fields) until the
// shards are built was most of a build's memory.
func (b *builder) deferBleve(cat snapshots.Category, shards int, docs []docInfo) {
	per := max((len(docs)+shards-1)/max(shards, 1), 1)
	var bounds []int64
	for s := 1; s < shards && s*per < len(docs); s++ {
		bounds = append(bounds, docs[s*per].id)
	}
	b.setBounds(cat, bounds)
	b.pendingBleve = append(b.pendingBleve, bleveTask{cat: cat, shards: shards, bounds: bounds})
}

// runBleve builds the shards deferBleve left, a shard per slot at once,
// and waits for them; hook runs first.
func (b *builder) runBleve(ctx context.Context, hook func(context.Context, uint64) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.ctx, b.cancel = ctx, cancel
	b.bleveErr = firstErr{}
	b.shardSlots = make(chan struct{}, runtime.GOMAXPROCS(0))
	if hook != nil {
		if err := hook(ctx, b.meta.ID); err != nil {
			return err
		}
	}
	for _, t := range b.pendingBleve {
		if t.patch != nil {
			if err := b.patchBleve(t.cat, t.shards, t.patch.upserts, t.patch.deletes); err != nil {
				b.bleveFailed(fmt.Errorf("%s: %w", t.cat, err))
				break
			}
			continue
		}
		if err := b.streamBleve(t); err != nil {
			b.bleveFailed(fmt.Errorf("%s: %w", t.cat, err))
			break
		}
	}
	b.bleve.Wait()
	if err := b.bleveErr.get(); err != nil {
		return err
	}
	return ctx.Err()
}

// streamBleve reads a category's records from the snapshot (in key
// order) and indexes them into fresh shards along the task's bounds: each
// shard's documents are handed to a worker once the reader is past its
// range, and the reader waits for a free slot first, so at most a slot's
// worth of shards and the one being read are in memory.
func (b *builder) streamBleve(t bleveTask) error {
	cdir := filepath.Join(b.dir, string(t.cat))
	router := shardRouter{bounds: t.bounds}
	total := b.snap.Count(t.cat.Kind())
	var (
		mu   sync.Mutex
		done int64
	)
	indexed := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		done += int64(n)
		b.report(Progress{Phase: "bleve", Kind: string(t.cat), Done: done, Total: total})
	}
	var cur []docInfo
	s := 0
	handOff := func() error {
		select {
		case b.shardSlots <- struct{}{}:
		case <-b.ctx.Done():
			return b.ctx.Err()
		}
		part, shard := cur, s
		cur = make([]docInfo, 0, len(part))
		b.bleve.Add(1)
		go func() {
			defer b.bleve.Done()
			defer func() { <-b.shardSlots }()
			if err := b.indexPart(cdir, shard, part, indexed); err != nil {
				b.bleveFailed(fmt.Errorf("%s: %w", t.cat, err))
			}
		}()
		return nil
	}
	n := 0
	tick := pace.Every(b.ctx, recordsPerPace)
	err := b.snap.EachWith(t.cat.Kind(), snapshots.EachOptions{}, func(rec snapshots.Record, line snapshots.Line) error {
		tick()
		for min(router.shard(line.Key), t.shards-1) > s {
			if err := handOff(); err != nil {
				return err
			}
			s++
		}
		cur = append(cur, b.docOf(line.Key, rec, true))
		if n++; n%10000 == 0 {
			return b.ctx.Err()
		}
		return nil
	})
	for ; err == nil && s < t.shards; s++ {
		err = handOff()
	}
	return err
}

// indexPart indexes one shard's documents into a fresh shard.
func (b *builder) indexPart(cdir string, s int, part []docInfo, indexed func(int)) error {
	dir := shardDir(cdir, s)
	// A shard left by a phase that failed or was cut short.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	flushed := 0
	err := b.indexShardWith(b.ctx, dir, !b.opts.KeepSegments, func(batch *shardBatch, flush func() error) error {
		tick := pace.Every(b.ctx, docsPerPace)
		for _, d := range part {
			tick()
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
	if err == nil {
		indexed(len(part) - flushed)
	}
	return err
}

// bleveFailed records the first error of a background bleve build.
func (b *builder) bleveFailed(err error) {
	b.bleveErr.set(err)
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
		return b.addDocs(batch, flush, upserts)
	})
}

// addDocs adds the documents of docs to batch, flushing it whenever it
// holds a batch's worth.
func (b *builder) addDocs(batch *shardBatch, flush func() error, docs []docInfo) error {
	tick := pace.Every(b.ctx, docsPerPace)
	for _, d := range docs {
		tick()
		batch.update(b.docs.document(d))
		if batch.len() >= b.opts.BatchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexShard opens (or creates) a shard for writing, lets fill add to
// batches, and closes it once everything is persisted.
func (b *builder) indexShard(ctx context.Context, dir string, fill func(batch *shardBatch, flush func() error) error) error {
	return b.indexShardWith(ctx, dir, false, fill)
}

// indexShardWith is indexShard; with merge, the shard's segments are
// merged into one once everything is persisted: analysts' prefix and
// wildcard queries then visit one term dictionary per shard instead of one
// per batch. The second phase of a build can afford it, since searches do
// not wait for it.
func (b *builder) indexShardWith(ctx context.Context, dir string, merge bool, fill func(batch *shardBatch, flush func() error) error) error {
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
		pace.Pace(ctx) // a batch's analysis is the longest stretch without a pause
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
	if merge {
		if err := mergeShard(ctx, adv); err != nil {
			return fail(err)
		}
		if err := waitPersisted(ctx, idx, pe); err != nil {
			return fail(err)
		}
		if err := idx.Close(); err != nil {
			return err
		}
		return dropReplacedSegments(ctx, dir, cfg)
	}
	return idx.Close()
}

// singleSegment is bleve's plan for merging an index into one segment,
// made one merge task: bleve's own merges ten segments a task, so one
// forced merge of a hundred segments leaves ten.
var singleSegment = func() mergeplan.MergePlanOptions {
	o := mergeplan.SingleSegmentMergePlanOptions
	o.SegmentsPerMergeTask = math.MaxInt32
	return o
}()

// mergeShard merges a shard's segments into one.
func mergeShard(ctx context.Context, adv index.Index) error {
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	o := singleSegment
	if err := s.ForceMerge(ctx, &o); err != nil {
		return fmt.Errorf("merging segments: %w", err)
	}
	return nil
}

// dropReplacedSegments deletes the segment files a merge replaced. bleve
// keeps the snapshot before the merge (and its files) until its persister
// next cleans up, which an index closed right after the merge never does;
// opening it again marks every older snapshot for removal and cleans up
// at once. The shard is closed again once the files are gone (or after a
// bound: left over, they are only wasted space).
func dropReplacedSegments(ctx context.Context, dir string, cfg map[string]interface{}) error {
	idx, err := bleve.OpenUsing(dir, cfg)
	if err != nil {
		return err
	}
	waitMergedFilesRemoved(ctx, idx, dir, 10*time.Second)
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

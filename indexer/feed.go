package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"

	"gds/snapshots"
)

// bleveFeed builds a category's bleve shards from scratch while its file
// is still being read: records arrive in key order and fill the shards one
// after another (contiguous key ranges), each shard's goroutine indexing
// while the reader moves on, so analysis and segment building overlap
// reading (and the tables, written once reading is done) instead of
// following them. At most GOMAXPROCS shards build at once; a reader
// reaching the next shard waits for a free one.
type bleveFeed struct {
	b      *builder
	cat    snapshots.Category
	cdir   string
	total  int64
	n      int   // shards
	per    int64 // records per shard
	seen   int64 // records added
	cur    chan docInfo
	bounds []int64
	sem    chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
	done   atomic.Int64
	read   atomic.Bool // reading is over: progress is the bleve phase's
}

// startBleve prepares the shard builders of a category expected to hold
// total records (the manifest's count).
func (b *builder) startBleve(cat snapshots.Category, total int64) (*bleveFeed, error) {
	cdir := filepath.Join(b.dir, string(cat))
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return nil, err
	}
	n := b.shardsFor(int(total))
	f := &bleveFeed{b: b, cat: cat, cdir: cdir, total: total, n: n, per: max(1, (total+int64(n)-1)/int64(n)),
		sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))}
	f.ctx, f.cancel = context.WithCancel(b.ctx)
	return f, nil
}

// next closes the shard being filled and starts the next one.
func (f *bleveFeed) next(first int64) error {
	if f.cur != nil {
		close(f.cur)
	}
	s := len(f.bounds)
	if f.cur != nil {
		s++
		f.bounds = append(f.bounds, first)
	}
	select {
	case f.sem <- struct{}{}:
	case <-f.ctx.Done():
		return f.failure()
	}
	ch := make(chan docInfo, 4096)
	f.cur = ch
	f.wg.Add(1)
	go func() {
		defer func() { <-f.sem; f.wg.Done() }()
		if err := f.build(shardDir(f.cdir, s), ch); err != nil {
			f.fail(fmt.Errorf("shard %d: %w", s, err))
			for range ch { // let the reader go on to its error
			}
		}
	}()
	return nil
}

func (f *bleveFeed) build(dir string, in <-chan docInfo) error {
	return f.b.indexShard(f.ctx, dir, func(batch *bleve.Batch, flush func() error) error {
		for d := range in {
			if err := batch.IndexAdvanced(f.b.docs.document(d)); err != nil {
				return err
			}
			if batch.Size() >= f.b.opts.BatchSize {
				if err := flush(); err != nil {
					return err
				}
				if done := f.done.Add(int64(f.b.opts.BatchSize)); f.read.Load() {
					f.b.report(Progress{Phase: "bleve", Kind: string(f.cat), Done: done, Total: f.total})
				}
			}
		}
		return nil
	})
}

func (f *bleveFeed) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
	f.cancel()
}

func (f *bleveFeed) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	return f.ctx.Err()
}

// add hands the next record (in key order) to its shard; it fails once any
// shard has failed.
func (f *bleveFeed) add(d docInfo) error {
	if f.cur == nil || (f.seen%f.per == 0 && len(f.bounds) < f.n-1) {
		if err := f.next(d.id); err != nil {
			return err
		}
	}
	f.seen++
	select {
	case f.cur <- d:
		return nil
	case <-f.ctx.Done():
		return f.failure()
	}
}

// finish waits for every shard to be indexed and persisted and returns the
// number of shards and their bounds.
func (f *bleveFeed) finish() (int, []int64, error) {
	f.read.Store(true)
	f.b.report(Progress{Phase: "bleve", Kind: string(f.cat), Done: f.done.Load(), Total: f.total})
	if f.cur == nil && f.ctx.Err() == nil { // no records: one empty shard
		if err := f.next(0); err != nil {
			return 0, nil, err
		}
	}
	if f.cur != nil {
		close(f.cur)
		f.cur = nil
	}
	f.wg.Wait()
	f.cancel()
	return len(f.bounds) + 1, f.bounds, f.err
}

// abort stops the shard builders after a failed read.
func (f *bleveFeed) abort() {
	f.cancel()
	if f.cur != nil {
		close(f.cur)
		f.cur = nil
	}
	f.wg.Wait()
}

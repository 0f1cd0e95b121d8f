package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"

	"gds/snapshots"
)

// bleveFeed builds a category's bleve shards from scratch while its file
// is still being read: each record goes to its shard's goroutine as soon as
// it is decoded, so analysis and segment building overlap reading (and the
// tables, written once reading is done) instead of following them. All
// shards build at once; the Go scheduler shares the cores among them and
// the reader.
type bleveFeed struct {
	b      *builder
	cat    snapshots.Category
	total  int64
	shards []chan docInfo
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
	done   atomic.Int64
	read   atomic.Bool // reading is over: progress is the bleve phase's
}

// startBleve starts the shard builders of a category expected to hold
// total records.
func (b *builder) startBleve(cat snapshots.Category, total int64) (*bleveFeed, error) {
	cdir := filepath.Join(b.dir, string(cat))
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return nil, err
	}
	n := max(1, (int(total)+b.opts.ShardSize-1)/b.opts.ShardSize)
	f := &bleveFeed{b: b, cat: cat, total: total, shards: make([]chan docInfo, n)}
	f.ctx, f.cancel = context.WithCancel(b.ctx)
	for s := range f.shards {
		ch := make(chan docInfo, 1024)
		f.shards[s] = ch
		f.wg.Add(1)
		go func(s int) {
			defer f.wg.Done()
			if err := f.build(shardDir(cdir, s), ch); err != nil {
				f.fail(fmt.Errorf("shard %d: %w", s, err))
			}
		}(s)
	}
	return f, nil
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

// add hands a record to its shard; it fails once any shard has failed.
func (f *bleveFeed) add(d docInfo) error {
	select {
	case f.shards[shardOf(d.id, len(f.shards))] <- d:
		return nil
	case <-f.ctx.Done():
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.err != nil {
			return f.err
		}
		return f.ctx.Err()
	}
}

// finish waits for every shard to be indexed and persisted and returns the
// number of shards.
func (f *bleveFeed) finish() (int, error) {
	f.read.Store(true)
	f.b.report(Progress{Phase: "bleve", Kind: string(f.cat), Done: f.done.Load(), Total: f.total})
	for _, ch := range f.shards {
		close(ch)
	}
	f.wg.Wait()
	f.cancel()
	return len(f.shards), f.err
}

// abort stops the shard builders after a failed read.
func (f *bleveFeed) abort() {
	f.cancel()
	for _, ch := range f.shards {
		close(ch)
	}
	f.wg.Wait()
}

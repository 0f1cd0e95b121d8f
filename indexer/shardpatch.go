package indexer

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"gds/snapshots"
	"gds/snapshots/disk"
)

// shardPatcher patches a category's bleve shards (copied from the previous
// generation, segment files hard-linked) with the changed records, a
// shard at a time as each one's changes become known. Shards hold
// contiguous key ranges and changes arrive in key order, so during an
// incremental read a shard can be patched as soon as the reader is past
// its range, while the rest is read (see passed). Used that way it is
// speculative: if the category turns out not to be patchable, discard
// removes what it wrote and the category is rebuilt.
type shardPatcher struct {
	b       *builder
	cdir    string
	prevDir string
	router  shardRouter
	shards  int
	cur     int // first shard not yet handed out
	docPos  int // upserts before this are handed out
	delPos  int // deletes before this are handed out
	sem     chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	err     error
}

func (b *builder) newShardPatcher(cat snapshots.Category, shards, workers int) *shardPatcher {
	return &shardPatcher{b: b, cdir: filepath.Join(b.dir, string(cat)), prevDir: filepath.Join(b.prev.Dir(), string(cat)),
		router: shardRouter{bounds: b.prev.Meta.ShardBounds[cat]}, shards: shards, sem: make(chan struct{}, max(1, workers))}
}

// startEarlyPatch returns a patcher to run beside an incremental read of
// cat when the previous generation's shards can be patched in place (same
// shard count, recorded key ranges, no localized names), or nil. It leaves
// a core to the reader.
func (b *builder) startEarlyPatch(cat snapshots.Category) *shardPatcher {
	if b.full || b.prev == nil || b.prev.Tables(cat) == nil || len(b.prev.Meta.Languages[cat]) > 0 || b.derivedStale(cat) {
		return nil
	}
	shards := b.shardsFor(cat, int(b.snap.Count(cat.Kind())))
	bounds, ok := b.prev.Meta.ShardBounds[cat]
	if shards == 0 || b.prev.Meta.Shards[cat] != shards || !ok || len(bounds) != shards-1 {
		return nil
	}
	return b.newShardPatcher(cat, shards, runtime.GOMAXPROCS(0)-1)
}

// passed tells the patcher the reader has reached key: shards wholly
// before it are patched with the changes so far (upserts and deletes, each
// in ascending key order).
func (p *shardPatcher) passed(key int64, upserts []docInfo, deletes []int64) {
	if s := p.router.shard(key); s > p.cur {
		p.flush(s, upserts, deletes)
	}
}

// flush hands out every shard before upto.
func (p *shardPatcher) flush(upto int, upserts []docInfo, deletes []int64) {
	if p.cur < upto {
		if err := os.MkdirAll(p.cdir, disk.PrivateDir); err != nil {
			p.fail(err)
			return
		}
	}
	for ; p.cur < upto; p.cur++ {
		s := p.cur
		d := p.docPos
		for d < len(upserts) && p.router.shard(upserts[d].id) <= s {
			d++
		}
		x := p.delPos
		for x < len(deletes) && p.router.shard(deletes[x]) <= s {
			x++
		}
		docs, dels := upserts[p.docPos:d:d], deletes[p.delPos:x:x]
		p.docPos, p.delPos = d, x
		p.sem <- struct{}{}
		p.wg.Add(1)
		go func() {
			defer func() { <-p.sem; p.wg.Done() }()
			if err := p.b.patchShard(shardDir(p.prevDir, s), shardDir(p.cdir, s), docs, dels); err != nil {
				p.fail(fmt.Errorf("shard %d: %w", s, err))
			}
		}()
	}
}

func (p *shardPatcher) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

// finish patches the remaining shards and waits for all of them.
func (p *shardPatcher) finish(upserts []docInfo, deletes []int64) error {
	p.flush(p.shards, upserts, deletes)
	p.wg.Wait()
	return p.err
}

// discard waits for the patcher and removes the shards it wrote.
func (p *shardPatcher) discard() {
	p.wg.Wait()
	for s := 0; s < p.shards; s++ {
		_ = os.RemoveAll(shardDir(p.cdir, s))
	}
}

package indexer

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"gds/snapshots"
)

// earlyPatch patches a category's bleve shards while an incremental read
// is still going: shards hold contiguous key ranges and records arrive in
// key order, so once the reader is past a shard's range every change to
// that shard is known and it can be patched while the rest is read. It is
// speculative: if the category turns out not to be patchable (too many
// changes, a localized name), wait and discard remove what it wrote and
// the category is rebuilt as before.
type earlyPatch struct {
	b        *builder
	cdir     string
	prevDir  string
	router   shardRouter
	shards   int
	cur      int // first shard not yet handed out
	docPos   int // rd.docs before this are handed out
	delPos   int // rd.ch.deletes before this are handed out
	sem      chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error
	launched bool
}

// startEarlyPatch returns a patcher for cat when the previous generation's
// shards can be patched in place (same shard count, recorded key ranges,
// no localized names), or nil.
func (b *builder) startEarlyPatch(cat snapshots.Category) *earlyPatch {
	if b.full || b.prev == nil || b.prev.Tables(cat) == nil || len(b.prev.Meta.Languages[cat]) > 0 {
		return nil
	}
	n := int(b.snap.Count(cat.Kind()))
	shards := b.shardsFor(n)
	bounds, ok := b.prev.Meta.ShardBounds[cat]
	if b.prev.Meta.Shards[cat] != shards || !ok || len(bounds) != shards-1 {
		return nil
	}
	return &earlyPatch{b: b, cdir: filepath.Join(b.dir, string(cat)), prevDir: filepath.Join(b.prev.Dir(), string(cat)),
		router: shardRouter{bounds: bounds}, shards: shards, sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))}
}

// passed tells the patcher the reader has reached key: shards wholly
// before it are patched with the changes read so far.
func (p *earlyPatch) passed(key int64, rd *readResult) {
	if s := p.router.shard(key); s > p.cur {
		p.flush(s, rd)
	}
}

// flush hands out every shard before upto.
func (p *earlyPatch) flush(upto int, rd *readResult) {
	for ; p.cur < upto; p.cur++ {
		s := p.cur
		d := p.docPos
		for d < len(rd.docs) && p.router.shard(rd.docs[d].id) <= s {
			d++
		}
		x := p.delPos
		for x < len(rd.ch.deletes) && p.router.shard(rd.ch.deletes[x]) <= s {
			x++
		}
		docs, dels := rd.docs[p.docPos:d:d], rd.ch.deletes[p.delPos:x:x]
		p.docPos, p.delPos = d, x
		if !p.launched {
			if err := os.MkdirAll(p.cdir, 0o755); err != nil {
				p.fail(err)
				return
			}
			p.launched = true
		}
		p.sem <- struct{}{}
		p.wg.Add(1)
		go func() {
			defer func() { <-p.sem; p.wg.Done() }()
			if err := p.b.patchShard(shardDir(p.prevDir, s), shardDir(p.cdir, s), s, p.router, docs, dels); err != nil {
				p.fail(fmt.Errorf("shard %d: %w", s, err))
			}
		}()
	}
}

func (p *earlyPatch) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

// finish patches the remaining shards and waits for all of them.
func (p *earlyPatch) finish(rd *readResult) error {
	p.flush(p.shards, rd)
	p.wg.Wait()
	return p.err
}

// discard waits for the patcher and removes the shards it wrote.
func (p *earlyPatch) discard() {
	p.wg.Wait()
	for s := 0; s < p.shards; s++ {
		_ = os.RemoveAll(shardDir(p.cdir, s))
	}
}

package indexer

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// bleve's persister writes segments in the background and, when a write
// fails (a full disk), reports it only to an async error callback and
// retries forever, while batches keep being accepted into memory. A build
// registers each shard it writes here so the first such error fails the
// shard at once.
const persistCallback = "gds-build"

// persistErrs maps a shard's scorch directory to its *firstErr.
var persistErrs sync.Map

func init() {
	scorch.RegistryAsyncErrorCallbacks[persistCallback] = func(err error, path string) {
		if pe, ok := persistErrs.Load(filepath.Clean(path)); ok {
			pe.(*firstErr).set(err)
		}
	}
}

// firstErr keeps the first error that concurrent work reports: the first
// background write error of one shard, the first failure of a build's
// background bleve shards.
type firstErr struct {
	mu  sync.Mutex
	err error
}

func (p *firstErr) set(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *firstErr) get() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// watchPersist starts collecting the background write errors of the shard
// in dir (bleve keeps its segments in dir/store); stop it when the shard
// is closed.
func watchPersist(dir string, cfg map[string]interface{}) (pe *firstErr, stop func()) {
	cfg["asyncErrorCallbackName"] = persistCallback
	key := filepath.Clean(filepath.Join(dir, "store"))
	pe = &firstErr{}
	persistErrs.Store(key, pe)
	return pe, func() { persistErrs.Delete(key) }
}

// waitPersisted waits until everything batched is on disk: with
// unsafe_batch a batch returns before it is persisted, and closing the
// index does not persist what is still in memory. A background write
// error ends the wait with that error.
func waitPersisted(ctx context.Context, idx bleve.Index, pe *firstErr) error {
	for {
		if err := pe.get(); err != nil {
			return err
		}
		st, _ := idx.StatsMap()["index"].(map[string]interface{})
		root, _ := st["CurRootEpoch"].(uint64)
		persisted, _ := st["LastPersistedEpoch"].(uint64)
		mem, _ := st["TotMemorySegmentsAtRoot"].(uint64)
		if persisted >= root && mem == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitMergedFilesRemoved waits, up to limit, until the shard in dir holds
// no more segment files than its root snapshot uses (bleve's persister
// deletes the others in the background). Past limit the files are only
// wasted space, so it gives up quietly.
func waitMergedFilesRemoved(ctx context.Context, idx bleve.Index, dir string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	store := filepath.Join(dir, "store")
	for time.Now().Before(deadline) && ctx.Err() == nil {
		st, _ := idx.StatsMap()["index"].(map[string]interface{})
		atRoot, _ := st["TotFileSegmentsAtRoot"].(uint64)
		zaps, err := filepath.Glob(filepath.Join(store, "*.zap"))
		if err != nil || uint64(len(zaps)) <= atRoot {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

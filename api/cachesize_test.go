package api

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"gds/query"
	"gds/snapshots"
)

// A flood of unique queries fills the cache with small answers; what the
// cache keeps alive on the heap stays within its setting, because each
// entry is accounted at what it really costs. Measured with the heap
// statistics after collections, not with time.
func TestResponseCacheHeapWithinSetting(t *testing.T) {
	const max = 4 << 20
	rc := newResponseCache(max)
	fill := func(gen uint64) {
		for i := range 100_000 {
			// Entries as a search builds them: the normalized key, the
			// ETag and a cloned body. Most made-up queries find nothing.
			req := query.Request{Text: fmt.Sprintf("flood %d", i), Language: "en",
				Categories: []snapshots.Category{snapshots.CategoryCharacter, snapshots.CategorySolarSystem}}
			key := cacheKey(req)
			ids := map[snapshots.Category][]int64{}
			if i%4 == 0 {
				ids[snapshots.CategoryCharacter] = []int64{int64(90000000 + i)}
			}
			body := appendResult(nil, ids, req.Categories)
			rc.put(gen, &cachedResponse{key: key, etag: etagOf(gen, key), body: slices.Clone(body)})
		}
	}
	fill(1)
	if rc.size > max {
		t.Fatalf("accounted %d bytes, beyond the setting %d", rc.size, max)
	}
	entries, accounted := rc.len(), rc.size

	// What the cache holds: the live heap with it, less the live heap once
	// its entries and map are dropped.
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	rc.mu.Lock()
	rc.lru.Init()
	rc.items = nil
	rc.mu.Unlock()
	runtime.GC()
	runtime.ReadMemStats(&without)
	held := int64(with.HeapAlloc) - int64(without.HeapAlloc)
	t.Logf("%d entries: accounted %d bytes, heap held %d bytes (%.2f×), setting %d", entries, accounted, held,
		float64(held)/float64(accounted), max)
	// 5% for whatever else the process allocated meanwhile.
	if float64(held) > 1.05*max {
		t.Errorf("the cache held %d bytes of heap, beyond its setting of %d", held, max)
	}
	if float64(accounted) > 1.4*float64(held) {
		t.Errorf("accounted %d bytes for %d held: so conservative the cache holds far less than it may", accounted, held)
	}
	runtime.KeepAlive(rc)
}

package ratelimit

import (
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// checkTable compares t with the model it should hold: the same keys with
// the same entries, each reachable from its home slot, and a true count.
func checkTable(t *testing.T, tb *table[entry], model map[uint64]entry) {
	t.Helper()
	if tb.n != len(model) {
		t.Fatalf("table holds %d, model %d", tb.n, len(model))
	}
	for k, want := range model {
		e := tb.find(k)
		if e == nil {
			t.Fatalf("key %#x lost", k)
		}
		if *e != want {
			t.Fatalf("key %#x: entry %+v, want %+v", k, *e, want)
		}
	}
	occupied := 0
	for _, s := range tb.slots {
		if s.key != 0 {
			occupied++
			if _, ok := model[s.key]; !ok {
				t.Fatalf("key %#x in the table, not in the model", s.key)
			}
		}
	}
	if occupied != tb.n {
		t.Fatalf("%d occupied slots, count says %d", occupied, tb.n)
	}
	if len(tb.slots) > 0 && tb.n*maxLoadDenom > len(tb.slots)*maxLoadNum {
		t.Fatalf("%d keys in %d slots: over the load bound", tb.n, len(tb.slots))
	}
}

// The table behaves as the Go map it replaces under random inserts,
// updates, deletes and sweeps, with keys drawn from a small space (so
// probe runs collide and wrap around the end of the slots) and from the
// whole space.
func TestTableMatchesMap(t *testing.T) {
	for _, space := range []uint64{64, 1 << 12, 0} {
		rng := rand.New(rand.NewPCG(1, space))
		var tb table[entry]
		model := map[uint64]entry{}
		draw := func() uint64 {
			if space == 0 {
				return fixKey(rng.Uint64())
			}
			return 1 + rng.Uint64N(space)
		}
		for op := range 20_000 {
			k := draw()
			switch r := rng.IntN(100); {
			case r < 50: // Admit: find or insert, then update in place
				e := tb.find(k)
				if _, ok := model[k]; ok != (e != nil) {
					t.Fatalf("op %d: find(%#x) = %v, model has it: %v", op, k, e != nil, ok)
				}
				if e == nil {
					e = tb.insert(k, entry{newest: uint32(op)})
				}
				e.add(int(k%5) + 1)
				model[k] = *e
			case r < 85:
				tb.delete(k)
				delete(model, k)
			case r < 86: // sweep a random part away
				cut := uint32(rng.IntN(op + 1))
				tb.removeIf(func(e *entry) bool { return e.newest < cut })
				for k, e := range model {
					if e.newest < cut {
						delete(model, k)
					}
				}
			}
			if op%500 == 0 {
				checkTable(t, &tb, model)
			}
		}
		checkTable(t, &tb, model)
	}
}

// Keys that share a home slot, and a run that wraps past the last slot,
// stay findable through deletes from the middle of their run.
func TestTableCollisions(t *testing.T) {
	var tb table[entry]
	tb.resize(16)
	model := map[uint64]entry{}
	// Home slot 14 for all: the run wraps to slots 0..3.
	for i := range uint64(6) {
		k := 14 + 16*(i+1)
		model[k] = entry{used: uint32(i)}
		tb.insert(k, model[k])
	}
	// Home slot 0: must be placed behind the wrapped run.
	model[16*100] = entry{used: 99}
	tb.insert(16*100, model[16*100])
	checkTable(t, &tb, model)
	for _, k := range []uint64{14 + 16*2, 14 + 16*5, 14 + 16} {
		tb.delete(k)
		delete(model, k)
		checkTable(t, &tb, model)
	}
	tb.delete(12345) // absent: no change
	checkTable(t, &tb, model)
}

// A sweep that empties most of a large table gives the memory back.
func TestTableShrinks(t *testing.T) {
	var tb table[entry]
	for i := range uint64(10_000) {
		tb.insert(fixKey(bucketKey(Key(i), 0)), entry{newest: uint32(i)})
	}
	big := len(tb.slots)
	tb.removeIf(func(e *entry) bool { return e.newest >= 100 })
	if tb.n != 100 || len(tb.slots) >= big/8 {
		t.Fatalf("%d keys left in %d slots (was %d)", tb.n, len(tb.slots), big)
	}
	for i := range uint64(100) {
		if tb.find(fixKey(bucketKey(Key(i), 0))) == nil {
			t.Fatalf("key %d lost in the shrink", i)
		}
	}
}

// Eviction from a full limiter picks among buckets it can reach, keeps
// the count at MaxKeys, and never loops when a shard holds fewer buckets
// than it samples.
func TestEvictionSmallShards(t *testing.T) {
	for _, maxKeys := range []int{1, numShards, 3 * numShards} {
		c := newClock()
		lim, g := newTestLimiter(t, c, Limit{MaxTokens: 100, Window: time.Minute}, maxKeys)
		for i := range 5000 {
			g.Admit(lim.IPKey(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), ""))
		}
		if n, bound := lim.Len(), max(1, (maxKeys+numShards-1)/numShards)*numShards; n > bound {
			t.Fatalf("MaxKeys %d: %d buckets kept, bound %d", maxKeys, n, bound)
		}
	}
}

// Many goroutines admitting, settling and sweeping over shared and
// distinct clients keep every shard's table consistent (run with -race).
func TestTableConcurrent(t *testing.T) {
	c := newClock()
	lim, g := newTestLimiter(t, c, Limit{MaxTokens: 60_000, Window: 3 * time.Second}, 4*numShards)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 3000 {
				k := lim.IPKey(netip.AddrFrom4([4]byte{10, byte(w), byte(i >> 8), byte(i % 300)}), "")
				tk := g.Admit(k)
				g.Settle(&tk, []int{200, 304, 404, 500}[i%4])
				if i%500 == 0 {
					c.Add(time.Second)
				}
			}
		})
	}
	wg.Wait()
	for i := range lim.shards {
		sh := &lim.shards[i]
		sh.mu.Lock()
		occupied := 0
		for _, s := range sh.t.slots {
			if s.key != 0 {
				occupied++
				if sh.t.find(s.key) == nil {
					sh.mu.Unlock()
					t.Fatalf("shard %d: key %#x unreachable", i, s.key)
				}
			}
		}
		if occupied != sh.t.n {
			sh.mu.Unlock()
			t.Fatalf("shard %d: %d occupied, count %d", i, occupied, sh.t.n)
		}
		sh.mu.Unlock()
	}
}

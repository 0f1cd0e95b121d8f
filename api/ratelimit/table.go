package ratelimit

import "sync"

// shard is one of the numShards tables of a Limiter or a Windows, with
// its lock (so concurrent requests rarely wait on one) and the clock
// reading (ns since epoch) of its last sweep.
type shard[E any] struct {
	mu        sync.Mutex
	t         table[E]
	lastSweep int64
	_         [64]byte
}

// sweepDue reports whether a sweep is due at clock now, at most one every
// interval, and if so counts it done.
func (sh *shard[E]) sweepDue(now, every int64) bool {
	if now-sh.lastSweep < every {
		return false
	}
	sh.lastSweep = now
	return true
}

// perShard is one shard's part of a bound of n entries in all (def when n
// is not positive), at least one.
func perShard(n, def int) int {
	if n <= 0 {
		n = def
	}
	return max(1, (n+numShards-1)/numShards)
}

// count is the number of entries kept in shards.
func count[E any](shards *[numShards]shard[E]) int {
	n := 0
	for i := range shards {
		sh := &shards[i]
		sh.mu.Lock()
		n += sh.t.n
		sh.mu.Unlock()
	}
	return n
}

// table is one shard's entries (a Limiter's buckets, a Windows' counts):
// an open-addressing hash table with linear probing, keys and entries
// inline in one slice. Compared with a Go map it finds an entry and
// updates it in place with one probe sequence (a map needs a lookup and an
// assignment), it holds no pointers when E holds none (the collector never
// scans it), and it can shrink. Keys are keyed hashes, already well mixed,
// so the low bits pick the home slot. Not safe for concurrent
// use: the shard's mutex guards it.
type table[E any] struct {
	slots []slot[E] // len is 0 or a power of two
	n     int       // occupied slots
}

type slot[E any] struct {
	key uint64 // 0: empty (fixKey keeps real keys off 0)
	e   E
}

// Load bounds: grow past 4/5 full (linear probing stays short), shrink a
// table that is under 1/8 full after a sweep.
const (
	minTableLen  = 8
	maxLoadNum   = 4
	maxLoadDenom = 5
)

// fixKey moves key 0 (the empty mark) to 1: two clients then share a
// bucket, with odds of 2^-64.
func fixKey(k uint64) uint64 {
	if k == 0 {
		return 1
	}
	return k
}

// find returns the entry of key, or nil.
func (t *table[E]) find(key uint64) *E {
	if t.n == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := key & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == key {
			return &s.e
		}
		if s.key == 0 {
			return nil
		}
	}
}

// insert adds key, which must not be present, and returns its entry,
// growing the table when it would be more than 4/5 full.
func (t *table[E]) insert(key uint64, e E) *E {
	if (t.n+1)*maxLoadDenom > len(t.slots)*maxLoadNum {
		t.resize(max(minTableLen, 2*len(t.slots)))
	}
	t.n++
	return t.put(key, e)
}

// put stores key in its first free slot (the table has one).
func (t *table[E]) put(key uint64, e E) *E {
	mask := uint64(len(t.slots) - 1)
	i := key & mask
	for t.slots[i].key != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = slot[E]{key: key, e: e}
	return &t.slots[i].e
}

// resize rehashes every entry into a table of n slots (a power of two
// larger than the count).
func (t *table[E]) resize(n int) {
	old := t.slots
	t.slots = make([]slot[E], n)
	for i := range old {
		if old[i].key != 0 {
			t.put(old[i].key, old[i].e)
		}
	}
}

// remove empties slot i, shifting later entries of the same probe run
// back so every key stays reachable from its home slot without tombstones.
func (t *table[E]) remove(i uint64) {
	mask := uint64(len(t.slots) - 1)
	hole := i
	for j := (i + 1) & mask; t.slots[j].key != 0; j = (j + 1) & mask {
		home := t.slots[j].key & mask
		// The entry at j may fill the hole unless its home lies
		// cyclically in (hole, j]: then it would move before its home.
		if (j-home)&mask >= (j-hole)&mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = slot[E]{}
	t.n--
}

// delete removes key if present.
func (t *table[E]) delete(key uint64) {
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	for i := key & mask; t.slots[i].key != 0; i = (i + 1) & mask {
		if t.slots[i].key == key {
			t.remove(i)
			return
		}
	}
}

// removeIf deletes every entry for which drop is true. A removal shifts
// later entries back into the slot just examined, so that slot is looked
// at again; entries only ever move into the hole, never past an
// unexamined slot, so each entry is judged at least once.
func (t *table[E]) removeIf(drop func(*E) bool) {
	for i := 0; i < len(t.slots) && t.n > 0; {
		s := &t.slots[i]
		if s.key != 0 && drop(&s.e) {
			t.remove(uint64(i))
			continue
		}
		i++
	}
	if len(t.slots) > minTableLen && t.n*8 < len(t.slots) {
		n := minTableLen
		for (t.n+1)*maxLoadDenom > n*maxLoadNum || n < 4*t.n {
			n *= 2
		}
		if n < len(t.slots) {
			t.resize(n)
		}
	}
}

// evict removes one entry of a full table to make room for key: among the
// evictSample entries stored from key's home slot on (a place the client
// cannot choose: keys are keyed hashes), the first that is gone, else the
// first that no other of them comes before.
func (t *table[E]) evict(key uint64, gone func(*E) bool, before func(a, b *E) bool) {
	mask := uint64(len(t.slots) - 1)
	var victim uint64
	var best *E
	for i, n := key&mask, 0; n < min(evictSample, t.n); i = (i + 1) & mask {
		if t.slots[i].key == 0 {
			continue
		}
		n++
		e := &t.slots[i].e
		if gone(e) {
			victim = i
			break
		}
		if best == nil || before(e, best) {
			best, victim = e, i
		}
	}
	t.remove(victim)
}

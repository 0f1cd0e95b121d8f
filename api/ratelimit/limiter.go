package ratelimit

import (
	"fmt"
	"hash/maphash"
	"sync/atomic"
	"time"
)

// Cost is what an answer with status spends, as ESI charges it: 2 tokens
// for 2xx, 1 for 3xx (conditional requests are encouraged), 5 for 4xx
// (client errors are discouraged) and 0 for 5xx (the server's fault).
func Cost(status int) int {
	switch {
	case status >= 500:
		return 0
	case status >= 400:
		return 5
	case status >= 300:
		return 1
	case status >= 200:
		return 2
	}
	return 0
}

// AdmitCost is what a bucket must still hold for a request to be admitted:
// the cost of a successful answer. It is reserved on admission and settled
// to the real cost once the status is known, so concurrent requests cannot
// all slip through on the same last tokens.
const AdmitCost = 2

// A window is kept as subWindows slots: tokens spent in a slot come back
// when the slot is a whole window old, between 1 and 1.1 windows after
// they were spent. The ring holds the window's slots and the current one.
const (
	subWindows = 10
	ringSlots  = subWindows + 1
)

// entry is one bucket: 32 bytes and no pointers, so a table of millions
// of them costs the garbage collector nothing to scan.
type entry struct {
	newest uint32 // slot index (since the limiter's epoch) of the newest slot
	used   uint32 // sum of counts
	counts [ringSlots]uint16
	group  uint8
}

// advance moves the ring to slot idx, returning the tokens of slots that
// are now a window old. A clock that went back moves nothing.
func (e *entry) advance(idx uint32) {
	if idx <= e.newest {
		return
	}
	gap := idx - e.newest
	if gap >= ringSlots {
		e.counts = [ringSlots]uint16{}
		e.used = 0
	} else {
		for i := uint32(1); i <= gap; i++ {
			s := (e.newest + i) % ringSlots
			e.used -= uint32(e.counts[s])
			e.counts[s] = 0
		}
	}
	e.newest = idx
}

// add spends n tokens in the newest slot (saturating: a slot never holds
// more than 65535, far above any budget ParseLimit accepts).
func (e *entry) add(n int) {
	s := e.newest % ringSlots
	d := uint16(min(n, 0xffff-int(e.counts[s])))
	e.counts[s] += d
	e.used += uint32(d)
}

// refund gives n tokens back to slot, if it is still in the window.
func (e *entry) refund(slot uint32, n int) {
	if e.newest-slot >= ringSlots || slot > e.newest {
		return
	}
	s := slot % ringSlots
	d := uint16(min(n, int(e.counts[s])))
	e.counts[s] -= d
	e.used -= uint32(d)
}

// Memory bound: the buckets of all groups live in numShards tables (so
// concurrent requests rarely wait on one lock), at most MaxKeys in all.
const (
	numShards  = 64
	shardShift = 64 - 6
	// DefaultMaxKeys bounds the buckets kept: a bucket is a 40-byte slot
	// of key and entry, 50 to 100 bytes with the tables' free slots; a
	// full limiter's tables are half full, 80 MiB (docs/api.md).
	DefaultMaxKeys = 1 << 20
	// evictSample is how many buckets a full shard looks at to pick the
	// one to forget.
	evictSample = 8
)

// Config configures a Limiter.
type Config struct {
	// Groups are the rate-limit groups and their budgets.
	Groups map[string]Limit
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxKeys bounds the buckets kept over all groups; 0 means
	// DefaultMaxKeys.
	MaxKeys int
}

// Limiter keeps a floating-window token bucket per (group, client key).
// It is safe for concurrent use.
type Limiter struct {
	now        func() time.Time
	epoch      time.Time
	seed       maphash.Seed
	groups     []groupInfo
	byName     map[string]*Group
	shardCap   int
	sweepEvery int64
	shards     [numShards]shard[entry]
	limited    []atomic.Uint64
}

type groupInfo struct {
	name   string
	limit  Limit
	slotNS int64
}

// Group is one rate-limit group of a Limiter: Admit and Settle its buckets.
type Group struct {
	l  *Limiter
	id uint8
}

// New returns a limiter for cfg's groups.
func New(cfg Config) (*Limiter, error) {
	if len(cfg.Groups) > 255 {
		return nil, fmt.Errorf("ratelimit: %d groups, at most 255", len(cfg.Groups))
	}
	l := &Limiter{now: cfg.Now, seed: maphash.MakeSeed(), byName: map[string]*Group{}, shardCap: perShard(cfg.MaxKeys, DefaultMaxKeys)}
	if l.now == nil {
		l.now = time.Now
	}
	l.epoch = l.now()
	l.sweepEvery = int64(time.Minute)
	for name, lim := range cfg.Groups {
		if err := lim.check(); err != nil {
			return nil, fmt.Errorf("ratelimit: group %q: %w", name, err)
		}
		g := groupInfo{name: name, limit: lim, slotNS: int64(lim.Window / subWindows)}
		l.byName[name] = &Group{l: l, id: uint8(len(l.groups))}
		l.groups = append(l.groups, g)
		l.sweepEvery = min(l.sweepEvery, max(g.slotNS, int64(time.Second)))
	}
	l.limited = make([]atomic.Uint64, len(l.groups))
	return l, nil
}

// Group returns the named group, or nil.
func (l *Limiter) Group(name string) *Group { return l.byName[name] }

// Name is the group's name (the X-Ratelimit-Group value).
func (g *Group) Name() string { return g.l.groups[g.id].name }

// Limit is the group's budget.
func (g *Group) Limit() Limit { return g.l.groups[g.id].limit }

// Limited returns how many requests of the group were refused.
func (g *Group) Limited() uint64 { return g.l.limited[g.id].Load() }

// clock is the time since the epoch, never negative.
func (l *Limiter) clock() int64 { return l.since(l.now()) }

// since is t as a clock reading: the time since the epoch, never negative.
func (l *Limiter) since(t time.Time) int64 { return max(int64(t.Sub(l.epoch)), 0) }

// Ticket is the outcome of Admit, handed back to Settle.
type Ticket struct {
	// Allowed: the request may proceed (AdmitCost tokens are reserved).
	Allowed bool
	// Remaining tokens after the reservation, or now when refused.
	Remaining int
	// RetryAfter, when refused: how long until enough tokens are back.
	RetryAfter time.Duration
	key        uint64
	slot       uint32
}

// bucketKey mixes a client key with a group: one client has a bucket per
// group it uses.
func bucketKey(k Key, group uint8) uint64 {
	x := uint64(k) ^ (uint64(group)+1)*0x9e3779b97f4a7c15
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	return fixKey(x ^ x>>29)
}

// Admit reserves AdmitCost tokens of k's bucket if it still holds them.
func (g *Group) Admit(k Key) Ticket { return g.admit(k, g.l.clock()) }

// AdmitAt is Admit at time t, a reading of the limiter's clock the caller
// already made for the request (reading the clock costs more than the
// rest of an admission on some machines).
func (g *Group) AdmitAt(k Key, t time.Time) Ticket { return g.admit(k, g.l.since(t)) }

func (g *Group) admit(k Key, now int64) Ticket {
	gi := &g.l.groups[g.id]
	idx := uint32(now / gi.slotNS)
	key := bucketKey(k, g.id)
	sh := &g.l.shards[key>>shardShift]
	sh.mu.Lock()
	if sh.sweepDue(now, g.l.sweepEvery) {
		sh.t.removeIf(func(e *entry) bool { return g.l.expired(e, now) })
	}
	e := sh.t.find(key)
	if e != nil {
		e.advance(idx)
	} else {
		if sh.t.n >= g.l.shardCap {
			g.l.evict(&sh.t, key, now)
		}
		e = sh.t.insert(key, entry{newest: idx, group: g.id})
	}
	maxTokens := gi.limit.MaxTokens
	if int(e.used)+AdmitCost > maxTokens {
		retry := e.retryAfter(int(e.used)+AdmitCost-maxTokens, gi, now)
		remaining := max(maxTokens-int(e.used), 0)
		sh.mu.Unlock()
		g.l.limited[g.id].Add(1)
		return Ticket{Remaining: remaining, RetryAfter: retry}
	}
	e.add(AdmitCost)
	remaining, slot := max(maxTokens-int(e.used), 0), e.newest
	sh.mu.Unlock()
	return Ticket{Allowed: true, Remaining: remaining, key: key, slot: slot}
}

// Settle charges an admitted request's answer by its status (Cost) and
// returns the tokens it used and the bucket's remaining tokens. A 2xx
// answer costs what was reserved, so it needs no lock.
func (g *Group) Settle(t *Ticket, status int) (used, remaining int) {
	cost := Cost(status)
	delta := cost - AdmitCost
	if delta == 0 || !t.Allowed {
		return cost, t.Remaining
	}
	gi := &g.l.groups[g.id]
	now := g.l.clock()
	sh := &g.l.shards[t.key>>shardShift]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.t.find(t.key)
	if e == nil {
		// Forgotten meanwhile (evicted): nothing to charge.
		return cost, max(t.Remaining-delta, 0)
	}
	e.advance(uint32(now / gi.slotNS))
	if delta > 0 {
		e.add(delta)
	} else {
		e.refund(t.slot, -delta)
	}
	return cost, max(gi.limit.MaxTokens-int(e.used), 0)
}

// retryAfter is how long until need tokens of e come back: slot j's come
// back when slot j+ringSlots begins.
func (e *entry) retryAfter(need int, gi *groupInfo, now int64) time.Duration {
	first := int64(e.newest) - (ringSlots - 1)
	returned := 0
	for j := max(first, 0); j <= int64(e.newest); j++ {
		returned += int(e.counts[j%ringSlots])
		if returned >= need {
			return time.Duration((j+ringSlots)*gi.slotNS - now)
		}
	}
	return gi.limit.Window
}

// expired reports whether all of e's tokens are back at clock now.
func (l *Limiter) expired(e *entry, now int64) bool {
	return now/l.groups[e.group].slotNS-int64(e.newest) >= ringSlots
}

// evict makes room in a full shard for key (see table.evict): the bucket
// forgotten, whose client starts afresh, is the first whose tokens are all
// back, else the one whose tokens come back soonest.
func (l *Limiter) evict(t *table[entry], key uint64, now int64) {
	back := func(e *entry) int64 { return (int64(e.newest) + ringSlots) * l.groups[e.group].slotNS }
	t.evict(key, func(e *entry) bool { return l.expired(e, now) },
		func(a, b *entry) bool { return back(a) < back(b) })
}

// Len is the number of buckets kept (for tests and metrics).
func (l *Limiter) Len() int { return count(&l.shards) }

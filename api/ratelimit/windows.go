package ratelimit

import (
	"hash/maphash"
	"net/netip"
	"time"
)

// DefaultMaxClients bounds the clients a Windows keeps: a client is a
// 24-byte slot of key, window end and count; each shard's table is at
// most 8,192 slots (grown past 4/5 full, holding at most 4,096), so a
// full Windows holds 64 × 8,192 × 24 B = 12 MiB, and an idle one shrinks
// back to a few KiB at its sweeps.
const DefaultMaxClients = 1 << 18

// Windows counts events per client (the error limiter's error answers) in
// fixed windows: a client's window opens at its first event and lasts
// Window; its count starts again at the next event after the end. A
// client without an open window costs nothing.
//
// Every operation is O(1): a client's count is found in one probe
// sequence of its shard's table, and ended windows are swept from a shard
// at most once per sweep interval (Window/10, at least a second), a cost
// proportional to the events since the last sweep. When a shard is full,
// a new client still gets a window (counting never stops, so a flood of
// distinct clients cannot open the limit for anyone): the entry forgotten
// is, among the few stored from the newcomer's home slot (a place the
// client cannot choose: keys are keyed hashes), the first whose window
// ended, else the one with the fewest events, else the one that ends
// soonest. A client near its limit is so the last to be forgotten.
// Safe for concurrent use.
type Windows struct {
	window     int64
	now        func() time.Time
	epoch      time.Time
	seed       maphash.Seed
	shardCap   int
	sweepEvery int64
	shards     [numShards]shard[windowEntry]
}

// windowEntry is one client's open window: its end (a clock reading) and
// the events counted in it.
type windowEntry struct {
	end   int64
	count uint32
}

// WindowsConfig configures Windows.
type WindowsConfig struct {
	// Window is the length of a client's window (required, > 0).
	Window time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxClients bounds the clients kept; 0 means DefaultMaxClients.
	MaxClients int
}

// NewWindows returns empty windows of cfg.Window.
func NewWindows(cfg WindowsConfig) *Windows {
	w := &Windows{window: int64(cfg.Window), now: cfg.Now, seed: maphash.MakeSeed(), shardCap: perShard(cfg.MaxClients, DefaultMaxClients)}
	if w.now == nil {
		w.now = time.Now
	}
	w.epoch = w.now()
	w.sweepEvery = max(w.window/subWindows, int64(time.Second))
	return w
}

// Key is the key of the client at addr: an IPv6 client is keyed by its
// /64, as Limiter.IPKey keys it.
func (w *Windows) Key(addr netip.Addr) Key { return ipKey(w.seed, addr, "") }

// Get returns the events counted in k's window at t and the time left
// until it ends; a client without an open window has counted 0 and has a
// whole window ahead.
func (w *Windows) Get(k Key, t time.Time) (count int, left time.Duration) {
	now, key := w.since(t), fixKey(uint64(k))
	sh := &w.shards[key>>shardShift]
	sh.mu.Lock()
	e := sh.t.find(key)
	if e == nil || now >= e.end {
		sh.mu.Unlock()
		return 0, time.Duration(w.window)
	}
	count, left = int(e.count), time.Duration(e.end-now)
	sh.mu.Unlock()
	return count, left
}

// Count adds one event to k's window at t, opening one when k has none,
// and returns the events counted in it and the time left until it ends.
func (w *Windows) Count(k Key, t time.Time) (count int, left time.Duration) {
	now, key := w.since(t), fixKey(uint64(k))
	sh := &w.shards[key>>shardShift]
	sh.mu.Lock()
	if sh.sweepDue(now, w.sweepEvery) {
		sh.t.removeIf(func(e *windowEntry) bool { return now >= e.end })
	}
	e := sh.t.find(key)
	if e == nil {
		if sh.t.n >= w.shardCap {
			// The first whose window ended, else the fewest events, else
			// the soonest end (see Windows).
			sh.t.evict(key, func(e *windowEntry) bool { return now >= e.end }, func(a, b *windowEntry) bool {
				return a.count < b.count || a.count == b.count && a.end < b.end
			})
		}
		e = sh.t.insert(key, windowEntry{end: now + w.window})
	} else if now >= e.end {
		*e = windowEntry{end: now + w.window}
	}
	if e.count < 1<<32-1 {
		e.count++
	}
	count, left = int(e.count), time.Duration(e.end-now)
	sh.mu.Unlock()
	return count, left
}

// since is t as a clock reading: the time since the epoch, never negative.
func (w *Windows) since(t time.Time) int64 { return max(int64(t.Sub(w.epoch)), 0) }

// Len is the number of clients with a window kept (for tests and
// metrics).
func (w *Windows) Len() int { return count(&w.shards) }

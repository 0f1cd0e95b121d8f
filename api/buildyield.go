package api

import (
	"context"
	"sync/atomic"
	"time"
)

// BuildYield makes an index build running in the server give way to its
// searches (it is an indexer pacer: indexer.Options.Pacer). While every
// search slot is taken or searches wait in line, a build goroutine that
// asks pauses until a slot frees, for at most the bound at a time; after
// a pause no build goroutine pauses again for as long as that pause
// lasted, so however busy the searches, a build runs at least half the
// time and always finishes. Builds share the cores with searches
// otherwise: at 10M names their goroutines took both cores of a 2-core
// server, searches waited past the queue wait and were answered 503.
type BuildYield struct {
	bound time.Duration
	gate  atomic.Pointer[gate]
	// quiet is the Unix time in nanoseconds before which nobody pauses.
	quiet  atomic.Int64
	pauses atomic.Uint64
	paused atomic.Int64 // nanoseconds, summed over the goroutines
}

// DefaultBuildYield is gds serve --build-yield's default bound: a few
// searches' time.
const DefaultBuildYield = 20 * time.Millisecond

// NewBuildYield returns a pacer whose pauses last at most bound; it
// pauses nothing until a handler built with it (Deps.BuildYield) exists,
// nor ever with a bound of 0 or less. A nil *BuildYield never pauses.
func NewBuildYield(bound time.Duration) *BuildYield {
	return &BuildYield{bound: bound}
}

// Pace pauses the calling build goroutine while the searches are busy,
// within the bound; when they are not, it costs an atomic load or two.
func (y *BuildYield) Pace(ctx context.Context) {
	if y == nil {
		return
	}
	g := y.gate.Load()
	if g == nil || y.bound <= 0 || !g.busy.Load() {
		return
	}
	start := time.Now()
	if start.UnixNano() < y.quiet.Load() {
		return
	}
	idle := g.idleWait()
	if idle == nil {
		return
	}
	y.pauses.Add(1)
	t := time.NewTimer(y.bound)
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
	t.Stop()
	end := time.Now()
	d := end.Sub(start)
	y.paused.Add(int64(d))
	quiet := end.Add(d).UnixNano()
	for {
		q := y.quiet.Load()
		if q >= quiet || y.quiet.CompareAndSwap(q, quiet) {
			return
		}
	}
}

// Stats returns how many pauses builds took and their total time (summed
// over the build's goroutines, so it may pass the time that went by).
func (y *BuildYield) Stats() (pauses uint64, paused time.Duration) {
	if y == nil {
		return 0, 0
	}
	return y.pauses.Load(), time.Duration(y.paused.Load())
}

// attach makes y give way to g's searches.
func (y *BuildYield) attach(g *gate) { y.gate.Store(g) }

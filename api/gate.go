package api

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
)

// gate caps the searches running at once at one per core and queues the
// rest first come, first served. More searches than cores only
// time-slice: a long one shares its core with every short one that
// arrives meanwhile and all finish late, where in a queue each waits for
// those ahead of it and then runs at full speed (at 10M names and 16
// connections the p99 went from 46 ms with 4 slots a core to a few).
//
// How long a search may wait depends on the queue, after CoDel and
// "Fail at Scale" (Maurer, ACM Queue 2015): a queue that emptied within
// the last burst wait is a burst (a moment of slow searches, a pause of
// the process), which drains by itself, and a new search waits for a
// slot up to the burst wait; a queue that has not emptied for longer is
// standing (more searches arrive than the cores answer), and a new
// search waits only up to the queue wait. A search that finds no slot in
// its time is answered 503: a standing queue would only make every
// answer late, while a burst answered a little late beats a 503 and a
// retry.
type gate struct {
	wait     time.Duration // under a standing queue
	burst    time.Duration // in a burst
	standing time.Duration // how long a queue is a burst: the burst wait (shorter in tests)

	mu    sync.Mutex
	free  int       // slots not taken
	queue []*waiter // oldest first
	// busy is set while every slot is taken or searches wait; idle is
	// closed when it clears (under mu; nil while not busy). A build that
	// gives way to searches (BuildYield) reads the one and waits on the
	// other.
	busy atomic.Bool
	idle chan struct{}
	// queuedSince is when the queue last went from empty to not empty
	// (under mu; read only while the queue is not empty).
	queuedSince time.Time
}

// waiter is a search in the queue; ready receives its slot.
type waiter struct{ ready chan struct{} }

var waiters = sync.Pool{New: func() any { return &waiter{ready: make(chan struct{}, 1)} }}

// Defaults of the waits: a search under a standing queue waits up to
// defaultQueueWait for a slot, one in a burst up to defaultBurstWait.
const (
	defaultQueueWait = 50 * time.Millisecond
	defaultBurstWait = 500 * time.Millisecond
)

// errGateFull is a search that found no slot within the queue wait.
var errGateFull = errors.New("too many searches at once")

// newGate returns a gate of n slots (0: GOMAXPROCS). A zero wait or
// burst is its default; a negative wait means no wait at all (nor in a
// burst); a burst shorter than the wait is the wait.
func newGate(n int, wait, burst time.Duration) *gate {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	if wait == 0 {
		wait = defaultQueueWait
	}
	if burst == 0 {
		burst = defaultBurstWait
	}
	if wait < 0 {
		wait, burst = 0, 0
	}
	burst = max(burst, wait)
	return &gate{free: n, wait: wait, burst: burst, standing: burst}
}

// acquire takes a slot, waiting in line up to the burst or queue wait,
// and returns errGateFull, or ctx's error, when none frees in time.
// Release the slot with leave.
func (g *gate) acquire(ctx context.Context) error {
	g.mu.Lock()
	if g.free > 0 && len(g.queue) == 0 {
		g.free--
		g.noteLocked()
		g.mu.Unlock()
		return nil
	}
	if g.burst <= 0 {
		g.mu.Unlock()
		return errGateFull
	}
	now := time.Now()
	wait := g.burst
	if len(g.queue) == 0 {
		g.queuedSince = now
	} else if now.Sub(g.queuedSince) > g.standing {
		wait = g.wait
	}
	w := waiters.Get().(*waiter)
	g.queue = append(g.queue, w)
	g.noteLocked()
	g.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	err := errGateFull
	select {
	case <-w.ready:
		waiters.Put(w)
		return nil
	case <-t.C:
	case <-ctx.Done():
		err = ctx.Err()
	}
	g.mu.Lock()
	for i, q := range g.queue {
		if q == w {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			g.noteLocked()
			g.mu.Unlock()
			waiters.Put(w)
			return err
		}
	}
	g.mu.Unlock()
	// leave handed this waiter a slot as it gave up: the slot is its.
	<-w.ready
	waiters.Put(w)
	return nil
}

// leave frees a slot: the oldest waiter gets it.
func (g *gate) leave() {
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.free++
		g.noteLocked()
		g.mu.Unlock()
		return
	}
	w := g.queue[0]
	g.queue[0] = nil
	g.queue = g.queue[1:]
	g.mu.Unlock()
	w.ready <- struct{}{}
}

// noteLocked sets busy from the slots and the queue, and wakes those
// waiting on idle when it clears; g.mu is held.
func (g *gate) noteLocked() {
	busy := g.free == 0 || len(g.queue) > 0
	if busy == g.busy.Load() {
		return
	}
	g.busy.Store(busy)
	if busy {
		g.idle = make(chan struct{})
		return
	}
	close(g.idle)
	g.idle = nil
}

// idleWait returns a channel closed once the gate is no longer busy, or
// nil when it is not busy now.
func (g *gate) idleWait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.idle
}

// queued reports the searches waiting for a slot.
func (g *gate) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// enter takes a slot or writes the 503 and reports false; release the
// slot with leave.
func (g *gate) enter(c *gin.Context) bool {
	if g.acquire(c.Request.Context()) == nil {
		return true
	}
	c.Header("Retry-After", "1")
	writeError(c, http.StatusServiceUnavailable, "too many searches at once; retry in a second")
	return false
}

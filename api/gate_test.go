package api

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitQueued waits until n searches are in the gate's queue.
func waitQueued(t *testing.T, g *gate, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for g.queued() != n {
		if time.Now().After(deadline) {
			t.Fatalf("queue has %d waiting, want %d", g.queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Searches beyond the slots get them in the order they arrived, each as
// one is left.
func TestGateIsFirstComeFirstServed(t *testing.T) {
	g := newGate(1, time.Hour, time.Hour)
	if err := g.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 5)
	for i := range 5 {
		go func() {
			if err := g.acquire(context.Background()); err != nil {
				t.Error(err)
				return
			}
			order <- i
		}()
		waitQueued(t, g, i+1) // arrival order is known before the next starts
	}
	for want := range 5 {
		g.leave()
		if got := <-order; got != want {
			t.Fatalf("slot %d went to the search that arrived %dth", want, got)
		}
	}
	g.leave()
	if g.free != 1 || g.queued() != 0 {
		t.Fatalf("after every search left: %d free, %d queued; want 1 and 0", g.free, g.queued())
	}
}

// A search that waits past the queue wait, or whose client goes away,
// leaves the queue without a slot; the slots stay counted right.
func TestGateGivesUpInTime(t *testing.T) {
	g := newGate(1, 20*time.Millisecond, 20*time.Millisecond)
	if err := g.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.acquire(context.Background()); !errors.Is(err, errGateFull) {
		t.Fatalf("past the queue wait: %v, want errGateFull", err)
	}
	long := newGate(1, time.Hour, time.Hour)
	if err := long.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- long.acquire(ctx) }()
	waitQueued(t, long, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client gone: %v, want context.Canceled", err)
	}
	for _, gg := range []*gate{g, long} {
		if gg.queued() != 0 {
			t.Fatalf("%d still queued", gg.queued())
		}
		gg.leave()
		if err := gg.acquire(context.Background()); err != nil {
			t.Fatalf("the freed slot: %v", err)
		}
	}
	noWait := newGate(1, -1, -1)
	noWait.acquire(context.Background())
	if err := noWait.acquire(context.Background()); !errors.Is(err, errGateFull) || noWait.queued() != 0 {
		t.Fatalf("no queue wait: %v with %d queued, want errGateFull at once", err, noWait.queued())
	}
}

// A search that queues in a burst (the queue emptied a moment ago) waits
// up to the burst wait; once the queue has stood longer than the
// standing time, a new search waits only the queue wait, while the one
// queued in the burst keeps its place and gets the next slot.
func TestGateShortensWaitsUnderAStandingQueue(t *testing.T) {
	const wait = 20 * time.Millisecond
	g := newGate(1, wait, time.Hour)
	g.standing = 5 * time.Millisecond
	if err := g.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	burst := make(chan error, 1)
	go func() { burst <- g.acquire(context.Background()) }()
	waitQueued(t, g, 1)
	g.mu.Lock()
	since := g.queuedSince
	g.mu.Unlock()
	for time.Since(since) <= max(g.standing, 2*wait) { // the queue stands, and the burst's search is past the queue wait
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	if err := g.acquire(context.Background()); !errors.Is(err, errGateFull) {
		t.Fatalf("under a standing queue: %v, want errGateFull", err)
	}
	if took := time.Since(start); took < wait {
		t.Fatalf("refused after %v, before the queue wait %v", took, wait)
	}
	select {
	case err := <-burst:
		t.Fatalf("the search queued in the burst ended (%v) before a slot freed", err)
	default:
	}
	g.leave()
	if err := <-burst; err != nil {
		t.Fatalf("the search queued in the burst: %v, want the freed slot", err)
	}
	// The queue is empty again: the next search to queue is a burst's.
	next := make(chan error, 1)
	go func() { next <- g.acquire(context.Background()) }()
	waitQueued(t, g, 1)
	g.mu.Lock()
	since = g.queuedSince
	g.mu.Unlock()
	for time.Since(since) <= 2*wait {
		time.Sleep(time.Millisecond)
	}
	g.leave()
	if err := <-next; err != nil {
		t.Fatalf("a search queued in a new burst: %v, want the freed slot", err)
	}
	g.leave()
}

// Many searches racing for few slots, some giving up: none is lost and
// none runs beyond the cap.
func TestGateUnderContention(t *testing.T) {
	g := newGate(2, 2*time.Millisecond, 2*time.Millisecond)
	var running, peak, served, shed int64
	var mu = make(chan struct{}, 1)
	done := make(chan struct{})
	for range 64 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 50 {
				if g.acquire(context.Background()) != nil {
					mu <- struct{}{}
					shed++
					<-mu
					continue
				}
				mu <- struct{}{}
				running++
				peak = max(peak, running)
				served++
				<-mu
				time.Sleep(10 * time.Microsecond)
				mu <- struct{}{}
				running--
				<-mu
				g.leave()
			}
		}()
	}
	for range 64 {
		<-done
	}
	if peak > 2 || served+shed != 64*50 || g.free != 2 || g.queued() != 0 {
		t.Fatalf("peak %d running (cap 2), %d served + %d shed of %d, %d free, %d queued",
			peak, served, shed, 64*50, g.free, g.queued())
	}
}

package pace

import (
	"context"
	"sync/atomic"
	"testing"
)

// counter counts the times it was asked.
type counter struct{ n int }

func (c *counter) Pace(context.Context) { c.n++ }

// A context carries its pacer to Pace and Every; without one both do
// nothing.
func TestPace(t *testing.T) {
	Pace(context.Background())
	Every(context.Background(), 1)()
	if With(context.Background(), nil) != context.Background() {
		t.Error("a nil pacer changed the context")
	}
	c := &counter{}
	ctx := With(context.Background(), c)
	Pace(ctx)
	tick := Every(ctx, 3)
	for range 10 {
		tick()
	}
	if c.n != 1+3 {
		t.Errorf("paced %d times, want once plus every third of 10 calls", c.n)
	}
}

// Worked adds to the counter its context carries, and is a no-op without
// one.
func TestWorked(t *testing.T) {
	Worked(context.Background(), 5)
	var done atomic.Int64
	ctx := WithWork(With(context.Background(), &counter{}), &done)
	Worked(ctx, 5)
	Worked(ctx, 7)
	if done.Load() != 12 {
		t.Errorf("counted %d units of work, want 12", done.Load())
	}
}

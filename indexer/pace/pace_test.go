package pace

import (
	"context"
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

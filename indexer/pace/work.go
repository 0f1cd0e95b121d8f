package pace

import (
	"context"
	"sync/atomic"
)

// A build's long steps that report no progress of their own (writing a
// name table: sorting, posting lists, cells) count the work they have
// done through their context, as they pace through it: whoever waits for
// them reads the count and shows how far they are.

type workKey struct{}

// WithWork returns ctx carrying the counter that Worked adds to.
func WithWork(ctx context.Context, done *atomic.Int64) context.Context {
	return context.WithValue(ctx, workKey{}, done)
}

// Worked adds n units of work done to ctx's counter, if it has one.
func Worked(ctx context.Context, n int) {
	if c, ok := ctx.Value(workKey{}).(*atomic.Int64); ok {
		c.Add(int64(n))
	}
}

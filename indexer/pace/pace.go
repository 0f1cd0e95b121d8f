// Package pace lets a build's CPU-heavy loops give way to work that must
// answer quickly (a server's searches). A build carries its Pacer in its
// context; the loops call Pace between units of work (a batch of records,
// names or documents) and so reach every package of the indexer without a
// parameter of their own. The same context carries a count of the work
// done by steps that report no progress of their own (Worked).
package pace

import "context"

// Pacer decides whether a build goroutine pauses. Pace returns at once
// when nothing waits for the cores, else after a pause the Pacer bounds;
// it must be cheap when it does not pause (an atomic load), since loops
// call it every few milliseconds of work.
type Pacer interface {
	Pace(ctx context.Context)
}

type key struct{}

// With returns ctx carrying p; a nil p leaves ctx as it is.
func With(ctx context.Context, p Pacer) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, p)
}

// Pace gives way through ctx's Pacer, if it has one.
func Pace(ctx context.Context) {
	if p, ok := ctx.Value(key{}).(Pacer); ok {
		p.Pace(ctx)
	}
}

// Every returns a function to call once per item of a loop: it paces
// every n calls, so a loop over small items pays for a counter only.
func Every(ctx context.Context, n int) func() {
	p, ok := ctx.Value(key{}).(Pacer)
	if !ok {
		return func() {}
	}
	i := 0
	return func() {
		if i++; i >= n {
			i = 0
			p.Pace(ctx)
		}
	}
}

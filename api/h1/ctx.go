package h1

import (
	"context"
	"sync"
	"time"
)

// reqContext is a request's context. It carries the connection's values
// and, as net/http's, is canceled when ServeHTTP returns. Its Done channel
// is made only when asked for (the search gate asks while a search waits
// for a slot), and asking starts watching the connection: a client that
// closes it meanwhile cancels the request, so a search nobody waits for
// gives up its place in line. A request that never asks costs no read,
// goroutine or channel, which is most of them.
type reqContext struct {
	context.Context // the connection's values; never canceled itself
	c               *conn

	mu       sync.Mutex
	done     chan struct{}
	err      error
	finished bool // ServeHTTP returned: nothing may read the connection for it
}

func newReqContext(c *conn) *reqContext {
	return &reqContext{Context: c.tmpl.Context(), c: c}
}

func (r *reqContext) Done() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.done = make(chan struct{})
		switch {
		case r.err != nil:
			close(r.done)
		case !r.finished:
			r.c.watch(r)
		}
	}
	return r.done
}

func (r *reqContext) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// cancel ends the context with err, once.
func (r *reqContext) cancel(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	r.err = err
	if r.done != nil {
		close(r.done)
	}
}

// finish stops the watch, if any, and cancels the context, as net/http
// does when ServeHTTP returns. The connection's reads are the serve
// loop's again afterwards.
func (r *reqContext) finish() {
	r.stop()
	r.cancel(context.Canceled)
}

// stop ends the watch, if any, for good: the connection's reads are no
// longer the request's (it ended, or the handler hijacked the connection).
func (r *reqContext) stop() {
	r.mu.Lock()
	r.finished = true
	r.mu.Unlock()
	r.c.stopWatch()
}

// watch reads the connection in the background while the handler runs:
// the client closing it cancels r. Whatever arrives meanwhile (a next
// request) stays in the read buffer; a timeout ends the watch quietly.
// Called with r.mu held, from the handler, which does not read the
// connection.
func (c *conn) watch(r *reqContext) {
	done := make(chan struct{})
	c.watching = done
	go func() {
		defer close(done)
		if c.br.Buffered() >= bufSize {
			return
		}
		if _, err := c.br.Peek(c.br.Buffered() + 1); err != nil && !isTimeout(err) {
			r.cancel(context.Canceled)
		}
	}()
}

// stopWatch ends the background read, if one runs, and waits for it.
func (c *conn) stopWatch() {
	if c.watching == nil {
		return
	}
	_ = c.nc.SetReadDeadline(aLongTimeAgo)
	<-c.watching
	c.watching = nil
	c.readDeadline = time.Time{} // renewed by the next read
	_ = c.nc.SetReadDeadline(time.Time{})
}

// aLongTimeAgo is a deadline that has passed: it wakes a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

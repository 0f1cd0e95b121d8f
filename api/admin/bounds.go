package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// Defaults of the analysts' bounds (gds serve --analyst-timeout and
// --analyst-concurrency).
const (
	DefaultAnalystTimeout     = 10 * time.Second
	DefaultAnalystConcurrency = 1
	// analystQueueWait is how long a query waits for a free slot before
	// it is refused: long enough for a console's queries typed one after
	// another, short enough that a script learns at once it is too eager.
	analystQueueWait = 2 * time.Second
)

// errAnalystTimeout is the cause of an analyst's query stopped at
// --analyst-timeout.
var errAnalystTimeout = errors.New("analyst query timed out")

// analystBounds holds the slots of analysts' queries: at most
// Options.AnalystConcurrency run at once, each for at most
// Options.AnalystTimeout, so a heavy one (a wildcard over every name with
// facets) cannot take the cores public searches need.
type analystBounds struct {
	slots   chan struct{}
	timeout time.Duration
}

func newAnalystBounds(o Options) *analystBounds {
	n, timeout := o.AnalystConcurrency, o.AnalystTimeout
	if n <= 0 {
		n = DefaultAnalystConcurrency
	}
	if timeout == 0 {
		timeout = DefaultAnalystTimeout
	}
	return &analystBounds{slots: make(chan struct{}, n), timeout: timeout}
}

// start takes a slot for an analyst's query, waiting up to
// analystQueueWait, and returns the query's context (ended at the
// timeout) and what to call when it is done; when every slot stays busy
// it answers 503 with Retry-After and returns ok=false.
func (b *analystBounds) start(c *gin.Context) (ctx context.Context, done func(), ok bool) {
	select {
	case b.slots <- struct{}{}:
	default:
		t := time.NewTimer(analystQueueWait)
		defer t.Stop()
		select {
		case b.slots <- struct{}{}:
		case <-t.C:
			c.Header("Retry-After", "2")
			writeError(c, http.StatusServiceUnavailable, fmt.Sprintf(
				"Analysts' queries run %d at a time (--analyst-concurrency) and none finished within %v; retry in a moment",
				cap(b.slots), analystQueueWait))
			return nil, nil, false
		case <-c.Request.Context().Done():
			writeError(c, http.StatusServiceUnavailable, "The request ended while waiting for a free analysts' slot")
			return nil, nil, false
		}
	}
	ctx, cancel := c.Request.Context(), context.CancelFunc(func() {})
	if b.timeout > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, b.timeout, errAnalystTimeout)
	}
	return ctx, func() { cancel(); <-b.slots }, true
}

// timedOut is err, or errAnalystTimeout when the query failed because its
// time ran out (whatever error the engine made of that).
func timedOut(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errAnalystTimeout) {
		return fmt.Errorf("%w: %w", errAnalystTimeout, err)
	}
	return err
}

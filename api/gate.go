package api

import (
	"net/http"
	"runtime"
	"time"

	"github.com/gin-gonic/gin"
)

// gate caps the searches running at once. A search beyond the cap waits a
// little for a slot (a burst of cache misses from many connections clears
// in well under a millisecond per search) and is answered 503 if none
// frees in time: a long queue would only make every answer late.
type gate struct {
	slots chan struct{}
	wait  time.Duration
}

// defaultQueueWait is how long a search waits for a slot by default.
const defaultQueueWait = 50 * time.Millisecond

func newGate(n int, wait time.Duration) gate {
	if n <= 0 {
		n = 4 * runtime.GOMAXPROCS(0)
	}
	if wait == 0 {
		wait = defaultQueueWait
	}
	return gate{slots: make(chan struct{}, n), wait: max(wait, 0)}
}

// enter takes a slot or writes the 503 and reports false; release the
// slot with leave.
func (g gate) enter(c *gin.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	if g.wait > 0 {
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
			return true
		case <-t.C:
		case <-c.Request.Context().Done():
		}
	}
	c.Header("Retry-After", "1")
	writeError(c, http.StatusServiceUnavailable, "too many searches at once; retry in a second")
	return false
}

func (g gate) leave() { <-g.slots }

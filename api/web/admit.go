package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/gin-gonic/gin"

	"gds/query"
)

// refusal is why a server-side search cannot run now, in words, with the
// HTTP answer's status and Retry-After (seconds, 0 for none).
type refusal struct {
	msg                string
	status, retryAfter int
}

// admit lets a server-side search (the page's, or a local's) run as the
// API's would: it spends the search budget, pins the live generation and
// takes a search slot. done releases both; r says why not when v is nil.
func (h *Handler) admit(c *gin.Context) (v *query.View, done func(), r *refusal) {
	if h.d.SearchLimit != nil {
		if wait, ok := h.d.SearchLimit(c); !ok {
			secs := max(1, int(math.Ceil(wait.Seconds())))
			return nil, nil, &refusal{fmt.Sprintf("This address made too many searches in a short time. Try again in %d %s.",
				secs, plural(secs, "second", "seconds")), http.StatusTooManyRequests, secs}
		}
	}
	if h.d.Views == nil {
		return nil, nil, &refusal{notReady, http.StatusServiceUnavailable, notReadyRetry}
	}
	v, err := h.d.Views.View()
	if err != nil {
		if !errors.Is(err, query.ErrNotReady) {
			h.d.Logger.Error().Err(err).Str("path", c.Request.URL.Path).Msg("search page: opening the live generation")
		}
		return nil, nil, &refusal{viewProblem(err), http.StatusServiceUnavailable, notReadyRetry}
	}
	release := func() {}
	if h.d.SearchSlot != nil {
		if release, err = h.d.SearchSlot(c.Request.Context()); err != nil {
			v.Close()
			return nil, nil, &refusal{busy, http.StatusServiceUnavailable, 1}
		}
	}
	return v, func() { release(); v.Close() }, nil
}

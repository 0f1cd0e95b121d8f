package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// pageSearchLimit charges a search the page renders on the server to the
// public search route's budget, as if the client had called that route: the
// page must not be a way around the limit. nil when rate limits are off.
func (s *server) pageSearchLimit() func(c *gin.Context) (time.Duration, bool) {
	var rg *rateGroup
	for i := range s.routes {
		r := &s.routes[i]
		if r.Method == http.MethodGet && r.Path == "/search/" {
			rg = s.rateGroupOf(r)
		}
	}
	if rg == nil {
		return nil
	}
	return func(c *gin.Context) (time.Duration, bool) {
		t := rg.g.Admit(s.limiter.IPKey(s.d.ClientIP.Addr(c.Request), ""))
		if !t.Allowed {
			s.metrics().RateLimited(rg.g.Name())
			return t.RetryAfter, false
		}
		rg.g.Settle(&t, http.StatusOK)
		return 0, true
	}
}

// pageSearchSlot has a search the page renders on the server wait for one
// of the search routes' slots, in the same line: the page must not be a
// way around the cap on searches running at once.
func (s *server) pageSearchSlot() func(ctx context.Context) (func(), error) {
	g := s.gate
	leave := g.leave
	return func(ctx context.Context) (func(), error) {
		if err := g.acquire(ctx); err != nil {
			return nil, err
		}
		return leave, nil
	}
}

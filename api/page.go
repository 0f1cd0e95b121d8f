package api

import (
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

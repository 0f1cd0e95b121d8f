package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// metrics returns Deps.Metrics, or one that keeps nothing.
func (s *server) metrics() Metrics {
	if s.d.Metrics == nil {
		return noMetrics{}
	}
	return s.d.Metrics
}

type noMetrics struct{}

func (noMetrics) ObserveRequest(string, string, int, time.Duration) {}
func (noMetrics) SearchStats(int, int)                              {}
func (noMetrics) CacheHit()                                         {}
func (noMetrics) CacheMiss()                                        {}
func (noMetrics) ErrorLimited()                                     {}
func (noMetrics) RateLimited(string)                                {}

// observe reports every request to Metrics by route template, so a metric
// has one series per route rather than one per ID.
func (s *server) observe(c *gin.Context) {
	m := s.metrics()
	if _, ok := m.(noMetrics); ok {
		c.Next()
		return
	}
	start := time.Now()
	panicked := true
	defer func() {
		status := c.Writer.Status()
		if panicked {
			// The recovery handler outside answers 500 after this returns.
			status = http.StatusInternalServerError
		}
		m.ObserveRequest(routeTemplate(c), VersionLabel(c), status, time.Since(start))
	}()
	c.Next()
	panicked = false
}

// routeTemplate names the request's route for metrics: the table's path, or
// gin's pattern for routes outside the table, or "unmatched".
func routeTemplate(c *gin.Context) string {
	if r, _ := RouteOf(c); r != nil {
		return r.Path
	}
	if p := c.FullPath(); p != "" {
		return p
	}
	return "unmatched"
}

package api

import (
	"net/http"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"
)

// GET /meta/status: each route's health as ESI's 2025 interface reports it
// ({"routes": [{"method", "path", "status"}]}), from what gds knows of its
// live generation (docs/api.md, Meta routes).

// Health is what the indexer says of the generations the API answers from
// (cmd/gds reads it from indexer.Manager.Status).
type Health struct {
	// Live: a generation answers searches and lookups.
	Live bool
	// AnalystsPending: the live generation's analysts' part is not live
	// yet (building, pending or failed).
	AnalystsPending bool
	// LastBuildFailed: the last build ended in an error, so what is live
	// is older than the snapshot asked for.
	LastBuildFailed bool
	// Building: a build is running.
	Building bool
}

// Route statuses, ESI's values.
const (
	StatusOK         = "OK"
	StatusDegraded   = "Degraded"
	StatusDown       = "Down"
	StatusRecovering = "Recovering"
	StatusUnknown    = "Unknown"
)

// RouteHealth is one entry of /meta/status.
type RouteHealth struct {
	Method string `json:"method" schema:"enum=GET|POST|PUT|DELETE"`
	Path   string `json:"path"`
	Status string `json:"status" schema:"enum=Unknown|OK|Degraded|Down|Recovering"`
}

// MetaStatus is the answer of GET /meta/status.
type MetaStatus struct {
	Routes []RouteHealth `json:"routes"`
}

// healthStatus is the status of every route that answers from the index:
// none live is Down; a failed last build is Degraded (Recovering while
// the next one runs); the analysts' part not live yet is Degraded. An
// old generation is OK: the schedule rebuilds from a snapshot, and an
// unchanged snapshot makes no new generation, so age alone says nothing
// wrong (a build that failed does, above).
func healthStatus(h Health) string {
	switch {
	case !h.Live:
		return StatusDown
	case h.LastBuildFailed && h.Building:
		return StatusRecovering
	case h.LastBuildFailed, h.AnalystsPending:
		return StatusDegraded
	}
	return StatusOK
}

// metaStatusRoute stands for /meta/status in the rate limiter: ESI's meta
// group, per client IP.
var metaStatusRoute = Route{Method: http.MethodGet, Path: "/meta/status", RateLimit: RateGroupMeta}

// metaStatus answers GET /meta/status: the routes of the table in force
// today, by their unprefixed paths as ESI's 2025 interface names them
// (no trailing slash), and the meta routes, which answer whatever the
// index does.
func (s *server) metaStatus() gin.HandlerFunc {
	rg := s.rateGroupOf(&metaStatusRoute)
	answer := func(c *gin.Context) {
		var h Health
		if s.d.Health != nil {
			h = s.d.Health()
		} else if r, err := s.pin(); err == nil {
			r.Close()
			h.Live = true
		}
		indexed := healthStatus(h)
		today := apiToday(s.now())
		out := MetaStatus{Routes: []RouteHealth{}}
		for i := range s.routes {
			r := &s.routes[i]
			if r.Unversioned {
				continue
			}
			if v, _ := r.inForce(today); v != nil {
				out.Routes = append(out.Routes, RouteHealth{Method: r.Method, Path: esiPath(r.Path), Status: indexed})
			}
		}
		for _, p := range []string{"/meta/changelog", "/meta/compatibility-dates", "/meta/openapi.json", "/meta/status"} {
			out.Routes = append(out.Routes, RouteHealth{Method: http.MethodGet, Path: p, Status: StatusOK})
		}
		sort.SliceStable(out.Routes, func(i, j int) bool {
			a, b := out.Routes[i], out.Routes[j]
			return a.Path < b.Path || (a.Path == b.Path && a.Method < b.Method)
		})
		c.Header("Cache-Control", "no-cache")
		s.sendValidated(c, out)
	}
	return func(c *gin.Context) {
		if rg != nil {
			s.serveLimited(c, rg, &metaStatusRoute, answer)
			return
		}
		answer(c)
	}
}

// esiPath is a route's path as ESI's 2025 interface spells it: no
// trailing slash ("/characters/{character_id}/search").
func esiPath(p string) string {
	if t := strings.TrimSuffix(p, "/"); t != "" {
		return t
	}
	return p
}

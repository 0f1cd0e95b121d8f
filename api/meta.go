package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// registerMeta adds the routes about the API itself, generated from the
// route table: per prefix the Swagger 2.0 document (swagger.json) and the
// OpenAPI 3 one (openapi.json), /meta/openapi.json for a compatibility
// date, status.json, and the compatibility dates and changelog.
func (s *server) registerMeta(e *gin.Engine) {
	prefixes := append(append([]string(nil), aliasPrefixes...), s.versionPrefixes()...)
	for _, p := range prefixes {
		e.GET("/"+p+"/swagger.json", s.swagger(p))
		e.GET("/"+p+"/openapi.json", s.openAPIPrefix(p))
	}
	// Unprefixed, the Swagger document is latest's, as generic clients
	// load it with basePath /latest.
	e.GET("/swagger.json", s.swagger("latest"))
	e.GET("/meta/openapi.json", s.openAPIDated(openAPI31))
	e.GET("/meta/openapi-3.0.json", s.openAPIDated(openAPI30))
	e.GET("/status.json", s.status())
	e.GET("/meta/status", s.metaStatus())
	s.registerCompatMeta(e)
}

// sendValidated answers v as JSON with a strong ETag of its bytes, and
// 304 when If-None-Match names it: ESI's 2026 document declares an ETag
// on /meta/status, /meta/compatibility-dates and /meta/changelog, whose
// answers change only with the date and the index's health, so a client
// revalidates them instead of fetching them again.
func (s *server) sendValidated(c *gin.Context, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.internalError(c, err)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	c.Header("Etag", etag)
	if notModified(c.Request, etag) {
		c.AbortWithStatus(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, contentTypeJSON[0], body)
}

// swagger answers the Swagger 2.0 document of the routes served under
// prefix now: it changes with the clock, as labels do.
func (s *server) swagger(prefix string) gin.HandlerFunc {
	return func(c *gin.Context) { c.JSON(http.StatusOK, s.swaggerDoc(prefix, s.now())) }
}

// openAPIPrefix answers the OpenAPI 3 document of the routes served under
// prefix now.
func (s *server) openAPIPrefix(prefix string) gin.HandlerFunc {
	return func(c *gin.Context) {
		now := s.now()
		c.JSON(http.StatusOK, s.openAPIDoc(s.opsForPrefix(prefix, now), "/"+prefix, prefix, s.docDate(now), false, openAPI30))
	}
}

// openAPIDated answers the OpenAPI document (openapi: 3.1 or 3.0) of the
// unprefixed routes on the request's compatibility date (default:
// today), as ESI's /meta/openapi.json: info.version is the date.
func (s *server) openAPIDated(openapi string) gin.HandlerFunc {
	return func(c *gin.Context) {
		addVary(c.Writer.Header(), HeaderCompatibilityDate)
		date, given, ok := s.requestedDate(c)
		if !ok {
			return
		}
		if !given {
			date = s.docDate(s.now())
		}
		day := date.Format(time.DateOnly)
		c.Header(HeaderCompatibilityDate, day)
		c.JSON(http.StatusOK, s.openAPIDoc(s.opsForDate(date), "", day, date, true, openapi))
	}
}

// RouteStatus is one entry of status.json, as ESI publishes it.
type RouteStatus struct {
	Endpoint string   `json:"endpoint"`
	Method   string   `json:"method"`
	Route    string   `json:"route"`
	Status   string   `json:"status"`
	Tags     []string `json:"tags"`
}

// status answers status.json: every route version served now, under its
// /vN/ path (older interface routes without prefix). The service has no
// backend that can degrade on its own, so every served route is green.
func (s *server) status() gin.HandlerFunc {
	return func(c *gin.Context) {
		at := s.now()
		out := []RouteStatus{}
		add := func(r *Route, prefix string) {
			out = append(out, RouteStatus{
				Endpoint: endpointName(r), Method: strings.ToLower(r.Method),
				Route: prefix + r.Path, Status: "green", Tags: r.Tags,
			})
		}
		for i := range s.routes {
			r := &s.routes[i]
			if r.Unversioned {
				if _, ok := s.served(r, "", at); ok {
					add(r, "")
				}
				continue
			}
			for _, v := range r.Versions {
				prefix := fmt.Sprintf("v%d", v.N)
				if _, ok := s.served(r, prefix, at); ok {
					add(r, "/"+prefix)
				}
			}
		}
		sort.SliceStable(out, func(i, j int) bool {
			if out[i].Route != out[j].Route {
				return out[i].Route < out[j].Route
			}
			return out[i].Method < out[j].Method
		})
		c.JSON(http.StatusOK, out)
	}
}

// endpointNames maps a route's first tag to ESI's backend name.
var endpointNames = map[string]string{
	"Alliance": "esi-alliances", "Assets": "esi-assets", "Bookmarks": "esi-bookmarks",
	"Character": "esi-characters", "Contacts": "esi-contacts", "Contracts": "esi-contracts",
	"Corporation": "esi-corporations", "Faction Warfare": "esi-fw", "Industry": "esi-industry",
	"Market": "esi-markets", "Planetary Interaction": "esi-planetary-interaction",
	"Search": "esi-search", "Universe": "esi-universe", "Wallet": "esi-wallet",
}

// endpointName is ESI's name of the backend serving r, from its first tag.
func endpointName(r *Route) string {
	if len(r.Tags) == 0 {
		return "esi"
	}
	if n, ok := endpointNames[r.Tags[0]]; ok {
		return n
	}
	return "esi-" + strings.ReplaceAll(strings.ToLower(r.Tags[0]), " ", "-")
}

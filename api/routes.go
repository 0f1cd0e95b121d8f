package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Route is one entry of the route table: a method and path template (ESI's
// spelling, e.g. "/characters/{character_id}/search/") with its versions.
type Route struct {
	Method  string
	Path    string
	Summary string
	// Tags group the route in the OpenAPI document and status.json.
	Tags []string
	// Scope is the SSO scope a token must carry; "" for a public route.
	Scope string
	// RateLimit names the route's rate-limit group (see rateLimitGroups):
	// every route of a group spends from one bucket per client. "" means
	// the route is not rate limited (the error limit still applies).
	RateLimit string
	// Roles are the corporation roles of which the token's character must
	// hold one in the path's corporation (ESI's x-required-roles; a
	// Director holds them all). Every route with a corporation in its path
	// also requires the character to belong to it, roles or not.
	Roles []string
	// Unversioned serves the route without a version prefix, and only
	// there (the older interface); its lifecycle is that of its only version.
	Unversioned bool
	// Doc describes parameters and responses for the OpenAPI document.
	Doc Doc
	// Versions of the route, any order.
	Versions []Version
}

// Version is one version of a route: its handler and lifecycle.
type Version struct {
	N         int
	Handler   gin.HandlerFunc
	Lifecycle Lifecycle
	// Doc overrides the route's Doc for this version when set.
	Doc *Doc
}

// Doc is what the OpenAPI document says of a route version.
type Doc struct {
	// Params are the path, query, header and body parameters.
	Params []Param
	// Response is a JSON schema (as a map) of the 200 body; nil for 204.
	Response map[string]any
	// Status is the success status (default 200).
	Status int
	// Consumes are the media types of the body parameter, when it takes
	// others than application/json.
	Consumes []string
}

// Param is one parameter of a route.
type Param struct {
	Name        string
	In          string // path, query, header, body
	Required    bool
	Description string
	Schema      map[string]any
}

// Lifecycle holds the moments a route version changes label. A zero time
// means never. A version is unreleased before Dev (or Latest, when it has
// no dev period), then dev, latest, legacy and finally removed.
type Lifecycle struct {
	Dev, Latest, Legacy, Removed time.Time
}

// Phase is the label of a route version at a moment.
type Phase string

const (
	PhaseUnreleased Phase = "unreleased"
	PhaseDev        Phase = "dev"
	PhaseLatest     Phase = "latest"
	// PhaseSuperseded: still served, but a newer version is latest and this
	// one is not (yet) labelled legacy.
	PhaseSuperseded Phase = "superseded"
	PhaseLegacy     Phase = "legacy"
	PhaseRemoved    Phase = "removed"
)

// Warning headers of legacy and upgradable versions (docs/api.md, Errors,
// caching, limits).
const (
	WarningDeprecated = "299 - This route is deprecated."
	WarningUpgrade    = "199 - This route has an upgrade available."
)

func reached(t, at time.Time) bool { return !t.IsZero() && !at.Before(t) }

// phase is the version's own phase at t, not knowing other versions.
func (l Lifecycle) phase(at time.Time) Phase {
	switch {
	case reached(l.Removed, at):
		return PhaseRemoved
	case reached(l.Legacy, at):
		return PhaseLegacy
	case reached(l.Latest, at):
		return PhaseLatest
	case reached(l.Dev, at):
		return PhaseDev
	}
	return PhaseUnreleased
}

// Phase returns the label of version n of the route at t: a version whose
// own lifecycle says latest is superseded once a newer version is latest.
func (r *Route) Phase(n int, at time.Time) Phase {
	v := r.version(n)
	if v == nil {
		return PhaseUnreleased
	}
	p := v.Lifecycle.phase(at)
	if p == PhaseLatest {
		for _, o := range r.Versions {
			if o.N > n && o.Lifecycle.phase(at) == PhaseLatest {
				return PhaseSuperseded
			}
		}
	}
	return p
}

func (r *Route) version(n int) *Version {
	for i := range r.Versions {
		if r.Versions[i].N == n {
			return &r.Versions[i]
		}
	}
	return nil
}

// resolve picks the version a prefix addresses at t: "vN", "latest",
// "legacy", "dev", or "" for an unversioned (older interface) call.
func (r *Route) resolve(prefix string, at time.Time, devEnabled bool) (*Version, Phase, string) {
	if r.Unversioned != (prefix == "") {
		return nil, "", "Not found"
	}
	switch prefix {
	case "latest", "legacy", "dev":
		want := Phase(prefix) // the alias names the phase it addresses
		if r.evergreen() {
			// ESI serves a route with one lasting version under every
			// label (x-alternate-versions dev, latest, legacy).
			v := &r.Versions[0]
			if r.Phase(v.N, at) != PhaseLatest {
				return nil, "", fmt.Sprintf("This route has no %s version", prefix)
			}
			return v, PhaseLatest, ""
		}
		if want == PhaseDev && !devEnabled {
			return nil, "", "This route has no enabled dev version"
		}
		best := -1
		for i, v := range r.Versions {
			if r.Phase(v.N, at) == want && (best < 0 || v.N > r.Versions[best].N) {
				best = i
			}
		}
		if best < 0 {
			return nil, "", fmt.Sprintf("This route has no %s version", prefix)
		}
		return &r.Versions[best], want, ""
	case "":
		v := &r.Versions[0]
		p := r.Phase(v.N, at)
		if p == PhaseRemoved || p == PhaseUnreleased {
			return nil, p, "This route has been removed"
		}
		return v, p, ""
	}
	n, err := strconv.Atoi(strings.TrimPrefix(prefix, "v"))
	if err != nil || !strings.HasPrefix(prefix, "v") {
		return nil, "", "Unknown version"
	}
	v := r.version(n)
	if v == nil {
		return nil, "", fmt.Sprintf("This route has no version %d", n)
	}
	p := r.Phase(n, at)
	switch {
	case p == PhaseRemoved:
		return nil, p, "This route has been removed"
	case p == PhaseUnreleased, p == PhaseDev && !devEnabled:
		return nil, p, "This route version is not available"
	}
	return v, p, ""
}

// evergreen reports whether r has one version that only ever becomes
// latest and stays so: the routes ESI also answers under /legacy/ and
// /dev/. Routes with a lifecycle of their own (the structures routes)
// keep the seed's labels.
func (r *Route) evergreen() bool {
	if len(r.Versions) != 1 {
		return false
	}
	l := r.Versions[0].Lifecycle
	return l.Dev.IsZero() && l.Legacy.IsZero() && l.Removed.IsZero()
}

// Context keys set for handlers.
const (
	ctxRoute   = "gds.route"
	ctxVersion = "gds.version"
	ctxPhase   = "gds.phase"
)

// PhaseOf is the label the request's version was dispatched under: its
// phase now, or on the request's compatibility date.
func PhaseOf(c *gin.Context) Phase {
	p, _ := c.Get(ctxPhase)
	phase, _ := p.(Phase)
	return phase
}

// RouteOf returns the route and version a request was dispatched to.
func RouteOf(c *gin.Context) (*Route, *Version) {
	r, _ := c.Get(ctxRoute)
	v, _ := c.Get(ctxVersion)
	route, _ := r.(*Route)
	version, _ := v.(*Version)
	return route, version
}

// VersionLabel returns "vN" for a dispatched request, for logs and metrics.
func VersionLabel(c *gin.Context) string {
	if _, v := RouteOf(c); v != nil {
		if v.N >= 0 && v.N < len(versionLabels) {
			return versionLabels[v.N] // every request is labelled twice (log, metrics)
		}
		return fmt.Sprintf("v%d", v.N)
	}
	return ""
}

// Labels names a request in logs by route template and version, as the
// API dispatched it, rather than by raw path (httplog.Options.Labels).
func Labels(c *gin.Context) (route, version string) {
	if r, _ := RouteOf(c); r != nil {
		return r.Path, VersionLabel(c)
	}
	return c.FullPath(), ""
}

var versionLabels = [...]string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"}

// prefixes every route answers under, besides /vN/ for its versions.
var aliasPrefixes = []string{"latest", "legacy", "dev"}

// register adds every route of the table to the engine under each prefix.
func (s *server) register(e *gin.Engine) {
	for i := range s.routes {
		r := &s.routes[i]
		if r.Unversioned {
			continue // the older interface: no prefix (registerUnversioned)
		}
		prefixes := append([]string(nil), aliasPrefixes...)
		for _, v := range r.Versions {
			prefixes = append(prefixes, fmt.Sprintf("v%d", v.N))
		}
		for _, p := range prefixes {
			e.Handle(r.Method, "/"+p+ginPath(r.Path), s.dispatch(r, p))
		}
	}
}

// dispatch answers a call to route r under prefix with the version the
// clock says, its warning header, or 404.
func (s *server) dispatch(r *Route, prefix string) gin.HandlerFunc {
	rg := s.rateGroupOf(r)
	return func(c *gin.Context) {
		v, phase, msg := r.resolve(prefix, s.now(), s.d.DevEnabled)
		if v == nil {
			writeError(c, http.StatusNotFound, msg)
			return
		}
		s.serve(c, rg, r, v, phase)
	}
}

// serve hands a request to version v of route r, labelled phase, through
// the route's rate-limit group rg when it has one.
func (s *server) serve(c *gin.Context, rg *rateGroup, r *Route, v *Version, phase Phase) {
	c.Set(ctxRoute, r)
	c.Set(ctxVersion, v)
	c.Set(ctxPhase, phase)
	switch phase {
	case PhaseLegacy:
		c.Header("Warning", WarningDeprecated)
	case PhaseSuperseded:
		c.Header("Warning", WarningUpgrade)
	}
	if rg != nil {
		s.serveLimited(c, rg, r, v.Handler)
		return
	}
	v.Handler(c)
}

// ginPath turns "/characters/{character_id}/" into "/characters/:character_id/".
func ginPath(p string) string {
	var b strings.Builder
	for _, seg := range strings.Split(p, "/") {
		if b.Len() > 0 || strings.HasPrefix(p, "/") {
			if b.Len() > 0 || seg != "" {
				b.WriteByte('/')
			}
		}
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			b.WriteString(":" + seg[1:len(seg)-1])
		} else {
			b.WriteString(seg)
		}
	}
	out := b.String()
	if !strings.HasPrefix(out, "/") {
		out = "/" + out
	}
	return out
}

// table is the whole route table; each part lives beside its handlers.
func (s *server) table() []Route {
	var t []Route
	t = append(t, s.searchRoutes()...)
	t = append(t, s.lookupRoutes()...)
	t = append(t, s.affiliationRoute())
	t = append(t, s.structureRoutes()...)
	t = append(t, s.olderRoutes()...)
	t = append(t, s.documentRoutes()...)
	t = append(t, s.localRoutes()...)
	t = append(t, s.suggestRoutes()...)
	return t
}

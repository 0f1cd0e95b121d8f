// Package api is the public HTTP interface: an ESI-compatible JSON API
// served by gin and built from one route table (routes.go). Every route
// version's lifecycle is data evaluated against an injected clock, so the
// same table drives routing, version labels, warning headers, the OpenAPI
// document and status.json.
package api

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api/auth"
	"gds/api/clientip"
	"gds/api/esierr"
	"gds/api/ratelimit"
	"gds/api/web"
	"gds/query"
)

// Tokens verifies bearer tokens (auth.Verifier implements it).
type Tokens interface {
	Verify(ctx context.Context, token string) (auth.Claims, error)
}

// Views pins the live generation for one request (query.Searcher
// implements it).
type Views interface {
	View() (*query.View, error)
}

// Metrics receives what the API observes; nil means none are kept.
type Metrics interface {
	ObserveRequest(route, version string, status int, d time.Duration)
	SearchStats(candidates, verified int)
	CacheHit()
	CacheMiss()
	ErrorLimited()
	// RateLimited counts a request of group answered 429.
	RateLimited(group string)
}

// Deps are everything the API needs, passed explicitly.
type Deps struct {
	// Views gives access to the live generation.
	Views Views
	// Open, when set, pins a generation for one request instead of Views
	// (handler tests give one over fixed records; see Reader).
	Open func() (Reader, error)
	// Tokens verifies bearer tokens of the authenticated routes.
	Tokens Tokens
	// Now is the clock route lifecycles and cache headers use; nil means
	// time.Now.
	Now func() time.Time
	// Logger receives errors the API cannot hand to a client.
	Logger zerolog.Logger
	// ReleaseDay is the day the new structures system is released (docs/api.md,
	// Corporation structures); route versions change labels relative to it.
	ReleaseDay time.Time
	// DevEnabled serves dev versions under /dev/ (and their /vN/).
	DevEnabled bool
	// Metrics, when set, receives request and search observations.
	Metrics Metrics
	// Middleware runs before every route (request logging, body limits).
	Middleware []gin.HandlerFunc
	// Limits of the traffic the API accepts.
	Limits Limits
	// BuildYield, when set, is made to pause index builds while this
	// handler's search slots are all taken or searches wait.
	BuildYield *BuildYield
	// Health says what GET /meta/status reports of the index; nil: only
	// whether a generation is live (Views).
	Health func() Health
	// ClientIP says which address a request comes from (X-Forwarded-For
	// from trusted proxies only); the zero value trusts no proxy.
	ClientIP clientip.Resolver
}

// Limits bound what clients can make the API do.
type Limits struct {
	// ErrorLimit is the number of 4xx/5xx answers a client (by IP) may get
	// per ErrorWindow before it is answered 420. Default 100 per minute;
	// negative disables error limiting.
	ErrorLimit  int
	ErrorWindow time.Duration
	// ErrorClients bounds the clients whose error windows are kept (0:
	// ratelimit.DefaultMaxClients, 262,144 clients in at most 12 MiB).
	// A flood of more clients than that is still counted: each newcomer
	// takes the place of a client with few errors (ratelimit.Windows).
	ErrorClients int
	// CacheBytes bounds the search response cache. Default 64 MiB; negative
	// disables it.
	CacheBytes int64
	// MaxConcurrentSearches is how many searches run at once (default one
	// per core, GOMAXPROCS); the rest wait in line, first come first
	// served, up to SearchBurstWait while the queue empties now and then
	// and up to SearchQueueWait once it stands (not empty for longer than
	// SearchBurstWait), then get 503 with Retry-After.
	MaxConcurrentSearches int
	// SearchQueueWait is how long a search beyond MaxConcurrentSearches
	// waits for a slot under a standing queue before the 503. Default
	// 50 ms; negative: no wait, not even in a burst.
	SearchQueueWait time.Duration
	// SearchBurstWait is how long a search waits for a slot in a burst
	// (the queue emptied within the last SearchBurstWait). Default
	// 500 ms; never less than SearchQueueWait.
	SearchBurstWait time.Duration
	// RateLimits overrides the default budgets of rate-limit groups by
	// group name (gds serve --rate-limit GROUP=N/WINDOW).
	RateLimits map[string]ratelimit.Limit
	// RateLimitsOff turns the floating-window rate limits off (the error
	// limit still applies).
	RateLimitsOff bool
	// RateLimitMaxKeys bounds the rate limiter's buckets over all groups
	// (0: ratelimit.DefaultMaxKeys).
	RateLimitMaxKeys int
	// MaxBodyBytes and MaxHeaderBytes bound a request's body and its
	// request line with headers; beyond them it gets 413 or 431. Default
	// 64 KiB each.
	MaxBodyBytes   int64
	MaxHeaderBytes int
}

// server is the API's state.
type server struct {
	d      Deps
	now    func() time.Time
	routes []Route
	// limiter keeps the rate limits' buckets; nil when they are off.
	limiter    *ratelimit.Limiter
	rateGroups map[string]*rateGroup
	errs       *errorLimiter
	// gate holds the search slots the search routes and the search page
	// share.
	gate *gate
	// Request size limits (Limits with defaults).
	maxBody, maxHeader int64
	// dates are the table's change dates (compat.go), ascending.
	dates []time.Time
}

// Handler is the public HTTP handler.
type Handler struct {
	http.Handler
	s *server
}

// New returns the public HTTP handler.
func New(d Deps) *Handler {
	gin.SetMode(gin.ReleaseMode)
	s := &server{d: d, now: d.Now, maxBody: d.Limits.MaxBodyBytes, maxHeader: int64(d.Limits.MaxHeaderBytes)}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody <= 0 {
		s.maxBody = defaultMaxRequestBytes
	}
	if s.maxHeader <= 0 {
		s.maxHeader = defaultMaxRequestBytes
	}
	s.errs = newErrorLimiter(d.Limits, s.now, s.metrics(), d.ClientIP)
	s.gate = newGate(d.Limits.MaxConcurrentSearches, d.Limits.SearchQueueWait, d.Limits.SearchBurstWait)
	if d.BuildYield != nil {
		d.BuildYield.attach(s.gate)
	}
	s.routes = s.table()
	s.limiter = s.newLimiter()
	s.rateGroups = map[string]*rateGroup{}
	s.dates = changeDates(s.routes)
	e := gin.New()
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.HandleMethodNotAllowed = true
	// Trust no proxy headers: a client must not pick the IP its error
	// budget is counted against with X-Forwarded-For.
	_ = e.SetTrustedProxies(nil)
	e.Use(gin.CustomRecoveryWithWriter(nil, func(c *gin.Context, err any) {
		// A bug must not turn into a crash or an empty answer.
		s.d.Logger.Error().Interface("panic", err).Str("path", c.Request.URL.Path).Msg("handler panicked")
		writeError(c, http.StatusInternalServerError, "Internal error")
	}))
	e.Use(d.Middleware...)
	e.Use(s.middleware()...)
	e.Use(tenant)
	s.register(e)
	s.registerUnversioned(e)
	s.registerMeta(e)
	// The search page for people: / and /assets/, outside the route table.
	web.Register(e, web.Deps{Views: d.Views, Logger: d.Logger, SearchLimit: s.pageSearchLimit(),
		SearchSlot: s.pageSearchSlot()})
	e.NoRoute(func(c *gin.Context) { writeError(c, http.StatusNotFound, "Not found") })
	e.NoMethod(func(c *gin.Context) { writeError(c, http.StatusMethodNotAllowed, "Method not allowed") })
	return &Handler{Handler: e, s: s}
}

// Rejected charges an answer net/http gave before any handler ran (see
// httplog.JSONErrors) to the client's error budget, as the API's own error
// answers are, and returns the status to send (420 for a client already
// at its limit) with the error-limit headers.
func (h *Handler) Rejected(remote string, status int) (int, http.Header) {
	el := h.s.errs
	if el.limit < 0 {
		return status, nil
	}
	ip, _, err := net.SplitHostPort(remote)
	if err != nil {
		ip = remote
	}
	// Behind a trusted proxy the client is unknown here (its header was
	// never read): the proxy's own budget is not charged for it.
	if a, err := netip.ParseAddr(ip); err == nil && h.s.d.ClientIP.Trusts(a.Unmap()) {
		return status, nil
	}
	hdr := http.Header{}
	if remain, reset := el.state(ip); remain <= 0 {
		el.metrics.ErrorLimited()
		setErrorLimitHeaders(hdr, 0, reset)
		return StatusErrorLimited, hdr
	}
	remain, reset := el.count(ip)
	setErrorLimitHeaders(hdr, remain, reset)
	return status, hdr
}

// ErrorBody is the shape of every error answer, as ESI 2026 sends it
// (api/esierr): error first, then status and, for refused parameters and
// body items, details.
type ErrorBody = esierr.Body

// writeError is the one error writer: {"error": msg, "status": status}.
//
// An error is not to be reused as it stands: whatever cache headers the
// handler set before it failed give way to no-cache, without an ETag or
// dates (a 404 for an ID the next generation adds must not stay cached
// for the hour a found record is).
func writeError(c *gin.Context, status int, msg string) {
	writeErrorDetails(c, status, msg)
}

// writeErrorDetails is writeError with details naming what was refused.
func writeErrorDetails(c *gin.Context, status int, msg string, details ...esierr.Detail) {
	h := c.Writer.Header()
	delete(h, "Etag")
	delete(h, "Expires")
	delete(h, "Last-Modified")
	h["Cache-Control"] = cacheControlNoCache
	c.AbortWithStatusJSON(status, esierr.New(status, msg, details...))
}

// contentTypeJSON is the Content-Type of every JSON answer (shared; see
// cacheControlPublic).
var contentTypeJSON = []string{"application/json; charset=utf-8"}

// autoLengthMax is net/http's response buffer (bufferBeforeChunkingSize):
// a body no longer than this is still buffered when the handler returns,
// and net/http then writes its Content-Length itself.
const autoLengthMax = 2048

// sendJSON writes a 200 answer of JSON body. A body of up to autoLengthMax
// bytes gets its Content-Length from net/http, written beside Date rather
// than as a header map entry the answer must hash, sort, clone and write
// (what gin's c.Data does, with a slice and a string for it); a longer one
// declares it, so it is not sent chunked. Either way the client sees the
// same Content-Length.
func sendJSON(c *gin.Context, body []byte) {
	h := c.Writer.Header()
	h["Content-Type"] = contentTypeJSON
	if len(body) > autoLengthMax {
		h["Content-Length"] = headerInt(len(body))
	}
	c.Writer.WriteHeader(http.StatusOK)
	_, _ = c.Writer.Write(body) // a failed write is the client gone
}

// notReadyRetry is the Retry-After before any generation is live: a first
// build of a large snapshot takes minutes, so retrying sooner is wasted.
const notReadyRetry = "30"

// writeNotReady answers a request that needs the index before one is live.
func writeNotReady(c *gin.Context) {
	c.Header("Retry-After", notReadyRetry)
	writeError(c, http.StatusServiceUnavailable, "the index is not ready yet; retry later")
}

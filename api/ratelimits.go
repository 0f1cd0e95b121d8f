package api

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"gds/api/auth"
	"gds/api/ratelimit"
)

// Rate-limit groups of the route table (the Route.RateLimit column). Like
// ESI's, a group is a family of routes with one budget per client.
const (
	// RateGroupSearch is the public search: per client IP.
	RateGroupSearch = "search"
	// RateGroupCharSearch is the character search: per application and
	// character.
	RateGroupCharSearch = "char-search"
	// RateGroupStaticData is the universe lookups (types, factions, ids,
	// names and the like): per client IP.
	RateGroupStaticData = "static-data"
	// RateGroupCharDetail is a character's documents (bookmarks, wallet...).
	RateGroupCharDetail = "char-detail"
	// RateGroupCorpDetail is corporation and alliance documents.
	RateGroupCorpDetail = "corp-detail"
	// RateGroupCorpStructure is the corporation structures routes.
	RateGroupCorpStructure = "corp-structure"
	// RateGroupMeta is GET /meta/status: per client IP, as ESI's.
	RateGroupMeta = "meta"
)

// rateLimitGroups are the default budgets of the groups; gds serve
// --rate-limit GROUP=N/WINDOW overrides them. An answer spends 2 tokens
// (2xx), 1 (3xx), 5 (4xx) or 0 (5xx), so a budget of N tokens is N/2
// successful answers per window.
var rateLimitGroups = map[string]ratelimit.Limit{
	// 600 answered searches per 5 minutes: a person typing into a search
	// page never meets it, a scraper does within seconds.
	RateGroupSearch: {MaxTokens: 1200, Window: 5 * time.Minute},
	// The same budget per character as per IP for the public search.
	RateGroupCharSearch: {MaxTokens: 1200, Window: 5 * time.Minute},
	// Lookups are cheap but are what a scraper walks: 2 answers a second
	// sustained.
	RateGroupStaticData: {MaxTokens: 3600, Window: 15 * time.Minute},
	// Authenticated documents change rarely and are cached by clients:
	// ESI's 150/15m-style budgets, a little larger.
	RateGroupCharDetail:    {MaxTokens: 600, Window: 15 * time.Minute},
	RateGroupCorpDetail:    {MaxTokens: 600, Window: 15 * time.Minute},
	RateGroupCorpStructure: {MaxTokens: 600, Window: 15 * time.Minute},
	// ESI's budget of its meta group.
	RateGroupMeta: {MaxTokens: 150, Window: 15 * time.Minute},
}

// RateLimitGroups returns the default budget of every rate-limit group
// (for --help, docs and tests).
func RateLimitGroups() map[string]ratelimit.Limit {
	return maps.Clone(rateLimitGroups)
}

// rateLimit is route r's group and effective budget (the default, or the
// operator's override); ok is false when r is not rate limited.
func (s *server) rateLimit(r *Route) (group string, l ratelimit.Limit, ok bool) {
	if r.RateLimit == "" || s.d.Limits.RateLimitsOff {
		return "", ratelimit.Limit{}, false
	}
	if l, ok := s.d.Limits.RateLimits[r.RateLimit]; ok {
		return r.RateLimit, l, true
	}
	l, ok = rateLimitGroups[r.RateLimit]
	return r.RateLimit, l, ok
}

// xRateLimit is the OpenAPI x-rate-limit extension of route r, as ESI
// publishes it ({group, window-size, max-tokens}), or nil.
func (s *server) xRateLimit(r *Route) map[string]any {
	group, l, ok := s.rateLimit(r)
	if !ok {
		return nil
	}
	return map[string]any{
		"group":       group,
		"window-size": ratelimit.FormatWindow(l.Window),
		"max-tokens":  l.MaxTokens,
	}
}

// Rate-limit headers ESI sends on every answer of a rate-limited route, as
// net/http keys them (these spellings are already canonical).
const (
	HeaderRateLimitGroup     = "X-Ratelimit-Group"
	HeaderRateLimitLimit     = "X-Ratelimit-Limit"
	HeaderRateLimitRemaining = "X-Ratelimit-Remaining"
	HeaderRateLimitUsed      = "X-Ratelimit-Used"
)

// rateGroup is a route's group in the limiter with its header values made
// once, so the hot path sets headers without formatting or allocating.
type rateGroup struct {
	g            *ratelimit.Group
	name, limit  []string
	remainValues [][]string // remaining token counts 0..max, when max is small
}

// maxSharedRemaining bounds the remaining-token header values made ahead.
const maxSharedRemaining = 4096

func (rg *rateGroup) remaining(n int) []string {
	if n >= 0 && n < len(rg.remainValues) {
		return rg.remainValues[n]
	}
	return []string{strconv.Itoa(n)}
}

// newLimiter builds the limiter of every group the route table uses, with
// the operator's budgets; nil when rate limits are off.
func (s *server) newLimiter() *ratelimit.Limiter {
	if s.d.Limits.RateLimitsOff {
		return nil
	}
	groups := map[string]ratelimit.Limit{}
	// The table's routes, and /meta/status outside it.
	for _, r := range append(s.routes[:len(s.routes):len(s.routes)], metaStatusRoute) {
		if g, l, ok := s.rateLimit(&r); ok {
			groups[g] = l
		}
	}
	lim, err := ratelimit.New(ratelimit.Config{Groups: groups, Now: s.now, MaxKeys: s.d.Limits.RateLimitMaxKeys})
	if err != nil {
		// Budgets come from ParseLimit or the defaults above: a bad one is
		// a programming error, and serving unlimited would hide it.
		panic(err)
	}
	return lim
}

// rateGroupOf is route r's group in the limiter, or nil when r is not
// rate limited.
func (s *server) rateGroupOf(r *Route) *rateGroup {
	if s.limiter == nil {
		return nil
	}
	name, l, ok := s.rateLimit(r)
	if !ok {
		return nil
	}
	if rg := s.rateGroups[name]; rg != nil {
		return rg
	}
	rg := &rateGroup{g: s.limiter.Group(name), name: []string{name}, limit: []string{l.String()}}
	rg.remainValues = make([][]string, min(l.MaxTokens, maxSharedRemaining)+1)
	for i := range rg.remainValues {
		rg.remainValues[i] = []string{strconv.Itoa(i)}
	}
	s.rateGroups[name] = rg
	return rg
}

// rateKey is whose bucket a request spends from, as ESI keys them: an
// authenticated route's valid token speaks for <application>:<character>;
// otherwise the client IP, with the application of a valid token sent to
// a public route. A token that does not verify is not trusted to pick a
// bucket (the handler answers it 401 where one is required).
func (s *server) rateKey(c *gin.Context, r *Route, addr netip.Addr) ratelimit.Key {
	if r.Scope != "" || mayHaveToken(c.Request) {
		if claims, err := s.authenticate(c); err == nil {
			if r.Scope != "" {
				return s.limiter.UserKey(claims.ClientID, claims.CharacterID)
			}
			return s.limiter.IPKey(addr, claims.ClientID)
		}
	}
	return s.limiter.IPKey(addr, "")
}

// mayHaveToken is a cheap test for a token on a public route, so public
// requests without one never parse their query twice.
func mayHaveToken(r *http.Request) bool {
	return len(r.Header["Authorization"]) > 0 || strings.Contains(r.URL.RawQuery, auth.TokenParam+"=")
}

// serveLimited answers a request of a rate-limited route: 429 when the
// client's bucket is spent, else the handler, charged by its status.
func (s *server) serveLimited(c *gin.Context, rg *rateGroup, r *Route, h gin.HandlerFunc) {
	lw := limitWriterOf(c.Writer)
	var addr netip.Addr
	var now time.Time
	if lw != nil {
		addr, now = lw.addr, lw.now // read by the error limiter
	} else {
		addr, now = s.d.ClientIP.Addr(c.Request), s.now()
	}
	t := rg.g.AdmitAt(s.rateKey(c, r, addr), now)
	hdr := c.Writer.Header()
	hdr[HeaderRateLimitGroup] = rg.name
	hdr[HeaderRateLimitLimit] = rg.limit
	if !t.Allowed {
		s.metrics().RateLimited(rg.g.Name())
		retry := max(seconds(t.RetryAfter), 1)
		hdr[HeaderRateLimitRemaining] = rg.remaining(t.Remaining)
		hdr[HeaderRateLimitUsed] = headerInt(0)
		hdr["Retry-After"] = headerInt(retry)
		writeError(c, http.StatusTooManyRequests, fmt.Sprintf(
			"rate limited: this client spent the %s group's %s tokens; retry in %d seconds",
			rg.g.Name(), rg.limit[0], retry))
		return
	}
	if lw != nil && lw.rate == nil && !lw.committed {
		// The error limiter's writer settles the ticket when it commits
		// the status (a panic's 500 too, which costs nothing).
		lw.rate, lw.ticket = rg, t
		h(c)
		return
	}
	w := rateWriters.Get().(*rateWriter)
	*w = rateWriter{commitWriter: commitWriter{c.Writer, w}, rg: rg, ticket: t}
	c.Writer = w
	defer func() {
		if !w.committed {
			// The handler panicked: the recovery handler answers 500,
			// which costs nothing.
			w.settle(http.StatusInternalServerError)
		}
		c.Writer = w.ResponseWriter
		*w = rateWriter{}
		rateWriters.Put(w)
	}()
	h(c)
	w.commit() // an answer without a body has not committed yet
}

var rateWriters = sync.Pool{New: func() any { return new(rateWriter) }}

// rateWriter settles the request's cost and sets the remaining and used
// headers just before the status line is committed, when the final status
// is known (as limitWriter does for the error limit).
type rateWriter struct {
	commitWriter
	rg        *rateGroup
	ticket    ratelimit.Ticket
	committed bool
}

func (w *rateWriter) commit() {
	if !w.committed {
		w.settle(w.ResponseWriter.Status())
	}
}

func (w *rateWriter) settle(status int) {
	w.committed = true
	setRateHeaders(w.Header(), w.rg, &w.ticket, status)
}

// setRateHeaders settles an admitted request's ticket by its answer's
// status and sets the remaining and used headers.
func setRateHeaders(h http.Header, rg *rateGroup, t *ratelimit.Ticket, status int) {
	used, remaining := rg.g.Settle(t, status)
	h[HeaderRateLimitRemaining] = rg.remaining(remaining)
	h[HeaderRateLimitUsed] = headerInt(used)
}

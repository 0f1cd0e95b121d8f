package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/api/auth"
	"gds/api/clientip"
	"gds/api/ratelimit"
)

// Every route of the table names a group that has a default budget, so a
// new route cannot be left unlimited by accident.
func TestEveryRouteHasRateLimitGroup(t *testing.T) {
	s := &server{now: time.Now}
	for _, r := range s.table() {
		if r.RateLimit == "" {
			t.Errorf("%s %s has no rate-limit group", r.Method, r.Path)
			continue
		}
		if _, ok := rateLimitGroups[r.RateLimit]; !ok {
			t.Errorf("%s %s: group %q has no default budget", r.Method, r.Path, r.RateLimit)
		}
	}
	if got := rateLimitGroups[RateGroupSearch]; got != (ratelimit.Limit{MaxTokens: 1200, Window: 5 * time.Minute}) {
		t.Errorf("public search default = %v, want 1200/5m", got)
	}
}

func TestRateLimitOverrideAndOff(t *testing.T) {
	r := &Route{RateLimit: RateGroupSearch}
	s := &server{d: Deps{Limits: Limits{RateLimits: map[string]ratelimit.Limit{
		RateGroupSearch: {MaxTokens: 10, Window: 3 * time.Second},
	}}}}
	group, l, ok := s.rateLimit(r)
	if !ok || group != RateGroupSearch || l.String() != "10/3s" {
		t.Errorf("override: got %q %v %v, want search 10/3s", group, l, ok)
	}
	x := s.xRateLimit(r)
	if x["group"] != "search" || x["window-size"] != "3s" || x["max-tokens"] != 10 {
		t.Errorf("x-rate-limit = %v", x)
	}
	if _, l, _ := (&server{}).rateLimit(&Route{RateLimit: RateGroupStaticData}); l.String() != "3600/15m" {
		t.Errorf("static-data default = %v", l)
	}
	s.d.Limits.RateLimitsOff = true
	if _, _, ok := s.rateLimit(r); ok || s.xRateLimit(r) != nil {
		t.Error("rate limits off still limit the route")
	}
	if _, _, ok := (&server{}).rateLimit(&Route{}); ok {
		t.Error("a route without a group is limited")
	}
}

// from serves one request from the client address remote; headers are
// name, value pairs.
func (ts *testServer) from(remote, path string, headers ...string) *httptest.ResponseRecorder {
	ts.t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.RemoteAddr = remote
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	return rec
}

func requireRateHeaders(t *testing.T, what string, rec *httptest.ResponseRecorder, status int, group, limit string, remaining, used int) {
	t.Helper()
	h := rec.Header()
	if rec.Code != status || h.Get(HeaderRateLimitGroup) != group || h.Get(HeaderRateLimitLimit) != limit ||
		h.Get(HeaderRateLimitRemaining) != strconv.Itoa(remaining) || h.Get(HeaderRateLimitUsed) != strconv.Itoa(used) {
		t.Fatalf("%s: %d group %q limit %q remaining %q used %q; want %d %s %s %d %d (%s)", what, rec.Code,
			h.Get(HeaderRateLimitGroup), h.Get(HeaderRateLimitLimit), h.Get(HeaderRateLimitRemaining),
			h.Get(HeaderRateLimitUsed), status, group, limit, remaining, used, rec.Body.String())
	}
}

const searchPath = "/latest/search/?search=jita&categories=solar_system"

// TestRateLimitHTTP drives the public search's bucket through the real
// engine: every status's cost in the headers, 429 with Retry-After when
// spent, answers again once the tokens come back on the injected clock.
func TestRateLimitHTTP(t *testing.T) {
	m := &countingMetrics{}
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Metrics = m
		d.Limits.RateLimits = map[string]ratelimit.Limit{RateGroupSearch: {MaxTokens: 10, Window: 10 * time.Second}}
	})
	const client = "192.0.2.1:1234"
	rec := ts.from(client, searchPath)
	requireRateHeaders(t, "200", rec, http.StatusOK, "search", "10/10s", 8, 2)
	etag := rec.Header().Get("ETag")
	requireRateHeaders(t, "304", ts.from(client, searchPath, "If-None-Match", etag), http.StatusNotModified, "search", "10/10s", 7, 1)
	requireRateHeaders(t, "400", ts.from(client, "/latest/search/?search=ji&categories=solar_system"),
		http.StatusBadRequest, "search", "10/10s", 2, 5)
	ts.clock.Add(2 * time.Second)
	requireRateHeaders(t, "last 200", ts.from(client, searchPath, "Accept-Encoding", "gzip"), http.StatusOK, "search", "10/10s", 0, 2)
	rec = ts.from(client, searchPath)
	requireRateHeaders(t, "429", rec, http.StatusTooManyRequests, "search", "10/10s", 0, 0)
	// The 8 tokens spent at 0s come back at 11s; it is 2s now.
	if rec.Header().Get("Retry-After") != "9" || !strings.Contains(errorOf(t, rec), "rate limited") {
		t.Errorf("429: Retry-After %q, body %s", rec.Header().Get("Retry-After"), rec.Body.String())
	}
	// The error limit counted the 400 and the 429 as well.
	if got := rec.Header().Get(HeaderErrorLimitRemain); got != "98" {
		t.Errorf("error limit remain %q after two errors, want 98", got)
	}
	if m.rateLimited != 1 {
		t.Errorf("rate-limited metric %d, want 1", m.rateLimited)
	}
	requireRateHeaders(t, "another client", ts.from("192.0.2.2:1234", searchPath), http.StatusOK, "search", "10/10s", 8, 2)
	ts.clock.Add(9*time.Second - time.Millisecond)
	requireRateHeaders(t, "just before", ts.from(client, searchPath), http.StatusTooManyRequests, "search", "10/10s", 0, 0)
	ts.clock.Add(time.Millisecond)
	requireRateHeaders(t, "tokens back", ts.from(client, searchPath), http.StatusOK, "search", "10/10s", 6, 2)

	// Routes outside the table are not rate limited.
	if rec := ts.from(client, "/latest/swagger.json"); rec.Header().Get(HeaderRateLimitGroup) != "" {
		t.Errorf("swagger.json carries rate-limit headers: %v", rec.Header())
	}
}

// The error limit (420) still applies on a rate-limited route, and a 420
// spends no tokens.
func TestRateLimitAndErrorLimit(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) { d.Limits.ErrorLimit = 3 })
	const client = "192.0.2.1:1234"
	for i := range 3 {
		requireRateHeaders(t, "400", ts.from(client, "/latest/search/?search=ji&categories=solar_system"),
			http.StatusBadRequest, "search", "1200/5m", 1200-5*(i+1), 5)
	}
	if rec := ts.from(client, searchPath); rec.Code != StatusErrorLimited || rec.Header().Get(HeaderRateLimitGroup) != "" {
		t.Fatalf("error-limited client: %d %v", rec.Code, rec.Header())
	}
}

// Buckets are ESI's: an authenticated route's by application and
// character wherever the requests come from; a public route's by IP, and
// by IP and application when a valid token is sent.
func TestRateLimitKeys(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Limits.RateLimits = map[string]ratelimit.Limit{
			RateGroupSearch:     {MaxTokens: 4, Window: time.Minute},
			RateGroupCharSearch: {MaxTokens: 4, Window: time.Minute},
		}
	})
	tok := func(app string) []string {
		return bearer(ts.mint(auth.MintOptions{CharacterID: 2112000001, Scopes: []string{ScopeSearchStructures}, ClientID: app}))
	}
	const charPath = "/latest/characters/2112000001/search/?search=jita&categories=solar_system"
	spend := func(what, remote, path string, headers []string, want ...int) {
		t.Helper()
		for i, status := range want {
			if rec := ts.from(remote, path, headers...); rec.Code != status {
				t.Fatalf("%s, request %d: %d, want %d (%s)", what, i+1, rec.Code, status, rec.Body.String())
			}
		}
	}
	appA, appB := tok("app-a"), tok("app-b")
	spend("app-a's character from two addresses", "192.0.2.1:1", charPath, appA, 200, 200)
	spend("app-a's character from two addresses", "198.51.100.1:1", charPath, appA, 429)
	spend("the same character through app-b", "192.0.2.1:1", charPath, appB, 200, 200, 429)

	spend("public search with app-a's token", "192.0.2.7:1", searchPath, appA, 200, 200, 429)
	spend("the same IP without a token", "192.0.2.7:1", searchPath, nil, 200, 200, 429)
	spend("the same IP with app-b's token", "192.0.2.7:1", searchPath, appB, 200, 200, 429)
	// A token that does not verify cannot pick a fresh bucket.
	spend("the same IP with a forged token", "192.0.2.7:1", searchPath, bearer("not.a.token"), 429)
	spend("the same IP with a forged ?token=", "192.0.2.7:1", searchPath+"&token=x", nil, 429)
}

// X-Forwarded-For names the client only when a trusted proxy sent it.
func TestRateLimitTrustedProxies(t *testing.T) {
	proxies, err := clientip.Parse("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.ClientIP = proxies
		d.Limits.RateLimits = map[string]ratelimit.Limit{RateGroupSearch: {MaxTokens: 4, Window: time.Minute}}
	})
	xff := func(ip string) []string { return []string{"X-Forwarded-For", ip} }
	for i, want := range []int{200, 200, 429} {
		if rec := ts.from("10.0.0.1:1", searchPath, xff("203.0.113.1")...); rec.Code != want {
			t.Fatalf("behind the proxy, request %d: %d, want %d", i+1, rec.Code, want)
		}
	}
	if rec := ts.from("10.0.0.2:1", searchPath, xff("203.0.113.2")...); rec.Code != http.StatusOK {
		t.Errorf("another client behind the proxy: %d", rec.Code)
	}
	// An untrusted peer's header is its own to forge: every spoofed
	// address spends the peer's one bucket.
	for i, want := range []int{200, 200, 429} {
		if rec := ts.from("198.51.100.9:1", searchPath, xff(fmt.Sprintf("203.0.113.%d", 50+i))...); rec.Code != want {
			t.Fatalf("spoofing peer, request %d: %d, want %d", i+1, rec.Code, want)
		}
	}
}

func TestRateLimitsOff(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) { d.Limits.RateLimitsOff = true })
	for range 700 {
		if rec := ts.from("192.0.2.1:1", searchPath); rec.Code != http.StatusOK || rec.Header().Get(HeaderRateLimitGroup) != "" {
			t.Fatalf("rate limits off: %d %v", rec.Code, rec.Header())
		}
	}
}

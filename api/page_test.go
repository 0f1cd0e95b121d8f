package api

import (
	"net/http"
	"testing"
	"time"

	"gds/api/ratelimit"
)

// TestPageSpendsSearchBudget: a search the page renders on the server
// spends the public search route's tokens, so the page is no way around the
// limit, and a client the route refuses is refused by the page too.
func TestPageSpendsSearchBudget(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Limits.RateLimits = map[string]ratelimit.Limit{RateGroupSearch: {MaxTokens: 6, Window: time.Minute}}
	})
	const client = "192.0.2.1:1234"
	for i := range 2 {
		if rec := ts.from(client, "/?q=jita"); rec.Code != http.StatusOK {
			t.Fatalf("page search %d: %d", i, rec.Code)
		}
	}
	requireRateHeaders(t, "route after two page searches", ts.from(client, searchPath), http.StatusOK, "search", "6/1m", 0, 2)
	rec := ts.from(client, "/?q=jita")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("page search past the budget: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := ts.from(client, "/"); rec.Code != http.StatusOK {
		t.Errorf("the page without a search is not limited: %d", rec.Code)
	}
	if rec := ts.from("192.0.2.2:1234", "/?q=jita"); rec.Code != http.StatusOK {
		t.Errorf("another client: %d", rec.Code)
	}
}

// A search the page renders waits for one of the search routes' slots, in
// their line: with the only slot held by an API search and no queue wait,
// the page answers 503 with Retry-After: 1; once the slot frees, it
// searches.
func TestPageSearchTakesASearchSlot(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Limits.MaxConcurrentSearches = 1
		d.Limits.SearchQueueWait = -1
		d.Limits.RateLimitsOff = true
	})
	release := holdSearchSlot(t, ts)
	rec := ts.do(http.MethodGet, "/?q=amarr", nil)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("page search while the slot is held: %d, Retry-After %q; want 503 and 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := ts.do(http.MethodGet, "/", nil); rec.Code != http.StatusOK {
		t.Errorf("the page without a search needs no slot: %d", rec.Code)
	}
	if code := release(); code != http.StatusOK {
		t.Errorf("API search: %d", code)
	}
	if rec := ts.do(http.MethodGet, "/?q=amarr", nil); rec.Code != http.StatusOK {
		t.Errorf("page search after the slot freed: %d", rec.Code)
	}
}

package api

import (
	"net/http"
	"testing"
)

func TestMetricsObserveRequests(t *testing.T) {
	m := &countingMetrics{}
	ts := newTestServer(t, searchRecords(), withMetrics(m))
	tok := ts.token(pilotA, ScopeSearchStructures)
	ts.do(http.MethodGet, "/latest/search/?search=jita&categories=character", nil)
	ts.do(http.MethodGet, "/v3/characters/2112000001/search/?search=jita&categories=character", nil, bearer(tok)...)
	ts.do(http.MethodGet, "/v3/characters/2112000001/search/?search=jita&categories=character", nil)
	ts.do(http.MethodGet, "/nowhere", nil)
	want := []observedRequest{
		{"/search/", "v2", 200},
		{"/characters/{character_id}/search/", "v3", 200},
		{"/characters/{character_id}/search/", "v3", 401},
		{"unmatched", "", 404},
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) != len(want) {
		t.Fatalf("observed %v, want %v", m.requests, want)
	}
	for i := range want {
		if m.requests[i] != want[i] {
			t.Errorf("request %d observed as %v, want %v", i, m.requests[i], want[i])
		}
	}
}

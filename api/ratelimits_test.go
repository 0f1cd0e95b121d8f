package api

import (
	"testing"
	"time"

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

package api

import (
	"net/http"
	"testing"
)

// GET /meta/status reports every route in force today, unprefixed as
// ESI's 2025 interface names them, with the status the indexer's health
// gives, in the meta rate-limit group.
func TestMetaStatus(t *testing.T) {
	var health Health
	ts := newTestServer(t, universeFixture(), func(d *Deps) { d.Health = func() Health { return health } })
	for _, tc := range []struct {
		name   string
		health Health
		want   string
	}{
		{"nothing live", Health{}, StatusDown},
		{"nothing live, building", Health{Building: true}, StatusDown},
		{"live", Health{Live: true}, StatusOK},
		{"analysts' part pending", Health{Live: true, AnalystsPending: true}, StatusDegraded},
		{"last build failed", Health{Live: true, LastBuildFailed: true}, StatusDegraded},
		{"rebuilding after a failure", Health{Live: true, LastBuildFailed: true, Building: true}, StatusRecovering},
	} {
		health = tc.health
		rec := ts.do(http.MethodGet, "/meta/status", nil)
		if rec.Code != http.StatusOK || rec.Header().Get(HeaderRateLimitGroup) != RateGroupMeta {
			t.Fatalf("%s: %d %v %s", tc.name, rec.Code, rec.Header(), rec.Body)
		}
		var got MetaStatus
		decodeJSON(t, rec, &got)
		byPath := map[string]string{}
		for _, r := range got.Routes {
			byPath[r.Method+" "+r.Path] = r.Status
		}
		for route, want := range map[string]string{
			"GET /search":                           tc.want,
			"GET /universe/types/{type_id}":         tc.want,
			"POST /characters/affiliation":          tc.want,
			"GET /characters/{character_id}/search": tc.want,
			"GET /meta/status":                      StatusOK,
		} {
			if byPath[route] != want {
				t.Errorf("%s: %s is %q, want %q", tc.name, route, byPath[route], want)
			}
		}
		if _, ok := byPath["GET /corporations/{corporation_id}/structures"]; !ok {
			t.Errorf("%s: no structures list in %s", tc.name, rec.Body)
		}
	}
	// Without a Health, what the views say: a generation is live.
	plain := newTestServer(t, universeFixture())
	var got MetaStatus
	decodeJSON(t, plain.do(http.MethodGet, "/meta/status", nil), &got)
	if len(got.Routes) == 0 || got.Routes[0].Status == StatusDown && got.Routes[0].Path != "/meta/changelog" {
		t.Errorf("without Health: %+v", got.Routes[:1])
	}
}

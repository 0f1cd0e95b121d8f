package api

import (
	"net/http"
	"strings"
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

// The meta routes carry the ETag ESI's 2026 document declares for them
// and answer 304 to a client whose copy is current; a change of what they
// say (here the index's health) changes the ETag. A client generated from
// that document revalidates with the ETag it decoded from the headers.
func TestMetaRoutesRevalidate(t *testing.T) {
	health := Health{Live: true}
	ts := newTestServer(t, universeFixture(), func(d *Deps) { d.Health = func() Health { return health } })
	for _, path := range []string{"/meta/status", "/meta/compatibility-dates", "/meta/changelog"} {
		first := ts.do(http.MethodGet, path, nil)
		etag := first.Header().Get("Etag")
		if first.Code != http.StatusOK || !strings.HasPrefix(etag, `"`) || first.Body.Len() == 0 {
			t.Fatalf("%s: %d, ETag %q, %s", path, first.Code, etag, first.Body)
		}
		again := ts.do(http.MethodGet, path, nil, "If-None-Match", etag)
		if again.Code != http.StatusNotModified || again.Body.Len() != 0 || again.Header().Get("Etag") != etag {
			t.Errorf("%s with If-None-Match %s: %d %q, ETag %q", path, etag, again.Code, again.Body, again.Header().Get("Etag"))
		}
		other := ts.do(http.MethodGet, path, nil, "If-None-Match", `"0123"`)
		if other.Code != http.StatusOK || other.Body.String() != first.Body.String() {
			t.Errorf("%s with another ETag: %d %s", path, other.Code, other.Body)
		}
	}
	before := ts.do(http.MethodGet, "/meta/status", nil).Header().Get("Etag")
	health = Health{Live: true, LastBuildFailed: true}
	after := ts.do(http.MethodGet, "/meta/status", nil, "If-None-Match", before)
	if after.Code != http.StatusOK || after.Header().Get("Etag") == before || !strings.Contains(after.Body.String(), StatusDegraded) {
		t.Errorf("/meta/status after the health changed, with the old ETag: %d, ETag %q, %s", after.Code, after.Header().Get("Etag"), after.Body)
	}
}

package api

import (
	"net/http"
	"strings"
	"testing"
)

// Every answer whose body depends on the language says which it is in
// (Content-Language) and that shared caches must key it by Accept-Language
// (Vary), on a 200 and on the 304 that revalidates it, whichever of the
// language parameter or Accept-Language chose it.
func TestLanguageHeaders(t *testing.T) {
	recs := universeFixture()
	for k, v := range structureFixture() {
		recs[k] = append(recs[k], v...)
	}
	ts := newTestServer(t, recs, released(false))
	ts.clock.Set(testRelease.AddDate(0, 0, 20))
	sp := newSpecs(ts)
	search := bearer(ts.token(90000001, ScopeSearchStructures))
	manager := bearer(ts.token(managerA, readStructures))
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
	}{
		{"type", "GET", "/latest/universe/types/587/", "", nil},
		{"factions", "GET", "/latest/universe/factions/", "", nil},
		{"system", "GET", "/latest/universe/systems/30000142/", "", nil},
		{"constellation", "GET", "/latest/universe/constellations/20000020/", "", nil},
		{"region", "GET", "/latest/universe/regions/10000002/", "", nil},
		{"station", "GET", "/latest/universe/stations/60003760/", "", nil},
		{"character", "GET", "/latest/characters/90000001/", "", nil},
		{"corporation", "GET", "/latest/corporations/1000002/", "", nil},
		{"alliance", "GET", "/latest/alliances/99000001/", "", nil},
		{"search", "GET", "/latest/search/?search=jita&categories=solar_system", "", nil},
		{"character search", "GET", "/latest/characters/90000001/search/?search=jita&categories=solar_system", "", search},
		{"structures", "GET", "/latest/corporations/98000001/structures/", "", manager},
		{"ids", "POST", "/latest/universe/ids/", `["Rifter"]`, nil},
		{"names", "POST", "/latest/universe/names/", `[587]`, nil},
	} {
		for _, via := range []string{"parameter", "header"} {
			path, headers := tc.path, append([]string(nil), tc.headers...)
			if via == "parameter" {
				sep := "?"
				if strings.Contains(path, "?") {
					sep = "&"
				}
				path += sep + "language=de"
				headers = append(headers, "Accept-Language", "ja")
			} else {
				headers = append(headers, "Accept-Language", "de-AT, ja;q=0.5")
			}
			rec := sp.do(t, tc.method, path, tc.body, headers...)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s (%s): %d %s", tc.name, via, rec.Code, rec.Body)
			}
			checkLanguage := func(what string, h http.Header) {
				t.Helper()
				if got := h.Values("Content-Language"); len(got) != 1 || got[0] != "de" {
					t.Errorf("%s (%s) %s: Content-Language %q, want de", tc.name, via, what, got)
				}
				if vary := strings.Join(h.Values("Vary"), ", "); !strings.Contains(vary, "Accept-Language") {
					t.Errorf("%s (%s) %s: Vary %q lacks Accept-Language", tc.name, via, what, vary)
				}
			}
			checkLanguage("200", rec.Header())
			etag := rec.Header().Get("ETag")
			if tc.method != http.MethodGet || etag == "" {
				continue
			}
			rec = ts.do(tc.method, path, nil, append(headers, "If-None-Match", etag)...)
			if rec.Code != http.StatusNotModified {
				t.Fatalf("%s (%s) revalidated: %d, want 304", tc.name, via, rec.Code)
			}
			checkLanguage("304", rec.Header())
		}
	}
	// The German answer really is German, and its ETag differs from the
	// English one's, so a cache keyed by Accept-Language keeps both.
	de := ts.do("GET", "/latest/universe/types/587/", nil, "Accept-Language", "de")
	en := ts.do("GET", "/latest/universe/types/587/", nil)
	if !strings.Contains(de.Body.String(), "Rifter DE") || de.Header().Get("ETag") == en.Header().Get("ETag") ||
		en.Header().Get("Content-Language") != "en" {
		t.Errorf("de %s %s, en %s %s", de.Header().Get("ETag"), de.Body, en.Header().Get("ETag"), en.Header())
	}
}

package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzSearchParams sends arbitrary query strings, Accept-Language values and
// character_id segments through the real engine: whatever comes in, the
// answer is never a 500 or a panic, and always a JSON body (a 304 has none).
func FuzzSearchParams(f *testing.F) {
	for _, seed := range []struct{ query, lang, character string }{
		{"search=jita&categories=character", "", "2112000001"},
		{"search=jita&categories=character,structure&strict=true&language=de", "de;q=0.5, ja", "2112000001"},
		{"search=%E3%82%BF%E3%83%8B&categories=inventory_type", "ja", "1"},
		{"search=ab%FF&categories=character", "en-US", "abc"},
		{"search=abc%00&categories=,,", "*;q=0", "-1"},
		{"search=jita;categories=agent", "q=1;de", "9007199254740993"},
		{"search=jita&categories=agent&categories=agent&page=1&datasource=x", ",,;;", "0"},
		{"%zz=1&search=jita", "de;q=nan", "01"},
		{"search=" + "%20%20%20" + "&categories=region&strict=True&language=", "\x00", "2112000001/.."},
	} {
		f.Add(seed.query, seed.lang, seed.character)
	}
	ts := newTestServer(f, searchRecords(), func(d *Deps) { d.Limits.ErrorLimit, d.Limits.RateLimitsOff = -1, true })
	token := ts.token(pilotA, ScopeSearchStructures)
	f.Fuzz(func(t *testing.T, rawQuery, acceptLanguage, character string) {
		for _, path := range []string{"/v2/search/", "/latest/characters/" + character + "/search/"} {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.URL.Path = path
			req.URL.RawQuery = rawQuery
			req.Header.Set("Accept-Language", acceptLanguage)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			ts.h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s?%s (Accept-Language %q): %d %s", path, rawQuery, acceptLanguage, rec.Code, rec.Body)
			}
			if rec.Code != http.StatusNotModified && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s?%s: %d body is not JSON: %q", path, rawQuery, rec.Code, rec.Body)
			}
		}
	})
}

package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gds/query"
)

func TestSuggestAnswers(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	for _, tc := range []struct{ name, path, want string }{
		{"ranked across categories", "/v1/suggest/?search=jita&categories=character,solar_system",
			`[{"category":"character","id":2112000004,"name":"jita","match":"exact"},` +
				`{"category":"solar_system","id":30000142,"name":"Jita","match":"exact"},` +
				`{"category":"character","id":2112000001,"name":"Jita Trader","match":"prefix"},` +
				`{"category":"character","id":2112000002,"name":"Mr Jita","match":"word"}]`},
		{"a typo, every category by default", "/latest/suggest/?search=tritanuim",
			`[{"category":"inventory_type","id":34,"name":"Tritanium","match":"typo"}]`},
		{"in a language", "/latest/suggest/?search=pyreit&language=de",
			`[{"category":"inventory_type","id":35,"name":"Pyerit","match":"typo"}]`},
		{"the limit", "/latest/suggest/?search=jita&limit=1",
			`[{"category":"character","id":2112000004,"name":"jita","match":"exact"}]`},
		{"nothing is an empty list", "/latest/suggest/?search=qqqqqq", `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(http.MethodGet, tc.path, nil)
			if rec.Code != http.StatusOK || rec.Body.String() != tc.want {
				t.Fatalf("%d %s\nwant %s", rec.Code, rec.Body, tc.want)
			}
			if rec.Header().Get("ETag") == "" || rec.Header().Get("X-Ratelimit-Group") == "" && rec.Header().Get("X-Ratelimit-Limit") == "" {
				t.Errorf("headers: %v", rec.Header())
			}
		})
	}
}

func TestSuggestRefusesBadParameters(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	for _, tc := range []struct{ query, want string }{
		{"", "search: required"},
		{"search=j", "search: must be at least 2 characters"},
		{"search=jita&limit=0", "limit: must be an integer from 1 to 50"},
		{"search=jita&limit=51", "limit: must be an integer from 1 to 50"},
		{"search=jita&limit=x", "limit: must be an integer from 1 to 50"},
		{"search=jita&categories=structure", "categories: \"structure\" is not one of"},
		{"search=jita&language=xx", "language:"},
		{"search=jita&search=jita", "search: given 2 times"},
	} {
		rec := ts.do(http.MethodGet, "/latest/suggest/?"+tc.query, nil)
		if rec.Code != http.StatusBadRequest || !strings.Contains(errorOf(t, rec), tc.want) {
			t.Errorf("%q: %d %s, want 400 %q", tc.query, rec.Code, rec.Body, tc.want)
		}
	}
}

// FuzzSuggestParams: whatever the query string, the suggest route answers
// JSON, never a 500; a 200 is a list of at most the limit, each match one
// of the six kinds.
func FuzzSuggestParams(f *testing.F) {
	for _, seed := range []string{
		"search=jita", "search=tritanuim&categories=inventory_type&limit=50", "search=%E3%82%BF%E3%83%8B&language=ja",
		"search=ab%FF", "search=jita&limit=-1", "search=a%00b", "search=" + strings.Repeat("x", 300),
		"search=jita%20trader&categories=character,,", "search=--&limit=99999999999999999999",
	} {
		f.Add(seed, "de")
	}
	ts := newTestServer(f, searchRecords(), func(d *Deps) { d.Limits.ErrorLimit, d.Limits.RateLimitsOff = -1, true })
	kinds := map[string]bool{query.MatchExact: true, query.MatchTicker: true, query.MatchPrefix: true,
		query.MatchWord: true, query.MatchContains: true, query.MatchTypo: true}
	f.Fuzz(func(t *testing.T, rawQuery, acceptLanguage string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path = "/latest/suggest/"
		req.URL.RawQuery = rawQuery
		req.Header.Set("Accept-Language", acceptLanguage)
		rec := httptest.NewRecorder()
		ts.h.ServeHTTP(rec, req)
		if rec.Code >= 500 || !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("?%s: %d %q", rawQuery, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK {
			return
		}
		var got []query.Suggestion
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got) > query.MaxSuggestions {
			t.Fatalf("?%s: %v %d", rawQuery, err, len(got))
		}
		for _, s := range got {
			if !kinds[s.Match] || s.ID == 0 || s.Name == "" {
				t.Fatalf("?%s: %+v", rawQuery, s)
			}
		}
	})
}

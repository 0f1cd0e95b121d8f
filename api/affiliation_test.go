package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// POST /characters/affiliation/ as ESI serves it: every label and the
// dated path, ESI's shape and limits, the batch refused for one unknown
// character, the caching headers ESI declares, validated against the
// route's own OpenAPI document.
func TestAffiliation(t *testing.T) {
	ts := newTestServer(t, universeFixture(), released(false))
	sp := newSpecs(ts)
	ids := func(from, n int) string {
		return jsonList(n, func(i int) string { return fmt.Sprint(from + i) })
	}
	for _, tc := range []struct {
		name, body string
		status     int
		want       string // the answer, or what the error names
	}{
		{"alliance, none, faction", `[90000001, 90000002, 3008416]`, 200, fmt.Sprintf(`[
			{"character_id":90000001,"corporation_id":%d,"alliance_id":99000001},
			{"character_id":90000002,"corporation_id":%[1]d},
			{"character_id":3008416,"corporation_id":1000002,"faction_id":500001}]`, corpA)},
		{"one unknown", `[90000001, 90000003]`, 404, "body[1]: character 90000003 not found"},
		{"a corporation is no character", `[90000001, 1000002]`, 404, "body[1]"},
		{"1001 IDs", ids(1, 1001), 400, "1 to 1000"},
		{"1000 IDs, unknown", ids(1, 1000), 404, "body[0]"},
		{"empty", `[]`, 400, "1 to 1000"},
		{"duplicate", `[90000001, 90000002, 90000001]`, 400, "body[2]: duplicate ID 90000001"},
		{"fraction", `[90000001.5]`, 400, "body[0]: must be a positive integer"},
		{"string", `["90000001"]`, 400, "body[0]: must be a positive integer"},
		{"object", `{"characters": [90000001]}`, 400, "not a JSON array"},
		{"no body", ``, 400, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := sp.do(t, http.MethodPost, "/v1/characters/affiliation/", tc.body)
			requireAnswer(t, rec, tc.status, tc.want)
			if tc.status != 200 {
				return
			}
			h := rec.Header()
			if h.Get("Cache-Control") != "public, max-age=3600" || h.Get("Etag") == "" || h.Get("Last-Modified") == "" || h.Get("Expires") == "" {
				t.Errorf("caching headers %v", h)
			}
			again := ts.do(http.MethodPost, "/v1/characters/affiliation/", strings.NewReader(tc.body), "If-None-Match", h.Get("Etag"))
			if again.Code != http.StatusNotModified {
				t.Errorf("If-None-Match: %d", again.Code)
			}
		})
	}
	// The same answer under every label and, unprefixed, on a date.
	body := `[90000002]`
	want := fmt.Sprintf(`[{"character_id":90000002,"corporation_id":%d}]`, corpA)
	for _, path := range []string{"/latest/characters/affiliation/", "/legacy/characters/affiliation/", "/dev/characters/affiliation/"} {
		rec := ts.do(http.MethodPost, path, strings.NewReader(body))
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		requireJSONEqual(t, rec.Body.Bytes(), want)
	}
	for _, path := range []string{"/characters/affiliation", "/characters/affiliation/"} {
		rec := ts.do(http.MethodPost, path, strings.NewReader(body), HeaderCompatibilityDate, "2026-05-01")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		requireJSONEqual(t, rec.Body.Bytes(), want)
	}
	// Another order is another answer, with another validator.
	a := ts.do(http.MethodPost, "/v1/characters/affiliation/", strings.NewReader(`[90000001,90000002]`))
	b := ts.do(http.MethodPost, "/v1/characters/affiliation/", strings.NewReader(`[90000002,90000001]`))
	if a.Header().Get("Etag") == b.Header().Get("Etag") {
		t.Error("two orders share an ETag")
	}
}

func BenchmarkAffiliationHandler(b *testing.B) {
	ts := newTestServer(b, universeFixture(), released(false))
	body := `[90000001, 90000002, 3008416]`
	b.ReportAllocs()
	for b.Loop() {
		if rec := ts.do(http.MethodPost, "/v1/characters/affiliation/", strings.NewReader(body)); rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gds/api/esierr"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// Every error answer is ESI 2026's body: {"error", "status"} and, for a
// refused parameter or body item, details saying where and what.
func TestErrorBodiesAsESI2026(t *testing.T) {
	ts := newTestServer(t, indexertest.Records{snapshots.SolarSystems: {&snapshots.SolarSystem{
		Entity: indexertest.Named(30000142, "Jita"), ConstellationID: 20000020, SecurityStatus: 0.9}}})
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		detail                   *esierr.Detail
	}{
		{"query parameter", "GET", "/latest/search/?search=ji&categories=solar_system", "", nil, 400,
			&esierr.Detail{Location: "query.search", Message: "must be at least 3 characters", Value: "ji"}},
		{"path parameter", "GET", "/latest/universe/systems/x1/", "", nil, 400,
			&esierr.Detail{Location: "path.system_id", Value: "x1"}},
		{"body item", "POST", "/latest/universe/names/", "[1,2,3,-4]", nil, 400,
			&esierr.Detail{Location: "body[3]", Value: float64(-4)}},
		{"body", "POST", "/latest/universe/names/", "[]", nil, 400,
			&esierr.Detail{Location: "body", Message: "must hold 1 to 1000 entries, got 0"}},
		{"header", "GET", "/universe/systems/30000142", "", []string{"X-Compatibility-Date", "2020-13-01"}, 400,
			&esierr.Detail{Location: "header.X-Compatibility-Date", Value: "2020-13-01"}},
		{"tenant", "GET", "/latest/universe/systems/30000142/", "", []string{"X-Tenant", "serenity"}, 400,
			&esierr.Detail{Location: "header.X-Tenant", Value: "serenity"}},
		{"not found", "GET", "/latest/universe/systems/30000143/", "", nil, 404, nil},
		{"no route", "GET", "/latest/nope/", "", nil, 404, nil},
		{"method", "DELETE", "/latest/universe/systems/30000142/", "", nil, 405, nil},
		{"body too large", "POST", "/latest/universe/names/", "[" + strings.Repeat("1,", 40<<10) + "1]", nil, 413, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(tc.method, tc.path, strings.NewReader(tc.body), tc.headers...)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			errorOf(t, rec) // error first, status equal to the answer's
			var b ErrorBody
			decodeJSON(t, rec, &b)
			if tc.detail == nil {
				if rec.Code != 413 && len(b.Details) != 0 {
					t.Errorf("details on a %d: %s", rec.Code, rec.Body.String())
				}
				return
			}
			if len(b.Details) != 1 {
				t.Fatalf("want one detail: %s", rec.Body.String())
			}
			d := b.Details[0]
			if d.Location != tc.detail.Location || d.Value != tc.detail.Value ||
				(tc.detail.Message != "" && d.Message != tc.detail.Message) || d.Message == "" {
				t.Errorf("detail %+v, want %+v", d, *tc.detail)
			}
			if !strings.Contains(b.Error, d.Message) {
				t.Errorf("error %q does not hold the detail's message %q", b.Error, d.Message)
			}
		})
	}
}

// The 420 the error limiter writes on a hijacked connection has the same
// body.
func TestErrorLimitedBodyAsESI2026(t *testing.T) {
	ts := newTestServer(t, nil, func(d *Deps) { d.Limits.ErrorLimit = 1 })
	srv := httptest.NewServer(ts.h)
	defer srv.Close()
	var resp *http.Response
	for range 2 {
		var err error
		if resp, err = srv.Client().Get(srv.URL + "/latest/nope/"); err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
	}
	var b ErrorBody
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &b); err != nil || resp.StatusCode != StatusErrorLimited ||
		b.Status != StatusErrorLimited || !strings.HasPrefix(string(body), `{"error":"error limited`) {
		t.Fatalf("%s %s (%v)", resp.Status, body, err)
	}
}

package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"gds/indexer/indexertest"
)

// specs loads the OpenAPI documents a test server publishes and validates
// its answers against them: every response the tests of lookups,
// structures, documents and lifecycles look at goes through check, so the
// published document cannot drift from what the handlers send.
type specs struct {
	ts    *testServer
	mu    sync.Mutex
	cache map[string]*openapi3.T // by prefix and clock
}

func newSpecs(ts *testServer) *specs { return &specs{ts: ts, cache: map[string]*openapi3.T{}} }

// load fetches and validates /{prefix}/swagger.json at the current clock.
func (sp *specs) load(t testing.TB, prefix string) *openapi3.T {
	t.Helper()
	key := prefix + "@" + sp.ts.clock().Format(time.RFC3339Nano)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if doc, ok := sp.cache[key]; ok {
		return doc
	}
	rec := sp.ts.do(http.MethodGet, "/"+prefix+"/swagger.json", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /%s/swagger.json: %d %s", prefix, rec.Code, rec.Body)
	}
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("/%s/swagger.json does not load: %v", prefix, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("/%s/swagger.json is not valid OpenAPI: %v", prefix, err)
	}
	sp.cache[key] = doc
	return doc
}

// do serves a request like testServer.do and checks the answer against
// the document of the request's prefix.
func (sp *specs) do(t testing.TB, method, target string, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	rec := sp.ts.do(method, target, r, headers...)
	sp.check(t, method, target, rec)
	return rec
}

// check validates rec, the answer to method target, against the published
// document. A route the document does not list must have answered 404
// with an error body; so must the older interface (no prefix) when not 2xx.
func (sp *specs) check(t testing.TB, method, target string, rec *httptest.ResponseRecorder) {
	t.Helper()
	path, _, _ := strings.Cut(target, "?")
	prefix, rest := splitPrefix(path)
	if prefix == "" || (prefix == "dev" && !sp.ts.deps.DevEnabled) {
		requireErrorShape(t, method, target, rec)
		return
	}
	doc := sp.load(t, prefix)
	tmpl, item, params := findPath(doc, rest)
	var op *openapi3.Operation
	if item != nil {
		op = item.GetOperation(method)
	}
	if op == nil {
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
			t.Fatalf("%s %s: answered %d but /%s/swagger.json has no such operation", method, target, rec.Code, prefix)
		}
		requireErrorShape(t, method, target, rec)
		return
	}
	req := httptest.NewRequest(method, target, nil)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params,
			Route: &routers.Route{Spec: doc, Path: tmpl, PathItem: item, Method: method, Operation: op},
		},
		Status: rec.Code, Header: rec.Header(),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(rec.Body.Bytes())
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Fatalf("%s %s: %d %s\ndoes not match /%s/swagger.json: %v", method, target, rec.Code, rec.Body, prefix, err)
	}
}

func requireErrorShape(t testing.TB, method, target string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code < 300 {
		return
	}
	var b ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || b.Error == "" {
		t.Fatalf("%s %s: %d with body %q, want {\"error\": ...}", method, target, rec.Code, rec.Body)
	}
}

// splitPrefix splits "/v2/corporations/1/structures/" into "v2" and the
// rest; a path of the older interface has no prefix.
func splitPrefix(path string) (string, string) {
	first, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if slices.Contains(aliasPrefixes, first) || (len(first) > 1 && first[0] == 'v' && strings.Trim(first[1:], "0123456789") == "") {
		return first, "/" + rest
	}
	return "", path
}

// findPath matches a concrete path against the document's templates.
func findPath(doc *openapi3.T, path string) (string, *openapi3.PathItem, map[string]string) {
	segs := strings.Split(path, "/")
	for tmpl, item := range doc.Paths.Map() {
		tsegs := strings.Split(tmpl, "/")
		if len(tsegs) != len(segs) {
			continue
		}
		params := map[string]string{}
		ok := true
		for i, ts := range tsegs {
			switch {
			case strings.HasPrefix(ts, "{"):
				params[strings.Trim(ts, "{}")] = segs[i]
			case ts != segs[i]:
				ok = false
			}
		}
		if ok {
			return tmpl, item, params
		}
	}
	return "", nil, nil
}

func TestSwaggerEveryPrefixValidates(t *testing.T) {
	release := testRelease
	for _, dev := range []bool{false, true} {
		ts := newTestServer(t, structureFixture(), released(dev))
		for _, at := range lifecycleMoments(release) {
			ts.setNow(at.t)
			sp := newSpecs(ts)
			for _, prefix := range []string{"latest", "legacy", "dev", "v1", "v2", "v3", "v4", "v5"} {
				if prefix == "dev" && !dev {
					rec := ts.do(http.MethodGet, "/dev/swagger.json", nil)
					if rec.Code != http.StatusNotFound {
						t.Errorf("dev disabled: /dev/swagger.json answered %d, want 404", rec.Code)
					}
					continue
				}
				sp.load(t, prefix)
			}
		}
	}
}

// TestSwaggerFollowsTheClock checks what each label lists as the clock
// crosses the release.
func TestSwaggerFollowsTheClock(t *testing.T) {
	release := testRelease
	ts := newTestServer(t, structureFixture(), released(true))
	sp := newSpecs(ts)
	const list, put = "/corporations/{corporation_id}/structures/", "/corporations/{corporation_id}/structures/{structure_id}/"
	has := func(prefix, path, method string) bool {
		item := sp.load(t, prefix).Paths.Find(path)
		return item != nil && item.GetOperation(method) != nil
	}
	listProps := func(prefix string) map[string]bool {
		op := sp.load(t, prefix).Paths.Find(list).Get
		props := map[string]bool{}
		for name := range op.Responses.Status(200).Value.Content.Get("application/json").Schema.Value.Items.Value.Properties {
			props[name] = true
		}
		return props
	}
	for _, tc := range []struct {
		at                               time.Time
		latestHasState, legacyList, dev  bool
		latestPut, legacyPut, deprecated bool
	}{
		{at: release.Add(-time.Hour), latestHasState: false, legacyList: false, dev: true, latestPut: true},
		{at: release, latestHasState: true, legacyList: true, legacyPut: true, deprecated: true},
		{at: release.AddDate(0, 0, 13), latestHasState: true, legacyList: true, legacyPut: true, deprecated: true},
		{at: release.AddDate(0, 0, 14), latestHasState: true, legacyList: true},
	} {
		ts.setNow(tc.at)
		if got := listProps("latest")["state"]; got != tc.latestHasState {
			t.Errorf("%s: latest list has state = %v, want %v", tc.at, got, tc.latestHasState)
		}
		if got := has("legacy", list, "GET"); got != tc.legacyList {
			t.Errorf("%s: legacy lists the structures list = %v, want %v", tc.at, got, tc.legacyList)
		}
		if got := has("dev", list, "GET"); got != tc.dev {
			t.Errorf("%s: dev lists the structures list = %v, want %v", tc.at, got, tc.dev)
		}
		if got := has("latest", put, "PUT"); got != tc.latestPut {
			t.Errorf("%s: latest lists the PUT = %v, want %v", tc.at, got, tc.latestPut)
		}
		if got := has("legacy", put, "PUT"); got != tc.legacyPut {
			t.Errorf("%s: legacy lists the PUT = %v, want %v", tc.at, got, tc.legacyPut)
		}
		if tc.legacyPut {
			if op := sp.load(t, "legacy").Paths.Find(put).Put; !op.Deprecated {
				t.Errorf("%s: legacy PUT is not marked deprecated", tc.at)
			}
		}
		if !has("v1", "/universe/ids/", "POST") || !has("v3", "/universe/types/{type_id}/", "GET") {
			t.Errorf("%s: /v1/ or /v3/ lacks a lookup route", tc.at)
		}
	}
}

func TestStatusJSON(t *testing.T) {
	release := testRelease
	ts := newTestServer(t, indexertest.Records{}, released(false))
	entries := func() map[string]RouteStatus {
		rec := ts.do(http.MethodGet, "/status.json", nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("status.json: %d %s", rec.Code, rec.Body)
		}
		var list []RouteStatus
		decodeJSON(t, rec, &list)
		out := map[string]RouteStatus{}
		for _, e := range list {
			if e.Status != "green" || e.Endpoint == "" || len(e.Tags) == 0 || e.Method != strings.ToLower(e.Method) {
				t.Errorf("status.json entry %+v: want green, an endpoint, tags and a lower-case method", e)
			}
			out[e.Method+" "+e.Route] = e
		}
		return out
	}
	for _, tc := range []struct {
		at      time.Time
		present []string
		absent  []string
	}{
		{at: release.Add(-time.Second),
			present: []string{"get /v1/corporations/{corporation_id}/structures/", "put /v1/corporations/{corporation_id}/structures/{structure_id}/",
				"get /corporations/{corporation_id}/structures/", "put /structures/{structure_id}/"},
			absent: []string{"get /v2/corporations/{corporation_id}/structures/"}},
		{at: release.AddDate(0, 0, 13),
			present: []string{"get /v1/corporations/{corporation_id}/structures/", "get /v2/corporations/{corporation_id}/structures/",
				"put /v1/corporations/{corporation_id}/structures/{structure_id}/"},
			absent: []string{"get /corporations/{corporation_id}/structures/", "put /structures/{structure_id}/"}},
		{at: release.AddDate(0, 0, 14),
			present: []string{"get /v2/corporations/{corporation_id}/structures/", "get /v3/universe/types/{type_id}/",
				"post /v3/universe/names/", "get /v2/characters/{character_id}/bookmarks/", "post /v1/corporations/{corporation_id}/assets/names/"},
			absent: []string{"put /v1/corporations/{corporation_id}/structures/{structure_id}/"}},
	} {
		ts.setNow(tc.at)
		got := entries()
		for _, k := range tc.present {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: status.json lacks %s", tc.at, k)
			}
		}
		for _, k := range tc.absent {
			if _, ok := got[k]; ok {
				t.Errorf("%s: status.json lists %s, which is not served", tc.at, k)
			}
		}
	}
	if e := entries()["get /v2/corporations/{corporation_id}/structures/"]; e.Endpoint != "esi-corporations" || !slices.Equal(e.Tags, []string{"Corporation"}) {
		t.Errorf("structures list entry = %+v, want endpoint esi-corporations, tags [Corporation]", e)
	}
}

func TestSwaggerBodyIsJSONObject(t *testing.T) {
	ts := newTestServer(t, indexertest.Records{})
	rec := ts.do(http.MethodGet, "/latest/swagger.json", nil)
	var doc map[string]any
	decodeJSON(t, rec, &doc)
	if doc["openapi"] != "3.0.3" || !bytes.Contains(rec.Body.Bytes(), []byte(`"/universe/types/{type_id}/"`)) {
		t.Errorf("latest swagger.json: openapi %v, want 3.0.3 and the type lookup", doc["openapi"])
	}
}

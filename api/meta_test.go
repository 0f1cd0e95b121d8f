package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	"gds/snapshots"
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

// load fetches and validates /{prefix}/openapi.json at the current clock;
// nil for a /vN/ no route has, which publishes no document.
func (sp *specs) load(t testing.TB, prefix string) *openapi3.T {
	t.Helper()
	key := prefix + "@" + sp.ts.clock.Now().Format(time.RFC3339Nano)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if doc, ok := sp.cache[key]; ok {
		return doc
	}
	rec := sp.ts.do(http.MethodGet, "/"+prefix+"/openapi.json", nil)
	if rec.Code == http.StatusNotFound && prefix[0] == 'v' {
		sp.cache[key] = nil
		return nil
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /%s/openapi.json: %d %s", prefix, rec.Code, rec.Body)
	}
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("/%s/openapi.json does not load: %v", prefix, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("/%s/openapi.json is not valid OpenAPI: %v", prefix, err)
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
	if prefix == "" {
		requireErrorShape(t, method, target, rec)
		return
	}
	var op *openapi3.Operation
	var doc *openapi3.T
	var tmpl string
	var item *openapi3.PathItem
	var params map[string]string
	if doc = sp.load(t, prefix); doc != nil {
		tmpl, item, params = findPath(doc, rest)
	}
	if item != nil {
		op = item.GetOperation(method)
	}
	if op == nil {
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
			t.Fatalf("%s %s: answered %d but /%s/openapi.json has no such operation", method, target, rec.Code, prefix)
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
		t.Fatalf("%s %s: %d %s\ndoes not match /%s/openapi.json: %v", method, target, rec.Code, rec.Body, prefix, err)
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
			ts.clock.Set(at.t)
			sp := newSpecs(ts)
			for _, prefix := range []string{"latest", "legacy", "dev", "v1", "v2", "v3", "v4", "v5"} {
				if sp.load(t, prefix) == nil {
					t.Errorf("%s: /%s/openapi.json missing", at.name, prefix)
				}
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
		ts.clock.Set(tc.at)
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
		ts.clock.Set(tc.at)
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
	for path, want := range map[string][2]string{
		"/latest/swagger.json": {"swagger", "2.0"}, "/swagger.json": {"swagger", "2.0"},
		"/latest/openapi.json": {"openapi", "3.0.3"}, "/meta/openapi.json": {"openapi", "3.1.0"},
		"/meta/openapi-3.0.json": {"openapi", "3.0.3"},
	} {
		rec := ts.do(http.MethodGet, path, nil)
		var doc map[string]any
		decodeJSON(t, rec, &doc)
		typePath := `"/universe/types/{type_id}/"`
		if strings.HasPrefix(path, "/meta/") {
			typePath = `"/universe/types/{type_id}"` // ESI 2025's paths
		}
		if doc[want[0]] != want[1] || !bytes.Contains(rec.Body.Bytes(), []byte(typePath)) {
			t.Errorf("%s: %s %v, want %s and the type lookup", path, want[0], doc[want[0]], want[1])
		}
	}
}

// TestRouteTableMatchesSpec: the table holds every route of this issue
// with the versions the spec and ESI give it, and each answers under /vN/
// and /latest/ (dispatched to a handler, not the engine's 404) once
// released, and under no other version.
func TestRouteTableMatchesSpec(t *testing.T) {
	want := map[string]int{
		"GET /universe/types/{type_id}/":                   3,
		"GET /characters/{character_id}/":                  5,
		"GET /corporations/{corporation_id}/":              5,
		"GET /corporation/{corporation_id}/":               5,
		"GET /universe/stations/{station_id}/":             2,
		"GET /alliances/{alliance_id}/":                    4,
		"GET /universe/factions/":                          2,
		"GET /universe/regions/{region_id}/":               1,
		"GET /universe/constellations/{constellation_id}/": 1,
		"GET /universe/systems/{system_id}/":               4,
		"POST /universe/ids/":                              1,
		"POST /universe/names/":                            3,
		"GET /corporations/{corporation_id}/structures/":   2,
	}
	for _, d := range documentTable {
		want[d.method+" "+d.path] = d.version
	}
	s := &server{d: Deps{ReleaseDay: testRelease}, now: func() time.Time { return testRelease.AddDate(1, 0, 0) }}
	got := map[string]int{}
	for _, r := range append(append(s.lookupRoutes(), s.structureRoutes()...), s.documentRoutes()...) {
		if p := r.Phase(1, s.now()); r.Method == "PUT" && p != PhaseRemoved {
			t.Errorf("PUT %s is %s a year after the release, want removed", r.Path, p)
		}
		if r.Method == "PUT" {
			continue
		}
		for _, v := range r.Versions {
			if r.Phase(v.N, s.now()) == PhaseLatest {
				got[r.Method+" "+r.Path] = v.N
			}
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: latest version %d, want %d", k, got[k], n)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s is in the table but not in the spec", k)
		}
	}

	recs := universeFixture()
	for k, v := range structureFixture() {
		recs[k] = append(recs[k], v...)
	}
	recs[snapshots.Documents] = documentFixture()[snapshots.Documents]
	ts := newTestServer(t, recs, released(false))
	ts.clock.Set(testRelease.AddDate(1, 0, 0))
	sp := newSpecs(ts)
	dispatched := func(rec *httptest.ResponseRecorder) bool {
		return rec.Code != http.StatusNotFound ||
			(!strings.HasPrefix(errorOf(t, rec), "This route") && errorOf(t, rec) != "Not found")
	}
	for k, n := range want {
		method, path, _ := strings.Cut(k, " ")
		p := concrete(path, map[string]string{"type_id": "587", "station_id": "60003760", "region_id": "10000002",
			"constellation_id": "20000020", "system_id": "30000142"})
		body := ""
		if method == http.MethodPost {
			body = `[90000001]`
			if strings.HasSuffix(path, "/ids/") {
				body = `["Jita"]`
			}
		}
		tok := bearer(ts.token(managerA, readStructures))
		for _, prefix := range []string{fmt.Sprintf("/v%d", n), "/latest"} {
			if rec := sp.do(t, method, prefix+p, body, tok...); !dispatched(rec) {
				t.Errorf("%s %s%s: %d %s, want it dispatched", method, prefix, p, rec.Code, rec.Body)
			}
		}
		// A route with one lasting version answers under /legacy/ and
		// /dev/ too (as ESI); the structures list keeps the seed's labels:
		// v1 legacy, no dev after the release.
		list := k == "GET /corporations/{corporation_id}/structures/"
		for _, prefix := range []string{"/legacy", "/dev"} {
			want := !list || prefix == "/legacy"
			if rec := sp.do(t, method, prefix+p, body, tok...); dispatched(rec) != want {
				t.Errorf("%s %s%s: %d %s, want dispatched %v", method, prefix, p, rec.Code, rec.Body, want)
			}
		}
		if rec := sp.do(t, method, fmt.Sprintf("/v%d", n+1)+p, body, tok...); dispatched(rec) {
			t.Errorf("%s /v%d%s: %d %s, want 404", method, n+1, p, rec.Code, rec.Body)
		}
	}
}

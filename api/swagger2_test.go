package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-openapi/loads"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/validate"
)

// loadSwagger2 loads a Swagger 2.0 document with go-openapi, the library
// go-swagger's generated ESI clients are built on, and validates it fully
// when validate is set (a full validation costs about two CPU seconds).
func loadSwagger2(t testing.TB, raw []byte, name string, full bool) *loads.Document {
	t.Helper()
	doc, err := loads.Analyzed(json.RawMessage(raw), "2.0")
	if err != nil {
		t.Fatalf("%s does not load as Swagger 2.0: %v", name, err)
	}
	if full {
		if err := validate.Spec(doc, strfmt.Default); err != nil {
			t.Fatalf("%s is not valid Swagger 2.0: %v", name, err)
		}
	}
	return doc
}

// convertSwagger2 checks a Swagger 2.0 document the cheaper way: kin-openapi
// reads it as 2.0, converts it to OpenAPI 3 and validates that.
func convertSwagger2(t testing.TB, raw []byte, name string) {
	t.Helper()
	var v2 openapi2.T
	if err := json.Unmarshal(raw, &v2); err != nil {
		t.Fatalf("%s does not read as Swagger 2.0: %v", name, err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		t.Fatalf("%s does not convert to OpenAPI 3: %v", name, err)
	}
	if err := v3.Validate(context.Background()); err != nil {
		t.Fatalf("%s converted to OpenAPI 3 is not valid: %v", name, err)
	}
}

// TestSwagger2EveryPrefixValidates: every prefix's swagger.json is Swagger
// 2.0 at every moment of the release (go-openapi validates three of them
// fully, kin-openapi's 2.0 conversion checks all), and /meta/openapi.json
// is valid OpenAPI 3 for every compatibility date.
func TestSwagger2EveryPrefixValidates(t *testing.T) {
	full := map[string]bool{
		"before release /latest": true, "release day /legacy": true, "after ": true,
	}
	// Dev enabled: the most routes, and every label change of the
	// release; /v3/ to /v5/ hold only routes /latest/ holds too.
	for _, dev := range []bool{true} {
		ts := newTestServer(t, structureFixture(), released(dev))
		for _, m := range lifecycleMoments(testRelease) {
			if m.name == "release + 13 days" || m.name == "release + 14 days" {
				continue
			}
			ts.clock.Set(m.t)
			for _, p := range []string{"/latest", "/legacy", "/dev", "/v1", "/v2", ""} {
				rec := ts.do(http.MethodGet, p+"/swagger.json", nil)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s: %s/swagger.json: %d", m.name, p, rec.Code)
				}
				name := m.name + " " + p
				convertSwagger2(t, rec.Body.Bytes(), name+"/swagger.json")
				loadSwagger2(t, rec.Body.Bytes(), name+"/swagger.json", dev && full[name])
			}
		}
	}
	ts := newTestServer(t, structureFixture(), released(false))
	ts.clock.Set(testRelease.AddDate(0, 1, 0))
	for _, date := range []string{"", "2017-01-01", "2026-06-11", "2026-06-25"} {
		rec := ts.do(http.MethodGet, "/meta/openapi-3.0.json?compatibility_date="+date, nil)
		if date == "" {
			rec = ts.do(http.MethodGet, "/meta/openapi-3.0.json", nil)
		}
		doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
		if err != nil || rec.Code != http.StatusOK {
			t.Fatalf("/meta/openapi.json on %q: %d, %v", date, rec.Code, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("/meta/openapi.json on %q is not valid OpenAPI 3: %v", date, err)
		}
		if got := rec.Header().Get(HeaderCompatibilityDate); date != "" && got != date || got == "" {
			t.Errorf("/meta/openapi.json on %q: %s %q", date, HeaderCompatibilityDate, got)
		}
	}
}

// TestSwagger2Shape checks what ESI's clients read: basePath, evesso
// scopes, x-alternate-versions, x-cached-seconds, csv arrays, operation
// IDs, and the OpenAPI 3 documents' extensions and statuses.
func TestSwagger2Shape(t *testing.T) {
	// Rate limits on: the documents publish them.
	ts := newTestServer(t, structureFixture(), released(false), func(d *Deps) { d.Limits.RateLimitsOff = false })
	ts.clock.Set(testRelease.AddDate(0, 1, 0))
	doc := loadSwagger2(t, ts.do(http.MethodGet, "/latest/swagger.json", nil).Body.Bytes(), "latest", false).Spec()
	if doc.BasePath != "/latest" || doc.SecurityDefinitions["evesso"] == nil ||
		doc.SecurityDefinitions["evesso"].Scopes[scopeReadStructures] == "" {
		t.Errorf("basePath %q, evesso %+v: want /latest and the structures scope", doc.BasePath, doc.SecurityDefinitions["evesso"])
	}
	search := doc.Paths.Paths["/search/"].Get
	if search == nil || search.ID != "get_search" {
		t.Fatalf("no get_search in /latest/swagger.json")
	}
	if alt := search.Extensions["x-alternate-versions"]; fmt.Sprint(alt) != "[dev legacy v2]" {
		t.Errorf("get_search x-alternate-versions %v, want [dev legacy v2] as ESI", alt)
	}
	if cs, _ := search.Extensions.GetInt("x-cached-seconds"); cs != 3600 {
		t.Errorf("x-cached-seconds %d, want 3600", cs)
	}
	for _, p := range search.Parameters {
		if p.Name == "categories" && (p.CollectionFormat != "csv" || p.Type != "array") {
			t.Errorf("categories: %s %s, want a csv array", p.Type, p.CollectionFormat)
		}
	}
	list := doc.Paths.Paths[corpStructsPath].Get
	if alt := fmt.Sprint(list.Extensions["x-alternate-versions"]); alt != "[v2]" {
		t.Errorf("structures list x-alternate-versions %s, want [v2] (dev disabled, v1 is legacy)", alt)
	}
	if len(list.Security) != 1 || !slices.Equal(list.Security[0]["evesso"], []string{scopeReadStructures}) {
		t.Errorf("structures list security %v, want evesso with its scope", list.Security)
	}
	if roles := fmt.Sprint(list.Extensions["x-required-roles"]); !strings.Contains(roles, "Station_Manager") {
		t.Errorf("structures list x-required-roles %s, want Station_Manager", roles)
	}
	root := loadSwagger2(t, ts.do(http.MethodGet, "/swagger.json", nil).Body.Bytes(), "/swagger.json", false)
	for _, id := range []string{"get_universe_types_type_id", "post_universe_ids", "post_universe_names", "get_characters_character_id_search"} {
		if _, _, _, ok := root.Analyzer.OperationForName(id); !ok {
			t.Errorf("/swagger.json has no operation %s", id)
		}
	}

	rec := ts.do(http.MethodGet, "/meta/openapi.json", nil)
	var oas map[string]any
	decodeJSON(t, rec, &oas)
	op := oas["paths"].(map[string]any)["/search"].(map[string]any)["get"].(map[string]any)
	rl, _ := op["x-rate-limit"].(map[string]any)
	if op["x-compatibility-date"] != "2026-06-25" || rl["group"] == nil || rl["window-size"] == nil || rl["max-tokens"] == nil {
		t.Errorf("get_search: x-compatibility-date %v, x-rate-limit %v", op["x-compatibility-date"], op["x-rate-limit"])
	}
	var statuses []string
	for code := range op["responses"].(map[string]any) {
		statuses = append(statuses, code)
	}
	slices.Sort(statuses)
	if want := []string{"200", "304", "400", "404", "420", "429", "500", "503"}; !slices.Equal(statuses, want) {
		t.Errorf("get_search statuses %v, want %v", statuses, want)
	}
	var names []string
	for _, p := range op["parameters"].([]any) {
		pm := p.(map[string]any)
		if ref, ok := pm["$ref"].(string); ok {
			// A shared parameter: components/parameters/<name>.
			name := ref[strings.LastIndex(ref, "/")+1:]
			pm = oas["components"].(map[string]any)["parameters"].(map[string]any)[name].(map[string]any)
		}
		names = append(names, pm["name"].(string))
		if pm["name"] == "categories" && (pm["style"] != "form" || pm["explode"] != false) {
			t.Errorf("categories: style %v explode %v, want form, false", pm["style"], pm["explode"])
		}
		if pm["name"] == "Accept-Language" && pm["schema"].(map[string]any)["enum"] == nil {
			t.Errorf("Accept-Language has no enum")
		}
	}
	for _, want := range []string{"If-None-Match", "Accept-Language", HeaderCompatibilityDate, "categories"} {
		if !slices.Contains(names, want) {
			t.Errorf("get_search parameters %v lack %s", names, want)
		}
	}
}

// TestSwagger2ClientByOperationID loads /latest/swagger.json from a running
// server with go-openapi and calls get_search, get_universe_types_type_id
// and post_universe_ids by operation ID, building each request from the
// document alone (basePath, path template, parameter locations, csv
// arrays), and checks each answer against the operation's 200 schema.
func TestSwagger2ClientByOperationID(t *testing.T) {
	ts := newTestServer(t, universeFixture())
	srv := httptest.NewServer(ts.h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/latest/swagger.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	doc := loadSwagger2(t, raw, "/latest/swagger.json", false)

	call := func(id string, args map[string]any) any {
		t.Helper()
		method, path, op, ok := doc.Analyzer.OperationForName(id)
		if !ok {
			t.Fatalf("no operation %s", id)
		}
		q := url.Values{}
		var body io.Reader
		for _, p := range doc.Analyzer.ParamsFor(method, path) {
			v, given := args[p.Name]
			if !given {
				if p.Required {
					t.Fatalf("%s: required %s %s not given", id, p.In, p.Name)
				}
				continue
			}
			switch p.In {
			case "path":
				path = strings.Replace(path, "{"+p.Name+"}", fmt.Sprint(v), 1)
			case "query":
				if p.Type == "array" && p.CollectionFormat == "csv" {
					q.Set(p.Name, strings.Join(v.([]string), ","))
				} else {
					q.Set(p.Name, fmt.Sprint(v))
				}
			case "body":
				b, _ := json.Marshal(v)
				body = bytes.NewReader(b)
			}
		}
		req, _ := http.NewRequest(method, srv.URL+doc.BasePath()+path+"?"+q.Encode(), body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s %s: %d %s", id, method, req.URL, resp.StatusCode, b)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		schema := op.Responses.StatusCodeResponses[200].Schema
		if err := validate.AgainstSchema(schema, out, strfmt.Default); err != nil {
			t.Errorf("%s: answer %s does not match its schema: %v", id, b, err)
		}
		return out
	}
	found := call("get_search", map[string]any{"search": "Jita", "categories": []string{"solar_system", "inventory_type"}})
	if got := fmt.Sprint(found.(map[string]any)["solar_system"]); got != "[3.0000142e+07]" {
		t.Errorf("get_search Jita: solar_system %s, want [30000142]", got)
	}
	rifter := call("get_universe_types_type_id", map[string]any{"type_id": 587})
	if rifter.(map[string]any)["name"] != "Rifter" {
		t.Errorf("get_universe_types_type_id 587: %v, want Rifter", rifter)
	}
	ids := call("post_universe_ids", map[string]any{"names": []string{"Jita", "Rifter"}})
	if got := fmt.Sprint(ids); !strings.Contains(got, "Jita") || !strings.Contains(got, "Rifter") {
		t.Errorf("post_universe_ids: %s, want Jita and Rifter", got)
	}
}

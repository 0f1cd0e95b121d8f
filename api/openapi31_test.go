package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// /meta/openapi.json is OpenAPI 3.1 as ESI serves it: valid by
// libopenapi-validator (which checks a document against the OpenAPI 3.1
// specification's own schema), ESI 2025's operation IDs and paths,
// info.version the compatibility date, the 2025 error body. The 3.0 copy
// is the same document.
func TestOpenAPI31(t *testing.T) {
	ts := newTestServer(t, universeFixture(), released(false))
	for _, date := range []string{"", "2017-01-01", "2026-05-20"} {
		rec := ts.do(http.MethodGet, "/meta/openapi.json", nil, HeaderCompatibilityDate, date)
		if rec.Code != http.StatusOK {
			t.Fatalf("%q: %d %s", date, rec.Code, rec.Body)
		}
		doc, err := libopenapi.NewDocument(rec.Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			t.Fatalf("%q: %v", date, errs)
		}
		if ok, verrs := v.ValidateDocument(); !ok {
			for _, e := range verrs {
				t.Errorf("%q: %s: %s %v", date, e.Message, e.Reason, e.SchemaValidationErrors)
			}
		}
		var d struct {
			OpenAPI string `json:"openapi"`
			Info    struct{ Version string }
			Paths   map[string]map[string]struct {
				OperationID string `json:"operationId"`
			}
			Components struct{ Schemas map[string]map[string]any }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if d.OpenAPI != "3.1.0" || d.Info.Version != rec.Header().Get(HeaderCompatibilityDate) {
			t.Errorf("%q: openapi %s, info.version %s, answered for %s", date, d.OpenAPI, d.Info.Version, rec.Header().Get(HeaderCompatibilityDate))
		}
		for path, want := range map[string]string{
			"/characters/{character_id}/search": "GetCharactersCharacterIdSearch",
			"/universe/ids":                     "PostUniverseIds",
			"/characters/affiliation":           "PostCharactersAffiliation",
			"/universe/types/{type_id}":         "GetUniverseTypesTypeId",
		} {
			for _, op := range d.Paths[path] {
				if op.OperationID != want {
					t.Errorf("%q: %s is %q, want %q", date, path, op.OperationID, want)
				}
			}
			if len(d.Paths[path]) == 0 {
				t.Errorf("%q: no %s", date, path)
			}
		}
		errSchema := d.Components.Schemas["Error"]
		props, _ := errSchema["properties"].(map[string]any)
		if props["error"] == nil || props["status"] == nil || props["details"] == nil || d.Components.Schemas["ErrorDetail"] == nil ||
			!slices.Contains(toStrings(errSchema["required"]), "error") {
			t.Errorf("%q: Error schema %v", date, errSchema)
		}
		// The 3.0 copy says the same in 3.0.
		rec30 := ts.do(http.MethodGet, "/meta/openapi-3.0.json", nil, HeaderCompatibilityDate, date)
		var d30 map[string]any
		decodeJSON(t, rec30, &d30)
		if d30["openapi"] != "3.0.3" || len(d30["paths"].(map[string]any)) != len(d.Paths) {
			t.Errorf("%q: 3.0 copy: %v, %d paths", date, d30["openapi"], len(d30["paths"].(map[string]any)))
		}
	}
	// Swagger 2.0 keeps the 2018 names older generated clients are built on.
	rec := ts.do(http.MethodGet, "/latest/swagger.json", nil)
	var sw struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		}
	}
	decodeJSON(t, rec, &sw)
	if id := sw.Paths["/characters/affiliation/"]["post"].OperationID; id != "post_characters_affiliation" {
		t.Errorf("swagger 2.0 affiliation: %q", id)
	}
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

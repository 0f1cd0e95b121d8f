package api

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gds/api/esierr"
	"gds/query"
)

// The OpenAPI document is OpenAPI 3.0 (ESI publishes Swagger 2.0; 3.0 is
// what kin-openapi validates responses against). It is generated from the
// route table for one prefix at one moment, so it always matches what the
// server answers under that prefix.

// Schema builders keep the route table's Doc entries short.

func schemaInt64() map[string]any  { return map[string]any{"type": "integer", "format": "int64"} }
func schemaInt32() map[string]any  { return map[string]any{"type": "integer", "format": "int32"} }
func schemaNumber() map[string]any { return map[string]any{"type": "number", "format": "double"} }
func schemaFloat() map[string]any  { return map[string]any{"type": "number", "format": "float"} }
func schemaString() map[string]any { return map[string]any{"type": "string"} }
func schemaBool() map[string]any   { return map[string]any{"type": "boolean"} }
func schemaDateTime() map[string]any {
	return map[string]any{"type": "string", "format": "date-time"}
}

func schemaRange(s map[string]any, min, max int) map[string]any {
	s["minimum"], s["maximum"] = min, max
	return s
}

func schemaEnum(values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values}
}

func schemaArray(items map[string]any, min, max int) map[string]any {
	s := map[string]any{"type": "array", "items": items}
	if min > 0 {
		s["minItems"] = min
	}
	if max > 0 {
		s["maxItems"] = max
	}
	return s
}

func arrayOf(items map[string]any) map[string]any { return schemaArray(items, 0, 0) }

// object is a closed object schema: any field the table does not describe
// fails the OpenAPI validation test, so code and document cannot drift.
func object(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// anyJSON is the schema of the opaque documents (docs/api.md, Character and
// corporation documents).
func anyJSON() map[string]any { return map[string]any{} }

// Response schemas, derived from the structs the handlers encode
// (schema.go).
var (
	typeSchema          = schemaOf(typeResponse{})
	characterSchema     = schemaOf(characterResponse{})
	corporationSchema   = schemaOf(corporationResponse{})
	stationSchema       = schemaOf(stationResponse{})
	allianceSchema      = schemaOf(allianceResponse{})
	regionSchema        = schemaOf(regionResponse{})
	constellationSchema = schemaOf(constellationResponse{})
	systemSchema        = schemaOf(systemResponse{})
	factionSchema       = schemaOf(factionResponse{})
	structureV1Schema   = schemaOf(structureV1{})
	structureV2Schema   = schemaOf(structureV2{})
	errorSchema         = errorBodySchema("#/components/schemas/")
	errorSchema2        = errorBodySchema("#/definitions/")
	errorDetailSchema   = schemaOf(esierr.Detail{})
)

// errorBodySchema is ESI 2025's Error: error required (and first), status
// and details beside it, each detail an ErrorDetail.
func errorBodySchema(refs string) map[string]any {
	s := schemaOf(ErrorBody{})
	props := s["properties"].(map[string]any)
	props["details"] = map[string]any{"type": "array", "description": "List of individual issues.",
		"items": map[string]any{"$ref": refs + "ErrorDetail"}}
	return s
}

// idsSchema is POST /universe/ids/'s answer: a map whose keys are the
// categories' plural names (idsKeys), each an array of idName.
var idsSchema = func() map[string]any {
	entry := schemaOf([]idName{})
	props := map[string]any{}
	for _, key := range idsKeys {
		props[key] = entry
	}
	return object(nil, props)
}()

// namedSchema is an entry of POST /universe/names/'s answer; its category
// is one of the categories the route resolves.
var namedSchema = func() map[string]any {
	s := schemaOf(query.Named{})
	s["properties"].(map[string]any)["category"] = schemaEnum("alliance", "character", "constellation",
		"corporation", "inventory_type", "region", "solar_system", "station", "faction")
	return s
}()

// Parameters shared by many routes.
var (
	languageParamDoc = Param{Name: "language", In: "query",
		Description: "Language of names and descriptions: de, en (or en-us), es, fr, ja, ko, ru, zh",
		Schema:      schemaEnum(Languages...)}
	datasourceParamDoc = Param{Name: "datasource", In: "query", Description: "The server name you would like data from",
		Schema: map[string]any{"type": "string", "enum": []any{Datasource}, "default": Datasource}}
	pageParamDoc = Param{Name: "page", In: "query", Description: "Which page of results to return, from 1",
		Schema: map[string]any{"type": "integer", "format": "int32", "minimum": 1, "default": 1}}
)

func idParamDoc(name string) Param {
	return Param{Name: name, In: "path", Required: true, Description: "An EVE " + strings.ReplaceAll(name, "_", " "),
		Schema: map[string]any{"type": "integer", "format": "int64", "minimum": 1}}
}

// served reports whether route r answers under prefix at t, with the
// version it answers with.
func (s *server) served(r *Route, prefix string, at time.Time) (*Version, bool) {
	v, _, msg := r.resolve(prefix, at, s.d.DevEnabled)
	return v, msg == "" && v != nil
}

// versionPrefixes are the /vN/ prefixes of the table, ascending.
func (s *server) versionPrefixes() []string {
	var ns []int
	for _, r := range s.routes {
		for _, v := range r.Versions {
			if !slices.Contains(ns, v.N) {
				ns = append(ns, v.N)
			}
		}
	}
	slices.Sort(ns)
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprintf("v%d", n)
	}
	return out
}

package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The Swagger 2.0 document, as ESI served it for years at
// /{label or vN}/swagger.json: the documents EsiPy/pyswagger, go-swagger
// and the clients generated from them read. Generated from the same specOp
// as the OpenAPI 3 document (specs.go).

// swaggerDoc is the Swagger 2.0 document of the routes under prefix at t.
func (s *server) swaggerDoc(prefix string, at time.Time) map[string]any {
	date := s.docDate(at)
	paths := map[string]any{}
	for _, op := range s.opsForPrefix(prefix, at) {
		item, _ := paths[op.r.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.r.Path] = item
		}
		o := s.operation2(op, date)
		o["x-alternate-versions"] = s.alternates(op, prefix, at)
		item[strings.ToLower(op.r.Method)] = o
	}
	return map[string]any{
		"swagger": "2.0",
		"info": map[string]any{
			"title":   "Game Data Service",
			"version": prefix,
			"description": "An ESI-compatible interface to EVE Online game data, generated from the route table. " +
				"Routes under /" + prefix + "/.",
		},
		"basePath":             "/" + prefix,
		"consumes":             []string{"application/json"},
		"produces":             []string{"application/json"},
		"x-compatibility-date": date.Format(time.DateOnly),
		"paths":                paths,
		"definitions":          map[string]any{"Error": errorSchema2, "ErrorDetail": errorDetailSchema},
		"parameters":           sharedParams2(),
		"responses":            sharedResponses2(),
		"securityDefinitions": map[string]any{
			"evesso": map[string]any{
				"type":             "oauth2",
				"flow":             "implicit",
				"authorizationUrl": ssoAuthorizationURL,
				"scopes":           s.scopeDescriptions(),
			},
		},
	}
}

// operation2 is one route version's Swagger 2.0 operation.
func (s *server) operation2(op specOp, date time.Time) map[string]any {
	out := s.operationCommon(op, date, s.responses2(op))
	var params []any
	for _, p := range op.params(false) {
		if slices.Contains(sharedParamNames, p.Name) {
			params = append(params, map[string]any{"$ref": "#/parameters/" + p.Name})
			continue
		}
		params = append(params, param2(p))
	}
	if params != nil {
		out["parameters"] = params
	}
	if len(op.doc.Consumes) > 0 {
		out["consumes"] = op.doc.Consumes
	}
	return out
}

// simpleSchemaKeys are the schema fields a 2.0 non-body parameter carries
// inline.
var simpleSchemaKeys = []string{"type", "format", "enum", "default", "minimum", "maximum",
	"minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "items"}

// param2 is a parameter in 2.0's form: a body parameter has a schema, the
// others carry theirs inline; arrays are comma-separated as in ESI.
func param2(p Param) map[string]any {
	out := map[string]any{"name": p.Name, "in": p.In, "description": p.Description,
		"required": p.Required || p.In == "path"}
	if p.In == "body" {
		out["schema"] = p.Schema
		return out
	}
	for _, k := range simpleSchemaKeys {
		if v, ok := p.Schema[k]; ok {
			out[k] = v
		}
	}
	if p.Schema["type"] == "array" {
		out["collectionFormat"] = "csv"
	}
	return out
}

func (s *server) responses2(op specOp) map[string]any {
	out := map[string]any{}
	for i, sr := range s.responses(op, false) {
		resp := map[string]any{"description": sr.description}
		if len(sr.headers) > 0 {
			hs := map[string]any{}
			for _, h := range sr.headers {
				hs[h.name] = map[string]any{"description": h.description, "type": h.typ}
			}
			resp["headers"] = hs
		}
		switch {
		case sr.body:
			// Errors refer to one shared response per status, as ESI's
			// document does: it keeps the document small.
			resp = map[string]any{"$ref": "#/responses/" + errorResponseName(sr.status)}
		case i == 0 && op.doc.Response != nil:
			resp["schema"] = op.doc.Response
		}
		out[fmt.Sprint(sr.status)] = resp
	}
	return out
}

// sharedParamNames are the parameters the 2.0 document declares once under
// parameters and refers to, as ESI's does; each is the same on every route.
var sharedParamNames = []string{"If-None-Match", "Accept-Language", "token", HeaderTenant, "datasource"}

func sharedParams2() map[string]any {
	out := map[string]any{}
	probe := specOp{r: &Route{Method: http.MethodGet, Scope: "x"}, doc: Doc{Params: []Param{languageParamDoc}}}
	for _, p := range append(probe.standardParams(false), datasourceParamDoc) {
		out[p.Name] = param2(p)
	}
	return out
}

// errorStatuses are every error status an operation may answer.
var errorStatuses = []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
	http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, StatusErrorLimited, http.StatusTooManyRequests,
	http.StatusInternalServerError, http.StatusServiceUnavailable}

func errorResponseName(code int) string {
	return strings.ToLower(strings.ReplaceAll(statusDescription(code), " ", "_"))
}

// sharedResponses2 are the error responses: {"error": ...} with the error
// limit's headers, and the rate limit's or Retry-After where they apply.
func sharedResponses2() map[string]any {
	out := map[string]any{}
	for _, code := range errorStatuses {
		headers := map[string]any{}
		for _, h := range errorHeaders(code) {
			headers[h.name] = map[string]any{"description": h.description, "type": h.typ}
		}
		out[errorResponseName(code)] = map[string]any{"description": statusDescription(code),
			"schema": map[string]any{"$ref": "#/definitions/Error"}, "headers": headers}
	}
	return out
}

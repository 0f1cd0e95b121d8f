package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// OpenAPI versions of the documents: /meta/openapi.json is 3.1, as ESI
// serves it; /meta/openapi-3.0.json and the prefixed openapi.json are 3.0.
const (
	openAPI30 = "3.0.3"
	openAPI31 = "3.1.0"
)

// openAPIDoc is the OpenAPI document (openapi, 3.0 or 3.1) of ops: every
// path under server ("/latest", or "" for unprefixed paths addressed by
// compatibility date), labelled version, describing the API on date.
// Dated documents are ESI 2025's: the X-Compatibility-Date header, paths
// without the trailing slash and ESI's PascalCase operation IDs
// (GetCharactersCharacterIdSearch); prefixed ones keep the 2018 names.
// Both are the same JSON in 3.0 and 3.1: no schema uses what the two
// spell differently (nullable, exclusive bounds, example).
func (s *server) openAPIDoc(ops []specOp, server, version string, date time.Time, dated bool, openapi string) map[string]any {
	paths := map[string]any{}
	for _, op := range ops {
		path := op.r.Path
		if dated {
			path = esiPath(path)
		}
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(op.r.Method)] = s.operation3(op, date, dated)
	}
	if server == "" {
		server = "/"
	}
	return map[string]any{
		"openapi": openapi,
		"info": map[string]any{
			"title":   "Game Data Service",
			"version": version,
			"description": "An ESI-compatible interface to EVE Online game data, generated from the route table. " +
				"Routes under " + server + ".",
		},
		"x-compatibility-date": date.Format(time.DateOnly),
		"servers":              []any{map[string]any{"url": server}},
		"paths":                paths,
		"components": map[string]any{
			"schemas":    map[string]any{"Error": errorSchema, "ErrorDetail": errorDetailSchema},
			"parameters": sharedParams3(dated),
			"headers":    sharedHeaders3(),
			"responses":  sharedResponses3(dated),
			"securitySchemes": map[string]any{
				"evesso": map[string]any{
					"type":        "oauth2",
					"description": "EVE SSO access token (RS256 JWT) carrying the route's scope",
					"flows": map[string]any{"implicit": map[string]any{
						"authorizationUrl": ssoAuthorizationURL,
						"scopes":           s.scopeDescriptions(),
					}},
				},
			},
		},
	}
}

// operation3 is one route version's OpenAPI 3 operation.
func (s *server) operation3(op specOp, date time.Time, dated bool) map[string]any {
	out := s.operationCommon(op, date, s.responses3(op, dated))
	if dated {
		out["operationId"] = esiOperationID(op.r)
	}
	var params []any
	for _, p := range op.params(dated) {
		if p.In == "body" {
			out["requestBody"] = map[string]any{
				"required":    p.Required,
				"description": p.Description,
				"content":     bodyContent3(op.doc.Consumes, p.Schema),
			}
			continue
		}
		if slices.Contains(sharedParamNames, p.Name) || p.Name == HeaderCompatibilityDate {
			params = append(params, map[string]any{"$ref": "#/components/parameters/" + p.Name})
			continue
		}
		param := map[string]any{
			"name": p.Name, "in": p.In, "required": p.Required || p.In == "path",
			"description": p.Description, "schema": p.Schema,
		}
		if p.Schema["type"] == "array" {
			// ESI's arrays are comma-separated: categories=a,b.
			param["style"], param["explode"] = "form", false
		}
		params = append(params, param)
	}
	if params != nil {
		out["parameters"] = params
	}
	return out
}

// responses3 refers to the shared error responses and headers
// (components), which keeps the document small enough to load quickly.
func (s *server) responses3(op specOp, dated bool) map[string]any {
	out := map[string]any{}
	for i, sr := range s.responses(op, dated) {
		if sr.body {
			out[fmt.Sprint(sr.status)] = map[string]any{"$ref": "#/components/responses/" + errorResponseName(sr.status)}
			continue
		}
		resp := map[string]any{"description": sr.description}
		if len(sr.headers) > 0 {
			hs := map[string]any{}
			for _, h := range sr.headers {
				hs[h.name] = map[string]any{"$ref": "#/components/headers/" + h.name}
			}
			resp["headers"] = hs
		}
		if i == 0 && op.doc.Response != nil {
			resp["content"] = map[string]any{"application/json": map[string]any{"schema": op.doc.Response}}
		}
		out[fmt.Sprint(sr.status)] = resp
	}
	return out
}

func header3(h header) map[string]any {
	return map[string]any{"description": h.description, "schema": map[string]any{"type": h.typ}}
}

// sharedHeaders3 are every response header any operation documents.
func sharedHeaders3() map[string]any {
	out := map[string]any{}
	all := slices.Concat(errorLimitHeaders, cacheHeaders, rateLimitHeaders, []header{retryAfter,
		{HeaderCompatibilityDate, "The compatibility date the request resolved to", "string"},
		{"Content-Language", "The language used in the response", "string"},
		{"X-Pages", "Maximum page number", "integer"},
		{"Warning", "199 when an upgrade is available, 299 when deprecated", "string"}})
	for _, h := range all {
		out[h.name] = header3(h)
	}
	return out
}

// sharedResponses3 are the error responses, as in the 2.0 document.
func sharedResponses3(dated bool) map[string]any {
	out := map[string]any{}
	for _, code := range errorStatuses {
		headers := map[string]any{}
		for _, h := range errorHeaders(code) {
			headers[h.name] = header3(h)
		}
		if dated {
			headers[HeaderCompatibilityDate] = map[string]any{"$ref": "#/components/headers/" + HeaderCompatibilityDate}
		}
		out[errorResponseName(code)] = map[string]any{"description": statusDescription(code), "headers": headers,
			"content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	}
	return out
}

// sharedParams3 are the parameters every route declares alike.
func sharedParams3(dated bool) map[string]any {
	out := map[string]any{}
	probe := specOp{r: &Route{Method: http.MethodGet, Scope: "x"}, doc: Doc{Params: []Param{languageParamDoc}}}
	for _, p := range append(probe.standardParams(dated), datasourceParamDoc) {
		out[p.Name] = map[string]any{"name": p.Name, "in": p.In, "required": p.Required,
			"description": p.Description, "schema": p.Schema}
	}
	return out
}

// bodyContent3 is a request body's content: each media type the route
// consumes (application/json when it names none), a text/plain one as a
// string of lines.
func bodyContent3(consumes []string, schema map[string]any) map[string]any {
	if len(consumes) == 0 {
		consumes = []string{"application/json"}
	}
	out := map[string]any{}
	for _, mt := range consumes {
		if mt == "text/plain" {
			out[mt] = map[string]any{"schema": map[string]any{"type": "string"}}
			continue
		}
		out[mt] = map[string]any{"schema": schema}
	}
	return out
}

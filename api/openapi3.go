package api

import (
	"fmt"
	"strings"
	"time"
)

// openAPIDoc is the OpenAPI 3.0 document of ops: every path under server
// ("/latest", or "" for unprefixed paths addressed by compatibility date),
// labelled version, describing the API on date; dated documents the
// X-Compatibility-Date header.
func (s *server) openAPIDoc(ops []specOp, server, version string, date time.Time, dated bool) map[string]any {
	paths := map[string]any{}
	for _, op := range ops {
		item, _ := paths[op.r.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.r.Path] = item
		}
		item[strings.ToLower(op.r.Method)] = s.operation3(op, date, dated)
	}
	if server == "" {
		server = "/"
	}
	return map[string]any{
		"openapi": "3.0.3",
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
			"schemas": map[string]any{"Error": errorSchema},
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
	out := map[string]any{
		"operationId": operationID(op.r),
		"summary":     op.r.Summary,
		"description": description(op),
		"tags":        op.r.Tags,
		"responses":   s.responses3(op, dated),
	}
	for k, v := range s.extensions(op, date) {
		out[k] = v
	}
	if op.phase == PhaseLegacy {
		out["deprecated"] = true
	}
	if op.r.Scope != "" {
		out["security"] = []any{map[string]any{"evesso": []string{op.r.Scope}}}
	}
	var params []any
	for _, p := range op.params(dated) {
		if p.In == "body" {
			out["requestBody"] = map[string]any{
				"required":    p.Required,
				"description": p.Description,
				"content":     map[string]any{"application/json": map[string]any{"schema": p.Schema}},
			}
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

func (s *server) responses3(op specOp, dated bool) map[string]any {
	out := map[string]any{}
	for i, sr := range s.responses(op, dated) {
		resp := map[string]any{"description": sr.description}
		if len(sr.headers) > 0 {
			hs := map[string]any{}
			for _, h := range sr.headers {
				hs[h.name] = map[string]any{"description": h.description, "schema": map[string]any{"type": h.typ}}
			}
			resp["headers"] = hs
		}
		switch {
		case sr.body:
			resp["content"] = map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}
		case i == 0 && op.doc.Response != nil:
			resp["content"] = map[string]any{"application/json": map[string]any{"schema": op.doc.Response}}
		}
		out[fmt.Sprint(sr.status)] = resp
	}
	return out
}

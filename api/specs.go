package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Both published documents, OpenAPI 3 (openapi.json) and Swagger 2.0
// (swagger.json, swagger2.go), are generated from the route table through
// specOp: what one route version says of itself, its parameters, its
// headers and every status it can answer. Neither document has a table of
// its own.

// specOp is one route version as a document describes it.
type specOp struct {
	r     *Route
	v     *Version
	phase Phase
	doc   Doc
}

// cachedSeconds is how long every answer may be cached
// (Cache-Control max-age, cache.go), published as x-cached-seconds.
const cachedSeconds = 3600

// ssoAuthorizationURL is EVE SSO's authorization endpoint, where the
// documents' evesso scheme sends a client for a token.
const ssoAuthorizationURL = "https://login.eveonline.com/v2/oauth/authorize"

func newSpecOp(r *Route, v *Version, phase Phase) specOp {
	doc := r.Doc
	if v.Doc != nil {
		doc = *v.Doc
	}
	return specOp{r: r, v: v, phase: phase, doc: doc}
}

// opsForPrefix are the route versions answering under prefix at t.
func (s *server) opsForPrefix(prefix string, at time.Time) []specOp {
	var out []specOp
	for i := range s.routes {
		r := &s.routes[i]
		if v, phase, msg := r.resolve(prefix, at, s.d.DevEnabled); msg == "" && v != nil {
			out = append(out, newSpecOp(r, v, phase))
		}
	}
	return out
}

// opsForDate are the route versions in force on a compatibility date,
// addressed without prefix.
func (s *server) opsForDate(date time.Time) []specOp {
	var out []specOp
	for i := range s.routes {
		r := &s.routes[i]
		if r.Unversioned {
			continue
		}
		if v, phase := r.inForce(date); v != nil {
			out = append(out, newSpecOp(r, v, phase))
		}
	}
	return out
}

// alternates are the other prefixes answering with the same version at t
// (ESI's x-alternate-versions), sorted.
func (s *server) alternates(op specOp, prefix string, at time.Time) []string {
	out := []string{}
	for _, p := range append(append([]string(nil), aliasPrefixes...), s.versionPrefixes()...) {
		if p == prefix {
			continue
		}
		if v, _, msg := op.r.resolve(p, at, s.d.DevEnabled); msg == "" && v == op.v {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// operationID is ESI's: method and path words, e.g. get_universe_types_type_id.
func operationID(r *Route) string {
	var words []string
	for _, seg := range strings.Split(r.Path, "/") {
		if seg = strings.Trim(seg, "{}"); seg != "" {
			words = append(words, seg)
		}
	}
	return strings.ToLower(r.Method) + "_" + strings.Join(words, "_")
}

// esiOperationID is ESI 2025's: the method and the path's words in
// PascalCase, e.g. GetCharactersCharacterIdSearch, PostUniverseIds, but
// for the operations ESI names otherwise (esiOperationNames).
func esiOperationID(r *Route) string {
	if id, ok := esiOperationNames[r.Method+" "+r.Path]; ok {
		return id
	}
	var b strings.Builder
	word := func(w string) {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + strings.ToLower(w[1:]))
		}
	}
	word(r.Method)
	for _, seg := range strings.Split(r.Path, "/") {
		for _, w := range strings.Split(strings.Trim(seg, "{}"), "_") {
			word(w)
		}
	}
	return b.String()
}

// esiOperationNames are ESI 2025's operation IDs that do not follow the
// path (its document of 2026-08-18; make esi-check compares them all).
var esiOperationNames = map[string]string{
	"GET /characters/{character_id}/": "GetCharactersDetail",
}

// hasParam reports whether the route version declares a parameter.
func (op specOp) hasParam(name string) bool {
	return slices.ContainsFunc(op.doc.Params, func(p Param) bool { return p.Name == name })
}

// standardParams are the parameters the service honours on every route of
// a kind, whatever its Doc says: they replace a route's own declaration of
// the same name.
func (op specOp) standardParams(dated bool) []Param {
	var out []Param
	if op.r.Method == http.MethodGet {
		out = append(out, Param{Name: "If-None-Match", In: "header",
			Description: "ETag from a previous request. A 304 will be returned if this matches the current ETag",
			Schema:      schemaString()})
	}
	if op.hasParam("language") {
		out = append(out, Param{Name: "Accept-Language", In: "header",
			Description: "Language to use in the response; the language parameter takes precedence",
			Schema:      map[string]any{"type": "string", "enum": Languages, "default": "en"}})
	}
	if op.r.Scope != "" {
		out = append(out, Param{Name: "token", In: "query",
			Description: "Access token to use if unable to set a header", Schema: schemaString()})
	}
	out = append(out, Param{Name: HeaderTenant, In: "header",
		Description: "The tenant to read; tranquility is the only one",
		Schema:      map[string]any{"type": "string", "enum": []any{Datasource}, "default": Datasource}})
	if dated {
		out = append(out, Param{Name: HeaderCompatibilityDate, In: "header",
			Description: "The date whose route versions answer, YYYY-MM-DD (or the compatibility_date parameter)",
			Schema:      map[string]any{"type": "string", "format": "date"}})
	}
	return out
}

// params are the route version's parameters followed by the standard
// ones, each once.
func (op specOp) params(dated bool) []Param {
	std := op.standardParams(dated)
	var out []Param
	for _, p := range op.doc.Params {
		if !slices.ContainsFunc(std, func(q Param) bool { return q.Name == p.Name && q.In == p.In }) {
			out = append(out, p)
		}
	}
	return append(out, std...)
}

// header is one documented response header.
type header struct {
	name, description, typ string
}

var (
	errorLimitHeaders = []header{
		{"X-ESI-Error-Limit-Remain", "Errors this client may still get in the window before 420", "integer"},
		{"X-ESI-Error-Limit-Reset", "Seconds until the error window resets", "integer"},
	}
	cacheHeaders = []header{
		{"Cache-Control", "The caching mechanism used", "string"},
		{"ETag", "RFC7232 compliant entity tag", "string"},
		{"Expires", "RFC7231 formatted datetime string", "string"},
		{"Last-Modified", "RFC7231 formatted datetime string", "string"},
	}
	rateLimitHeaders = []header{
		{"X-Ratelimit-Group", "The route's rate-limit group", "string"},
		{"X-Ratelimit-Limit", "The group's budget, tokens per window (150/15m)", "string"},
		{"X-Ratelimit-Remaining", "Tokens left in the window", "integer"},
		{"X-Ratelimit-Used", "Tokens this answer spent", "integer"},
	}
	retryAfter = header{"Retry-After", "Seconds to wait before retrying", "integer"}
)

// statusResponse is one status an operation can answer.
type statusResponse struct {
	status      int
	description string
	body        bool // an error body, {"error": ...}
	headers     []header
}

// responses are every status the route version can answer, with their
// headers: the success status, 304 for a GET, and the errors its checks,
// the error limit, the rate limit and the index's readiness can send.
func (s *server) responses(op specOp, dated bool) []statusResponse {
	common := slices.Clone(errorLimitHeaders)
	_, _, limited := s.rateLimit(op.r)
	if limited {
		common = append(common, rateLimitHeaders...)
	}
	if dated {
		common = append(common, header{HeaderCompatibilityDate, "The compatibility date the request resolved to", "string"})
	}
	okHeaders := append(slices.Clone(common), cacheHeaders...)
	if op.hasParam("language") {
		okHeaders = append(okHeaders, header{"Content-Language", "The language used in the response", "string"})
	}
	if op.hasParam("page") {
		okHeaders = append(okHeaders, header{"X-Pages", "Maximum page number", "integer"})
	}
	okHeaders = append(okHeaders, header{"Warning", "199 when an upgrade is available, 299 when deprecated", "string"})
	status := op.doc.Status
	if status == 0 {
		status = http.StatusOK
	}
	out := []statusResponse{{status: status, description: http.StatusText(status), headers: okHeaders}}
	if op.r.Method == http.MethodGet {
		out = append(out, statusResponse{status: http.StatusNotModified, description: "Not modified",
			headers: append(slices.Clone(common), cacheHeaders...)})
	}
	errs := []int{http.StatusBadRequest}
	if op.r.Scope != "" {
		errs = append(errs, http.StatusUnauthorized, http.StatusForbidden)
	}
	errs = append(errs, http.StatusNotFound)
	if slices.ContainsFunc(op.doc.Params, func(p Param) bool { return p.In == "body" }) {
		errs = append(errs, http.StatusRequestEntityTooLarge)
	}
	if len(op.doc.Consumes) > 0 {
		errs = append(errs, http.StatusUnsupportedMediaType)
	}
	errs = append(errs, StatusErrorLimited)
	if limited {
		errs = append(errs, http.StatusTooManyRequests)
	}
	errs = append(errs, http.StatusInternalServerError, http.StatusServiceUnavailable)
	for _, code := range errs {
		h := slices.Clone(common)
		if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
			h = append(h, retryAfter)
		}
		out = append(out, statusResponse{status: code, description: statusDescription(code), body: true, headers: h})
	}
	return out
}

func statusDescription(code int) string {
	if code == StatusErrorLimited {
		return "Error limited"
	}
	return http.StatusText(code)
}

// allScopes are the scopes of every route of the table, sorted.
func (s *server) allScopes() []string {
	var out []string
	for _, r := range s.routes {
		if r.Scope != "" && !slices.Contains(out, r.Scope) {
			out = append(out, r.Scope)
		}
	}
	slices.Sort(out)
	return out
}

func (s *server) scopeDescriptions() map[string]any {
	out := map[string]any{}
	for _, sc := range s.allScopes() {
		out[sc] = "EVE SSO scope " + sc
	}
	return out
}

// errorHeaders are the headers an error answer of status code carries: the
// error limit's, plus the rate limit's on 429 and Retry-After on 429 and 503.
func errorHeaders(code int) []header {
	hs := slices.Clone(errorLimitHeaders)
	if code == http.StatusTooManyRequests {
		hs = append(hs, rateLimitHeaders...)
	}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		hs = append(hs, retryAfter)
	}
	return hs
}

// operationCommon is what both documents say alike of an operation: its
// ID, texts, responses, extensions, deprecation and security.
func (s *server) operationCommon(op specOp, date time.Time, responses any) map[string]any {
	out := map[string]any{
		"operationId": operationID(op.r),
		"summary":     op.r.Summary,
		"description": description(op),
		"tags":        op.r.Tags,
		"responses":   responses,
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
	return out
}

// extensions are the x- fields both documents put on an operation.
func (s *server) extensions(op specOp, date time.Time) map[string]any {
	out := map[string]any{
		"x-cached-seconds":     cachedSeconds,
		"x-compatibility-date": date.Format(time.DateOnly),
	}
	if rl := s.xRateLimit(op.r); rl != nil {
		out["x-rate-limit"] = rl
	}
	if len(op.r.Roles) > 0 {
		out["x-required-roles"] = op.r.Roles
	}
	return out
}

// docDate is the compatibility date a document made at t describes: the
// listed date in force at the API's today.
func (s *server) docDate(t time.Time) time.Time {
	d, err := s.resolveDate(apiToday(t))
	if err != nil {
		return apiToday(t)
	}
	return d
}

func description(op specOp) string {
	d := op.r.Summary
	if op.r.Scope != "" {
		d += "\n\nRequires a token with scope " + op.r.Scope + "."
	}
	if len(op.r.Roles) > 0 {
		d += fmt.Sprintf("\n\nRequires one of the corporation roles: %s.", strings.Join(op.r.Roles, ", "))
	}
	return d
}

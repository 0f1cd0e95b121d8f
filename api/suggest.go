package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"gds/query"
)

// suggestRoutes is gds's own suggest route (docs/api.md, Suggest): ranked
// names for a text being typed, typos tolerated.
func (s *server) suggestRoutes() []Route {
	return []Route{{
		Method:    http.MethodGet,
		Path:      "/suggest/",
		Summary:   "Suggest names for a text: exact, ticker, prefix, word, contains, then typo matches, ranked.",
		Tags:      []string{TagGDS},
		RateLimit: RateGroupSearch,
		Doc:       suggestDoc(),
		Versions:  []Version{{N: 1, Handler: s.suggest, Lifecycle: s.lifecycles().Current}},
	}}
}

// parseSuggestRequest reads the suggest route's parameters.
func parseSuggestRequest(c *gin.Context) (query.SuggestRequest, bool) {
	var req query.SuggestRequest
	var ok bool
	if req.Text, ok = parseText(c, query.MinSuggestRunes); !ok {
		return req, false
	}
	if _, present, ok := queryParam(c, "categories"); !ok {
		return req, false
	} else if present {
		if req.Categories, ok = parseCategories(c, publicCategories); !ok {
			return req, false
		}
	} else {
		req.Categories = publicCategories
	}
	if req.Language, ok = parseLanguage(c); !ok {
		return req, false
	}
	if req.Limit, ok = parseLimit(c); !ok {
		return req, false
	}
	return req, parseDatasource(c)
}

// parseLimit reads limit: 1 to query.MaxSuggestions, default
// query.DefaultSuggestions.
func parseLimit(c *gin.Context) (int, bool) {
	raw, present, ok := queryParam(c, "limit")
	if !ok {
		return 0, false
	}
	if !present {
		return query.DefaultSuggestions, true
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > query.MaxSuggestions {
		badParam(c, "limit", "must be an integer from 1 to %d, got %s", query.MaxSuggestions, quote(raw))
		return 0, false
	}
	return n, true
}

// suggester is a Reader that suggests names (query.View does).
type suggester interface {
	Suggest(ctx context.Context, req query.SuggestRequest) (query.SuggestResult, error)
}

// suggest answers GET /suggest/.
func (s *server) suggest(c *gin.Context) {
	req, ok := parseSuggestRequest(c)
	if !ok {
		return
	}
	s.read(c, func(r Reader) { s.suggestFrom(c, r, req) })
}

// suggestFrom is suggest's work over the pinned generation r.
func (s *server) suggestFrom(c *gin.Context, r Reader, req query.SuggestRequest) {
	v, ok := r.(suggester)
	if !ok {
		s.internalError(c, errors.New("the generation's reader cannot suggest"))
		return
	}
	gen := r.Info()
	key := "suggest|" + req.Language + "|" + categoryNames(req.Categories) + "|" + strconv.Itoa(req.Limit) + "|" + req.Text
	etag := etagOf(gen.ID, key)
	setCacheHeaders(c, false, s.now(), gen.Created, etag)
	if notModified(c.Request, etag) {
		c.Status(http.StatusNotModified)
		return
	}
	if !s.gate.enter(c) {
		return
	}
	res, err := v.Suggest(c.Request.Context(), req)
	s.gate.leave()
	if err != nil {
		s.searchFailed(c, err)
		return
	}
	out := res.Suggestions
	if out == nil {
		out = []query.Suggestion{}
	}
	body, err := json.Marshal(out)
	if err != nil {
		writeError(c, http.StatusInternalServerError, "the suggestions could not be written")
		return
	}
	sendJSON(c, body)
}

// suggestDoc describes the suggest route's parameters and answer.
func suggestDoc() Doc {
	enum, langs := categoryEnum(publicCategories), languageEnum()
	return Doc{
		Params: []Param{
			{Name: "search", In: "query", Required: true,
				Description: "The text to suggest names for (at least 2 characters); typos are tolerated from 5",
				Schema:      map[string]any{"type": "string", "minLength": query.MinSuggestRunes, "maxLength": maxSearchRunes}},
			{Name: "categories", In: "query", Description: "Categories to suggest from, comma-separated; all when absent",
				Schema: map[string]any{"type": "array", "minItems": 1, "maxItems": len(publicCategories), "uniqueItems": true,
					"items": map[string]any{"type": "string", "enum": enum}}},
			{Name: "language", In: "query", Description: "Language of the names, takes precedence over Accept-Language",
				Schema: map[string]any{"type": "string", "enum": langs, "default": "en"}},
			{Name: "Accept-Language", In: "header", Description: "Language of the names",
				Schema: map[string]any{"type": "string", "default": "en"}},
			{Name: "limit", In: "query", Description: "The most suggestions to return",
				Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": query.MaxSuggestions, "default": query.DefaultSuggestions}},
			datasourceParamDoc,
			{Name: "If-None-Match", In: "header", Description: "ETag from a previous request; 304 when unchanged",
				Schema: map[string]any{"type": "string"}},
		},
		Response: map[string]any{"type": "array", "maxItems": query.MaxSuggestions, "items": map[string]any{
			"type": "object", "required": []any{"category", "id", "name", "match"},
			"properties": map[string]any{
				"category": map[string]any{"type": "string", "enum": enum},
				"id":       map[string]any{"type": "integer", "format": "int64"},
				"name":     map[string]any{"type": "string"},
				"match": map[string]any{"type": "string", "enum": []any{query.MatchExact, query.MatchTicker,
					query.MatchPrefix, query.MatchWord, query.MatchContains, query.MatchTypo}},
			}}},
	}
}

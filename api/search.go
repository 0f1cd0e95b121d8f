package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"gds/query"
	"gds/snapshots"
)

// Categories of each search route: the public one cannot see structures.
var (
	publicCategories    = slices.DeleteFunc(slices.Clone(snapshots.Categories), isStructure)
	characterCategories = slices.Clone(snapshots.Categories)
)

func isStructure(c snapshots.Category) bool { return c == snapshots.CategoryStructure }

// searchHandler answers both search routes; its cache and gate are shared
// by them.
type searchHandler struct {
	s     *server
	cache *responseCache
	gate  *gate
}

// searchRoutes are the public and character search routes (docs/api.md,
// Search).
func (s *server) searchRoutes() []Route {
	h := &searchHandler{
		s:     s,
		cache: newResponseCache(s.d.Limits.CacheBytes),
		gate:  s.gate,
	}
	since := s.lifecycles().Current
	return []Route{{
		Method:    http.MethodGet,
		Path:      "/search/",
		Summary:   "Search for entities that match a given sub-string.",
		Tags:      []string{"Search"},
		RateLimit: RateGroupSearch,
		Doc:       searchDoc(publicCategories, nil),
		Versions: []Version{
			{N: 2, Handler: h.public, Lifecycle: since},
		},
	}, {
		Method:    http.MethodGet,
		Path:      "/characters/{character_id}/search/",
		Summary:   "Search for entities, including the structures the character may access, that match a given sub-string.",
		Tags:      []string{"Search"},
		Scope:     ScopeSearchStructures,
		RateLimit: RateGroupCharSearch,
		Doc: searchDoc(characterCategories, []Param{{Name: "character_id", In: "path", Required: true,
			Description: "An EVE character ID", Schema: map[string]any{"type": "integer", "format": "int64", "minimum": 1}}}),
		Versions: []Version{
			{N: 3, Handler: h.character, Lifecycle: since},
		},
	}}
}

// public answers GET /search/.
func (h *searchHandler) public(c *gin.Context) {
	req, ok := parseSearchRequest(c, publicCategories)
	if !ok {
		return
	}
	h.answer(c, req, false)
}

// character answers GET /characters/{character_id}/search/ for the token's
// own character only.
func (h *searchHandler) character(c *gin.Context) {
	id, ok := parseID(c, "character_id")
	if !ok {
		return
	}
	if _, ok := h.s.authorize(c, id, ScopeSearchStructures); !ok {
		return
	}
	req, ok := parseSearchRequest(c, characterCategories)
	if !ok {
		return
	}
	req.CharacterID = id
	h.answer(c, req, true)
}

// parseSearchRequest reads the query parameters both routes share.
func parseSearchRequest(c *gin.Context, allowed []snapshots.Category) (query.Request, bool) {
	var req query.Request
	var ok bool
	if req.Text, ok = parseSearchText(c); !ok {
		return req, false
	}
	if req.Categories, ok = parseCategories(c, allowed); !ok {
		return req, false
	}
	if req.Strict, ok = parseBool(c, "strict", false); !ok {
		return req, false
	}
	req.Language, ok = parseLocalized(c)
	return req, ok
}

// searchHook, when set (by tests), runs when a search has taken its slot.
var searchHook func()

// answer serves req from the cache, a 304, or a search of the live
// generation, in that order of cost. Only the search takes one of the
// gate's slots: a cached answer costs next to nothing and is never shed.
func (h *searchHandler) answer(c *gin.Context, req query.Request, private bool) {
	h.s.read(c, func(v Reader) { h.answerFrom(c, v, req, private) })
}

// answerFrom is answer's work over the pinned generation v.
func (h *searchHandler) answerFrom(c *gin.Context, v Reader, req query.Request, private bool) {
	gen := v.Info()
	// The key is built on the stack: a cached answer needs no copy of it.
	var kb [128]byte
	kbuf := appendCacheKey(kb[:0], req)
	m := h.s.metrics()
	if e, ok := h.cache.get(gen.ID, kbuf); ok {
		m.CacheHit()
		h.send(c, private, gen, e.etag, e.body)
		return
	}
	key := string(kbuf)
	etag := etagOf(gen.ID, key)
	if notModified(c.Request, etag) {
		h.send(c, private, gen, etag, nil)
		return
	}
	if !h.gate.enter(c) {
		return
	}
	if searchHook != nil {
		searchHook()
	}
	m.CacheMiss()
	res, err := v.Search(c.Request.Context(), req)
	h.gate.leave()
	if err != nil {
		h.s.searchFailed(c, err)
		return
	}
	m.SearchStats(res.Stats.Candidates, res.Stats.Verified)
	h.encodeAndSend(c, private, gen, &cachedResponse{key: key, etag: etag}, res.IDs, req.Categories)
}

// encodeAndSend writes ids as the JSON result into a pooled buffer, keeps
// a copy in the cache and sends it.
func (h *searchHandler) encodeAndSend(c *gin.Context, private bool, gen query.GenerationInfo, e *cachedResponse,
	ids map[snapshots.Category][]int64, order []snapshots.Category) {
	buf := bodyBuffers.Get().(*[]byte)
	body := appendResult((*buf)[:0], ids, order)
	if h.cache != nil {
		e.body = slices.Clone(body)
		h.cache.put(gen.ID, e)
	}
	h.send(c, private, gen, e.etag, body)
	// sendJSON has copied or written body by now; very large buffers are
	// left to the collector so the pool does not pin them.
	if cap(body) <= maxPooledBody {
		*buf = body[:0]
		bodyBuffers.Put(buf)
	}
}

// send writes the answer with its cache headers, or 304 when the client's
// copy is current.
func (h *searchHandler) send(c *gin.Context, private bool, gen query.GenerationInfo, etag string, body []byte) {
	setCacheHeaders(c, private, h.s.now(), gen.Created, etag)
	if notModified(c.Request, etag) {
		c.Status(http.StatusNotModified)
		return
	}
	sendJSON(c, body)
}

// searchFailed maps a search error: the client's own (gone, or text the
// parser should have caught) or the service's.
func (s *server) searchFailed(c *gin.Context, err error) {
	switch {
	case errors.Is(err, query.ErrTextTooShort):
		badParam(c, "search", "must be at least %d characters", query.MinTextRunes)
	case errors.Is(err, query.ErrNotReady):
		writeNotReady(c)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		writeError(c, http.StatusServiceUnavailable, "the search was canceled before it finished")
	default:
		s.d.Logger.Error().Err(err).Str("path", c.Request.URL.Path).Msg("search failed")
		writeError(c, http.StatusInternalServerError, "the search failed")
	}
}

// cacheKey is the normalized request: everything that changes an answer,
// with categories already in canonical order and the text trimmed. The
// text goes last so no separator inside it can be ambiguous.
func cacheKey(req query.Request) string { return string(appendCacheKey(nil, req)) }

// appendCacheKey appends cacheKey(req) to b.
func appendCacheKey(b []byte, req query.Request) []byte {
	b = strconv.AppendInt(b, req.CharacterID, 10)
	b = append(b, '|')
	b = strconv.AppendBool(b, req.Strict)
	b = append(b, '|')
	b = append(b, req.Language...)
	b = append(b, '|')
	for i, cat := range req.Categories {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, cat...)
	}
	b = append(b, '|')
	return append(b, req.Text...)
}

// maxPooledBody: 11 categories of 500 IDs fit in less.
const maxPooledBody = 128 << 10

var bodyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

// appendResult writes the search result object (docs/api.md, Search) by
// hand: only
// categories with matches, in order, each an array of IDs in rank order.
// encoding/json would spend a map iteration, a sort and reflection on it.
func appendResult(b []byte, ids map[snapshots.Category][]int64, order []snapshots.Category) []byte {
	b = append(b, '{')
	first := true
	for _, cat := range order {
		list := ids[cat]
		if len(list) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		// Category names are fixed lower-case ASCII: no escaping needed.
		b = append(b, '"')
		b = append(b, cat...)
		b = append(b, '"', ':', '[')
		for i, id := range list {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendID(b, id)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// searchDoc describes the query parameters of a search route.
func searchDoc(allowed []snapshots.Category, pathParams []Param) Doc {
	enum, langs := categoryEnum(allowed), languageEnum()
	ids := map[string]any{"type": "array", "maxItems": query.MaxResults,
		"items": map[string]any{"type": "integer", "format": "int64"}}
	props := map[string]any{}
	for _, c := range allowed {
		props[string(c)] = ids
	}
	params := append(pathParams,
		Param{Name: "search", In: "query", Required: true,
			Description: "The string to search on (at least 3 characters)",
			Schema:      map[string]any{"type": "string", "minLength": query.MinTextRunes, "maxLength": maxSearchRunes}},
		Param{Name: "categories", In: "query", Required: true,
			Description: "Type of entities to search for, comma-separated",
			Schema: map[string]any{"type": "array", "minItems": 1, "maxItems": len(allowed), "uniqueItems": true,
				"items": map[string]any{"type": "string", "enum": enum}}},
		Param{Name: "strict", In: "query", Description: "Whether the search should be a strict match",
			Schema: map[string]any{"type": "boolean", "default": false}},
		Param{Name: "language", In: "query", Description: "Language to use in the response, takes precedence over Accept-Language",
			Schema: map[string]any{"type": "string", "enum": langs, "default": "en"}},
		Param{Name: "Accept-Language", In: "header", Description: "Language to use in the response",
			Schema: map[string]any{"type": "string", "default": "en"}},
		Param{Name: "datasource", In: "query", Description: "The server name you would like data from",
			Schema: map[string]any{"type": "string", "enum": []any{Datasource}, "default": Datasource}},
		Param{Name: "If-None-Match", In: "header", Description: "ETag from a previous request; 304 when unchanged",
			Schema: map[string]any{"type": "string"}},
	)
	return Doc{Params: params, Response: map[string]any{"type": "object", "properties": props}}
}

// categoryEnum is the OpenAPI enum of a route's categories.
func categoryEnum(allowed []snapshots.Category) []any {
	enum := make([]any, len(allowed))
	for i, c := range allowed {
		enum[i] = string(c)
	}
	return enum
}

// languageEnum is the OpenAPI enum of the language parameter.
func languageEnum() []any {
	langs := make([]any, len(Languages))
	for i, l := range Languages {
		langs[i] = l
	}
	return langs
}

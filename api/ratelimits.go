package api

import (
	"maps"
	"time"

	"gds/api/ratelimit"
)

// Rate-limit groups of the route table (the Route.RateLimit column). Like
// ESI's, a group is a family of routes with one budget per client.
const (
	// RateGroupSearch is the public search: per client IP.
	RateGroupSearch = "search"
	// RateGroupCharSearch is the character search: per application and
	// character.
	RateGroupCharSearch = "char-search"
	// RateGroupStaticData is the universe lookups (types, factions, ids,
	// names and the like): per client IP.
	RateGroupStaticData = "static-data"
	// RateGroupCharDetail is a character's documents (bookmarks, wallet...).
	RateGroupCharDetail = "char-detail"
	// RateGroupCorpDetail is corporation and alliance documents.
	RateGroupCorpDetail = "corp-detail"
	// RateGroupCorpStructure is the corporation structures routes.
	RateGroupCorpStructure = "corp-structure"
)

// rateLimitGroups are the default budgets of the groups; gds serve
// --rate-limit GROUP=N/WINDOW overrides them. An answer spends 2 tokens
// (2xx), 1 (3xx), 5 (4xx) or 0 (5xx), so a budget of N tokens is N/2
// successful answers per window.
var rateLimitGroups = map[string]ratelimit.Limit{
	// 600 answered searches per 5 minutes: a person typing into a search
	// page never meets it, a scraper does within seconds.
	RateGroupSearch: {MaxTokens: 1200, Window: 5 * time.Minute},
	// The same budget per character as per IP for the public search.
	RateGroupCharSearch: {MaxTokens: 1200, Window: 5 * time.Minute},
	// Lookups are cheap but are what a scraper walks: 2 answers a second
	// sustained.
	RateGroupStaticData: {MaxTokens: 3600, Window: 15 * time.Minute},
	// Authenticated documents change rarely and are cached by clients:
	// ESI's 150/15m-style budgets, a little larger.
	RateGroupCharDetail:    {MaxTokens: 600, Window: 15 * time.Minute},
	RateGroupCorpDetail:    {MaxTokens: 600, Window: 15 * time.Minute},
	RateGroupCorpStructure: {MaxTokens: 600, Window: 15 * time.Minute},
}

// RateLimitGroups returns the default budget of every rate-limit group
// (for --help, docs and tests).
func RateLimitGroups() map[string]ratelimit.Limit {
	return maps.Clone(rateLimitGroups)
}

// rateLimit is route r's group and effective budget (the default, or the
// operator's override); ok is false when r is not rate limited.
func (s *server) rateLimit(r *Route) (group string, l ratelimit.Limit, ok bool) {
	if r.RateLimit == "" || s.d.Limits.RateLimitsOff {
		return "", ratelimit.Limit{}, false
	}
	if l, ok := s.d.Limits.RateLimits[r.RateLimit]; ok {
		return r.RateLimit, l, true
	}
	l, ok = rateLimitGroups[r.RateLimit]
	return r.RateLimit, l, ok
}

// xRateLimit is the OpenAPI x-rate-limit extension of route r, as ESI
// publishes it ({group, window-size, max-tokens}), or nil.
func (s *server) xRateLimit(r *Route) map[string]any {
	group, l, ok := s.rateLimit(r)
	if !ok {
		return nil
	}
	return map[string]any{
		"group":       group,
		"window-size": ratelimit.FormatWindow(l.Window),
		"max-tokens":  l.MaxTokens,
	}
}

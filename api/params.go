package api

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"golang.org/x/text/language"

	"gds/api/esierr"
	"gds/query"
	"gds/snapshots"
)

// This file is the one parameter parser. Every parse function writes the
// 400 itself and reports false, so a handler reads:
//
//	id, ok := parseID(c, "character_id")
//	if !ok {
//		return
//	}
//
// Messages start with the parameter's name and say what to send instead.

// maxGameID is the largest ID a path accepts. Game IDs outgrew int32 long
// ago (characters from 2,112,000,000, structures around 10^12), and 2^53
// is where JSON numbers stop being exact for JavaScript clients, so no ID
// the API could return lies beyond it.
const maxGameID = 1 << 53

// maxSearchRunes bounds the search text: longer than any name in the game,
// short enough that a hostile text costs little.
const maxSearchRunes = 256

// maxPage bounds the page parameter (ESI's is an int32).
const maxPage = 1<<31 - 1

// Datasource is the only datasource ESI's clients may name here.
const Datasource = "tranquility"

// Languages are the values of the language query parameter, in ESI's
// order: the snapshot languages, with en-us (ESI's default) beside en.
var Languages = func() []string {
	var out []string
	for _, l := range snapshots.Languages {
		out = append(out, l)
		if l == "en" {
			out = append(out, "en-us")
		}
	}
	return out
}()

// languageMatcher matches Accept-Language preferences to Languages (by
// index); the first, en, is the default.
var languageMatcher = func() language.Matcher {
	tags := make([]language.Tag, len(Languages))
	for i, l := range Languages {
		tags[i] = language.MustParse(l)
	}
	return language.NewMatcher(tags)
}()

// parseID reads path parameter name as a game ID: a positive integer written
// plainly (no sign, no leading zeros) up to maxGameID.
func parseID(c *gin.Context, name string) (int64, bool) {
	raw := c.Param(name)
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 || id > maxGameID || raw[0] == '0' || raw[0] == '+' {
		badParam(c, name, "must be a positive integer up to %d, got %s", int64(maxGameID), quote(raw))
		return 0, false
	}
	return id, true
}

// parsePage reads the optional page parameter: 1 (the default) or more.
func parsePage(c *gin.Context) (int, bool) {
	raw, present, ok := queryParam(c, "page")
	switch {
	case !ok:
		return 0, false
	case !present:
		return 1, true
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > maxPage || raw[0] == '+' {
		badParam(c, "page", "must be an integer from 1 to %d, got %s", maxPage, quote(raw))
		return 0, false
	}
	return n, true
}

// parseDatasource checks the optional datasource parameter.
func parseDatasource(c *gin.Context) bool {
	raw, present, ok := queryParam(c, "datasource")
	if ok && present && raw != Datasource {
		badParam(c, "datasource", "%s is not one of %s", quote(raw), Datasource)
		return false
	}
	return ok
}

// parseBool reads an optional boolean query parameter: true or false,
// exactly, as ESI's schema has it.
func parseBool(c *gin.Context, name string, def bool) (bool, bool) {
	raw, present, ok := queryParam(c, name)
	switch {
	case !ok:
		return false, false
	case !present:
		return def, true
	case raw == "true":
		return true, true
	case raw == "false":
		return false, true
	}
	badParam(c, name, "must be true or false, got %s", quote(raw))
	return false, false
}

// parseLocalized reads a localized read's language (parseLanguage), then
// its datasource: the first one refused is the 400 the client gets.
func parseLocalized(c *gin.Context) (string, bool) {
	lang, ok := parseLanguage(c)
	return lang, ok && parseDatasource(c)
}

// parseLanguage returns the language a response is in, as a snapshot
// language code ("en", "de", ...): the language query parameter when given
// (an unknown value is a 400), else the most preferred supported language
// of the Accept-Language header, else en. The answer then says its
// language (Content-Language) and that shared caches must key it by
// Accept-Language (Vary), 304s included: every caller's body depends on it.
func parseLanguage(c *gin.Context) (string, bool) {
	raw, present, ok := queryParam(c, "language")
	if !ok {
		return "", false
	}
	lang := ""
	if present {
		known := false
		if lang, known = languageOf(raw); !known {
			badParam(c, "language", "%s is not one of %s", quote(raw), strings.Join(Languages, ", "))
			return "", false
		}
	} else {
		lang = acceptLanguage(c.Request.Header.Values("Accept-Language"))
	}
	h := c.Writer.Header()
	h["Content-Language"] = contentLanguage(lang) // canonical keys, as setCacheHeaders
	addVary(h, "Accept-Language")
	return lang, true
}

// languageOf maps a language query value to a snapshot language code.
func languageOf(v string) (string, bool) {
	if !slices.Contains(Languages, v) {
		return "", false
	}
	return query.NormalizeLanguage(v)
}

// maxLanguageRanges bounds the work a hostile Accept-Language costs.
const maxLanguageRanges = 32

// acceptLanguage picks the supported language the Accept-Language headers
// prefer (RFC 9110 §12.5.4), with x/text's matcher: the highest q-value
// first, the first listed on a tie, a regional or related variant for its
// language ("de-AT" and "gsw" are German, "en-GB" is en). Each range is
// parsed alone, so a malformed or unsupported one is ignored rather than
// spoiling the others (a header cannot be answered with a 400 the client
// never asked for); "en" when nothing matches.
func acceptLanguage(headers []string) string {
	type pref struct {
		tag language.Tag
		q   float32
	}
	var prefs []pref
	n := 0
	for _, h := range headers {
		for part := range strings.SplitSeq(h, ",") {
			if n++; n > maxLanguageRanges {
				break
			}
			// The parser drops q=0 ranges and accepts q above 1, which
			// RFC 9110 does not.
			tags, qs, err := language.ParseAcceptLanguage(part)
			if err == nil && len(tags) == 1 && qs[0] <= 1 {
				prefs = append(prefs, pref{tags[0], qs[0]})
			}
		}
	}
	if len(prefs) == 0 {
		return "en"
	}
	slices.SortStableFunc(prefs, func(a, b pref) int { return cmp.Compare(b.q, a.q) })
	tags := make([]language.Tag, len(prefs))
	for i, p := range prefs {
		tags[i] = p.tag
	}
	_, i, conf := languageMatcher.Match(tags...)
	if conf == language.No {
		return "en"
	}
	lang, _ := languageOf(Languages[i])
	return lang
}

// contentLanguage is the Content-Language value of lang, shared for the
// languages the service knows (see the shared header values in cache.go).
func contentLanguage(lang string) []string {
	if v, ok := contentLanguages[lang]; ok {
		return v
	}
	return []string{lang}
}

var contentLanguages = func() map[string][]string {
	m := map[string][]string{}
	for _, l := range snapshots.Languages {
		m[l] = []string{l}
	}
	return m
}()

// parseSearchText reads the required search parameter: valid UTF-8 without
// NUL, 3 to maxSearchRunes runes after trimming; it returns the trimmed text.
func parseSearchText(c *gin.Context) (string, bool) { return parseText(c, query.MinTextRunes) }

// parseText reads the search parameter: at least minRunes runes trimmed.
func parseText(c *gin.Context, minRunes int) (string, bool) {
	raw, present, ok := queryParam(c, "search")
	switch {
	case !ok:
		return "", false
	case !present:
		badParam(c, "search", "required, the text to look for (at least %d characters)", minRunes)
		return "", false
	case !utf8.ValidString(raw):
		badParam(c, "search", "must be valid UTF-8")
		return "", false
	case strings.IndexByte(raw, 0) >= 0:
		badParam(c, "search", "must not contain NUL characters")
		return "", false
	}
	text := strings.TrimSpace(raw)
	switch n := utf8.RuneCountInString(text); {
	case n < minRunes:
		badParam(c, "search", "must be at least %d characters", minRunes)
		return "", false
	case n > maxSearchRunes:
		badParam(c, "search", "must be at most %d characters", maxSearchRunes)
		return "", false
	}
	return text, true
}

// parseCategories reads the required categories parameter: a
// comma-separated list of distinct names from allowed. It returns them in
// allowed's order, so two spellings of one request are one request.
//
// ESI's 2025 document declares the list exploded (categories=a&categories=b,
// what clients generated from it send), its older documents
// comma-separated: both are read, and mixed.
func parseCategories(c *gin.Context, allowed []snapshots.Category) ([]snapshots.Category, bool) {
	raw, present, ok := queryListParam(c, "categories")
	if !ok {
		return nil, false
	}
	if !present || raw == "" {
		badParam(c, "categories", "required, a comma-separated list of %s", categoryNames(allowed))
		return nil, false
	}
	n := strings.Count(raw, ",") + 1
	if n > len(allowed) {
		badParam(c, "categories", "at most %d categories, got %d", len(allowed), n)
		return nil, false
	}
	// The items are walked in place and marked in a bit set (the route
	// table's category lists are far shorter than 64): no slices but the
	// answer.
	var seen uint64
	for rest := raw; ; {
		item, more, found := strings.Cut(rest, ",")
		i := slices.Index(allowed, snapshots.Category(item))
		switch {
		case item == "":
			badParam(c, "categories", "empty item in %s; separate names with single commas", quote(raw))
			return nil, false
		case i < 0:
			badParam(c, "categories", "%s is not one of %s", quote(item), categoryNames(allowed))
			return nil, false
		case seen&(1<<i) != 0:
			badParam(c, "categories", "%s is given more than once", quote(item))
			return nil, false
		}
		seen |= 1 << i
		if !found {
			break
		}
		rest = more
	}
	out := make([]snapshots.Category, 0, n)
	for i, cat := range allowed {
		if seen&(1<<i) != 0 {
			out = append(out, cat)
		}
	}
	return out, true
}

func categoryNames(cats []snapshots.Category) string {
	s := make([]string, len(cats))
	for i, c := range cats {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// queryParam returns the single value of query parameter name and whether
// it was given. A malformed query string or a parameter given twice is a
// 400 (ok false): silently taking one of two values hides client bugs.
// The query string is read where it is (rawquery.go), not parsed into
// url.Values: a handler asks for a few parameters, and a map with a slice
// and strings per parameter was a tenth of a strict search's allocations.
func queryParam(c *gin.Context, name string) (value string, present, ok bool) {
	raw, ok := rawQuery(c)
	if !ok {
		return "", false, false
	}
	value, n := lookupQuery(raw, name)
	switch n {
	case 0:
		return "", false, true
	case 1:
		return value, true, true
	}
	badParam(c, name, "given %d times, send it once", n)
	return "", false, false
}

// queryListParam is queryParam for a list parameter that may be given
// more than once: the values joined with commas.
func queryListParam(c *gin.Context, name string) (value string, present, ok bool) {
	raw, ok := rawQuery(c)
	if !ok {
		return "", false, false
	}
	value, n := lookupQuery(raw, name)
	if n <= 1 {
		return value, n == 1, true
	}
	return strings.Join(lookupQueryAll(raw, name), ","), true, true
}

// rawQuery returns the request's query string; a malformed one is a 400
// (ok false).
func rawQuery(c *gin.Context) (raw string, ok bool) {
	raw = c.Request.URL.RawQuery
	if err := queryError(raw); err != nil {
		badParam(c, "query string", "%v", err)
		return "", false
	}
	return raw, true
}

// badParam writes the 400 for parameter name, with a detail saying where
// it was (the path, else the query string) and what it held.
func badParam(c *gin.Context, name, format string, args ...any) {
	why := fmt.Sprintf(format, args...)
	d := esierr.Detail{Location: "query." + name, Message: why}
	switch raw := c.Request.URL.RawQuery; {
	case c.Param(name) != "":
		d.Location, d.Value = "path."+name, c.Param(name)
	case name == "query string":
		d.Location, d.Value = "query", raw
	default:
		d.Value, _ = lookupQuery(raw, name)
	}
	writeErrorDetails(c, http.StatusBadRequest, name+": "+why, d)
}

// badHeader writes the 400 for header name (its value raw).
func badHeader(c *gin.Context, name, raw, msg string) {
	writeErrorDetails(c, http.StatusBadRequest, msg,
		esierr.Detail{Location: "header." + name, Message: msg, Value: raw})
}

// maxQuoted bounds how much of a client's value an error message echoes.
const maxQuoted = 64

// quote renders a client's value for an error message, cut short when long.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

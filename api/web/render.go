package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"gds/query"
	"gds/snapshots"
)

// Categories are those the public search route answers, in ESI's order.
var Categories = slices.DeleteFunc(slices.Clone(snapshots.Categories),
	func(c snapshots.Category) bool { return c == snapshots.CategoryStructure })

// categoryInfo is how the page shows a category: its name for people and
// the API route that describes one result (factions have a list route
// only).
type categoryInfo struct{ label, lookup string }

var categoryInfos = map[snapshots.Category]categoryInfo{
	snapshots.CategoryAgent:         {"Agents", "/characters/%d/"},
	snapshots.CategoryAlliance:      {"Alliances", "/alliances/%d/"},
	snapshots.CategoryCharacter:     {"Characters", "/characters/%d/"},
	snapshots.CategoryConstellation: {"Constellations", "/universe/constellations/%d/"},
	snapshots.CategoryCorporation:   {"Corporations", "/corporations/%d/"},
	snapshots.CategoryFaction:       {"Factions", "/universe/factions/"},
	snapshots.CategoryInventoryType: {"Types", "/universe/types/%d/"},
	snapshots.CategoryRegion:        {"Regions", "/universe/regions/%d/"},
	snapshots.CategorySolarSystem:   {"Systems", "/universe/systems/%d/"},
	snapshots.CategoryStation:       {"Stations", "/universe/stations/%d/"},
}

// APIPrefix is the version prefix of the API calls the page makes and links.
const APIPrefix = "/latest"

// Limits of what the page shows and accepts; the script uses the same.
const (
	// shown is how many results of a group the first render names.
	shown = 8
	// maxTextRunes is the API's limit on the search text.
	maxTextRunes = 256
)

// state is what the URL says: /?q=jita&lang=de&strict=1&cat=solar_system,station.
type state struct {
	Text   string
	Lang   string
	Strict bool
	Cats   []snapshots.Category // empty: every category
}

// parseState reads the page's URL leniently: the page is for people, so an
// unknown language or category is ignored rather than refused. cat may be
// comma-separated or repeated (a form without script submits it so).
func parseState(v url.Values) state {
	st := state{Text: v.Get("q"), Lang: "en"}
	if l := v.Get("lang"); snapshots.IsLanguage(l) {
		st.Lang = l
	}
	switch v.Get("strict") {
	case "1", "true", "on":
		st.Strict = true
	}
	want := map[snapshots.Category]bool{}
	for _, raw := range v["cat"] {
		for c := range strings.SplitSeq(raw, ",") {
			want[snapshots.Category(c)] = true
		}
	}
	for _, c := range Categories {
		if want[c] {
			st.Cats = append(st.Cats, c)
		}
	}
	return st
}

// pageData is what the template renders.
type pageData struct {
	Text, Lang string
	Strict     bool
	Languages  []choice
	Categories []choice
	// Status is the line above the results: a hint, a count or an error.
	Status string
	// Error marks Status as a problem to fix.
	Error  bool
	Groups []group
	// DidYouMean offers names for a search without results (suggest.go).
	DidYouMean []suggestion
	// APICall is the search URL of the API that gives these results;
	// APIText shows it with the search text as typed.
	APICall, APIText string
	Version          string
	// status and retryAfter (seconds, 0 for none) are the HTTP answer's.
	status, retryAfter int
}

type choice struct {
	Value, Label, Title string
	On                  bool
}

// languageNames are the languages in their own words, as a tooltip.
var languageNames = map[string]string{
	"de": "Deutsch", "en": "English", "es": "Español", "fr": "Français",
	"ja": "日本語", "ko": "한국어", "ru": "Русский", "zh": "中文",
}

// group is one category's results.
type group struct {
	Cat       snapshots.Category
	Label     string
	Count     int
	CountText string
	// IDs are every ID the search returned, in rank order, comma-separated
	// for the script that shows more.
	IDs   string
	Items []item
	More  bool
	// best orders groups: 0 an exact name first, 1 a name starting with
	// the text, 2 otherwise.
	Best int
}

// item is one named result, its matched part apart for highlighting.
type item struct {
	ID                   int64
	Cat                  snapshots.Category
	Before, Match, After string
	Href                 string
	// Aff is a character's corporation and alliance (local.go).
	Aff *affiliation
}

// render searches the live generation in-process, exactly as the public
// search route does (same request, same ranking), and names the first
// results of each category.
func (h *Handler) render(c *gin.Context, st state) pageData {
	ctx := c.Request.Context()
	d := pageData{Text: st.Text, Lang: st.Lang, Strict: st.Strict, status: http.StatusOK}
	for _, l := range snapshots.Languages {
		d.Languages = append(d.Languages, choice{Value: l, Label: l, Title: languageNames[l], On: l == st.Lang})
	}
	for _, c := range Categories {
		d.Categories = append(d.Categories, choice{Value: string(c), Label: categoryInfos[c].label, On: slices.Contains(st.Cats, c)})
	}
	text := strings.TrimSpace(st.Text)
	if st.Text == "" {
		d.Status = "Type a name: a system, station, item type, character, corporation… Results appear as you type."
		return d
	}
	if msg := textProblem(text); msg != "" {
		d.Status, d.Error = msg, true
		return d
	}
	cats := st.Cats
	if len(cats) == 0 {
		cats = Categories
	}
	req := query.Request{Text: text, Categories: cats, Strict: st.Strict, Language: st.Lang}
	d.APICall = apiSearchURL(req)
	if u, err := url.QueryUnescape(d.APICall); err == nil {
		d.APIText = u
	}
	v, done, no := h.admit(c)
	if no != nil {
		d.Status, d.Error, d.status, d.retryAfter = no.msg, true, no.status, no.retryAfter
		return d
	}
	defer done()
	res, err := v.Search(ctx, req)
	if err != nil {
		d.Status, d.Error = viewProblem(err), true
		if !errors.Is(err, query.ErrNotReady) && !errors.Is(err, context.Canceled) {
			h.d.Logger.Error().Err(err).Msg("search page: search failed")
		}
		return d
	}
	d.Groups = groups(v, res, cats, text, st.Lang)
	d.Status = summary(d.Groups, text)
	if len(d.Groups) == 0 {
		d.DidYouMean = didYouMean(ctx, v, st, text, cats)
	}
	return d
}

const notReady = "The index is still being built; try again in half a minute."

const busy = "The server is answering too many searches at once; try again in a second."

// notReadyRetry is the Retry-After of a page rendered before a generation
// is live, as the API's.
const notReadyRetry = 30

func viewProblem(err error) string {
	if errors.Is(err, query.ErrNotReady) {
		return notReady
	}
	return "The search failed on the server; try again in a moment."
}

// textProblem explains, in words, why text cannot be searched; "" when it
// can. The API's rules: 3 to 256 characters, valid UTF-8, no NUL.
func textProblem(text string) string {
	switch n := utf8.RuneCountInString(text); {
	case !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0:
		return "That text holds characters no name has; type it again."
	case n < query.MinTextRunes:
		return fmt.Sprintf("Type at least %d characters: a search needs three to find names, and you typed %d.", query.MinTextRunes, n)
	case n > maxTextRunes:
		return fmt.Sprintf("That is %d characters; no name is longer than %d.", n, maxTextRunes)
	}
	return ""
}

// apiSearchURL is the API call that answers req.
func apiSearchURL(req query.Request) string {
	names := make([]string, len(req.Categories))
	for i, c := range req.Categories {
		names[i] = string(c)
	}
	// The parameters in the order the script writes them, commas plain.
	return APIPrefix + "/search/?search=" + url.QueryEscape(req.Text) + "&categories=" + strings.Join(names, ",") +
		"&strict=" + strconv.FormatBool(req.Strict) + "&language=" + url.QueryEscape(req.Language)
}

// groups names the first results of every category with matches, one
// Names call for all of them, and orders the groups by their best match.
func groups(v *query.View, res query.Result, cats []snapshots.Category, text, lang string) []group {
	var ids []int64
	for _, c := range cats {
		list := res.IDs[c]
		ids = append(ids, list[:min(len(list), shown)]...)
	}
	found, _ := v.Names(ids, lang)
	names := make(map[int64]string, len(found))
	for _, n := range found {
		names[n.ID] = n.Name
	}
	var out []group
	for _, c := range cats {
		list := res.IDs[c]
		if len(list) == 0 {
			continue
		}
		g := group{Cat: c, Label: categoryInfos[c].label, Count: len(list), CountText: countText(len(list)),
			IDs: joinIDs(list), More: len(list) > shown, Best: 2}
		for i, id := range list[:min(len(list), shown)] {
			name, ok := names[id]
			if !ok {
				name = "#" + strconv.FormatInt(id, 10)
			}
			it := item{ID: id, Cat: c, Href: LookupURL(c, id, lang)}
			it.Before, it.Match, it.After = highlight(name, text)
			if i == 0 {
				g.Best = matchClass(name, text)
			}
			g.Items = append(g.Items, it)
		}
		out = append(out, g)
	}
	// Stable: equal classes keep the categories' order.
	slices.SortStableFunc(out, func(a, b group) int { return a.Best - b.Best })
	addAffiliations(v, out)
	return out
}

func countText(n int) string {
	if n >= query.MaxResults {
		return strconv.Itoa(n) + "+"
	}
	return strconv.Itoa(n)
}

func joinIDs(ids []int64) string {
	b := make([]byte, 0, len(ids)*9)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// LookupURL is the API call that describes result id of category c.
func LookupURL(c snapshots.Category, id int64, lang string) string {
	p := categoryInfos[c].lookup
	if strings.Contains(p, "%d") {
		p = fmt.Sprintf(p, id)
	}
	if lang != "en" {
		p += "?language=" + url.QueryEscape(lang)
	}
	return APIPrefix + p
}

// matchClass ranks a name as the search does: 0 when it is the text, 1
// when it starts with it, 2 otherwise (ignoring case).
func matchClass(name, text string) int {
	before, match, _ := highlight(name, text)
	switch {
	case strings.EqualFold(name, text):
		return 0
	case before == "" && match != "":
		return 1
	}
	return 2
}

// highlight splits name around the first part that equals text ignoring
// case; match is "" when the name does not hold the text literally (a
// fold the search knows, such as İ for i, can make that happen).
func highlight(name, text string) (before, match, after string) {
	n := utf8.RuneCountInString(text)
	for i := range name {
		j, k := i, 0
		for k < n && j < len(name) {
			_, size := utf8.DecodeRuneInString(name[j:])
			j += size
			k++
		}
		if k < n {
			break
		}
		if strings.EqualFold(name[i:j], text) {
			return name[:i], name[i:j], name[j:]
		}
	}
	return name, "", ""
}

// summary is the status line of a search's results.
func summary(gs []group, text string) string {
	if len(gs) == 0 {
		return fmt.Sprintf("Nothing matches “%s”. Try fewer letters, or turn Strict off.", text)
	}
	total, capped := 0, false
	for _, g := range gs {
		total += g.Count
		capped = capped || g.Count >= query.MaxResults
	}
	more := ""
	if capped {
		more = "+"
	}
	return fmt.Sprintf("%d%s %s in %d %s.", total, more, plural(total, "result", "results"), len(gs), plural(len(gs), "category", "categories"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

package query

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/nametable"
	"gds/indexer/typo"
	"gds/snapshots"
)

// How a suggestion matched, in rank order (docs/api.md, Suggest).
const (
	MatchExact    = "exact"    // the whole name
	MatchTicker   = "ticker"   // a corporation's or alliance's ticker
	MatchPrefix   = "prefix"   // the name starts with the text
	MatchWord     = "word"     // a word of the name starts with it
	MatchContains = "contains" // the name contains it
	MatchTypo     = "typo"     // within the typo budgets (package typo)
)

var matchNames = [...]string{MatchExact, MatchTicker, MatchPrefix, MatchWord, MatchContains, MatchTypo}

// Limits of a suggestion request.
const (
	MaxSuggestions     = 50
	DefaultSuggestions = 10
	// MinSuggestRunes: a text of two runes finds exact names and tickers;
	// the rest of the matches need three (one trigram).
	MinSuggestRunes = 2
)

// SuggestRequest asks for ranked suggestions of names for a text.
type SuggestRequest struct {
	Text       string
	Categories []snapshots.Category // none of them structure
	Language   string
	Limit      int // 1 to MaxSuggestions; 0: DefaultSuggestions
}

// Suggestion is one name suggested for a text.
type Suggestion struct {
	Category snapshots.Category `json:"category"`
	ID       int64              `json:"id"`
	Name     string             `json:"name"`
	Match    string             `json:"match"`
}

// SuggestResult is the answer to a SuggestRequest.
type SuggestResult struct {
	Suggestions []Suggestion
	Stats       Stats
}

// suggestion is a ranked candidate: by match class, then (typos) the
// whole name's distance, then as a search ranks (length in runes, ID),
// then by the request's order of categories.
type suggestion struct {
	class uint8
	dist  int
	runes int
	cat   int
	id    int64
}

func (a suggestion) compare(b suggestion) int {
	return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.dist, b.dist), cmp.Compare(a.runes, b.runes),
		cmp.Compare(a.cat, b.cat), cmp.Compare(a.id, b.id))
}

// Suggest returns ranked suggestions for req.Text over the view's
// generation: exact names, tickers, names starting with the text, names
// with a word starting with it, names containing it, then names within
// the typo budgets. A generation without typo indexes suggests no
// tickers and no typos.
func (v *View) Suggest(ctx context.Context, req SuggestRequest) (SuggestResult, error) {
	start := time.Now()
	var res SuggestResult
	text := strings.TrimSpace(req.Text)
	runes := utf8.RuneCountInString(text)
	if runes < MinSuggestRunes {
		return res, ErrTextTooShort
	}
	limit := req.Limit
	if limit <= 0 || limit > MaxSuggestions {
		limit = DefaultSuggestions
	}
	lang, ok := NormalizeLanguage(req.Language)
	if !ok {
		lang = "en"
	}
	folded := []byte(nametable.Fold(text))
	var all []suggestion
	for i, cat := range req.Categories {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		all = v.suggestCategory(all, i, cat, folded, runes, lang, limit, &res.Stats)
	}
	slices.SortFunc(all, suggestion.compare)
	for _, s := range all {
		if len(res.Suggestions) == limit {
			break
		}
		cat := req.Categories[s.cat]
		if slices.ContainsFunc(res.Suggestions, func(o Suggestion) bool { return o.ID == s.id && o.Category == cat }) {
			continue // matched more ways than one: its best way came first
		}
		name, err := v.name(cat.Kind(), s.id, lang)
		if err != nil {
			continue
		}
		// One suggestion per name in a category: ten pilots called the
		// same would hide every other name (a search lists them all).
		if slices.ContainsFunc(res.Suggestions, func(o Suggestion) bool {
			return o.Category == cat && nametable.Fold(o.Name) == nametable.Fold(name)
		}) {
			continue
		}
		res.Suggestions = append(res.Suggestions, Suggestion{Category: cat, ID: s.id, Name: name, Match: matchNames[s.class]})
	}
	res.Stats.Matches = len(res.Suggestions)
	res.Stats.Duration = time.Since(start)
	return res, nil
}

// part is one table of a category with its typo index and the ordinals
// it hides (those a language overlay or a delta replaces).
type part struct {
	t    *nametable.Table
	x    *typo.Index
	hide *roaring.Bitmap
}

// suggestCategory appends the candidates of one category.
func (v *View) suggestCategory(to []suggestion, ci int, cat snapshots.Category, text []byte, runes int, lang string, limit int, st *Stats) []suggestion {
	ct := v.g.Tables(cat)
	if ct == nil || cat == snapshots.CategoryStructure {
		return to
	}
	parts := []part{{t: ct.Base, x: ct.BaseTypos}}
	if o := ct.Overlays[lang]; o != nil {
		parts[0].hide = o.Mask()
		parts = append(parts, part{t: o, x: ct.OverlayTypos[lang]})
	} else if ct.Delta != nil {
		parts[0].hide = ct.Delta.Mask()
		parts = append(parts, part{t: ct.Delta, x: ct.DeltaTypos})
	}
	for _, p := range parts {
		add := func(class uint8, dist int, o uint32) {
			to = append(to, suggestion{class: class, dist: dist, runes: utf8.RuneCount(p.t.Name(o)), cat: ci, id: p.t.ID(o)})
		}
		hidden := func(o uint32) bool { return p.hide != nil && p.hide.Contains(o) }
		w := walker{t: p.t, text: text, limit: MaxResults, stats: st, filter: nametable.Filter{Hide: p.hide}}
		w.run(runes < MinTextRunes)
		for _, h := range w.hits {
			add(walkClass(p.t.Name(h.o), text, h.class), 0, h.o)
		}
		if p.x == nil {
			continue
		}
		p.x.Tickers(text, func(o uint32) bool {
			if !hidden(o) {
				add(1, 0, o)
			}
			return true
		})
		// Typos rank last, but the names found so far may be few once
		// one is kept per name: from 5 runes (a word's first edit) the
		// typo walk always runs.
		if runes >= 5 || len(w.hits) < limit && runes >= MinTextRunes {
			// Many pilots share a name, and one suggestion is kept per
			// name: enough hits that duplicates leave room for others.
			for _, h := range p.x.Search(text, p.t, hidden, MaxResults) {
				add(5, h.Dist, h.O)
			}
		}
	}
	return to
}

// walkClass is the suggestion class of a search walk's match.
func walkClass(name, text []byte, class uint8) uint8 {
	switch class {
	case classExact:
		return 0
	case classPrefix:
		return 2
	}
	if typo.BeginsWord(name, text) {
		return 3
	}
	return 4
}

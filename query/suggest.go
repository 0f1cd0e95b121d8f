package query

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/affcol"
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
	class  uint8
	dist   int
	runes  int
	cat    int
	id     int64
	folded []byte // the name as its table holds it
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
	srcs := v.nameSources(req.Categories, lang)
	var names []string // each suggestion's name, folded
	for _, s := range all {
		if len(res.Suggestions) == limit {
			break
		}
		cat := req.Categories[s.cat]
		if slices.ContainsFunc(res.Suggestions, func(o Suggestion) bool { return o.ID == s.id && o.Category == cat }) {
			continue // matched more ways than one: its best way came first
		}
		if srcs[s.cat].column && named(res.Suggestions, names, cat, string(s.folded)) {
			continue // the column's name is the table's: suggested already, and not read again
		}
		name, fold, err := v.suggestedName(cat, s, lang, srcs[s.cat])
		if err != nil {
			continue
		}
		// One suggestion per name in a category: ten pilots called the
		// same would hide every other name (a search lists them all).
		if named(res.Suggestions, names, cat, fold) {
			continue
		}
		res.Suggestions = append(res.Suggestions, Suggestion{Category: cat, ID: s.id, Name: name, Match: matchNames[s.class]})
		names = append(names, fold)
	}
	res.Stats.Matches = len(res.Suggestions)
	res.Stats.Duration = time.Since(start)
	return res, nil
}

// named reports whether a suggestion of cat has the folded name fold
// (folded holds each suggestion's).
func named(sugs []Suggestion, folded []string, cat snapshots.Category, fold string) bool {
	for i, o := range sugs {
		if o.Category == cat && folded[i] == fold {
			return true
		}
	}
	return false
}

// nameSource is where a category's suggestions are named: the
// affiliation column of its kind (characters, corporations, alliances:
// their records have no names of other languages) when that holds names
// and the category has none in the request's language of its own (no
// overlay), a key search and a row instead of a block of the store to
// read and decompress per candidate; else the records (View.name).
type nameSource struct {
	col    columned
	column bool
}

// nameSources returns the name source of each of cats for lang.
func (v *View) nameSources(cats []snapshots.Category, lang string) []nameSource {
	srcs := make([]nameSource, len(cats))
	for i, cat := range cats {
		k, ok := v.columnOf(cat.Kind())
		ct := v.g.Tables(cat)
		if ok && k.s != nil && k.c.Fields()&affcol.Name != 0 && ct != nil && ct.Overlays[lang] == nil {
			srcs[i] = nameSource{col: k, column: true}
		}
	}
	return srcs
}

// suggestedName returns the name of s (of cat, in lang) with its folded
// form, from src; a column's name that does not fold to the one s was
// found by leaves it to the record.
func (v *View) suggestedName(cat snapshots.Category, s suggestion, lang string, src nameSource) (name, fold string, err error) {
	if src.column {
		if p, found := src.col.s.Find(s.id); found {
			if n, _, err := src.col.c.Text(p); err == nil {
				name = string(n)
				if fold = nametable.Fold(name); fold == string(s.folded) {
					return name, fold, nil
				}
			}
		}
	}
	if name, err = v.name(cat.Kind(), s.id, lang); err != nil {
		return "", "", err
	}
	return name, nametable.Fold(name), nil
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
			name := p.t.Name(o)
			to = append(to, suggestion{class: class, dist: dist, runes: utf8.RuneCount(name), cat: ci, id: p.t.ID(o), folded: name})
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

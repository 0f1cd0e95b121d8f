package web

import (
	"context"
	"net/url"
	"strings"

	"gds/query"
	"gds/snapshots"
)

// didYouMeanLimit is how many names a search without results offers.
const didYouMeanLimit = 3

// suggestion is a name offered for a search without results: the page
// for that name, in the same language and categories.
type suggestion struct {
	Name, Href string
}

// didYouMean asks the suggest route's ranking (query.View.Suggest, typos
// tolerated) for what a search without results meant: /?q=tritanuim
// offers Tritanium. Names equal to the text are left out (a strict search
// found nothing, but a contains search would).
func didYouMean(ctx context.Context, v *query.View, st state, text string, cats []snapshots.Category) []suggestion {
	res, err := v.Suggest(ctx, query.SuggestRequest{Text: text, Categories: cats, Language: st.Lang, Limit: 2 * didYouMeanLimit})
	if err != nil {
		return nil
	}
	var out []suggestion
	seen := map[string]bool{}
	for _, s := range res.Suggestions {
		key := strings.ToLower(s.Name)
		if seen[key] || len(out) == didYouMeanLimit {
			continue
		}
		seen[key] = true
		p := url.Values{"q": {s.Name}}
		if st.Lang != "en" {
			p.Set("lang", st.Lang)
		}
		if len(st.Cats) > 0 {
			p.Set("cat", joinCats(st.Cats))
		}
		out = append(out, suggestion{Name: s.Name, Href: "/?" + strings.ReplaceAll(p.Encode(), "%2C", ",")})
	}
	return out
}

func joinCats(cats []snapshots.Category) string {
	s := make([]string, len(cats))
	for i, c := range cats {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}

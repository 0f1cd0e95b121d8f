package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// A search without results offers what it meant, rendered by the server
// (so without script too): /?q=tritanuim offers Tritanium, a link to its
// search in the same language and categories.
func TestPageOffersWhatItMeant(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/?q=tritanuim", `Did you mean <a href="/?q=Tritanium">Tritanium</a>?`},
		{"/?q=tritanuim&lang=de&cat=inventory_type", `Did you mean <a href="/?cat=inventory_type&amp;lang=de&amp;q=Tritanium">Tritanium</a>?`},
		{"/?q=jita+tradre&cat=character", `Did you mean <a href="/?cat=character&amp;q=Jita&#43;Trader">Jita Trader</a>?`},
	} {
		body := do(t, http.MethodGet, c.path).Body.String()
		if !strings.Contains(body, c.want) || !strings.Contains(body, "Nothing matches") {
			t.Errorf("%s: the page lacks %s", c.path, c.want)
		}
	}
	// Results, or nothing close: no offer.
	for _, path := range []string{"/?q=tritanium", "/?q=qqqqqqqq"} {
		if body := do(t, http.MethodGet, path).Body.String(); !strings.Contains(body, `<p id="didyoumean" hidden>`) {
			t.Errorf("%s offers something", path)
		}
	}
}

//go:build browser

package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"gds/api/browsertest"
)

// Typeahead through the suggest route: a typo finds the name while typing,
// the keyboard picks it; a search without results offers what it meant,
// with script and without.
func TestBrowserSuggest(t *testing.T) {
	s := browsertest.Serve(t, browsertest.ServeOptions{})
	b, tab := openPage(t, s)

	tab.InsertText(t, "tritanuim")
	tab.WaitFor(t, "Tritanium suggested despite the typo",
		`!document.querySelector('#suggest').hidden && Array.from(document.querySelectorAll('#suggest a')).some(a => a.dataset.name === 'Tritanium' && a.dataset.match === 'typo')`, wait)
	tab.WaitFor(t, "the search itself found nothing, and says what it meant",
		`document.querySelector('#status').textContent.includes('Nothing matches') && !document.querySelector('#didyoumean').hidden && document.querySelector('#didyoumean a').textContent === 'Tritanium'`, wait)
	shoot(t, tab, "suggest-01-typo")

	// Down into the suggestions, Enter searches the name.
	tab.Key(t, kb.ArrowDown)
	tab.WaitFor(t, "focus on the first suggestion", `document.activeElement.matches('#suggest a')`, wait)
	tab.Key(t, kb.Enter)
	tab.WaitFor(t, "Tritanium searched", `document.querySelector('#q').value === 'Tritanium' && `+hasResult("Tritanium")+
		` && document.querySelector('#suggest').hidden && document.querySelector('#didyoumean').hidden`, wait)
	shoot(t, tab, "suggest-02-picked")

	// Escape closes the suggestions.
	tab.Key(t, kb.Escape) // clears the box (the page's own key)
	tab.InsertText(t, "Amar")
	tab.WaitFor(t, "suggestions for a name being typed", `!document.querySelector('#suggest').hidden`, wait)
	tab.Key(t, kb.ArrowDown)
	tab.Key(t, kb.Escape)
	tab.WaitFor(t, "suggestions closed, focus back in the box", `document.querySelector('#suggest').hidden && document.activeElement.id === 'q'`, wait)
	tab.CheckClean(t)

	// Without script, the server offers what a search meant.
	off := b.NewTab(t)
	off.DisableScript(t)
	off.Do(t, "open /?q=tritanuim without script", chromedp.Navigate(s.URL+"/?q=tritanuim"), chromedp.WaitVisible(chromedp.CSS("#didyoumean")))
	if got := browsertest.Eval[string](t, off, `document.querySelector('#didyoumean a').getAttribute('href')`); got != "/?q=Tritanium" {
		t.Errorf("did you mean links %q", got)
	}
	shoot(t, off, "suggest-03-no-script")
	off.Do(t, "follow it", chromedp.Click(chromedp.CSS("#didyoumean a")), chromedp.WaitVisible(chromedp.CSS("#results .group")))
	if got := names(t, off); len(got) == 0 || got[0] != "Tritanium" {
		t.Errorf("following the offer shows %q", got)
	}
}

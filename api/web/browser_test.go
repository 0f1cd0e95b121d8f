//go:build browser

package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"gds/api/browsertest"
)

// The search page in headless Chromium against the real binary serving the
// committed sample snapshot. Each state is photographed at a phone and a
// desktop width (browsertest.OutDir says where).

const (
	jita     = "Jita"
	jitaCNAP = "Jita IV - Moon 4 - Caldari Navy Assembly Plant"
	wait     = 30 * time.Second
)

var widths = []int64{390, 1280}

// shoot photographs the tab at both widths and returns to the desktop one.
func shoot(t *testing.T, tab *browsertest.Tab, name string) {
	t.Helper()
	for _, w := range widths {
		tab.Viewport(t, w, 900)
		tab.Screenshot(t, fmt.Sprintf("%s-%d", name, w))
	}
	tab.Viewport(t, 1280, 900)
}

// names returns the result names shown, in page order.
func names(t *testing.T, tab *browsertest.Tab) []string {
	t.Helper()
	return browsertest.Eval[[]string](t, tab, `Array.from(document.querySelectorAll('#results a.r .n')).map(e => e.textContent)`)
}

// groupIDs returns each shown category's full ID list, as the page holds it.
func groupIDs(t *testing.T, tab *browsertest.Tab) map[string]string {
	t.Helper()
	return browsertest.Eval[map[string]string](t, tab,
		`Object.fromEntries(Array.from(document.querySelectorAll('#results .group')).map(g => [g.dataset.cat, g.dataset.ids]))`)
}

func hasResult(name string) string {
	b, _ := json.Marshal(name)
	return `Array.from(document.querySelectorAll('#results a.r .n')).some(e => e.textContent === ` + string(b) + `)`
}

func location(t *testing.T, tab *browsertest.Tab) *url.URL {
	t.Helper()
	u, err := url.Parse(browsertest.Get(t, tab, "location", chromedp.Location()))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// leaveSuggestions waits until the typeahead has answered for text and,
// if it shows suggestions, goes down into them and closes them with
// Escape, which returns the focus to the box: down from the box then
// reaches the results, whenever the typeahead's answer arrived.
func leaveSuggestions(t *testing.T, tab *browsertest.Tab, text string) {
	t.Helper()
	quoted, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	tab.WaitFor(t, "the typeahead settled on "+text, `document.querySelector('#suggest').dataset.for === `+string(quoted), wait)
	if browsertest.Eval[bool](t, tab, `document.querySelector('#suggest').hidden`) {
		return
	}
	tab.Key(t, kb.ArrowDown)
	tab.WaitFor(t, "focus on the first suggestion", `document.activeElement.matches('#suggest a')`, wait)
	tab.Key(t, kb.Escape)
	tab.WaitFor(t, "suggestions closed, focus in the box", `document.querySelector('#suggest').hidden && document.activeElement.id === 'q'`, wait)
}

// openPage starts a browser on s's search page and waits until the
// search box has the focus.
func openPage(t *testing.T, s *browsertest.Server) (*browsertest.Browser, *browsertest.Tab) {
	t.Helper()
	b := browsertest.Start(t, browsertest.Options{})
	tab := b.NewTab(t)
	tab.Do(t, "open /", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#q")))
	tab.WaitFor(t, "focus in the search box", `document.activeElement && document.activeElement.id === 'q'`, wait)
	return b, tab
}

func TestBrowserSearchPage(t *testing.T) {
	s := browsertest.Serve(t, browsertest.ServeOptions{})
	// Focus on load, and the empty state.
	_, tab := openPage(t, s)
	shoot(t, tab, "01-empty")

	// Two letters explain the minimum instead of searching.
	tab.InsertText(t, "ji")
	tab.WaitFor(t, "the three-character hint", `document.querySelector('#status').textContent.includes('at least 3 characters')`, wait)
	shoot(t, tab, "02-two-letters")

	// Typing on: results as you type, grouped, highlighted, in the URL.
	tab.InsertText(t, "ta")
	tab.WaitFor(t, "Jita and the Caldari Navy plant", hasResult(jita)+" && "+hasResult(jitaCNAP), wait)
	got := names(t, tab)
	if got[0] != jita {
		t.Errorf("first result %q, want %q (an exact name ranks first): %q", got[0], jita, got)
	}
	if mark := browsertest.Eval[string](t, tab, `document.querySelector('#results a.r mark').textContent`); !strings.EqualFold(mark, "jita") {
		t.Errorf("highlighted %q, want the matched text", mark)
	}
	tab.WaitFor(t, "the text in the URL", `location.search === '?q=jita'`, wait)
	shoot(t, tab, "03-typed-jita")

	// The same results as the API gives, in its order.
	apiIDs := apiSearch(t, s.URL, "jita", "", false)
	pageIDs := groupIDs(t, tab)
	for cat, ids := range apiIDs {
		if pageIDs[cat] != ids {
			t.Errorf("%s: page %q, API %q", cat, pageIDs[cat], ids)
		}
	}
	if len(pageIDs) != len(apiIDs) {
		t.Errorf("page groups %v, API categories %v", pageIDs, apiIDs)
	}

	// Keyboard: down goes into the typeahead's suggestions while they show
	// (Jita's stations start with "Jita"), Escape there closes them and
	// returns to the box; down again reaches the first result, Enter opens
	// its details; the first is Jita the system, whose details name its
	// constellation and region, each linked to its API call.
	leaveSuggestions(t, tab, "jita")
	tab.Key(t, kb.ArrowDown)
	tab.WaitFor(t, "focus on the first result", `document.activeElement.matches('#results a.r')`, wait)
	tab.Key(t, kb.Enter)
	tab.WaitFor(t, "Jita's details", `!document.querySelector('#detail').hidden && document.querySelector('#detail h2') && document.querySelector('#detail h2').textContent === 'Jita'`, wait)
	tab.WaitFor(t, "constellation and region", `document.querySelector('#detail').textContent.includes('Kimotoro') && document.querySelector('#detail').textContent.includes('The Forge')`, wait)
	srcs := browsertest.Eval[[]string](t, tab, `Array.from(document.querySelectorAll('#detail .src a')).map(a => a.getAttribute('href'))`)
	if !slices.Contains(srcs, "/latest/universe/systems/30000142/?language=en") {
		t.Errorf("details do not link the system's API call: %q", srcs)
	}
	for _, src := range srcs {
		checkAPI(t, s.URL+src)
	}
	if u := location(t, tab); u.Query().Get("item") != "solar_system:30000142" {
		t.Errorf("details not in the URL: %s", u)
	}
	shoot(t, tab, "04-keyboard-details")

	// Escape closes the details, Back reopens them, Forward closes again.
	tab.Key(t, kb.Escape)
	tab.WaitFor(t, "details closed", `document.querySelector('#detail').hidden`, wait)
	tab.Do(t, "back", chromedp.NavigateBack())
	tab.WaitFor(t, "details back", `!document.querySelector('#detail').hidden && document.querySelector('#detail').textContent.includes('Kimotoro')`, wait)
	tab.Do(t, "forward", chromedp.NavigateForward())
	tab.WaitFor(t, "details closed again", `document.querySelector('#detail').hidden`, wait)

	// The station's details by click: system, owner, type.
	station := browsertest.Eval[string](t, tab, `Array.from(document.querySelectorAll('#results a.r')).find(a => a.querySelector('.n').textContent === '`+jitaCNAP+`').dataset.id`)
	tab.Do(t, "click the station", chromedp.Click(chromedp.CSS(`#results a.r[data-id="`+station+`"]`)))
	tab.WaitFor(t, "station details", `document.querySelector('#detail h2') && document.querySelector('#detail h2').textContent === '`+jitaCNAP+`'`, wait)
	tab.WaitFor(t, "its system", `Array.from(document.querySelectorAll('#detail a.ref')).some(a => a.textContent === 'Jita')`, wait)
	shoot(t, tab, "05-station-details")
	tab.Key(t, kb.Escape)

	// One click on a category and on Strict: new searches, new history
	// entries; Back restores the form.
	tab.Do(t, "only systems", chromedp.Click(chromedp.CSS(`input[name=cat][value=solar_system] + span`)))
	tab.WaitFor(t, "systems only", `document.querySelectorAll('#results .group').length === 1 && location.search.includes('cat=solar_system')`, wait)
	tab.Do(t, "strict", chromedp.Click(chromedp.CSS(`input[name=strict] + span`)))
	tab.WaitFor(t, "strict in the URL", `location.search.includes('strict=1')`, wait)
	if got := names(t, tab); !slices.Equal(got, []string{jita}) {
		t.Errorf("strict jita in systems: %q", got)
	}
	shoot(t, tab, "06-strict-systems")
	tab.Do(t, "back", chromedp.NavigateBack())
	tab.WaitFor(t, "strict off again", `!document.querySelector('input[name=strict]').checked && !location.search.includes('strict')`, wait)

	// Escape clears.
	tab.Do(t, "focus the box", chromedp.Focus(chromedp.CSS("#q")))
	tab.Key(t, kb.Escape)
	tab.WaitFor(t, "cleared", `document.querySelector('#q').value === '' && !document.querySelector('#results .group')`, wait)

	// Japanese: one click on ja, then トリタニウム.
	tab.Do(t, "Japanese", chromedp.Click(chromedp.CSS(`input[name=lang][value=ja] + span`)))
	tab.Do(t, "all categories", chromedp.Click(chromedp.CSS(`input[name=cat][value=solar_system] + span`)))
	tab.Do(t, "focus the box", chromedp.Focus(chromedp.CSS("#q")))
	tab.InsertText(t, "トリタニウム")
	tab.WaitFor(t, "トリタニウム", hasResult("トリタニウム"), wait)
	shoot(t, tab, "07-japanese")
	// A type's details: its description and dogma attributes.
	leaveSuggestions(t, tab, "トリタニウム")
	tab.Key(t, kb.ArrowDown)
	tab.Key(t, kb.Enter)
	tab.WaitFor(t, "the type's details", `document.querySelector('#detail h2') && document.querySelector('#detail h2').textContent === 'トリタニウム' && document.querySelector('#detail .desc')`, wait)
	shoot(t, tab, "07b-type-details")

	// Dark preference.
	tab.ColorScheme(t, "dark")
	tab.Do(t, "open a shared link", chromedp.Navigate(s.URL+"/?q=jita&cat=solar_system,station"))
	tab.WaitFor(t, "results", hasResult(jitaCNAP), wait)
	if bg := browsertest.Eval[string](t, tab, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(15, 19, 23)" {
		t.Errorf("dark preference: body background %s", bg)
	}
	shoot(t, tab, "08-dark")
	tab.ColorScheme(t, "")
	tab.CheckClean(t)
}

// A shared link renders the same results on the server, with script off
// too, as the page's script shows for it.
func TestBrowserSharedLink(t *testing.T) {
	s := browsertest.Serve(t, browsertest.ServeOptions{})
	b := browsertest.Start(t, browsertest.Options{})
	link := s.URL + "/?q=jita&lang=de&cat=solar_system,station"

	off := b.NewTab(t)
	off.DisableScript(t)
	off.Do(t, "open the link without script", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#results")))
	if on := browsertest.Eval[bool](t, off, `true`); !on {
		t.Fatal("evaluation failed") // DevTools still evaluates with page script off
	}
	server := names(t, off)
	if !slices.Contains(server, jita) || !slices.Contains(server, jitaCNAP) {
		t.Errorf("server-rendered results %q lack %q or %q", server, jita, jitaCNAP)
	}
	serverIDs := groupIDs(t, off)
	shoot(t, off, "01-shared-no-script")

	on := b.NewTab(t)
	on.Do(t, "open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#results")))
	on.WaitFor(t, "the script started", `document.activeElement && document.activeElement.id === 'q'`, wait)
	if got := names(t, on); !slices.Equal(got, server) {
		t.Errorf("with script %q, without %q", got, server)
	}
	api := apiSearch(t, s.URL, "jita", "solar_system,station", false)
	for cat, ids := range api {
		if serverIDs[cat] != ids {
			t.Errorf("%s: server render %q, API %q", cat, serverIDs[cat], ids)
		}
	}
	// Show more names the rest of a category with one names call.
	before := browsertest.Eval[int](t, on, `document.querySelectorAll('.group[data-cat=station] a.r').length`)
	on.Do(t, "show more stations", chromedp.Click(chromedp.CSS(`.group[data-cat=station] button.more`)))
	on.WaitFor(t, "every station named", `document.querySelectorAll('.group[data-cat=station] a.r').length === document.querySelector('.group[data-cat=station]').dataset.ids.split(',').length && !document.querySelector('.group[data-cat=station] button.more')`, wait)
	if after := browsertest.Eval[int](t, on, `document.querySelectorAll('.group[data-cat=station] a.r').length`); after <= before {
		t.Errorf("show more: %d stations, before %d", after, before)
	}

	// The enhanced page searches on from there.
	on.InsertText(t, " iv")
	on.WaitFor(t, "a refined search", `location.search.includes('q=jita+iv') && `+hasResult(jitaCNAP)+` && !`+hasResult(jita), wait)
	shoot(t, on, "02-shared-then-typed")
	on.CheckClean(t)
}

// Error limited (420): the page says when to try again instead of showing
// the error body.
func TestBrowserErrorLimited(t *testing.T) {
	s := browsertest.Serve(t, browsertest.ServeOptions{Args: []string{"--error-limit", "3"}})
	b := browsertest.Start(t, browsertest.Options{})
	tab := b.NewTab(t)
	tab.Do(t, "open /", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#q")))
	for i := 0; i < 3; i++ {
		resp, err := http.Get(s.URL + "/latest/search/?search=ji&categories=solar_system")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	tab.Do(t, "focus the box", chromedp.Focus(chromedp.CSS("#q")))
	tab.InsertText(t, "jita")
	tab.WaitFor(t, "when to try again", `/Try again in \d+ seconds?/.test(document.querySelector('#status').textContent)`, wait)
	shoot(t, tab, "01-error-limited")
	tab.CheckClean(t, `status of 420`)
}

// apiSearch asks the API and returns each category's IDs comma-joined.
func apiSearch(t *testing.T, base, text, cats string, strict bool) map[string]string {
	t.Helper()
	if cats == "" {
		cats = "agent,alliance,character,constellation,corporation,faction,inventory_type,region,solar_system,station"
	}
	u := fmt.Sprintf("%s/latest/search/?search=%s&categories=%s&strict=%t", base, url.QueryEscape(text), cats, strict)
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string][]int64
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v", u, resp.StatusCode, err)
	}
	out := map[string]string{}
	for cat, ids := range got {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = fmt.Sprint(id)
		}
		out[cat] = strings.Join(s, ",")
	}
	return out
}

// checkAPI asserts a linked API call answers 200.
func checkAPI(t *testing.T, u string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("linked API call %s answered %d", u, resp.StatusCode)
	}
}

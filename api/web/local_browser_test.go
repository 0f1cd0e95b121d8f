//go:build browser

package web_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"gds/api/browsertest"
	"gds/query"
	"gds/snapshots"
)

// sampleLocal is a fleet's member list from the committed sample: pilots
// of three alliances (12, 8 and 5 of them), three in no alliance and two
// names of no pilot, as the game copies it (one a line).
func sampleLocal(t *testing.T) string {
	t.Helper()
	snap, err := snapshots.Open(filepath.Join(browsertest.Root(t), "snapshots", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	byAlliance := map[int64][]string{}
	err = snap.Each(snapshots.Characters, func(rec snapshots.Record, _ snapshots.Line) error {
		c := rec.(*snapshots.Character)
		byAlliance[c.AllianceID] = append(byAlliance[c.AllianceID], c.Name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var alliances []int64
	for a := range byAlliance {
		if a != 0 {
			alliances = append(alliances, a)
		}
	}
	slices.SortFunc(alliances, func(a, b int64) int { return len(byAlliance[b]) - len(byAlliance[a]) })
	var lines []string
	for i, n := range []int{12, 8, 5} {
		lines = append(lines, byAlliance[alliances[i]][:n]...)
	}
	lines = append(lines, byAlliance[0][:3]...)
	lines = append(lines, "Nobody Flies Here", "Jita")
	return strings.Join(lines, "\n") + "\n"
}

// apiLocal is the API's answer for text.
func apiLocal(t *testing.T, base, text string) query.Local {
	t.Helper()
	resp, err := http.Post(base+"/latest/local/", "text/plain; charset=utf-8", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l query.Local
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /latest/local/: %d %v", resp.StatusCode, err)
	}
	return l
}

func localSummary(l query.Local) []string {
	var alliances, corps, pilots []string
	for _, a := range l.Alliances {
		alliances = append(alliances, a.Name)
	}
	for _, c := range l.Corporations {
		corps = append(corps, c.Name)
	}
	for _, c := range l.Characters {
		pilots = append(pilots, c.Name)
	}
	return []string{strings.Join(alliances, "|"), strings.Join(corps, "|"), strings.Join(pilots, "|"), strings.Join(l.Unknown, "|")}
}

// sections reads the page's alliances, corporations, pilots and unknown
// names, as localSummary words an answer.
func sections(t *testing.T, tab *browsertest.Tab) []string {
	t.Helper()
	return browsertest.Eval[[]string](t, tab, `['alliances', 'corporations', 'characters', 'unknown'].map(k => {
		const g = document.querySelector('#results .group[data-kind="' + k + '"]');
		if (!g) return '';
		if (k === 'unknown') return Array.from(g.querySelectorAll('li')).map(e => e.textContent).join('|');
		return Array.from(g.querySelectorAll('a.r > .n')).map(e => e.childNodes[0].textContent.trim()).join('|');
	})`)
}

// TestBrowserLocal: pasting a member list into the search box opens the
// breakdown, drawn from POST /latest/local/: the same groups as the API,
// bars for the largest, the unknown names; the keyboard moves through it;
// without script the form posts and the server renders the same.
func TestBrowserLocal(t *testing.T) {
	s := browsertest.Serve(t, browsertest.ServeOptions{})
	b := browsertest.Start(t, browsertest.Options{})
	text := sampleLocal(t)
	want := localSummary(apiLocal(t, s.URL, text))
	if want[0] == "" || want[3] != "Nobody Flies Here|Jita" {
		t.Fatalf("the sample's local: %q", want)
	}

	tab := b.NewTab(t)
	tab.Do(t, "open /", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#q")))
	tab.WaitFor(t, "focus in the search box", `document.activeElement && document.activeElement.id === 'q'`, wait)
	raw, _ := json.Marshal(text)
	// A paste as the browser fires it, with the list on the clipboard.
	browsertest.Eval[bool](t, tab, `(() => {
		const dt = new DataTransfer();
		dt.setData('text/plain', `+string(raw)+`);
		document.querySelector('#q').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
		return true;
	})()`)
	tab.Do(t, "the page changes to /local", chromedp.WaitVisible(chromedp.CSS(`#names`)))
	tab.WaitFor(t, "the breakdown at /local", `location.pathname === '/local' && document.querySelector('#results .group[data-kind="characters"]')`, wait)
	if got := sections(t, tab); !slices.Equal(got, want) {
		t.Errorf("the page shows\n%q\nthe API answers\n%q", got, want)
	}
	if v := browsertest.Eval[string](t, tab, `document.querySelector('#names').value`); v != text {
		t.Errorf("the list in the box: %q", v)
	}
	bars := browsertest.Eval[[]float64](t, tab, `Array.from(document.querySelectorAll('#results .chart meter')).map(m => m.value)`)
	if len(bars) < 4 || bars[0] != 12 || bars[1] != 8 || bars[2] != 5 {
		t.Errorf("chart bars %v, want 12, 8, 5 and the corporations in no alliance", bars)
	}
	status := browsertest.Eval[string](t, tab, `document.querySelector('#status').textContent`)
	if !strings.HasPrefix(status, "28 pilots in ") || !strings.Contains(status, "3 alliances") || !strings.Contains(status, "2 names are no pilot's") {
		t.Errorf("status %q", status)
	}
	shoot(t, tab, "10-local")

	// The keyboard: arrows move through the results (up from the first
	// goes to the list), / goes back to the list; Ctrl+Enter breaks an
	// edited list down again.
	tab.Do(t, "focus the first result", chromedp.Focus(chromedp.CSS("#results a.r")))
	tab.Key(t, kb.ArrowDown)
	tab.WaitFor(t, "the second result", `document.activeElement === document.querySelectorAll('#results a.r')[1]`, wait)
	tab.Key(t, kb.ArrowUp)
	tab.Key(t, kb.ArrowUp)
	tab.WaitFor(t, "back in the box", `document.activeElement.id === 'names'`, wait)
	tab.Do(t, "focus a result", chromedp.Focus(chromedp.CSS("#results a.r")))
	tab.Key(t, "/")
	tab.WaitFor(t, "/ goes to the box", `document.activeElement.id === 'names'`, wait)
	browsertest.Eval[bool](t, tab, `(document.querySelector('#names').setSelectionRange(1e6, 1e6), true)`)
	tab.InsertText(t, "Another Unknown\n")
	tab.Do(t, "Ctrl+Enter", chromedp.KeyEvent("\r", chromedp.KeyModifiers(2)))
	tab.WaitFor(t, "the edited list", `document.querySelector('#results .group[data-kind="unknown"] h2 .count').textContent === '3'`, wait)

	// Without script: /local is a form the server answers.
	off := b.NewTab(t)
	off.DisableScript(t)
	off.Do(t, "open /local without script", chromedp.Navigate(s.URL+"/local"), chromedp.WaitVisible(chromedp.CSS("#names")))
	off.Do(t, "fill the list", chromedp.SetValue(chromedp.CSS("#names"), text))
	off.Do(t, "submit", chromedp.Click(chromedp.CSS("#local button.go")), chromedp.WaitVisible(chromedp.CSS(`#results .group[data-kind="characters"]`)))
	if got := sections(t, off); !slices.Equal(got, want) {
		t.Errorf("without script the page shows\n%q\nthe API answers\n%q", got, want)
	}
	shoot(t, off, "11-local-no-script")
	tab.CheckClean(t)
	off.CheckClean(t)
}

// TestBrowserAffiliation: a character's result names its corporation and
// alliance with their tickers, as the script draws it (one POST
// /latest/local/ of the names shown) and as the server renders it.
func TestBrowserAffiliation(t *testing.T) {
	s := browsertest.Serve(t, browsertest.ServeOptions{})
	b := browsertest.Start(t, browsertest.Options{})
	text := sampleLocal(t)
	pilot := strings.SplitN(text, "\n", 2)[0] // of the largest alliance
	l := apiLocal(t, s.URL, pilot)
	if len(l.Characters) != 1 || len(l.Alliances) != 1 {
		t.Fatalf("%q: %+v", pilot, l)
	}
	want := l.Corporations[0].Name + " [" + l.Corporations[0].Ticker + "] · " + l.Alliances[0].Name + " <" + l.Alliances[0].Ticker + ">"

	tab := b.NewTab(t)
	tab.Do(t, "open /", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#q")))
	tab.Do(t, "only characters", chromedp.Click(chromedp.CSS(`input[name=cat][value=character] + span`)))
	tab.Do(t, "focus the box", chromedp.Focus(chromedp.CSS("#q")))
	tab.InsertText(t, pilot)
	id := l.Characters[0].CharacterID
	sel := `document.querySelector('#results a.r[data-id="` + jsonInt(id) + `"] .aff')`
	tab.WaitFor(t, "the pilot's affiliation", sel+` && `+sel+`.textContent === `+jsonString(want), wait)
	shoot(t, tab, "12-affiliation")

	off := b.NewTab(t)
	off.DisableScript(t)
	off.Do(t, "the same link without script", chromedp.Navigate(s.URL+"/?q="+strings.ReplaceAll(pilot, " ", "+")+"&cat=character"),
		chromedp.WaitVisible(chromedp.CSS("#results")))
	if got := browsertest.Eval[string](t, off, sel+`.textContent`); got != want {
		t.Errorf("server render: %q, want %q", got, want)
	}
	tab.CheckClean(t)
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

func jsonInt(n int64) string { return strconv.FormatInt(n, 10) }

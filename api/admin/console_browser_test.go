//go:build browser

package admin_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"gds/api/browsertest"
	"gds/query/analyst"
)

// The analysts' console in a real Chromium against the real binary on the
// sample snapshot, with an admin token: the page asks for the token and
// keeps it for the tab, completes field names, runs a query whose hit count
// and facet counts are the HTTP API's, draws the facets as bars, shows a
// bad field's error, and exports CSV, all without a CSP violation or a
// script error. Screenshots: api/admin/testdata/out/TestBrowserConsole/.
func TestBrowserConsole(t *testing.T) {
	const token = "console-s3cret"
	s := browsertest.Serve(t, browsertest.ServeOptions{Args: []string{"--admin-token", token}})
	api := func(params string) analyst.Result {
		t.Helper()
		req, _ := http.NewRequest("GET", s.AdminURL+"/admin/query?"+params, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var res analyst.Result
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", params, resp.StatusCode, err)
		}
		return res
	}
	b := browsertest.Start(t, browsertest.Options{Width: 1280, Height: 1000})
	tab := b.NewTab(t)
	const wait = time.Minute

	// The token: asked for, a wrong one refused, the right one kept.
	tab.Do(t, "open the console", chromedp.Navigate(s.AdminURL+"/admin/"))
	tab.WaitFor(t, "the login form", `!document.getElementById('login').hidden`, wait)
	tab.Screenshot(t, "1-login")
	tab.Do(t, "a wrong token", chromedp.SetValue(chromedp.ID("token"), "wrong"), chromedp.Click(chromedp.ID("signin")))
	tab.WaitFor(t, "the refusal", `document.getElementById('login-error').textContent.includes('refused')`, wait)
	tab.Do(t, "the token", chromedp.SetValue(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("signin")))
	tab.WaitFor(t, "the field list", `document.querySelectorAll('#field-list tbody tr').length > 20 && document.getElementById('login').hidden`, wait)
	if got := browsertest.Eval[string](t, tab, `sessionStorage.getItem('gds-admin-token')`); got != token {
		t.Errorf("sessionStorage holds %q, want the token", got)
	}
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll('#field-list tbody tr').length`); n != len(analyst.Fields()) {
		t.Errorf("the field list has %d rows, want %d", n, len(analyst.Fields()))
	}

	// Completion of a field name, then a numeric range with a facet.
	tab.Do(t, "type a field's start", chromedp.Click(chromedp.ID("q")), chromedp.SendKeys(chromedp.ID("q"), "secu"))
	tab.WaitFor(t, "the suggestion", `!document.getElementById('suggest').hidden && document.getElementById('suggest').textContent.includes('security:')`, wait)
	tab.Screenshot(t, "2-completion")
	tab.Do(t, "accept it", chromedp.KeyEvent(kb.Tab))
	if v := browsertest.Get(t, tab, "query box", chromedp.Value(chromedp.ID("q"))); v != "security:" {
		t.Fatalf("after Tab the query box holds %q, want security:", v)
	}
	tab.Do(t, "a solar system query",
		chromedp.SendKeys(chromedp.ID("q"), "<0.45"),
		chromedp.SetValue(chromedp.ID("category"), "solar_system"),
		chromedp.SetValue(chromedp.ID("fields"), "security,region_id"),
		chromedp.SetValue(chromedp.ID("facets"), "region_id"),
		chromedp.Click(chromedp.ID("run")))
	want := api("q=security:%3C0.45&category=solar_system&facets=region_id&limit=20")
	tab.WaitFor(t, "the hits", fmt.Sprintf(`document.getElementById('status').textContent.includes('of %d hit')`, want.Total), wait)
	rows := browsertest.Eval[int](t, tab, `document.querySelectorAll('#results tbody tr').length`)
	head := browsertest.Eval[string](t, tab, `document.querySelector('#results thead').textContent`)
	if rows != min(20, int(want.Total)) || !strings.Contains(head, "security") || !strings.Contains(head, "region_id") {
		t.Errorf("results table: %d rows (want %d), head %q", rows, min(20, int(want.Total)), head)
	}
	bars := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll('.bucket')].map(b => b.querySelector('.term').textContent + '=' + b.querySelector('.count').textContent)`)
	var wantBars []string
	for _, bk := range want.Facets[0].Buckets {
		wantBars = append(wantBars, fmt.Sprintf("%s=%d", bk.Term, bk.Count))
	}
	if fmt.Sprint(bars) != fmt.Sprint(wantBars) {
		t.Errorf("facet bars %v, the API's %v", bars, wantBars)
	}
	if w := browsertest.Eval[float64](t, tab, `document.querySelector('.bar').getBoundingClientRect().width`); w < 10 {
		t.Errorf("the largest bar is %v px wide", w)
	}
	tab.Screenshot(t, "3-security")

	// Two facets over every structure.
	tab.Do(t, "a structures facet query",
		chromedp.SetValue(chromedp.ID("q"), "*"),
		chromedp.SetValue(chromedp.ID("category"), "structure"),
		chromedp.SetValue(chromedp.ID("fields"), "state,reinforce_hour,power_mode"),
		chromedp.SetValue(chromedp.ID("facets"), "state,reinforce_hour"),
		chromedp.SetValue(chromedp.ID("sort"), "-reinforce_hour"),
		chromedp.Click(chromedp.ID("run")))
	tab.WaitFor(t, "two facets", `document.querySelectorAll('.facet').length === 2 && document.getElementById('status').textContent.includes('of 600 hits')`, wait)
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll('.facet')[1].querySelectorAll('.bucket').length`); n != 24 {
		t.Errorf("reinforce_hour facet has %d buckets, want 24", n)
	}
	first := browsertest.Eval[string](t, tab, `document.querySelector('#results tbody tr').children[5].textContent`)
	if first != "23" {
		t.Errorf("sorted by -reinforce_hour, the first row's hour is %q", first)
	}
	tab.Screenshot(t, "4-structure-facets")

	// Export: the page fetches with the token and hands the file over.
	tab.Do(t, "export CSV", chromedp.Click(chromedp.ID("export-csv")))
	tab.WaitFor(t, "the export", `document.getElementById('status').textContent.includes('Exported 600 hits as csv')`, wait)

	// A bad field: the API's message, on the page.
	tab.Do(t, "a bad field", chromedp.SetValue(chromedp.ID("q"), "colour:red"), chromedp.Click(chromedp.ID("run")))
	tab.WaitFor(t, "the error", `document.getElementById('error').textContent.includes('no field "colour"')`, wait)
	if browsertest.Eval[bool](t, tab, `!document.getElementById('results').hidden || document.querySelectorAll('.facet').length > 0`) {
		t.Error("the last answer's hits or facets still show beside the error")
	}
	tab.Screenshot(t, "5-bad-field")

	// 401 (the login) and 400 (the bad field) were provoked on purpose.
	tab.CheckClean(t, `status of 401`, `status of 400`)
}

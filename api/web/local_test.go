package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"gds/api"
	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

// localRecords: a fleet of five pilots in two alliances and a corporation
// in none, and a pilot whose name is hostile HTML.
func localRecords() indexertest.Records {
	char := func(id int64, name string, corp, alliance int64) snapshots.Record {
		return &snapshots.Character{Entity: indexertest.Named(id, name), CorporationID: corp, AllianceID: alliance}
	}
	return indexertest.Records{
		snapshots.Characters: {
			char(2112000001, "Ava Stone", 98000001, 99000001), char(2112000002, "Bo Reyes", 98000001, 99000001),
			char(2112000003, "Cy Lenz", 98000002, 99000001), char(2112000004, "Dee Park", 98000003, 99000002),
			char(2112000005, "Eli Fox", 98000004, 0), char(2112000006, hostileName, 98000004, 0),
		},
		snapshots.Corporations: {
			&snapshots.Corporation{Entity: indexertest.Named(98000001, "Stone Works"), Ticker: "STONE", AllianceID: 99000001},
			&snapshots.Corporation{Entity: indexertest.Named(98000002, "Lenz Optics"), Ticker: "LENZ", AllianceID: 99000001},
			&snapshots.Corporation{Entity: indexertest.Named(98000003, "Park Rangers"), Ticker: "PARK", AllianceID: 99000002},
			&snapshots.Corporation{Entity: indexertest.Named(98000004, "Fox Den"), Ticker: "FOX"},
		},
		snapshots.Alliances: {
			&snapshots.Alliance{Entity: indexertest.Named(99000001, "Northern Coalition"), Ticker: "NC"},
			&snapshots.Alliance{Entity: indexertest.Named(99000002, "Southern Pact"), Ticker: "SP"},
		},
		snapshots.SolarSystems: {&snapshots.SolarSystem{Entity: indexertest.Named(30000142, "Jita"), ConstellationID: 20000020}},
	}
}

func localServer(t testing.TB) http.Handler {
	m := indexertest.Manager(t, indexertest.Snapshot(t, localRecords()))
	return api.New(api.Deps{Views: query.New(m), Logger: zerolog.New(io.Discard), Limits: api.Limits{ErrorLimit: -1}})
}

func postLocal(t testing.TB, h http.Handler, text string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/local", strings.NewReader(url.Values{"names": {text}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// sectionRE finds a rendered section of the breakdown and its count.
var sectionRE = regexp.MustCompile(`(?s)<section class="group[^"]*"(?: data-kind="([a-z]+)")?[^>]*>\s*<h2>([^<]+)<span class="count">(\d+)</span>`)

// TestLocalPageWithoutScript: the form posts to /local and the server
// renders the breakdown: the chart, alliances, corporations, pilots (with
// their corporation and alliance) and the unknown names, HTML escaped.
func TestLocalPageWithoutScript(t *testing.T) {
	h := localServer(t)
	rec := postLocal(t, h, "Ava Stone\r\nbo reyes\n\n  Cy Lenz \nDee Park\nEli Fox\n"+hostileName+"\nJita\nNo Such Pilot\n")
	body := rec.Body.String()
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Security-Policy") != "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'" {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	var got []string
	for _, m := range sectionRE.FindAllStringSubmatch(body, -1) {
		got = append(got, strings.TrimSpace(m[2])+"="+m[3])
	}
	want := []string{"Largest groups=6", "Alliances=2", "Corporations=4", "Pilots=6", "Not a pilot’s name=2"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("sections %q, want %q", got, want)
	}
	for _, s := range []string{
		`Northern Coalition <span class="tk">&lt;NC&gt;</span></span><meter min="0" max="3" value="3">3</meter>`,
		`Fox Den <span class="tk">[FOX]</span></span><meter min="0" max="3" value="2">2</meter>`, // a corporation in no alliance
		`Stone Works <span class="tk">[STONE]</span> <span class="tk">&lt;NC&gt;</span></span><meter min="0" max="2" value="2">`,
		`Ava Stone<small class="aff">Stone Works [STONE] · Northern Coalition &lt;NC&gt;</small>`,
		`Eli Fox<small class="aff">Fox Den [FOX]</small>`,
		`&lt;img src=x onerror=&#34;alert(1)&#34;&gt;Jita Hacker&lt;/script&gt;<small class="aff">`,
		`<li>Jita</li>`, `<li>No Such Pilot</li>`,
		`6 pilots in 4 corporations and 2 alliances. 2 names are no pilot&#39;s.`,
		`href="/latest/alliances/99000001/"`, `href="/latest/characters/2112000001/"`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("the page lacks %s", s)
		}
	}
	if strings.Contains(body, `onerror="`) {
		t.Error("a name reached the page unescaped")
	}
	// The text posted stays in the box.
	if !strings.Contains(body, "No Such Pilot\n</textarea>") {
		t.Error("the posted list is not in the text box")
	}
}

func TestLocalPageErrors(t *testing.T) {
	h := localServer(t)
	for _, tc := range []struct {
		name, text string
		status     int
		want       string
	}{
		{"empty", "\n \n", 400, "no names in that text"},
		{"too many", strings.Repeat("Ava Stone\n", query.MaxLocalNames+1), 400, "more than 1000 names"},
		{"too long", "Ava Stone\n" + strings.Repeat("x", 101), 400, "Line 2 is 101 characters"},
		{"not UTF-8", "Ava\xffStone", 400, "characters no name has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := postLocal(t, h, tc.text)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) ||
				!strings.Contains(rec.Body.String(), `<p id="status" role="status" aria-live="polite" class="error">`) {
				t.Errorf("%d, want %d and %q in %.600s", rec.Code, tc.status, tc.want, rec.Body)
			}
		})
	}
	// Over the server's body limit (64 KiB by default), the API's
	// middleware refuses the form before the page reads it.
	if rec := postLocal(t, h, strings.Repeat("x", 1<<20)); rec.Code != http.StatusRequestEntityTooLarge ||
		!strings.Contains(rec.Body.String(), "larger than") {
		t.Errorf("a form of 1 MiB: %d %.300s", rec.Code, rec.Body)
	}
	// Opened, the page is the empty form; the API keeps POST /latest/local/.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/local", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `<form id="local" method="post" action="/local">`) {
		t.Errorf("GET /local: %d %.300s", rec.Code, rec.Body)
	}
	for _, path := range []string{"/latest/local/", "/local/?compatibility_date=2026-06-01"} {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader("Eli Fox"))
		req.Header.Set("Content-Type", "text/plain")
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"ticker":"FOX","count":1`) {
			t.Errorf("POST %s: %d %.300s", path, rec.Code, rec.Body)
		}
	}
}

// TestSearchShowsAffiliation: a character's search result names its
// corporation and alliance, tickers included, in the server's render.
func TestSearchShowsAffiliation(t *testing.T) {
	h := localServer(t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?q=stone", nil))
	body := rec.Body.String()
	for _, s := range []string{
		`<mark>Stone</mark><small class="aff">Stone Works [STONE] · Northern Coalition &lt;NC&gt;</small>`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("the results lack %s:\n%.2000s", s, body)
		}
	}
	// A corporation's result has none.
	if n := strings.Count(body, `class="aff"`); n != 1 {
		t.Errorf("%d affiliations shown, want 1 (the pilot's)", n)
	}
}

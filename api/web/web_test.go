package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api"
	"gds/api/web"
	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

// The page through the real API handler (api.New, so routing, compression
// and error limits are those a client meets) over a real index.

const hostileName = `<img src=x onerror="alert(1)">Jita Hacker</script>`

func records() indexertest.Records {
	char := func(id int64, name string) snapshots.Record {
		return &snapshots.Character{Entity: indexertest.Named(id, name), CorporationID: 98000001}
	}
	system := func(id int64, name string) snapshots.Record {
		return &snapshots.SolarSystem{Entity: indexertest.Named(id, name), ConstellationID: 20000020}
	}
	station := func(id int64, name string) snapshots.Record {
		return &snapshots.Station{Entity: indexertest.Named(id, name), StationDetails: snapshots.StationDetails{SystemID: 30000142, TypeID: 52678}}
	}
	return indexertest.Records{
		snapshots.Characters: {
			char(2112000001, "Jita Trader"), char(2112000002, "Mr Jita"), char(2112000003, hostileName),
			char(2112000004, "jita"),
		},
		snapshots.SolarSystems: {system(30000142, "Jita"), system(30002187, "Amarr")},
		snapshots.Stations: {
			station(60003760, "Jita IV - Moon 4 - Caldari Navy Assembly Plant"),
			station(60000361, "Jita IV - Moon 6 - Ytiri Storage"),
		},
		snapshots.Types: {
			&snapshots.Type{Entity: snapshots.Entity{ID: 34, Name: "Tritanium", Names: snapshots.Localized{
				"en": "Tritanium", "de": "Tritanium", "ja": "トリタニウム"}}, GroupID: 18},
		},
	}
}

// servers are the API over the fixture, one per test (the index closes
// when its test ends).
var servers sync.Map // testing.TB -> http.Handler

func server(t testing.TB) http.Handler {
	if h, ok := servers.Load(t); ok {
		return h.(http.Handler)
	}
	m := indexertest.Manager(t, indexertest.Snapshot(t, records()))
	h := api.New(api.Deps{Views: query.New(m), Logger: zerolog.New(io.Discard), Limits: api.Limits{ErrorLimit: -1}})
	servers.Store(t, h)
	t.Cleanup(func() { servers.Delete(t) })
	return h
}

func do(t testing.TB, method, path string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	server(t).ServeHTTP(rec, req)
	return rec
}

// groups returns each rendered category's data-ids, in page order.
var groupRE = regexp.MustCompile(`<section class="group" data-cat="([a-z_]+)" data-ids="([0-9,]*)"`)

func groups(body string) (order []string, ids map[string]string) {
	ids = map[string]string{}
	for _, m := range groupRE.FindAllStringSubmatch(body, -1) {
		order = append(order, m[1])
		ids[m[1]] = m[2]
	}
	return order, ids
}

func TestPageRendersResults(t *testing.T) {
	rec := do(t, http.MethodGet, "/?q=jita&cat=solar_system,station,character")
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET /?q=jita: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{
		`<mark>Jita</mark> IV - Moon 4 - Caldari Navy Assembly Plant`, `<mark>Jita</mark></span>`,
		`value="jita"`, `href="/latest/universe/systems/30000142/"`, `href="/latest/universe/stations/60003760/"`,
		`<input type="checkbox" name="cat" value="station" checked>`,
		`/latest/search/?search=jita&amp;categories=character,solar_system,station&amp;strict=false&amp;language=en`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if empty := do(t, http.MethodGet, "/").Body.String(); !strings.Contains(empty, `<a href="/?q=jita">Jita</a>`) {
		t.Error("the empty page suggests no search")
	}
	// An exact name first: Jita the system (and the character "jita")
	// rank above groups whose best is a prefix.
	order, _ := groups(body)
	if len(order) != 3 || order[2] != "station" {
		t.Errorf("group order %v: the stations (prefix matches only) come last", order)
	}
}

// The page searches in-process exactly as the API does: same IDs, same
// order, for contains and strict, in every language.
func TestPageRanksAsTheAPI(t *testing.T) {
	for _, c := range []struct{ text, lang, cats string }{
		{"jita", "en", ""}, {"jit", "de", "character,station"}, {"トリタニウム", "ja", ""}, {"Jita", "en", "character"},
	} {
		for _, strict := range []bool{false, true} {
			page := fmt.Sprintf("/?q=%s&lang=%s&cat=%s", url.QueryEscape(c.text), c.lang, c.cats)
			if strict {
				page += "&strict=1"
			}
			_, got := groups(do(t, http.MethodGet, page).Body.String())
			cats := c.cats
			if cats == "" {
				cats = "agent,alliance,character,constellation,corporation,faction,inventory_type,region,solar_system,station"
			}
			rec := do(t, http.MethodGet, fmt.Sprintf("/latest/search/?search=%s&categories=%s&strict=%t&language=%s",
				url.QueryEscape(c.text), cats, strict, c.lang))
			var want map[string][]int64
			if err := json.Unmarshal(rec.Body.Bytes(), &want); err != nil {
				t.Fatalf("API: %d %s", rec.Code, rec.Body)
			}
			if len(want) == 0 && !strict {
				t.Fatalf("%s: the API found nothing; the comparison would prove nothing", page)
			}
			for cat, ids := range want {
				s := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ids)), ","), "[]")
				if got[cat] != s {
					t.Errorf("%s %s: page %q, API %q", page, cat, got[cat], s)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s: page categories %v, API %v", page, got, want)
			}
		}
	}
}

func TestPageEscapesHostileInput(t *testing.T) {
	text := `"><script>alert(1)</script>`
	rec := do(t, http.MethodGet, "/?q="+url.QueryEscape(text)+"&lang=%3Cb%3E&cat=%3Cscript%3E")
	body := rec.Body.String()
	if rec.Code != http.StatusOK || strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>") {
		t.Errorf("hostile query echoed raw: %d\n%s", rec.Code, body)
	}
	if !strings.Contains(body, `value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`) {
		t.Errorf("the text is not kept, escaped, in the search box:\n%s", body)
	}
	// A hostile name from the data is text too.
	body = do(t, http.MethodGet, "/?q=hacker&cat=character").Body.String()
	if strings.Contains(body, `<img src=x`) || !strings.Contains(body, `&lt;img src=x onerror=&#34;alert(1)&#34;&gt;Jita <mark>Hacker</mark>&lt;/script&gt;`) {
		t.Errorf("a hostile name is not escaped:\n%s", body)
	}
}

func TestPageExplainsShortText(t *testing.T) {
	for text, want := range map[string]string{
		"ji":                      "Type at least 3 characters",
		"  j  ":                   "you typed 1",
		strings.Repeat("a", 300):  "no name is longer than 256",
		"":                        "Results appear as you type",
		"ji\x00ta":                "characters no name has",
		string([]byte{'j', 0xff}): "characters no name has",
	} {
		rec := do(t, http.MethodGet, "/?q="+url.QueryEscape(text))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("q=%q: %d, want a page saying %q", text, rec.Code, want)
		}
		if order, _ := groups(rec.Body.String()); len(order) > 0 {
			t.Errorf("q=%q: results rendered", text)
		}
	}
}

var (
	scriptRE = regexp.MustCompile(`(?i)<script\b[^>]*>`)
	inlineRE = regexp.MustCompile(`(?i)<[^>]*\s(style|on[a-z]+)=`)
)

// The policy is strict and the page needs nothing it forbids: every script
// is a file of this origin, no inline script, style or handler attributes.
func TestPageSecurityHeaders(t *testing.T) {
	for _, path := range []string{"/", "/?q=jita", "/assets/app.js", "/local", "/assets/local.js"} {
		rec := do(t, http.MethodGet, path)
		h := rec.Header()
		if h.Get("Content-Security-Policy") != web.CSP || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(web.CSP, directive) {
			t.Errorf("CSP lacks %s", directive)
		}
	}
	if strings.Contains(web.CSP, "unsafe") {
		t.Errorf("CSP allows unsafe sources: %s", web.CSP)
	}
	for path, want := range map[string][]string{"/?q=jita": {"app.js", "local.js", "suggest.js"}, "/local": {"local.js"}} {
		body := do(t, http.MethodGet, path).Body.String()
		scripts := scriptRE.FindAllString(body, -1)
		if len(scripts) != len(want) {
			t.Errorf("%s: scripts: %q", path, scripts)
		}
		for i, s := range scripts {
			if i < len(want) && !strings.Contains(s, `src="/assets/`+want[i]+`?v=`) {
				t.Errorf("%s: script %q, want %s", path, s, want[i])
			}
		}
		if strings.Contains(body, "<style") || inlineRE.MatchString(body) {
			t.Errorf("%s: inline style or handler in the page: %q", path, inlineRE.FindAllString(body, -1))
		}
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s: the page names another origin", path)
		}
	}
}

func TestAssetsETag(t *testing.T) {
	page := do(t, http.MethodGet, "/").Body.String()
	link := regexp.MustCompile(`/assets/app\.css\?v=[0-9a-f]+`).FindString(page)
	if link == "" {
		t.Fatal("the page links no stylesheet")
	}
	for _, c := range []struct{ path, ctype, cache string }{
		{link, "text/css", "immutable"},
		{"/assets/app.js", "javascript", "no-cache"},
		{"/assets/favicon.svg", "image/svg+xml", "no-cache"},
	} {
		rec := do(t, http.MethodGet, c.path)
		etag := rec.Header().Get("ETag")
		if rec.Code != http.StatusOK || etag == "" || rec.Body.Len() == 0 ||
			!strings.Contains(rec.Header().Get("Content-Type"), c.ctype) || !strings.Contains(rec.Header().Get("Cache-Control"), c.cache) {
			t.Errorf("GET %s: %d %v", c.path, rec.Code, rec.Header())
			continue
		}
		if rec := do(t, http.MethodGet, c.path, "If-None-Match", etag); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
			t.Errorf("GET %s If-None-Match %s: %d, want 304", c.path, etag, rec.Code)
		}
		if rec := do(t, http.MethodGet, c.path, "If-None-Match", `"other"`); rec.Code != http.StatusOK {
			t.Errorf("GET %s with a stale ETag: %d", c.path, rec.Code)
		}
	}
	// Compressed for clients that take gzip, like the API's answers.
	if rec := do(t, http.MethodGet, "/assets/app.js", "Accept-Encoding", "gzip"); rec.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("app.js not compressed: %v", rec.Header())
	}
}

func TestPageHeadAndGet(t *testing.T) {
	for _, path := range []string{"/", "/?q=jita", "/assets/app.js", "/assets/app.css"} {
		get, head := do(t, http.MethodGet, path), do(t, http.MethodHead, path)
		if get.Code != http.StatusOK || head.Code != http.StatusOK {
			t.Errorf("%s: GET %d, HEAD %d", path, get.Code, head.Code)
		}
		if head.Body.Len() != 0 && head.Body.Len() != get.Body.Len() {
			t.Errorf("HEAD %s: body of %d bytes", path, head.Body.Len())
		}
	}
	if rec := do(t, http.MethodPost, "/"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", rec.Code)
	}
}

func TestUnknownAsset(t *testing.T) {
	for _, path := range []string{"/assets/nope.js", "/assets/page.html", "/assets/", "/assets/../web.go"} {
		rec := do(t, http.MethodGet, path)
		var body struct{ Error string }
		if rec.Code != http.StatusNotFound || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error == "" {
			t.Errorf("GET %s: %d %q, want a 404 JSON error", path, rec.Code, rec.Body)
		}
	}
}

// The page stays small: everything embedded, under 100 KB.
func TestAssetsSmall(t *testing.T) {
	if n := web.Size(); n > 100<<10 {
		t.Errorf("embedded assets are %d bytes, more than 100 KB", n)
	}
}

// The API's own routes are not taken by the page, nor the page by them.
func TestPageLeavesTheAPIAlone(t *testing.T) {
	if rec := do(t, http.MethodGet, "/latest/search/?search=jita&categories=solar_system"); rec.Code != http.StatusOK ||
		!strings.Contains(rec.Body.String(), "30000142") {
		t.Errorf("API search: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, http.MethodGet, "/nope"); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"error"`) {
		t.Errorf("unknown path: %d %s", rec.Code, rec.Body)
	}
}

// FuzzPage: any URL state renders a 200 page that never echoes markup raw.
func FuzzPage(f *testing.F) {
	for _, s := range []string{"q=jita", "q=ji", "q=%3Cscript%3E&lang=ja&strict=1&cat=station,,x", "q=%ff%fe", "cat=&cat=agent&strict=true",
		"q=" + strings.Repeat("%E3%83%88", 100), "q=jita&lang=en-us", "%zz"} {
		f.Add(s)
	}
	h := server(f)
	f.Fuzz(func(t *testing.T, raw string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.RawQuery = raw
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("?%s: %d %s", raw, rec.Code, rec.Body)
		}
		if q := req.URL.Query().Get("q"); strings.ContainsAny(q, "<>") && strings.Contains(rec.Body.String(), q) {
			t.Fatalf("?%s: the text is echoed unescaped", raw)
		}
	})
}

// A server-rendered search spends the search budget it is given: once the
// limit refuses, the page says how long to wait, with 429 and Retry-After;
// a page without search text spends nothing. Before any generation is
// live the page says so with 503.
func TestPageSearchLimit(t *testing.T) {
	m := indexertest.Manager(t, indexertest.Snapshot(t, records()))
	calls := 0
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	web.Register(e, web.Deps{Views: query.New(m), SearchLimit: func(c *gin.Context) (time.Duration, bool) {
		calls++
		return 41500 * time.Millisecond, calls <= 2
	}})
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	for i := 0; i < 2; i++ {
		if rec := get("/?q=jita"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "<mark>Jita</mark>") {
			t.Fatalf("search %d within the budget: %d", i, rec.Code)
		}
	}
	if rec := get("/"); rec.Code != http.StatusOK || calls != 2 {
		t.Errorf("the empty page: %d, %d searches charged", rec.Code, calls)
	}
	rec := get("/?q=jita")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "42" ||
		!strings.Contains(rec.Body.String(), "Try again in 42 seconds") || strings.Contains(rec.Body.String(), "<mark>") {
		t.Errorf("over the budget: %d %v", rec.Code, rec.Header())
	}

	e = gin.New()
	web.Register(e, web.Deps{})
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?q=jita", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "still being built") {
		t.Errorf("no generation: %d %v", rec.Code, rec.Header())
	}
}

package api

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/api/auth"
	"gds/api/ratelimit"
	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query"
	"gds/snapshots"
)

// Characters of the search fixture.
const (
	pilotA    = 2112000001 // on the access list of two structures
	pilotB    = 2112000002 // on the access list of one
	pilotNone = 2112000003 // on none
)

// searchRecords is a small universe with the names the search tests need.
func searchRecords() indexertest.Records {
	char := func(id int64, name string) snapshots.Record {
		return &snapshots.Character{Entity: indexertest.Named(id, name), CorporationID: 98000001}
	}
	system := func(id int64, name string) snapshots.Record {
		return &snapshots.SolarSystem{Entity: indexertest.Named(id, name), ConstellationID: 20000020}
	}
	structure := func(id int64, name string, access ...int64) snapshots.Record {
		return &snapshots.Structure{ID: id, Name: name, TypeID: 35832, CorporationID: 98000001,
			SystemID: 30000142, State: "shield_vulnerable", Access: access}
	}
	return indexertest.Records{
		snapshots.Characters: {
			char(pilotA, "Jita Trader"),
			char(pilotB, "Mr Jita"),
			char(pilotNone, "Amarr Pilot"),
			char(2112000004, "jita"),
		},
		snapshots.SolarSystems: {
			system(30000142, "Jita"),
			system(30002187, "Amarr"),
		},
		snapshots.Types: {
			&snapshots.Type{Entity: snapshots.Entity{ID: 34, Name: "Tritanium", Names: snapshots.Localized{
				"en": "Tritanium", "de": "Tritanium", "ja": "トリタニウム", "ru": "Тританий"}}, GroupID: 18},
			&snapshots.Type{Entity: snapshots.Entity{ID: 35, Name: "Pyerite", Names: snapshots.Localized{
				"en": "Pyerite", "de": "Pyerit"}}, GroupID: 18},
		},
		snapshots.Structures: {
			structure(1000000000001, "Jita - Freeport", pilotA, pilotB),
			structure(1000000000002, "Jita - Keep", pilotA),
		},
	}
}

func TestSearchAnswers(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	for _, tc := range []struct {
		name, path string
		headers    []string
		want       string
	}{
		{"contains, ranked", "/v2/search/?search=jita&categories=character", nil,
			`{"character":[2112000004,2112000001,2112000002]}`},
		{"latest alias", "/latest/search/?search=jita&categories=character&strict=true", nil,
			`{"character":[2112000004]}`},
		{"only categories with matches, in canonical order", "/v2/search/?search=jita&categories=solar_system,inventory_type,character", nil,
			`{"character":[2112000004,2112000001,2112000002],"solar_system":[30000142]}`},
		{"nothing matches", "/v2/search/?search=zzzz&categories=character,region", nil, `{}`},
		// As clients generated from ESI's 2025 document send the list.
		{"categories exploded", "/v2/search/?search=jita&categories=solar_system&categories=inventory_type&categories=character", nil,
			`{"character":[2112000004,2112000001,2112000002],"solar_system":[30000142]}`},
		{"text is trimmed", "/v2/search/?search=%20%20amarr%20&categories=solar_system&strict=true", nil,
			`{"solar_system":[30002187]}`},
		{"explicit datasource", "/v2/search/?search=amarr&categories=solar_system&datasource=tranquility", nil,
			`{"solar_system":[30002187]}`},
		{"public search sees no structures even by name", "/v2/search/?search=freeport&categories=character", nil, `{}`},
		{"language parameter", "/v2/search/?search=pyerit&categories=inventory_type&language=de&strict=true", nil,
			`{"inventory_type":[35]}`},
		{"language parameter beats Accept-Language", "/v2/search/?search=pyerite&categories=inventory_type&language=en-us",
			[]string{"Accept-Language", "de"}, `{"inventory_type":[35]}`},
		{"Accept-Language picks the highest q", "/v2/search/?search=pyerit&categories=inventory_type&strict=true",
			[]string{"Accept-Language", "en;q=0.5, de-DE;q=0.9, xx;q=1"}, `{"inventory_type":[35]}`},
		{"Accept-Language without supported languages is en", "/v2/search/?search=pyerite&categories=inventory_type",
			[]string{"Accept-Language", "xx, tlh;q=0.8"}, `{"inventory_type":[35]}`},
		{"Japanese", "/v2/search/?search=%E3%82%BF%E3%83%8B%E3%82%A6&categories=inventory_type&language=ja", nil,
			`{"inventory_type":[34]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(http.MethodGet, tc.path, nil, tc.headers...)
			if rec.Code != http.StatusOK || rec.Body.String() != tc.want {
				t.Fatalf("got %d %s, want 200 %s", rec.Code, rec.Body, tc.want)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestSearchLanguageHeader(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	for _, tc := range []struct {
		query, acceptLanguage, want string
	}{
		{"", "", "en"},
		{"", "de", "de"},
		{"", "fr;q=0.1, ru;q=0.7, de;q=0.3", "ru"},
		{"", "ja, de", "ja"},
		{"", "zh-CN;q=0.9, en-US;q=0.95", "en"},
		{"", "de;q=0, fr;q=0.2", "fr"},
		{"", "de;q=nope, es", "es"},
		{"ko", "de", "ko"},
		{"en-us", "ja", "en"},
	} {
		path := "/v2/search/?search=jita&categories=character"
		if tc.query != "" {
			path += "&language=" + tc.query
		}
		rec := ts.do(http.MethodGet, path, nil, "Accept-Language", tc.acceptLanguage)
		if got := rec.Header().Get("Content-Language"); rec.Code != http.StatusOK || got != tc.want {
			t.Errorf("language=%q Accept-Language %q: %d Content-Language %q, want %q", tc.query, tc.acceptLanguage, rec.Code, got, tc.want)
		}
	}
}

func TestSearchParameterErrors(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) { d.Limits.ErrorLimit, d.Limits.RateLimitsOff = -1, true })
	publicList := "agent, alliance, character, constellation, corporation, faction, inventory_type, region, solar_system, station"
	for _, tc := range []struct {
		name, query, want string
	}{
		{"search missing", "categories=character", "search: required, the text to look for (at least 3 characters)"},
		{"search too short", "search=ab&categories=character", "search: must be at least 3 characters"},
		{"search too short after trimming", "search=%20ab%20%20&categories=character", "search: must be at least 3 characters"},
		{"search empty", "search=&categories=character", "search: must be at least 3 characters"},
		{"search invalid UTF-8", "search=ab%FF%FE&categories=character", "search: must be valid UTF-8"},
		{"search with NUL", "search=abc%00&categories=character", "search: must not contain NUL characters"},
		{"search too long", "search=" + strings.Repeat("x", 257) + "&categories=character", "search: must be at most 256 characters"},
		{"search twice", "search=jita&search=amarr&categories=character", "search: given 2 times, send it once"},
		{"categories missing", "search=jita", "categories: required, a comma-separated list of " + publicList},
		{"categories empty", "search=jita&categories=", "categories: required, a comma-separated list of " + publicList},
		{"categories unknown", "search=jita&categories=foo", `categories: "foo" is not one of ` + publicList},
		{"categories case matters", "search=jita&categories=Character", `categories: "Character" is not one of ` + publicList},
		{"categories empty item", "search=jita&categories=character,,region", `categories: empty item in "character,,region"; separate names with single commas`},
		{"categories trailing comma", "search=jita&categories=character,", `categories: empty item in "character,"; separate names with single commas`},
		{"categories repeated", "search=jita&categories=character,region,character", `categories: "character" is given more than once`},
		{"categories too many", "search=jita&categories=" + strings.Repeat("agent,", 10) + "agent", "categories: at most 10 categories, got 11"},
		{"structure is not public", "search=jita&categories=structure", `categories: "structure" is not one of ` + publicList},
		{"categories exploded, one twice", "search=jita&categories=agent&categories=region,agent", `categories: "agent" is given more than once`},
		{"strict not a boolean", "search=jita&categories=character&strict=yes", `strict: must be true or false, got "yes"`},
		{"strict capitalized", "search=jita&categories=character&strict=True", `strict: must be true or false, got "True"`},
		{"strict empty", "search=jita&categories=character&strict=", `strict: must be true or false, got ""`},
		{"language unknown", "search=jita&categories=character&language=tlh", `language: "tlh" is not one of en, en-us, de, fr, ja, ru, zh, ko, es`},
		{"datasource", "search=jita&categories=character&datasource=singularity", `datasource: "singularity" is not one of tranquility`},
		{"malformed query string", "search=jita&categories=character&x=%zz", `query string: invalid URL escape "%zz"`},
		{"long values are cut short", "search=jita&categories=" + strings.Repeat("y", 100), `categories: "` + strings.Repeat("y", 64) + `"… is not one of ` + publicList},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(http.MethodGet, "/v2/search/?"+tc.query, nil)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d %s, want 400", rec.Code, rec.Body)
			}
			if got := errorOf(t, rec); got != tc.want {
				t.Errorf("error %q\nwant  %q", got, tc.want)
			}
		})
	}
}

func TestCharacterSearchCategories(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	tokA := ts.token(pilotA, ScopeSearchStructures)
	all := strings.Join(categoryStrings(characterCategories), ",")
	rec := ts.do(http.MethodGet, "/v3/characters/2112000001/search/?search=jita&categories="+all, nil, bearer(tokA)...)
	want := `{"character":[2112000004,2112000001,2112000002],"solar_system":[30000142],"structure":[1000000000002,1000000000001]}`
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Fatalf("got %d %s, want %s", rec.Code, rec.Body, want)
	}
	rec = ts.do(http.MethodGet, "/v3/characters/2112000001/search/?search=jita&categories="+all+",agent", nil, bearer(tokA)...)
	if rec.Code != http.StatusBadRequest || errorOf(t, rec) != "categories: at most 11 categories, got 12" {
		t.Fatalf("12 categories: %d %s", rec.Code, rec.Body)
	}
}

func categoryStrings(cats []snapshots.Category) []string {
	out := make([]string, len(cats))
	for i, c := range cats {
		out[i] = string(c)
	}
	return out
}

func TestCharacterSearchStructureAccess(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	for _, tc := range []struct {
		character int64
		want      string
	}{
		{pilotA, `{"structure":[1000000000002,1000000000001]}`},
		{pilotB, `{"structure":[1000000000001]}`},
		{pilotNone, `{}`},
	} {
		path := "/latest/characters/" + strconv.FormatInt(tc.character, 10) + "/search/?search=jita&categories=structure"
		rec := ts.do(http.MethodGet, path, nil, bearer(ts.token(tc.character, ScopeSearchStructures))...)
		if rec.Code != http.StatusOK || rec.Body.String() != tc.want {
			t.Errorf("character %d: got %d %s, want %s", tc.character, rec.Code, rec.Body, tc.want)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "private, max-age=3600" {
			t.Errorf("character %d: Cache-Control %q", tc.character, cc)
		}
	}
}

var otherKeyOnce = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func TestCharacterSearchAuth(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) { d.Limits.ErrorLimit, d.Limits.RateLimitsOff = -1, true })
	const path = "/v3/characters/2112000001/search/?search=jita&categories=structure"
	other := otherKeyOnce()
	forged := auth.SigningKey{ID: ts.key.ID, Private: other} // right kid, wrong key
	stranger := auth.NewSigningKey(other)                    // a kid the server does not know
	sign := func(key auth.SigningKey, o auth.MintOptions) string {
		o.Now = ts.clock.Now()
		tok, err := auth.Mint(key, o)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	scope := []string{ScopeSearchStructures}
	for _, tc := range []struct {
		name    string
		path    string
		headers []string
		status  int
		want    string // prefix of the error message
	}{
		{"ok with header", path, bearer(ts.token(pilotA, ScopeSearchStructures)), 200, ""},
		{"ok with token parameter", path + "&token=" + ts.token(pilotA, "other.scope", ScopeSearchStructures), nil, 200, ""},
		{"missing", path, nil, 401, auth.ErrNoToken.Error()},
		{"malformed header", path, []string{"Authorization", "Basic abc"}, 401, auth.ErrBadHeader.Error()},
		{"malformed token", path, bearer("not.a.jwt"), 401, auth.ErrMalformed.Error()},
		{"expired", path, bearer(ts.mint(auth.MintOptions{CharacterID: pilotA, Scopes: scope,
			Now: ts.clock.Now().Add(-time.Hour), TTL: 20 * time.Minute})), 401, auth.ErrExpired.Error()},
		{"bad signature", path, bearer(sign(forged, auth.MintOptions{CharacterID: pilotA, Scopes: scope})), 401, auth.ErrBadSignature.Error()},
		{"unknown kid", path, bearer(sign(stranger, auth.MintOptions{CharacterID: pilotA, Scopes: scope})), 401, auth.ErrUnknownKey.Error()},
		{"wrong issuer", path, bearer(ts.mint(auth.MintOptions{CharacterID: pilotA, Scopes: scope, Issuer: "login.example.com"})), 401, auth.ErrWrongIssuer.Error()},
		{"missing scope", path, bearer(ts.token(pilotA, "esi-search.other.v1")), 403, "token does not grant the scope esi-search.search_structures.v1"},
		{"no scopes", path, bearer(ts.token(pilotA)), 403, "token does not grant the scope esi-search.search_structures.v1"},
		{"other character", path, bearer(ts.token(pilotB, ScopeSearchStructures)), 403, "token is for character 2112000002, not 2112000001"},
		{"character_id not a number", "/v3/characters/abc/search/?search=jita&categories=structure",
			bearer(ts.token(pilotA, ScopeSearchStructures)), 400, `character_id: must be a positive integer up to 9007199254740992, got "abc"`},
		{"character_id zero", "/v3/characters/0/search/?search=jita&categories=structure", nil, 400, "character_id: must be a positive integer"},
		{"character_id negative", "/v3/characters/-5/search/?search=jita&categories=structure", nil, 400, "character_id: must be a positive integer"},
		{"character_id too large", "/v3/characters/9007199254740993/search/?search=jita&categories=structure", nil, 400, "character_id: must be a positive integer"},
		{"character_id beyond int64", "/v3/characters/99999999999999999999/search/?search=jita&categories=structure", nil, 400, "character_id: must be a positive integer"},
		{"character_id with sign", "/v3/characters/+2112000001/search/?search=jita&categories=structure", nil, 400, "character_id: must be a positive integer"},
		{"character_id leading zero", "/v3/characters/02112000001/search/?search=jita&categories=structure", nil, 400, "character_id: must be a positive integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(http.MethodGet, tc.path, nil, tc.headers...)
			if rec.Code != tc.status {
				t.Fatalf("status %d %s, want %d", rec.Code, rec.Body, tc.status)
			}
			if tc.status == 200 {
				if rec.Body.String() != `{"structure":[1000000000002,1000000000001]}` {
					t.Errorf("body %s", rec.Body)
				}
				return
			}
			if got := errorOf(t, rec); !strings.HasPrefix(got, tc.want) {
				t.Errorf("error %q, want prefix %q", got, tc.want)
			}
			if tc.status == 401 && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

// A token for A must never search as B, whatever path spelling is used.
func TestCharacterSearchCannotImpersonate(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	tokA := ts.token(pilotA, ScopeSearchStructures)
	for _, path := range []string{
		"/v3/characters/2112000002/search/?search=jita&categories=structure",
		"/latest/characters/2112000002/search/?search=jita&categories=structure",
		"/v3/characters/2112000002/search/?search=jita&categories=structure&token=" + ts.token(pilotB, ScopeSearchStructures),
	} {
		rec := ts.do(http.MethodGet, path, nil, bearer(tokA)...)
		if rec.Code != http.StatusForbidden || errorOf(t, rec) != "token is for character 2112000001, not 2112000002" {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}

func TestSearchVersions(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	tok := ts.token(pilotA, ScopeSearchStructures)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/v2/search/?search=jita&categories=character", 200},
		{"/latest/search/?search=jita&categories=character", 200},
		{"/v1/search/?search=jita&categories=character", 404},
		{"/v3/search/?search=jita&categories=character", 404},
		// One lasting version answers under every label, as in ESI.
		{"/legacy/search/?search=jita&categories=character", 200},
		{"/dev/search/?search=jita&categories=character", 200},
		{"/dev/characters/2112000001/search/?search=jita&categories=character", 200},
		// Unprefixed without a date: the oldest listed date, as ESI.
		{"/search/?search=jita&categories=character", 200},
		{"/v3/characters/2112000001/search/?search=jita&categories=character", 200},
		{"/latest/characters/2112000001/search/?search=jita&categories=character", 200},
		{"/v2/characters/2112000001/search/?search=jita&categories=character", 404},
	} {
		rec := ts.do(http.MethodGet, tc.path, nil, bearer(tok)...)
		if rec.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.path, rec.Code, rec.Body, tc.status)
		}
		if rec.Code == 200 && rec.Header().Get("Warning") != "" {
			t.Errorf("%s: Warning %q on a latest version", tc.path, rec.Header().Get("Warning"))
		}
		if rec.Code != 200 {
			errorOf(t, rec)
		}
	}
}

func TestSearchNotReady(t *testing.T) {
	m := emptyManager(t)
	ts := newTestServer(t, searchRecords(), func(d *Deps) { d.Views = query.New(m) })
	rec := ts.do(http.MethodGet, "/v2/search/?search=jita&categories=character", nil)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("got %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	errorOf(t, rec)
}

func TestConcurrencyCap(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Limits.MaxConcurrentSearches = 1
	})
	release := holdSearchSlot(t, ts) // the first search holds the only slot
	rec := ts.do(http.MethodGet, "/v2/search/?search=amarr&categories=character", nil)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("second search: %d Retry-After %q, want 503 and 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	if msg := errorOf(t, rec); msg != "too many searches at once; retry in a second" {
		t.Errorf("message %q", msg)
	}
	// Parameter errors are answered without a slot.
	if rec := ts.do(http.MethodGet, "/v2/search/?search=a&categories=character", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("bad parameters while full: %d", rec.Code)
	}
	if code := release(); code != http.StatusOK {
		t.Errorf("first search: %d", code)
	}
	if rec := ts.do(http.MethodGet, "/v2/search/?search=amarr&categories=character", nil); rec.Code != http.StatusOK {
		t.Errorf("after the slot is free: %d", rec.Code)
	}
}

// A cached answer needs no search slot: it is served while every slot is
// taken, when a search would be shed.
func TestCachedAnswersSkipTheGate(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Limits.MaxConcurrentSearches = 1
		d.Limits.SearchQueueWait = -1
	})
	if rec := ts.do(http.MethodGet, "/v2/search/?search=amarr&categories=character", nil); rec.Code != http.StatusOK {
		t.Fatalf("warming the cache: %d", rec.Code)
	}
	release := holdSearchSlot(t, ts)
	if rec := ts.do(http.MethodGet, "/v2/search/?search=amarr&categories=character", nil); rec.Code != http.StatusOK {
		t.Errorf("cached search while the slot is taken: %d, want 200", rec.Code)
	}
	if rec := ts.do(http.MethodGet, "/v2/search/?search=perimeter&categories=character", nil); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("uncached search while the slot is taken: %d, want 503", rec.Code)
	}
	if code := release(); code != http.StatusOK {
		t.Errorf("first search: %d", code)
	}
}

// A search arriving while every slot is taken waits up to the queue wait
// and runs as soon as a slot frees.
func TestConcurrencyCapQueues(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Limits.MaxConcurrentSearches = 1
		d.Limits.SearchQueueWait = time.Minute
	})
	release := holdSearchSlot(t, ts)
	second := make(chan int)
	go func() {
		second <- ts.do(http.MethodGet, "/v2/search/?search=amarr&categories=character", nil).Code
	}()
	select {
	case code := <-second:
		t.Fatalf("second search answered %d while the only slot was taken", code)
	case <-time.After(50 * time.Millisecond):
	}
	if a, b := release(), <-second; a != http.StatusOK || b != http.StatusOK {
		t.Errorf("first %d, queued second %d; want 200 and 200", a, b)
	}
}

// holdSearchSlot starts a public search on ts that takes a slot and
// holds it until release, which returns that search's status.
func holdSearchSlot(t *testing.T, ts *testServer) (release func() int) {
	var once sync.Once
	entered, held := make(chan struct{}), make(chan struct{})
	searchHook = func() {
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-held
		}
	}
	t.Cleanup(func() { searchHook = nil })
	done := make(chan int)
	go func() {
		done <- ts.do(http.MethodGet, "/v2/search/?search=jita&categories=character", nil).Code
	}()
	<-entered
	return func() int {
		close(held)
		return <-done
	}
}

// emptyManager is a real Manager that has built nothing yet.
func emptyManager(t *testing.T) *indexer.Manager {
	m, err := indexer.Open(indexer.Options{DataDir: filepath.Join(t.TempDir(), "data"), Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// BenchmarkSearchCached is the hot path: a repeated public search answered
// from the response cache through every middleware, with the rate limiter
// off and on. Requests come from 4,096 client addresses in turn, with the
// budget of 4,096 tokens an hour, so no bucket runs dry (2,048 answers
// each) and both runs serve only 200s.
func BenchmarkSearchCached(b *testing.B) {
	reqs := make([]*http.Request, 4096)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/v2/search/?search=jita&categories=character,solar_system", nil)
		reqs[i].RemoteAddr = fmt.Sprintf("10.0.%d.%d:1234", i>>8, i&0xff)
	}
	for _, on := range []bool{false, true} {
		name := "limiter-off"
		if on {
			name = "limiter-on"
		}
		b.Run(name, func(b *testing.B) {
			ts := newTestServer(b, searchRecords(), func(d *Deps) {
				d.Limits.RateLimitsOff = !on
				d.Limits.RateLimits = map[string]ratelimit.Limit{RateGroupSearch: {MaxTokens: 4096, Window: time.Hour}}
			})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				rec := httptest.NewRecorder()
				ts.h.ServeHTTP(rec, reqs[i%len(reqs)])
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

// BenchmarkSearchUncached searches the index on every request.
func BenchmarkSearchUncached(b *testing.B) {
	ts := newTestServer(b, searchRecords(), func(d *Deps) { d.Limits.CacheBytes, d.Limits.RateLimitsOff = -1, true })
	req := httptest.NewRequest(http.MethodGet, "/v2/search/?search=jita&categories=character,solar_system", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		ts.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

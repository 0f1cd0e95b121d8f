package api

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

// countingMetrics records what the API reports.
type countingMetrics struct {
	mu                                          sync.Mutex
	hits, misses, limited, rateLimited, searchs int
	requests                                    []observedRequest
}

type observedRequest struct {
	route, version string
	status         int
}

func (m *countingMetrics) ObserveRequest(route, version string, status int, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, observedRequest{route, version, status})
}

func (m *countingMetrics) SearchStats(candidates, verified int) { m.add(&m.searchs) }
func (m *countingMetrics) CacheHit()                            { m.add(&m.hits) }
func (m *countingMetrics) CacheMiss()                           { m.add(&m.misses) }
func (m *countingMetrics) ErrorLimited()                        { m.add(&m.limited) }
func (m *countingMetrics) RateLimited(string)                   { m.add(&m.rateLimited) }

func (m *countingMetrics) add(n *int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*n++
}

func (m *countingMetrics) counts() (hits, misses, searches int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits, m.misses, m.searchs
}

func withMetrics(m Metrics) func(*Deps) { return func(d *Deps) { d.Metrics = m } }

func TestSearchCacheHeaders(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	rec := ts.do(http.MethodGet, "/v2/search/?search=jita&categories=character", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	h := rec.Header()
	if got := h.Get("Cache-Control"); got != "public, max-age=3600" {
		t.Errorf("Cache-Control %q", got)
	}
	if got, want := h.Get("Expires"), testEpoch.Add(time.Hour).Format(http.TimeFormat); got != want {
		t.Errorf("Expires %q, want %q", got, want)
	}
	lm, err := http.ParseTime(h.Get("Last-Modified"))
	if err != nil {
		t.Fatalf("Last-Modified %q: %v", h.Get("Last-Modified"), err)
	}
	if created := ts.manager.Live().Created; !lm.Equal(created.Truncate(time.Second)) {
		t.Errorf("Last-Modified %v, want the generation's %v", lm, created)
	}
	etag := h.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
		t.Errorf("ETag %q is not a strong tag", etag)
	}
	if vary := strings.Join(h.Values("Vary"), ", "); !strings.Contains(vary, "Accept-Encoding") || !strings.Contains(vary, "Accept-Language") {
		t.Errorf("Vary %q", vary)
	}

	ts.clock.Add(10 * time.Minute)
	rec = ts.do(http.MethodGet, "/v2/search/?search=jita&categories=character", nil)
	if got, want := rec.Header().Get("Expires"), testEpoch.Add(70*time.Minute).Format(http.TimeFormat); got != want {
		t.Errorf("Expires follows the clock: %q, want %q", got, want)
	}
	if rec.Header().Get("ETag") != etag {
		t.Errorf("same request, same generation, different ETag")
	}
}

func TestSearchETagIdentifiesTheRequest(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	tok := ts.token(pilotA, ScopeSearchStructures)
	tags := map[string]string{}
	for _, path := range []string{
		"/v2/search/?search=jita&categories=character",
		"/v2/search/?search=jita&categories=character&strict=true",
		"/v2/search/?search=jita&categories=character&language=de",
		"/v2/search/?search=Jita&categories=character",
		"/v2/search/?search=jita&categories=character,region",
		"/v3/characters/2112000001/search/?search=jita&categories=character",
	} {
		etag := ts.do(http.MethodGet, path, nil, bearer(tok)...).Header().Get("ETag")
		if other, dup := tags[etag]; dup {
			t.Errorf("%s and %s share ETag %s", path, other, etag)
		}
		tags[etag] = path
	}
	// Spellings of one request share one tag.
	a := ts.do(http.MethodGet, "/v2/search/?search=jita&categories=region,character", nil).Header().Get("ETag")
	b := ts.do(http.MethodGet, "/latest/search/?categories=character,region&search=%20jita%20&strict=false&language=en-us", nil).Header().Get("ETag")
	if a != b {
		t.Errorf("equivalent requests: ETag %s and %s", a, b)
	}
}

func TestSearchNotModified(t *testing.T) {
	m := &countingMetrics{}
	ts := newTestServer(t, searchRecords(), withMetrics(m))
	const path = "/v2/search/?search=jita&categories=character"
	etag := ts.do(http.MethodGet, path, nil).Header().Get("ETag")
	for _, inm := range []string{
		etag,
		`"nope", ` + etag,
		`"nope",` + etag + `, "other"`,
		"W/" + etag,
		"*",
	} {
		rec := ts.do(http.MethodGet, path, nil, "If-None-Match", inm)
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
			t.Errorf("If-None-Match %s: %d with %d bytes, want 304 and no body", inm, rec.Code, rec.Body.Len())
		}
		if rec.Header().Get("ETag") != etag || rec.Header().Get("Cache-Control") == "" || rec.Header().Get("Content-Type") != "" {
			t.Errorf("If-None-Match %s: headers %v", inm, rec.Header())
		}
	}
	for _, inm := range []string{`"nope"`, strings.Trim(etag, `"`), ""} {
		if rec := ts.do(http.MethodGet, path, nil, "If-None-Match", inm); rec.Code != http.StatusOK {
			t.Errorf("If-None-Match %q: %d, want 200", inm, rec.Code)
		}
	}

	// A 304 for a request never searched costs no search.
	_, _, before := m.counts()
	other := "/v2/search/?search=amarr&categories=solar_system"
	wantTag := etagOf(ts.manager.Live().ID, "0|false|en|solar_system|amarr")
	if rec := ts.do(http.MethodGet, other, nil, "If-None-Match", wantTag); rec.Code != http.StatusNotModified {
		t.Fatalf("precomputed tag: %d", rec.Code)
	}
	if _, _, after := m.counts(); after != before {
		t.Errorf("a 304 searched: %d searches, want %d", after, before)
	}
}

func TestSearchETagChangesWithTheGeneration(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	const path = "/v2/search/?search=jita&categories=character"
	first := ts.do(http.MethodGet, path, nil)
	etag := first.Header().Get("ETag")

	recs := searchRecords()
	recs[snapshots.Characters] = append(recs[snapshots.Characters],
		&snapshots.Character{Entity: indexertest.Named(2112000099, "Jita Newcomer"), CorporationID: 98000001})
	ts.reindex(recs)

	rec := ts.do(http.MethodGet, path, nil, "If-None-Match", etag)
	if rec.Code != http.StatusOK {
		t.Fatalf("after a reindex the old tag got %d, want 200", rec.Code)
	}
	if rec.Header().Get("ETag") == etag {
		t.Errorf("ETag %s survived the reindex", etag)
	}
	if want := `{"character":[2112000004,2112000001,2112000099,2112000002]}`; rec.Body.String() != want {
		t.Errorf("after reindex %s, want %s (the cache must not serve the old generation)", rec.Body, want)
	}
	if lm := rec.Header().Get("Last-Modified"); lm != ts.manager.Live().Created.UTC().Format(http.TimeFormat) {
		t.Errorf("Last-Modified %q is not the new generation's", lm)
	}
}

func TestSearchCacheHits(t *testing.T) {
	m := &countingMetrics{}
	ts := newTestServer(t, searchRecords(), withMetrics(m))
	tokA := ts.token(pilotA, ScopeSearchStructures)
	tokB := ts.token(pilotB, ScopeSearchStructures)
	first := ts.do(http.MethodGet, "/v2/search/?search=jita&categories=character", nil)
	second := ts.do(http.MethodGet, "/latest/search/?search=jita&categories=character", nil)
	if hits, misses, searches := m.counts(); hits != 1 || misses != 1 || searches != 1 {
		t.Errorf("hits %d misses %d searches %d, want 1 1 1", hits, misses, searches)
	}
	if first.Body.String() != second.Body.String() || first.Header().Get("ETag") != second.Header().Get("ETag") {
		t.Errorf("cached answer differs: %s %s", first.Body, second.Body)
	}
	// Private answers are cached per character: B must not get A's.
	a := ts.do(http.MethodGet, "/v3/characters/2112000001/search/?search=jita&categories=structure", nil, bearer(tokA)...)
	b := ts.do(http.MethodGet, "/v3/characters/2112000002/search/?search=jita&categories=structure", nil, bearer(tokB)...)
	if a.Body.String() != `{"structure":[1000000000002,1000000000001]}` || b.Body.String() != `{"structure":[1000000000001]}` {
		t.Errorf("private answers: A %s, B %s", a.Body, b.Body)
	}
	if hits, misses, _ := m.counts(); hits != 1 || misses != 3 {
		t.Errorf("hits %d misses %d, want 1 3", hits, misses)
	}
}

func TestSearchCacheDisabled(t *testing.T) {
	m := &countingMetrics{}
	ts := newTestServer(t, searchRecords(), withMetrics(m), func(d *Deps) { d.Limits.CacheBytes = -1 })
	for range 3 {
		if rec := ts.do(http.MethodGet, "/v2/search/?search=jita&categories=character", nil); rec.Code != http.StatusOK {
			t.Fatal(rec.Code)
		}
	}
	if hits, misses, _ := m.counts(); hits != 0 || misses != 3 {
		t.Errorf("hits %d misses %d, want 0 3", hits, misses)
	}
}

func TestResponseCacheBounds(t *testing.T) {
	entry := func(key string, n int) *cachedResponse {
		return &cachedResponse{key: key, body: make([]byte, n), etag: `"x"`}
	}
	rc := newResponseCache(4 * 1024)
	for i := range 10 {
		rc.put(1, entry(string(rune('a'+i)), 400))
	}
	if rc.size > rc.max {
		t.Errorf("size %d beyond %d", rc.size, rc.max)
	}
	if _, ok := rc.get(1, []byte("a")); ok {
		t.Error("the least recently used entry survived")
	}
	if _, ok := rc.get(1, []byte("j")); !ok {
		t.Error("the newest entry was evicted")
	}
	// Touching an entry keeps it.
	rc.get(1, []byte("g"))
	for i := range 5 {
		rc.put(1, entry(string(rune('A'+i)), 400))
	}
	if _, ok := rc.get(1, []byte("g")); !ok {
		t.Error("a recently read entry was evicted before older ones")
	}
	// Too big for the cache: not kept, nothing else thrown out.
	n := rc.len()
	rc.put(1, entry("huge", 2048))
	if _, ok := rc.get(1, []byte("huge")); ok || rc.len() != n {
		t.Errorf("huge entry kept (%v) or evicted others (%d → %d)", ok, n, rc.len())
	}
	// A new generation empties it; a late put of the old one is dropped.
	if _, ok := rc.get(2, []byte("g")); ok || rc.len() != 0 || rc.size != 0 {
		t.Errorf("generation switch kept %d entries, %d bytes", rc.len(), rc.size)
	}
	rc.put(1, entry("late", 10))
	if _, ok := rc.get(2, []byte("late")); ok {
		t.Error("an answer of the old generation was served for the new one")
	}
	var off *responseCache = newResponseCache(-1)
	off.put(1, entry("x", 1))
	if _, ok := off.get(1, []byte("x")); ok || off.len() != 0 {
		t.Error("disabled cache stored something")
	}
}

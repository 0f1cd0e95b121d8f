package api

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"gds/api/clientip"
	"gds/api/ratelimit"
)

func TestErrorLimit(t *testing.T) {
	m := &countingMetrics{}
	ts := newTestServer(t, searchRecords(), withMetrics(m), func(d *Deps) {
		d.Limits.ErrorLimit = 3
		d.Limits.ErrorWindow = time.Minute
	})
	const bad = "/v2/search/?search=ab&categories=character"
	const good = "/v2/search/?search=jita&categories=character"
	check := func(rec *httptest.ResponseRecorder, status int, remain, reset string) {
		t.Helper()
		h := rec.Header()
		if rec.Code != status || h.Get(HeaderErrorLimitRemain) != remain || h.Get(HeaderErrorLimitReset) != reset {
			t.Fatalf("got %d remain %q reset %q, want %d %q %q (%s)", rec.Code,
				h.Get(HeaderErrorLimitRemain), h.Get(HeaderErrorLimitReset), status, remain, reset, rec.Body)
		}
	}
	check(ts.do(http.MethodGet, good, nil), 200, "3", "60")
	check(ts.do(http.MethodGet, bad, nil), 400, "2", "60")
	ts.clock.Add(15 * time.Second)
	check(ts.do(http.MethodGet, "/v2/nothing/here/", nil), 404, "1", "45")
	check(ts.do(http.MethodGet, good, nil), 200, "1", "45")
	check(ts.do(http.MethodGet, bad, nil), 400, "0", "45")
	ts.clock.Add(500 * time.Millisecond)
	// The budget is spent: even a good request is refused until the reset.
	for _, path := range []string{good, bad} {
		rec := ts.do(http.MethodGet, path, nil)
		check(rec, StatusErrorLimited, "0", "45")
		if msg := errorOf(t, rec); !strings.HasPrefix(msg, "error limited: ") {
			t.Errorf("420 message %q", msg)
		}
	}
	// Another client is not affected.
	other := httptest.NewRequest(http.MethodGet, good, nil)
	other.RemoteAddr = "198.51.100.7:4000"
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, other)
	check(rec, 200, "3", "60")
	// Forging X-Forwarded-For does not escape the limit.
	check(ts.do(http.MethodGet, good, nil, "X-Forwarded-For", "203.0.113.9"), StatusErrorLimited, "0", "45")

	ts.clock.Add(45 * time.Second)
	check(ts.do(http.MethodGet, good, nil), 200, "3", "60")
	check(ts.do(http.MethodGet, bad, nil), 400, "2", "60")
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.limited != 3 {
		t.Errorf("ErrorLimited reported %d times, want 3", m.limited)
	}
}

func TestErrorLimitHeadersOnEveryAnswer(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	tok := ts.token(pilotA, ScopeSearchStructures)
	const path = "/v2/search/?search=jita&categories=character"
	etag := ts.do(http.MethodGet, path, nil).Header().Get("ETag")
	for name, rec := range map[string]*httptest.ResponseRecorder{
		"200":         ts.do(http.MethodGet, path, nil),
		"304":         ts.do(http.MethodGet, path, nil, "If-None-Match", etag),
		"400":         ts.do(http.MethodGet, "/v2/search/", nil),
		"401":         ts.do(http.MethodGet, "/v3/characters/1/search/?search=jita&categories=character", nil),
		"403":         ts.do(http.MethodGet, "/v3/characters/1/search/?search=jita&categories=character", nil, bearer(tok)...),
		"404":         ts.do(http.MethodGet, "/nowhere", nil),
		"405":         ts.do(http.MethodPost, "/v2/search/", nil),
		"gzipped 200": ts.do(http.MethodGet, "/v2/search/?search=jita&categories=character&strict=true", nil, "Accept-Encoding", "gzip"),
	} {
		if rec.Header().Get(HeaderErrorLimitRemain) == "" || rec.Header().Get(HeaderErrorLimitReset) == "" {
			t.Errorf("%s (%d): no error limit headers: %v", name, rec.Code, rec.Header())
		}
	}
}

func TestErrorLimiterForgetsEndedWindows(t *testing.T) {
	now := testEpoch
	el := newErrorLimiter(Limits{ErrorLimit: 5, ErrorWindow: time.Minute}, func() time.Time { return now }, noMetrics{}, clientip.Resolver{})
	for i := range 1000 {
		el.count("10.0." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&0xff))
	}
	if n := el.windows.Len(); n != 1000 {
		t.Fatalf("%d clients tracked, want 1000", n)
	}
	now = now.Add(2 * time.Minute)
	if remain, reset := el.count("192.0.2.1"); remain != 4 || reset != 60 {
		t.Errorf("fresh window: remain %d reset %d", remain, reset)
	}
	// Ended windows are swept from a shard when it next counts: 2,000
	// new clients reach every shard (all but certainly).
	for i := range 1999 {
		el.count("10.1." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&0xff))
	}
	if n := el.windows.Len(); n != 2000 {
		t.Errorf("%d clients tracked, want the 2,000 with open windows", n)
	}
	if remain, reset := el.state("10.0.0.1"); remain != 5 || reset != 60 {
		t.Errorf("ended window: remain %d reset %d, want a full budget", remain, reset)
	}
}

// Two addresses of one IPv6 /64 share a budget (one subscriber usually
// holds the whole /64, as the rate limiter keys it); the next /64 and an
// IPv4-mapped address are clients of their own.
func TestErrorLimitKeysIPv6By64(t *testing.T) {
	now := testEpoch
	el := newErrorLimiter(Limits{ErrorLimit: 4, ErrorWindow: time.Minute}, func() time.Time { return now }, noMetrics{}, clientip.Resolver{})
	el.count("2001:db8:1:2::1")
	el.count("2001:db8:1:2:ffff:ffff:ffff:ffff")
	if remain, _ := el.count("2001:db8:1:2:abcd::9"); remain != 1 {
		t.Errorf("three errors of one /64: %d remain, want 1", remain)
	}
	if remain, _ := el.state("2001:db8:1:3::1"); remain != 4 {
		t.Errorf("the next /64: %d remain, want a whole budget", remain)
	}
	el.count("192.0.2.7")
	if remain, _ := el.state("::ffff:192.0.2.7"); remain != 3 {
		t.Errorf("an IPv4-mapped address: %d remain, want its IPv4 client's 3", remain)
	}
}

// A flood of distinct clients, far more than the limiter keeps, never
// stops the counting: a fresh client then still gets its 420 once its
// budget is spent, and so does a client that erred before the flood.
// Once at the limiter (300,000 clients against the default bound of
// 262,144) and once through the handler with a small bound.
func TestErrorLimitSurvivesFloodOfClients(t *testing.T) {
	now := testEpoch
	el := newErrorLimiter(Limits{ErrorLimit: 100, ErrorWindow: time.Minute}, func() time.Time { return now }, noMetrics{}, clientip.Resolver{})
	early := netip.MustParseAddr("198.51.100.1")
	for range 60 {
		el.countOf(early)
	}
	const flood = 300_000
	for i := range flood {
		el.countOf(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	if n := el.windows.Len(); n > ratelimit.DefaultMaxClients {
		t.Fatalf("%d clients kept, over the bound of %d", n, ratelimit.DefaultMaxClients)
	}
	fresh := netip.MustParseAddr("2001:db8::1")
	for i := range 100 {
		if remain, _ := el.countOf(fresh); remain != 99-i {
			t.Fatalf("fresh client's error %d after the flood: %d remain, want %d", i+1, remain, 99-i)
		}
	}
	if remain, _ := el.stateOf(fresh, now); remain > 0 {
		t.Errorf("fresh client after 100 errors: %d remain, want 0", remain)
	}
	if remain, _ := el.stateOf(early, now); remain != 40 {
		t.Errorf("a client that erred 60 times before the flood: %d remain, want 40", remain)
	}

	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Limits.ErrorLimit, d.Limits.ErrorClients, d.Limits.RateLimitsOff = 5, 256, true
	})
	from := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/v2/search/?search=ab&categories=character", nil)
		req.RemoteAddr = addr + ":4000"
		rec := httptest.NewRecorder()
		ts.h.ServeHTTP(rec, req)
		return rec
	}
	for i := range 3000 {
		if rec := from(fmt.Sprintf("10.9.%d.%d", i>>8, i&0xff)); rec.Code != http.StatusBadRequest {
			t.Fatalf("flood request %d: %d", i, rec.Code)
		}
	}
	for i := range 5 {
		if rec := from("203.0.113.5"); rec.Code != http.StatusBadRequest || rec.Header().Get(HeaderErrorLimitRemain) != strconv.Itoa(4-i) {
			t.Fatalf("fresh client's error %d: %d, %s remain", i+1, rec.Code, rec.Header().Get(HeaderErrorLimitRemain))
		}
	}
	if rec := from("203.0.113.5"); rec.Code != StatusErrorLimited {
		t.Errorf("fresh client after its budget, past a flood of 3,000 clients: %d, want 420", rec.Code)
	}
}

// Header values shared between answers (Vary lists, small numbers) are
// never changed by what one answer adds to its own headers.
func TestSharedHeaderValuesStayPut(t *testing.T) {
	for range 2 {
		h := http.Header{}
		addVary(h, "Accept-Encoding")
		addVary(h, "Accept-Language")
		addVary(h, "Origin")
		h.Add("Vary", "X-Other")
		if got := strings.Join(h.Values("Vary"), ","); got != "Accept-Encoding, Accept-Language, Origin,X-Other" {
			t.Errorf("Vary = %q", got)
		}
		setErrorLimitHeaders(h, 7, 42)
		h.Add(HeaderErrorLimitRemain, "extra")
		if got := h.Values(HeaderErrorLimitRemain); len(got) != 2 || got[0] != "7" || h.Get(HeaderErrorLimitReset) != "42" {
			t.Errorf("error limit headers = %v, %q", got, h.Get(HeaderErrorLimitReset))
		}
		if lang := append(contentLanguage("de"), "fr"); len(lang) != 2 {
			t.Errorf("appended Content-Language = %v", lang)
		}
	}
	if fmt.Sprint(varyLines[1], varyLines[3]) != "[Accept-Encoding] [Accept-Encoding, Accept-Language]" {
		t.Errorf("shared Vary lines changed: %v %v", varyLines[1], varyLines[3])
	}
	if fmt.Sprint(headerInt(7), headerInt(1000), headerInt(5000), contentLanguage("de")) != "[7] [1000] [5000] [de]" {
		t.Errorf("shared values changed: %v %v %v", headerInt(7), headerInt(1000), contentLanguage("de"))
	}
}

// A 420 goes out with ESI's reason phrase over a real HTTP/1.1 connection
// (net/http alone would write "420 status code 420"), with its error body
// and the error limit headers.
func TestErrorLimitedStatusLine(t *testing.T) {
	ts := newTestServer(t, searchRecords(), func(d *Deps) {
		d.Limits.ErrorLimit = 1
		d.Limits.ErrorWindow = time.Minute
	})
	srv := httptest.NewServer(ts.h)
	defer srv.Close()
	get := func() *http.Response {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + "/v2/search/?search=ab&categories=character")
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := get(); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("first bad request: %s", resp.Status)
	} else {
		resp.Body.Close()
	}
	resp := get()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.Status != "420 Error Limited" || resp.Header.Get(HeaderErrorLimitRemain) != "0" ||
		resp.Header.Get("Content-Type") != "application/json; charset=utf-8" || !strings.Contains(string(body), `"error":"error limited: `) {
		t.Fatalf("limited: %q %v %s", resp.Status, resp.Header, body)
	}
	if n, err := strconv.Atoi(resp.Header.Get("Content-Length")); err != nil || n != len(body) {
		t.Errorf("Content-Length %q for %d bytes", resp.Header.Get("Content-Length"), len(body))
	}
	// The raw status line, as a client without a parser sees it.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "HEAD /v2/search/?search=jita&categories=character HTTP/1.1\r\nHost: x\r\n\r\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || line != "HTTP/1.1 420 Error Limited\r\n" {
		t.Errorf("status line %q, %v", line, err)
	}
}

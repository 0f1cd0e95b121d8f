package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gds/api/httplog"
	"gds/snapshots"
)

// The hostile-input tests send what an attacker or a broken client would:
// oversized headers and bodies, invalid UTF-8, absurd IDs and malformed
// JSON. Whatever comes in, the answer is a clean 4xx with a JSON error,
// never a 500, a panic or a hang.

// Limits as gds serve sets them by default (cmd/gds --max-header-bytes,
// --max-body-bytes); the tests run the API behind the same limits.
const (
	serveMaxHeaderBytes = 64 << 10
	serveMaxBodyBytes   = 64 << 10
)

// hostileServer is the real API over a universe with searchable names and
// structures, behind gds serve's body limit, with error limiting off (the
// tests provoke many errors on purpose). Its clock is the day before the
// structures release, so PUT v1 is latest and validates everything.
func hostileServer(t testing.TB) *testServer {
	recs := searchRecords()
	fixture := structureFixture()
	recs[snapshots.Structures] = fixture[snapshots.Structures]
	recs[snapshots.Roles] = fixture[snapshots.Roles]
	ts := newTestServer(t, recs, released(false), func(d *Deps) {
		d.Limits.MaxBodyBytes = serveMaxBodyBytes
		d.Limits.MaxHeaderBytes = serveMaxHeaderBytes
		d.Limits.RateLimitsOff = true // hundreds of 4xx from one client
	})
	ts.clock.Set(testRelease.AddDate(0, 0, -1))
	return ts
}

// requireJSONError fails unless rec is one of the statuses with a JSON
// {"error": "..."} body.
func requireJSONError(t testing.TB, what string, rec *httptest.ResponseRecorder, statuses ...int) {
	t.Helper()
	if !slices.Contains(statuses, rec.Code) {
		t.Errorf("%s: %d %.200s, want one of %v", what, rec.Code, rec.Body, statuses)
		return
	}
	var b ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || b.Error == "" {
		t.Errorf("%s: %d body %.200q is not a JSON error", what, rec.Code, rec.Body)
	}
}

// chunked hides a body's length, as a chunked upload does, so only
// reading it can find it too large.
func chunked(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) }

func TestHostileOversizedHeaders(t *testing.T) {
	ts := hostileServer(t)
	// As gds serve runs it: net/http reads up to twice the limit, and its
	// own answers beyond that leave as JSON.
	srv := httptest.NewUnstartedServer(ts.h)
	srv.Config.MaxHeaderBytes = 2 * serveMaxHeaderBytes
	srv.Config.ReadHeaderTimeout = time.Minute
	srv.Listener = httplog.JSONErrors(srv.Listener, ts.h.(*Handler).Rejected)
	srv.Start()
	defer srv.Close()

	for _, tc := range []struct {
		name   string
		header func(*http.Request)
	}{
		{"one huge header", func(r *http.Request) { r.Header.Set("X-Junk", strings.Repeat("a", 2*serveMaxHeaderBytes)) }},
		{"a header just over the limit", func(r *http.Request) { r.Header.Set("X-Junk", strings.Repeat("a", serveMaxHeaderBytes)) }},
		{"many headers", func(r *http.Request) {
			for i := range 4000 {
				r.Header.Set(fmt.Sprintf("X-Junk-%d", i), strings.Repeat("b", 30))
			}
		}},
		{"huge cookie", func(r *http.Request) { r.Header.Set("Cookie", "c="+strings.Repeat("c", 2*serveMaxHeaderBytes)) }},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/latest/search/?search=jita&categories=character", nil)
		tc.header(req)
		resp, err := srv.Client().Do(req)
		if err != nil {
			// The server may close before the client has sent it all.
			t.Logf("%s: %v", tc.name, err)
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var b ErrorBody
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || json.Unmarshal(raw, &b) != nil || b.Error == "" {
			t.Errorf("%s: %d %q, want a JSON 431", tc.name, resp.StatusCode, raw)
		}
	}
	// The server is still fine afterwards.
	resp, err := srv.Client().Get(srv.URL + "/latest/search/?search=jita&categories=character")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("search after the oversized headers: %v %v", resp, err)
	}
	resp.Body.Close()

	// A raw request line of 1 MB: answered 431 too, without reading it all.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		fmt.Fprintf(conn, "GET /latest/search/?search=%s HTTP/1.1\r\nHost: x\r\n\r\n", strings.Repeat("j", 1<<20))
	}()
	conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) // a hang fails, not stalls the suite
	answer, _ := io.ReadAll(conn)
	if !bytes.HasPrefix(answer, []byte("HTTP/1.1 431")) || !bytes.Contains(answer, []byte(`{"error":`)) {
		t.Errorf("1 MB request line: %.300q, want a JSON 431", answer)
	}
}

func TestHostileOversizedBodies(t *testing.T) {
	ts := hostileServer(t)
	tok := bearer(ts.token(managerA, writeStructures))
	bigNames := `["` + strings.Repeat("a", serveMaxBodyBytes) + `"]`
	bigIDs := "[" + strings.Repeat("1,", serveMaxBodyBytes/2) + "1]"
	bigWindows := "[" + strings.Repeat(`{"day":1,"hour":1},`, serveMaxBodyBytes/19) + `{"day":1,"hour":1}]`
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
	}{
		{"ids", http.MethodPost, "/v1/universe/ids/", bigNames, nil},
		{"names", http.MethodPost, "/v3/universe/names/", bigIDs, nil},
		{"put structure", http.MethodPut, "/v1" + putPathA1, bigWindows, tok},
		{"put structure, older interface", http.MethodPut, "/structures/1000000000001/", bigWindows, tok},
	} {
		for _, hidden := range []bool{false, true} {
			body := io.Reader(strings.NewReader(tc.body))
			if hidden {
				body = chunked(tc.body)
			}
			rec := ts.do(tc.method, tc.path, body, append([]string{"Content-Type", "application/json"}, tc.headers...)...)
			requireJSONError(t, fmt.Sprintf("%s (%d bytes, length hidden %v)", tc.name, len(tc.body), hidden), rec,
				http.StatusRequestEntityTooLarge)
		}
	}
}

func TestHostileInvalidUTF8(t *testing.T) {
	ts := hostileServer(t)
	tok := bearer(ts.token(pilotA, ScopeSearchStructures))
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
	}{
		{"search text", http.MethodGet, "/latest/search/?search=ji%FFta&categories=character", "", nil},
		{"search text, overlong encoding", http.MethodGet, "/latest/search/?search=ji%C0%AFta&categories=character", "", nil},
		{"search text, surrogate", http.MethodGet, "/latest/search/?search=ji%ED%A0%80ta&categories=character", "", nil},
		{"categories", http.MethodGet, "/latest/search/?search=jita&categories=charact%FFer", "", nil},
		{"character search text", http.MethodGet, "/latest/characters/2112000001/search/?search=ji%FFta&categories=structure", "", tok},
		{"language", http.MethodGet, "/latest/search/?search=jita&categories=character&language=d%FFe", "", nil},
		{"path ID", http.MethodGet, "/latest/characters/21120%FF00001/search/?search=jita&categories=character", "", tok},
		{"path ID, only the byte", http.MethodGet, "/latest/characters/%FF/search/?search=jita&categories=character", "", tok},
		{"ids body", http.MethodPost, "/v1/universe/ids/", "[\"Ji\xffta\"]", nil},
		{"ids body, escaped surrogate", http.MethodPost, "/v1/universe/ids/", `["Ji\ud800ta"]`, nil},
		{"names body", http.MethodPost, "/v3/universe/names/", "[30000142, \"\xff\"]", nil},
		{"put body", http.MethodPut, "/v1" + putPathA1, "[{\"day\":1,\"hour\":1,\"\xff\":1}]", bearer(ts.token(managerA, writeStructures))},
	} {
		req := httptest.NewRequest(tc.method, "/", strings.NewReader(tc.body))
		var err error
		if req.URL, err = req.URL.Parse(tc.path); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		req.RequestURI = tc.path
		for i := 0; i+1 < len(tc.headers); i += 2 {
			req.Header.Set(tc.headers[i], tc.headers[i+1])
		}
		rec := httptest.NewRecorder()
		ts.h.ServeHTTP(rec, req)
		requireJSONError(t, tc.name, rec, http.StatusBadRequest)
	}
}

func TestHostileLongSearch(t *testing.T) {
	ts := hostileServer(t)
	tok := bearer(ts.token(pilotA, ScopeSearchStructures))
	for _, text := range []string{
		strings.Repeat("a", 10_000),
		strings.Repeat("jita ", 2_000),
		strings.Repeat("ト", 10_000),
		strings.Repeat("%", 10_000),
	} {
		q := "search=" + url.QueryEscape(text) + "&categories=character,solar_system,inventory_type"
		for _, path := range []string{"/latest/search/?" + q, "/latest/characters/2112000001/search/?" + q + ",structure"} {
			rec := ts.do(http.MethodGet, path, nil, tok...)
			// A request line over the header limit is refused as such.
			requireJSONError(t, fmt.Sprintf("%.60s… (%d bytes)", path, len(path)), rec,
				http.StatusBadRequest, http.StatusRequestHeaderFieldsTooLarge)
		}
	}
}

// routeParam matches a path template's parameter.
var routeParam = regexp.MustCompile(`\{[a-z_]+\}`)

// hostilePaths returns, for every route of the table, its path under the
// prefix it is served at with every ID parameter replaced by id (raw, not
// escaped: the caller's string goes on the wire as is).
func hostilePaths(ts *testServer, id string) []struct{ method, path string } {
	s := &server{d: ts.deps, now: ts.clock.Now}
	var out []struct{ method, path string }
	for _, r := range s.table() {
		if !strings.Contains(r.Path, "{") {
			continue
		}
		p := routeParam.ReplaceAllString(r.Path, id)
		if !r.Unversioned {
			p = "/latest" + p
		}
		out = append(out, struct{ method, path string }{r.Method, p})
		// With one parameter valid and the other bad, the handler gets
		// past the first check.
		if strings.Count(r.Path, "{") > 1 {
			first := routeParam.FindString(r.Path)
			p2 := strings.Replace(r.Path, first, "98000001", 1)
			p2 = routeParam.ReplaceAllString(p2, id)
			if !r.Unversioned {
				p2 = "/latest" + p2
			}
			out = append(out, struct{ method, path string }{r.Method, p2})
		}
	}
	return out
}

// hostileRequest sends method rawPath with a token that holds every scope
// of the table, so the answer is about the path, not authentication.
func hostileRequest(ts *testServer, token, method, rawPath, body string) (*httptest.ResponseRecorder, error) {
	req, err := http.NewRequest(method, "http://example.com"+rawPath, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.RequestURI = rawPath
	req.RemoteAddr = "192.0.2.1:1234"
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	return rec, nil
}

// allScopes is every scope a route of the table asks for.
func allScopes(ts *testServer) []string {
	s := &server{d: ts.deps, now: ts.clock.Now}
	var scopes []string
	for _, r := range s.table() {
		if r.Scope != "" && !slices.Contains(scopes, r.Scope) {
			scopes = append(scopes, r.Scope)
		}
	}
	return scopes
}

func TestHostilePathIDs(t *testing.T) {
	ts := hostileServer(t)
	tok := ts.token(managerA, allScopes(ts)...)
	for _, id := range []string{"-1", "0", "1e3", "99999999999999999999", "9223372036854775808", "abc", "%00",
		"0x10", "+1", "1.0", "%20", "1%2F2", "%FF", "０"} {
		for _, rt := range hostilePaths(ts, id) {
			body := ""
			if rt.method != http.MethodGet {
				body = validWindowsBody
			}
			rec, err := hostileRequest(ts, tok, rt.method, rt.path, body)
			if err != nil {
				t.Fatalf("%s %s: %v", rt.method, rt.path, err)
			}
			requireJSONError(t, rt.method+" "+rt.path, rec, http.StatusBadRequest, http.StatusNotFound)
		}
	}
}

func TestHostileJSONBodies(t *testing.T) {
	ts := hostileServer(t)
	putTok := bearer(ts.token(managerA, writeStructures))
	deep := strings.Repeat("[", 30_000) + strings.Repeat("]", 30_000) // under the body limit, over encoding/json's depth limit
	deepObj := strings.Repeat(`{"a":`, 5_000) + "1" + strings.Repeat("}", 5_000)
	bodies := []struct{ name, body string }{
		{"truncated", `["Jita", "Amarr"`},
		{"truncated string", `["Jit`},
		{"trailing garbage", `["Jita"] ["Amarr"]`},
		{"trailing comma", `["Jita",]`},
		{"object", `{"names":["Jita"]}`},
		{"null", `null`},
		{"number", `42`},
		{"string", `"Jita"`},
		{"nested arrays", `[["Jita"]]`},
		{"deeply nested", deep},
		{"deeply nested objects", "[" + deepObj + "]"},
		{"huge array of nulls", "[" + strings.Repeat("null,", 10_000) + "null]"},
		{"huge array of numbers", "[" + strings.Repeat("1,", 20_000) + "1]"},
		{"floats", `[1.5, 2e400]`},
		{"NaN", `[NaN]`},
		{"bool", `[true]`},
		{"BOM", "\ufeff[\"Jita\"]"},
		{"NUL bytes", "[\"Ji\x00ta\"]\x00"},
	}
	routes := []struct {
		name, method, path string
		headers            []string
	}{
		{"ids", http.MethodPost, "/v1/universe/ids/", nil},
		{"names", http.MethodPost, "/v3/universe/names/", nil},
		{"put windows", http.MethodPut, "/v1" + putPathA1, putTok},
	}
	for _, rt := range routes {
		for _, b := range bodies {
			rec := ts.do(rt.method, rt.path, strings.NewReader(b.body), rt.headers...)
			// "NUL bytes" is a valid name list for ids (a name nobody has)
			// but not a valid document: trailing data after the value.
			requireJSONError(t, rt.name+": "+b.name, rec, http.StatusBadRequest)
		}
	}
}

// FuzzPathIDs puts arbitrary segments in the ID parameters of every route
// of the table and sends them through the real engine: never a 500, and
// always a JSON body.
func FuzzPathIDs(f *testing.F) {
	for _, seed := range []string{"1", "-1", "0", "1e3", "99999999999999999999", "abc", "%00", "%FF", "..", "%2e%2e",
		"98000001", "1000000000001", "9007199254740993", " 1", "1?x=1", "1#x", "%"} {
		f.Add(seed)
	}
	ts := hostileServer(f)
	tok := ts.token(managerA, allScopes(ts)...)
	f.Fuzz(func(t *testing.T, id string) {
		if strings.ContainsAny(id, "/?#") {
			// Another route or a query, not an ID: covered by the 404 tests.
			return
		}
		for _, rt := range hostilePaths(ts, id) {
			rec, err := hostileRequest(ts, tok, rt.method, rt.path, validWindowsBody)
			if err != nil {
				return // not a request a client could send
			}
			if rec.Code >= 500 {
				t.Fatalf("%s %q: %d %s", rt.method, rt.path, rec.Code, rec.Body)
			}
			if rec.Code != http.StatusNoContent && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s %q: %d body is not JSON: %q", rt.method, rt.path, rec.Code, rec.Body)
			}
		}
	})
}

// FuzzJSONBodies sends arbitrary bodies to the routes that read JSON:
// never a 500, and always a JSON body (or none on 204).
func FuzzJSONBodies(f *testing.F) {
	for _, seed := range []string{`["Jita"]`, `[30000142, 2112000001]`, validWindowsBody, `[]`, `[[`, `{"a":1}`,
		"[\"\xff\"]", `[1e400]`, `[-1]`, `[{"day":1,"hour":1,"day":2}]`, `[{"day":null,"hour":1}]`, ""} {
		f.Add(seed)
	}
	ts := hostileServer(f)
	tok := bearer(ts.token(managerA, writeStructures))
	f.Fuzz(func(t *testing.T, body string) {
		for _, rt := range []struct {
			method, path string
			headers      []string
		}{
			{http.MethodPost, "/v1/universe/ids/", nil},
			{http.MethodPost, "/v3/universe/names/", nil},
			{http.MethodPut, "/v1" + putPathA1, tok},
			{http.MethodPut, "/structures/1000000000001/", tok},
		} {
			req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(body))
			for i := 0; i+1 < len(rt.headers); i += 2 {
				req.Header.Set(rt.headers[i], rt.headers[i+1])
			}
			rec := httptest.NewRecorder()
			ts.h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %s %q: %d %s", rt.method, rt.path, body, rec.Code, rec.Body)
			}
			if rec.Code != http.StatusNoContent && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s %s %q: %d body is not JSON: %q", rt.method, rt.path, body, rec.Code, rec.Body)
			}
		}
	})
}

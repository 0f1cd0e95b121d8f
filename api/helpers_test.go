package api

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/api/apitest"
	"gds/api/auth"
	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query"
)

// testServer is the real API (real gin engine, real index built from
// records, real RS256 tokens) for in-process tests.
type testServer struct {
	t       testing.TB
	h       http.Handler
	deps    Deps
	manager *indexer.Manager
	key     auth.SigningKey
	clock   *apitest.Clock // the server's Deps.Now
}

// testEpoch is where every test server's clock starts: fixed, so Expires
// and lifecycle answers are reproducible.
var testEpoch = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

var (
	testKeyOnce sync.Once
	testKey     auth.SigningKey
)

// testSigningKey is one RSA key for the whole package: generating a
// 2048-bit key per test would dominate the test time.
func testSigningKey(t testing.TB) auth.SigningKey {
	testKeyOnce.Do(func() {
		priv, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		testKey = auth.NewSigningKey(priv)
	})
	return testKey
}

// newTestServer builds records into a live generation and serves the API
// over it. opts adjust Deps after the defaults are set (clock at
// testEpoch, local-token verifier, discarded logs), before New.
func newTestServer(t testing.TB, records indexertest.Records, opts ...func(*Deps)) *testServer {
	t.Helper()
	m := indexertest.Manager(t, indexertest.Snapshot(t, records))
	ts := newTestServerWith(t, Deps{Views: query.New(m), Logger: zerolog.New(io.Discard)}, opts...)
	ts.manager = m
	return ts
}

// newTestServerWith serves the API with deps, its clock set to the
// server's (at testEpoch) and, unless opts set one, a local-token verifier.
func newTestServerWith(t testing.TB, deps Deps, opts ...func(*Deps)) *testServer {
	t.Helper()
	ts := &testServer{t: t, clock: apitest.NewClock(testEpoch), key: testSigningKey(t)}
	ts.deps = deps
	ts.deps.Now = ts.clock.Now
	for _, o := range opts {
		o(&ts.deps)
	}
	if ts.deps.Tokens == nil {
		cfg := auth.LocalConfig()
		cfg.Now = ts.deps.Now
		v, err := auth.NewVerifier(ts.key.KeySet(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ts.deps.Tokens = v
	}
	ts.h = New(ts.deps)
	return ts
}

// do serves one request; headers are name, value pairs.
func (ts *testServer) do(method, path string, body io.Reader, headers ...string) *httptest.ResponseRecorder {
	ts.t.Helper()
	if len(headers)%2 != 0 {
		ts.t.Fatalf("do %s %s: headers must be name, value pairs", method, path)
	}
	req := httptest.NewRequest(method, path, body)
	for i := 0; i < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	ts.h.ServeHTTP(rec, req)
	return rec
}

// token mints a valid token for character with scopes, issued now by the
// server's clock.
func (ts *testServer) token(character int64, scopes ...string) string {
	ts.t.Helper()
	return ts.mint(auth.MintOptions{CharacterID: character, Scopes: scopes})
}

// mint signs a token with the server's key; zero Now means the server's
// clock.
func (ts *testServer) mint(o auth.MintOptions) string {
	ts.t.Helper()
	if o.Now.IsZero() {
		o.Now = ts.clock.Now()
	}
	tok, err := auth.Mint(ts.key, o)
	if err != nil {
		ts.t.Fatal(err)
	}
	return tok
}

// bearer is the Authorization header pair for token, for do.
func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// reindex builds records as a new snapshot and makes it the live
// generation of the same manager.
func (ts *testServer) reindex(records indexertest.Records) {
	ts.t.Helper()
	snap := indexertest.Snapshot(ts.t, records)
	indexertest.Build(ts.t, ts.manager, indexer.BuildRequest{Snapshot: snap, Trigger: "test"})
}

// decodeJSON decodes rec's body into v, failing the test when it is not
// JSON of that shape.
func decodeJSON(t testing.TB, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("body %q is not JSON of %T: %v", rec.Body.String(), v, err)
	}
}

// errorOf returns the error message of an error body, failing the test when
// the body is not {"error": "..."}.
func errorOf(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var b ErrorBody
	decodeJSON(t, rec, &b)
	if b.Error == "" {
		t.Fatalf("status %d body %q: no error message", rec.Code, rec.Body.String())
	}
	// ESI 2026's body: error first (older clients read it as before),
	// then the status the answer has.
	if !bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"error":`)) || b.Status != rec.Code {
		t.Fatalf("status %d body %q: not {\"error\", \"status\": %d}", rec.Code, rec.Body.String(), rec.Code)
	}
	return b.Error
}

// jsonList is a JSON array of n items, item(i) the text of item i.
func jsonList(n int, item func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = item(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// requireAnswer fails the test unless rec has status and, when want is
// not empty, a 200's body is the JSON want or another status's error
// message mentions want.
func requireAnswer(t testing.TB, rec *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("%d %.300s, want %d", rec.Code, rec.Body, status)
	}
	switch {
	case want == "":
	case status == http.StatusOK:
		requireJSONEqual(t, rec.Body.Bytes(), want)
	default:
		if got := errorOf(t, rec); !strings.Contains(got, want) {
			t.Errorf("error %q, want it to mention %q", got, want)
		}
	}
}

package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"gds/indexer/indexertest"
	"gds/snapshots"
)

func TestGzip(t *testing.T) {
	recs := searchRecords()
	// Enough matches for a body above the gzip threshold.
	for i := range 200 {
		recs[snapshots.Characters] = append(recs[snapshots.Characters], &snapshots.Character{
			Entity: indexertest.Named(2113000000+int64(i), "Jita Alt "+strconv.Itoa(i)), CorporationID: 98000001})
	}
	ts := newTestServer(t, recs)
	const big = "/v2/search/?search=jita&categories=character"
	plain := ts.do(http.MethodGet, big, nil)
	if plain.Header().Get("Content-Encoding") != "" || plain.Body.Len() < minGzipBytes {
		t.Fatalf("without Accept-Encoding: %q, %d bytes", plain.Header().Get("Content-Encoding"), plain.Body.Len())
	}
	for _, ae := range []string{"gzip", "br, gzip;q=0.5", "deflate, *", "GZIP"} {
		rec := ts.do(http.MethodGet, big, nil, "Accept-Encoding", ae)
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding %q: not gzipped", ae)
			continue
		}
		if got := gunzip(t, rec.Body); got != plain.Body.String() {
			t.Errorf("Accept-Encoding %q: gunzipped body differs", ae)
		}
		if !strings.Contains(strings.Join(rec.Header().Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("no Vary: Accept-Encoding")
		}
	}
	for _, ae := range []string{"br", "gzip;q=0", "identity"} {
		if rec := ts.do(http.MethodGet, big, nil, "Accept-Encoding", ae); rec.Header().Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q: gzipped", ae)
		}
	}
	// Small bodies and errors are not worth it.
	small := ts.do(http.MethodGet, "/v2/search/?search=amarr&categories=solar_system", nil, "Accept-Encoding", "gzip")
	if small.Header().Get("Content-Encoding") != "" || small.Body.String() != `{"solar_system":[30002187]}` {
		t.Errorf("small body: %q %s", small.Header().Get("Content-Encoding"), small.Body)
	}
	bad := ts.do(http.MethodGet, "/v2/search/?search=ab&categories=character", nil, "Accept-Encoding", "gzip")
	if bad.Code != 400 || bad.Header().Get("Content-Encoding") != "" {
		t.Errorf("error body: %d %q", bad.Code, bad.Header().Get("Content-Encoding"))
	}
	errorOf(t, bad)
	// 304 has no body to compress.
	etag := plain.Header().Get("ETag")
	nm := ts.do(http.MethodGet, big, nil, "Accept-Encoding", "gzip", "If-None-Match", etag)
	if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 || nm.Header().Get("Content-Encoding") != "" {
		t.Errorf("304: %d %d bytes %q", nm.Code, nm.Body.Len(), nm.Header().Get("Content-Encoding"))
	}
}

func gunzip(t *testing.T, r io.Reader) string {
	t.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "x-gzip": false, "deflate, gzip;q=1.0": true, "gzip;q=0": false,
		"gzip;q=0.001": true, "gzip;q=abc": false, "*;q=0.2": true, " gzip ": true,
	} {
		if got := acceptsGzip([]string{h}); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestSendJSONContentLength: every JSON answer reaches the client with
// its Content-Length and unchunked, whether net/http writes the length
// (a body that fits its buffer) or sendJSON declares it.
func TestSendJSONContentLength(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Match([]string{http.MethodGet, http.MethodHead}, "/:n", func(c *gin.Context) {
		n, _ := strconv.Atoi(c.Param("n"))
		sendJSON(c, bytes.Repeat([]byte("7"), n))
	})
	srv := httptest.NewServer(e)
	defer srv.Close()
	for _, n := range []int{1, autoLengthMax - 1, autoLengthMax, autoLengthMax + 1, 4000, 5000, 70000} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			req, _ := http.NewRequest(method, srv.URL+"/"+strconv.Itoa(n), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.ContentLength != int64(n) || len(resp.TransferEncoding) != 0 {
				t.Errorf("%s %d bytes: Content-Length %d, Transfer-Encoding %v", method, n, resp.ContentLength, resp.TransferEncoding)
			}
			if want := n * btoi(method == http.MethodGet); len(body) != want {
				t.Errorf("%s %d bytes: body of %d", method, n, len(body))
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("%s %d bytes: Content-Type %q", method, n, ct)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

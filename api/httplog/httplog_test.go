package httplog_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api/httplog"
)

func engine(o httplog.Options, mw ...gin.HandlerFunc) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(httplog.Logger(o), httplog.Recover(o.Logger))
	e.Use(mw...)
	e.GET("/v2/search/", func(c *gin.Context) { c.JSON(200, gin.H{"id": httplog.RequestID(c)}) })
	e.GET("/panic", func(c *gin.Context) { panic("boom") })
	e.POST("/body", func(c *gin.Context) {
		if _, err := io.ReadAll(c.Request.Body); err != nil {
			if httplog.TooLarge(err) {
				c.JSON(413, gin.H{"error": "too large"})
				return
			}
			c.JSON(400, gin.H{"error": err.Error()})
			return
		}
		c.Status(204)
	})
	return e
}

func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestLoggerRedactsAndLabels(t *testing.T) {
	var buf bytes.Buffer
	type obs struct {
		route, version string
		status         int
	}
	var seen []obs
	e := engine(httplog.Options{
		Logger: zerolog.New(&buf),
		Labels: func(c *gin.Context) (string, string) { return "/search/", "v2" },
		Observe: func(route, version string, status int, d time.Duration) {
			seen = append(seen, obs{route, version, status})
		},
	})
	req := httptest.NewRequest("GET", "/v2/search/?search=jita&token=eyJsecret&categories=agent", nil)
	req.Header.Set("Authorization", "Bearer eyJsecret")
	req.Header.Set(httplog.RequestIDHeader, "abc-123")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if got := rec.Header().Get(httplog.RequestIDHeader); got != "abc-123" {
		t.Errorf("echoed request ID = %q", got)
	}
	if strings.Contains(buf.String(), "eyJsecret") {
		t.Fatalf("log holds the token:\n%s", buf.String())
	}
	lines := logLines(t, &buf)
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want 1", len(lines))
	}
	l := lines[0]
	for k, want := range map[string]any{
		"request_id": "abc-123", "route": "/search/", "version": "v2", "status": float64(200),
		"method": "GET", "path": "/v2/search/?categories=agent&search=jita&token=REDACTED",
	} {
		if l[k] != want {
			t.Errorf("%s = %v, want %v", k, l[k], want)
		}
	}
	if _, ok := l["latency_ms"]; !ok {
		t.Error("no latency_ms")
	}
	if len(seen) != 1 || seen[0] != (obs{"/search/", "v2", 200}) {
		t.Errorf("observed %v", seen)
	}
}

func TestRequestIDGenerated(t *testing.T) {
	var buf bytes.Buffer
	e := engine(httplog.Options{Logger: zerolog.New(&buf)})
	ids := map[string]bool{}
	for _, sent := range []string{"", "has space", strings.Repeat("x", 200), "bad\x01"} {
		req := httptest.NewRequest("GET", "/v2/search/", nil)
		if sent != "" {
			req.Header.Set(httplog.RequestIDHeader, sent)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		id := rec.Header().Get(httplog.RequestIDHeader)
		if len(id) != 32 || id == sent || ids[id] {
			t.Errorf("sent %q: got request ID %q, want a fresh random one", sent, id)
		}
		ids[id] = true
	}
	// Generated IDs never repeat.
	for range 1000 {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("GET", "/v2/search/", nil))
		id := rec.Header().Get(httplog.RequestIDHeader)
		if ids[id] {
			t.Fatalf("request ID %q repeated", id)
		}
		ids[id] = true
	}
	for _, l := range logLines(t, &buf) {
		if l["route"] != "/v2/search/" {
			t.Errorf("default route label = %v, want gin's matched path", l["route"])
		}
	}
}

func TestRecoverAndUnmatched(t *testing.T) {
	var buf bytes.Buffer
	e := engine(httplog.Options{Logger: zerolog.New(&buf)})
	for _, tc := range []struct {
		path  string
		code  int
		route string
	}{{"/panic", 500, "/panic"}, {"/nowhere?token=x", 404, "unmatched"}} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.code {
			t.Errorf("%s = %d, want %d", tc.path, rec.Code, tc.code)
		}
	}
	lines := logLines(t, &buf)
	if len(lines) != 3 || lines[0]["message"] != "handler panicked" || lines[1]["status"] != float64(500) ||
		lines[2]["route"] != "unmatched" || lines[2]["path"] != "/nowhere?token=REDACTED" {
		t.Errorf("logs = %v", lines)
	}
}

func TestBodyLimit(t *testing.T) {
	e := engine(httplog.Options{Logger: zerolog.Nop()}, httplog.BodyLimit(10))
	for _, tc := range []struct {
		body    string
		chunked bool
		want    int
	}{
		{"short", false, 204},
		{"this is far too long", false, 413},
		{"this is far too long", true, 413}, // no Content-Length: the reader stops it
	} {
		req := httptest.NewRequest("POST", "/body", strings.NewReader(tc.body))
		if tc.chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%q chunked=%v = %d, want %d", tc.body, tc.chunked, rec.Code, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b/":                       "/a/b/",
		"/a?token=x":                  "/a?token=REDACTED",
		"/a?access_token=x&b=1":       "/a?access_token=REDACTED&b=1",
		"/a?token=x&token=y":          "/a?token=REDACTED&token=REDACTED",
		"/a?%zz=1&token=leak":         "/a?REDACTED",
		"/characters/1/search/?q=a+b": "/characters/1/search/?q=a+b",
		// Escapes can spell a secret's name; without any, the query is
		// logged as it came.
		"/a?%74oken=leak&b=1":             "/a?b=1&token=REDACTED",
		"/a?b=1&acc%65ss_token=leak":      "/a?access_token=REDACTED&b=1",
		"/a?search=tok&categories=x":      "/a?search=tok&categories=x",
		"/a?search=my+token&categories=x": "/a?categories=x&search=my+token",
		"/a?a=1;token=leak":               "/a?REDACTED",
	} {
		u, err := url.ParseRequestURI(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := httplog.RedactURL(u); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// The logged client is the socket's peer: X-Forwarded-For is whatever the
// client says, so it must not decide who a log line blames.
func TestLoggerIgnoresForwardedFor(t *testing.T) {
	var buf bytes.Buffer
	e := engine(httplog.Options{Logger: zerolog.New(&buf)})
	req := httptest.NewRequest("GET", "/v2/search/", nil)
	req.RemoteAddr = "192.0.2.7:51234"
	req.Header.Set("X-Forwarded-For", "203.0.113.99")
	req.Header.Set("X-Real-Ip", "203.0.113.98")
	e.ServeHTTP(httptest.NewRecorder(), req)
	lines := logLines(t, &buf)
	if len(lines) != 1 || lines[0]["remote"] != "192.0.2.7" {
		t.Fatalf("logged remote = %v, want the peer 192.0.2.7", lines)
	}
}

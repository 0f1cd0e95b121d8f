package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gds/api/admin"
)

// gds serve answers the public port alike with its own HTTP path for plain
// GETs (the default) and with net/http alone (--fast-http=false): the
// real binary on the sample, raw requests of every kind, including those
// the fast path hands to net/http (a body, HEAD, HTTP/1.0, heads too large
// for it, for the handler's limit and for net/http's, malformed ones) and
// pipelined ones.
func TestPublicPortAnswersAsNetHTTPAlone(t *testing.T) {
	needsBinary(t)
	fastData := t.TempDir()
	fast := serveBinary(t, fastData, "--snapshot", sampleSnapshot)
	// The same generation for both, so that Last-Modified and ETag agree.
	stdData := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(stdData, os.DirFS(fastData)); err != nil {
		t.Fatal(err)
	}
	std := serveBinary(t, stdData, "--fast-http=false")

	get := func(path string, headers ...string) string {
		return "GET " + path + " HTTP/1.1\r\nHost: gds.test\r\n" + strings.Join(headers, "") + "\r\n"
	}
	search := "/latest/search/?categories=solar_system,inventory_type&search=" + "jita"
	requests := map[string]string{
		"strict":          get(search + "&strict=true"),
		"gzip":            get(search, "Accept-Encoding: gzip\r\n", "User-Agent: t\r\n"),
		"too short":       get("/latest/search/?categories=solar_system&search=ji"),
		"no route":        get("/latest/nope/"),
		"status":          get("/latest/status/"),
		"dated":           get("/search/?categories=solar_system&search=jita", "X-Compatibility-Date: 2020-01-01\r\n"),
		"pipelined":       get(search) + get("/latest/status/") + get("/latest/nope/"),
		"head":            "HEAD " + search + " HTTP/1.1\r\nHost: gds.test\r\n\r\n",
		"post":            "POST /latest/universe/ids/ HTTP/1.1\r\nHost: gds.test\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n[\"Jita\"]",
		"http/1.0":        "GET /latest/status/ HTTP/1.0\r\n\r\n",
		"5 KB head":       get("/latest/status/", "X-Big: "+strings.Repeat("b", 5000)+"\r\n"),
		"70 KB head":      get("/latest/status/", "X-Big: "+strings.Repeat("b", 70_000)+"\r\n"),
		"140 KB head":     get("/latest/status/", "X-Big: "+strings.Repeat("b", 140_000)+"\r\n"),
		"malformed":       "GET /latest/status/ HTTP/1.1\r\nHost: gds.test\r\nBad Header\r\n\r\n",
		"fast, then slow": get("/latest/status/") + "HEAD /latest/status/ HTTP/1.1\r\nHost: gds.test\r\n\r\n" + get(search),
	}
	// What differs from one server or moment to the next.
	varying := regexp.MustCompile(`(?m)^(Date|X-Request-Id|Expires|X-Esi-Error-Limit-Reset): .*\r$`)
	// Each exchange ends with a request that closes the connection (a
	// client that closes its side instead would have net/http cancel the
	// search under way, a race).
	last := get("/latest/status/", "Connection: close\r\n")
	for name, raw := range requests {
		raw += last
		t.Run(name, func(t *testing.T) {
			want := varying.ReplaceAllString(rawExchange(t, std.public, raw), "$1: *\r")
			got := varying.ReplaceAllString(rawExchange(t, fast.public, raw), "$1: *\r")
			if got != want {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("answers differ from byte %d\n fast:     %.300q\n net/http: %.300q", i, got[max(i-100, 0):], want[max(i-100, 0):])
			}
			if !strings.HasPrefix(got, "HTTP/1.") {
				t.Errorf("no answer: %q", got)
			}
		})
	}
	// The operator port counts the connections and those handed over: the
	// eight requests above that are not plain GETs (or follow one).
	accepted, handedOver, found := connectionCounts(t, fast)
	if !found || accepted < float64(len(requests)) || handedOver < 8 || handedOver > accepted {
		t.Errorf("%s %v, %s %v (found %v)", admin.MetricConnections, accepted, admin.MetricHandedOver, handedOver, found)
	}
	if _, _, found := connectionCounts(t, std); found {
		t.Errorf("%s without --fast-http", admin.MetricConnections)
	}
}

// connectionCounts reads the public port's connection counters from the
// operator port's metrics.
func connectionCounts(t *testing.T, s *faultServer) (accepted, handedOver float64, found bool) {
	t.Helper()
	res, err := s.client.Get("http://" + s.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(b), "\n") {
		name, v, _ := strings.Cut(line, " ")
		var dst *float64
		switch name {
		case admin.MetricConnections:
			dst, found = &accepted, true
		case admin.MetricHandedOver:
			dst = &handedOver
		default:
			continue
		}
		if _, err := fmt.Sscan(v, dst); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
	}
	return accepted, handedOver, found
}

// rawExchange sends raw on a new connection and returns everything the
// server sends until it closes the connection.
func rawExchange(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading the answers: %v", err)
	}
	return string(got)
}

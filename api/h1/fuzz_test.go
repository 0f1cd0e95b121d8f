package h1

import (
	"bufio"
	"bytes"
	"context"
	"maps"
	"net/http"
	"slices"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// A head parseHead accepts is one net/http accepts too (its parser and
// its server's checks), read into the same request; what it refuses goes
// to net/http anyway, so refusing is always safe.
func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		get("/latest/search/?categories=character&search=Jita&strict=true", "Accept-Encoding: gzip\r\n", "X-Compatibility-Date: 2025-08-26\r\n"),
		get("/echo", "user-agent: t\r\n", "X-Multi: 1\r\n", "X-Multi:2\r\n", "Pragma: no-cache\r\n", "Accept:\r\n"),
		get("/echo", "Connection: close\r\n"),
		get("/a%20b?c=%zz#frag"),
		get("//double//slash"),
		"GET /echo HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET /echo HTTP/1.1\r\nHost: [::1]:80\r\nX-A: x\r\n y\r\n\r\n",
		"GET /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
		"GET /echo HTTP/1.0\r\n\r\n",
		"GET http://a/b HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /x HTTP/1.1\r\nhOsT: a\r\nconnection: Keep-Alive\r\nx-forwarded-for: 1.2.3.4\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	tmpl := (&http.Request{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody}).WithContext(context.Background())
	f.Fuzz(func(t *testing.T, b []byte) {
		n := headLen(b)
		if n < 0 || n > bufSize {
			return
		}
		head := b[:n]
		got, ok := parseHead(head, tmpl, tmpl.Context())
		if !ok {
			return
		}
		want, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
		if err != nil {
			t.Fatalf("accepted %q, which net/http refuses: %v", head, err)
		}
		// net/http's server then checks these (ReadRequest has moved the
		// one Host header to want.Host).
		if want.Host == "" || !httpguts.ValidHostHeader(want.Host) {
			t.Fatalf("accepted %q, whose Host net/http refuses", head)
		}
		for k, vv := range want.Header {
			if !httpguts.ValidHeaderFieldName(k) || slices.ContainsFunc(vv, func(v string) bool { return !httpguts.ValidHeaderFieldValue(v) }) {
				t.Fatalf("accepted %q, whose header %q net/http refuses", head, k)
			}
		}
		if want.Method != got.Method || want.RequestURI != got.RequestURI || want.URL.String() != got.URL.String() ||
			want.URL.Path != got.URL.Path || want.URL.RawQuery != got.URL.RawQuery || want.Host != got.Host ||
			want.Close != got.Close || want.ContentLength != 0 || want.ProtoMinor != got.ProtoMinor ||
			!maps.EqualFunc(want.Header, got.Header, slices.Equal) {
			t.Fatalf("%q read differently:\n h1:       %s %s %+v host %q close %v\n net/http: %s %s %+v host %q close %v len %d",
				head, got.Method, got.RequestURI, got.Header, got.Host, got.Close,
				want.Method, want.RequestURI, want.Header, want.Host, want.Close, want.ContentLength)
		}
	})
}

// Whatever a client sends, h1 (with net/http behind it) answers what
// net/http alone answers, byte for byte but the Date: the servers of
// TestAnswersAreNetHTTPs, raw bytes on a connection the client then
// half-closes.
func FuzzAnswers(f *testing.F) {
	for _, s := range []string{
		get("/small") + get("/typed"),
		get("/echo?x=1", "Connection: close\r\n"),
		get("/big") + "HEAD /small HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc" + get("/short"),
		"GET /echo HTTP/1.1\r\nHost: a\r\nX-A: x\r\n y\r\n\r\n",
		get("/headers") + get("/notmodified") + get("/nocontent"),
		get("/hijack"),
		"GET /echo HTTP/1.0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	h := handlers()
	_, fast, _ := serveFast(f, h, nil)
	std := serveStd(f, h)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 2*bufSize || bytes.Contains(raw, []byte("/panic")) {
			return // a panicking handler's answer is cut wherever it was
		}
		want := dateLine.ReplaceAllString(exchange(t, std, string(raw)), "\r\nDate: D\r\n")
		got := dateLine.ReplaceAllString(exchange(t, fast, string(raw)), "\r\nDate: D\r\n")
		if got != want {
			t.Fatalf("answers to %q differ\n h1:       %q\n net/http: %q", raw, got, want)
		}
	})
}

// headMayFinish never turns away the start of a head parseHead would
// take: every prefix of an accepted head may still finish.
func FuzzHeadMayFinish(f *testing.F) {
	f.Add([]byte(get("/latest/search/?categories=character&search=Jita", "Accept-Encoding: gzip\r\n")))
	f.Add([]byte("GET /echo HTTP/1.1\nHost: a\n\n"))
	f.Add([]byte("GET /a b c HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n"))
	tmpl := (&http.Request{Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Body: http.NoBody}).WithContext(context.Background())
	f.Fuzz(func(t *testing.T, b []byte) {
		n := headLen(b)
		if n < 0 || n > bufSize {
			return
		}
		if _, ok := parseHead(b[:n], tmpl, tmpl.Context()); !ok {
			return
		}
		for i := range n - 1 { // the last CRLF's LF completes the head
			if !headMayFinish(b[:i]) {
				t.Fatalf("turned away %q, the start of %q which parseHead takes", b[:i], b[:n])
			}
		}
	})
}

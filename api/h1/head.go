package h1

import (
	"bytes"
	"context"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// parseHead turns a request head (the request line, the header lines and
// the empty line, ending in "\r\n\r\n") into a request, when it is one
// this server answers itself: GET, HTTP/1.1, an origin-form target, one
// valid Host, no body (no Content-Length, Transfer-Encoding or Expect),
// no Upgrade, a Connection of keep-alive or close only, and every line
// well formed with CRLF endings. Anything else returns false, and the
// connection goes to net/http, which answers or refuses it as it always
// has. An accepted request is what net/http's own parser makes of the
// same bytes (FuzzParseHead checks).
func parseHead(head []byte, tmpl *http.Request, ctx context.Context) (*http.Request, bool) {
	s := string(head) // one string; the method, target and values are parts of it
	line, rest, ok := strings.Cut(s, "\r\n")
	if !ok {
		return nil, false
	}
	target, ok := strings.CutPrefix(line, "GET ")
	if !ok {
		return nil, false
	}
	target, ok = strings.CutSuffix(target, " HTTP/1.1")
	if !ok || target == "" || target[0] != '/' || !visibleASCII(target) {
		return nil, false
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil, false
	}
	n := strings.Count(rest, "\r\n") - 1 // header lines; the last CRLF ends the head
	if n < 1 {
		return nil, false // no Host
	}
	h := make(http.Header, n)
	vals := make([]string, n) // one backing array for every value, as net/http's reader does
	host, close := "", false
	for i := range n {
		line, rest, _ = strings.Cut(rest, "\r\n")
		name, value, ok := strings.Cut(line, ":")
		if !ok || !httpguts.ValidHeaderFieldName(name) {
			return nil, false
		}
		value = strings.Trim(value, " \t")
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil, false
		}
		key := canonicalKey(name)
		switch key {
		case "Host":
			if host != "" || !httpguts.ValidHostHeader(value) || value == "" {
				return nil, false
			}
			host = value
			continue // net/http keeps the Host in Request.Host only
		case "Content-Length", "Transfer-Encoding", "Expect", "Upgrade", "Trailer", "Te":
			return nil, false
		case "Connection":
			switch {
			case strings.EqualFold(value, "close"):
				close = true
			case strings.EqualFold(value, "keep-alive"):
			default:
				return nil, false
			}
		}
		vals[i] = value
		if prev, ok := h[key]; ok {
			h[key] = append(prev, value) // a repeated header: rare
		} else {
			h[key] = vals[i : i+1 : i+1]
		}
	}
	if host == "" || rest != "\r\n" {
		return nil, false
	}
	if p := h["Pragma"]; len(p) > 0 && p[0] == "no-cache" {
		if _, ok := h["Cache-Control"]; !ok {
			h["Cache-Control"] = []string{"no-cache"}
		}
	}
	r := tmpl.WithContext(ctx) // one allocation: a copy of the template
	r.Method = http.MethodGet
	r.URL = u
	r.RequestURI = target
	r.Header = h
	r.Host = host
	r.Close = close
	return r, true
}

// visibleASCII reports whether s is all printable ASCII without spaces:
// the only request targets taken here.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// commonKeys are the header names most requests carry, canonical, so that
// looking one up costs no allocation.
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Accept", "Accept-Encoding", "Accept-Language", "Authorization",
		"Cache-Control", "Connection", "Cookie", "Host", "If-Modified-Since", "If-None-Match",
		"Pragma", "Referer", "User-Agent", "X-Compatibility-Date", "X-Forwarded-For",
		"X-Forwarded-Proto", "X-Real-Ip", "X-Request-Id", "X-User-Agent", "Content-Length",
		"Transfer-Encoding", "Expect", "Upgrade", "Trailer", "Te", "Origin"} {
		m[k] = k
		m[strings.ToLower(k)] = k
	}
	return m
}()

// canonicalKey is textproto's canonical form of a valid header name.
func canonicalKey(name string) string {
	if k, ok := commonKeys[name]; ok {
		return k
	}
	return textproto.CanonicalMIMEHeaderKey(name)
}

// headMayFinish reports whether b, the start of a head without its end
// yet, may still become one parseHead takes: every line so far ends in
// CRLF, the request line (once whole) is a GET of an origin-form target
// over HTTP/1.1, and every whole header line is a valid field. When it is
// not, the connection goes to net/http at once, which answers what it can
// already tell (a head with bare LF line endings, which RFC 9112 allows; a
// malformed line: 400) or waits as it would alone; a client is never kept
// waiting here for a head that would be handed over anyway.
func headMayFinish(b []byte) bool {
	for i := bytes.IndexByte(b, '\n'); i >= 0; {
		if i == 0 || b[i-1] != '\r' {
			return false // a bare LF
		}
		j := bytes.IndexByte(b[i+1:], '\n')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	line, rest, whole := bytes.Cut(b, crlf)
	if !whole {
		return bytes.HasPrefix(getPrefix, line[:min(len(line), len(getPrefix))])
	}
	if !bytes.HasPrefix(line, getPrefix) || !bytes.HasSuffix(line, http11Suffix) ||
		!visibleASCII(string(line[len(getPrefix):len(line)-len(http11Suffix)])) {
		return false
	}
	for {
		line, rest, whole = bytes.Cut(rest, crlf)
		if !whole {
			return true
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !httpguts.ValidHeaderFieldName(string(name)) ||
			!httpguts.ValidHeaderFieldValue(string(bytes.Trim(value, " \t"))) {
			return false
		}
	}
}

var (
	crlf         = []byte("\r\n")
	getPrefix    = []byte("GET /")
	http11Suffix = []byte(" HTTP/1.1")
)

// headEnd is where a request head ends.
var headEnd = []byte("\r\n\r\n")

// headLen returns the length of the request head at the start of b, or -1
// while it is incomplete.
func headLen(b []byte) int {
	i := bytes.Index(b, headEnd)
	if i < 0 {
		return -1
	}
	return i + len(headEnd)
}

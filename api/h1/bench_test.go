package h1

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// memConn replays one request n times and discards the answers: a
// connection without system calls, so that a benchmark times h1's own
// work per request.
type memConn struct {
	req     []byte
	n, left int
	part    []byte
	written int64
}

func (c *memConn) Read(p []byte) (int, error) {
	if len(c.part) == 0 {
		if c.left == 0 {
			return 0, io.EOF
		}
		c.left--
		c.part = c.req
	}
	n := copy(p, c.part)
	c.part = c.part[n:]
	return n, nil
}

func (c *memConn) Write(p []byte) (int, error)      { c.written += int64(len(p)); return len(p), nil }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// BenchmarkServe is h1's cost per request (reading and parsing the head,
// the request and response, writing the answer) around a handler that
// sets a search answer's headers and writes its body; requests arrive one
// at a time, as from a client waiting for each answer:
// go test -run '^$' -bench Serve -benchmem ./api/h1
func BenchmarkServe(b *testing.B) {
	body := []byte(`{"character":[91505143,93665235,94733838,95958095,97426849,2112144730,2116977749]}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd["Cache-Control"] = []string{"public, max-age=3600"}
		hd["Content-Language"] = []string{"en"}
		hd["Content-Type"] = []string{"application/json; charset=utf-8"}
		hd["Etag"] = []string{`"30bcd5dd2432844cabe04ac9a179ce6b"`}
		hd["Expires"] = []string{"Wed, 25 Nov 2026 07:05:00 GMT"}
		hd["Last-Modified"] = []string{"Tue, 24 Nov 2026 20:57:00 GMT"}
		hd["Vary"] = []string{"Accept-Encoding", "Accept-Language"}
		hd["X-Esi-Error-Limit-Remain"] = []string{"100"}
		hd["X-Esi-Error-Limit-Reset"] = []string{"60"}
		hd["X-Request-Id"] = []string{"5f82809f2951df880000000000000001"}
		w.Write(body)
	})
	s := &Server{Handler: h, Fallback: &http.Server{}, Logger: zerolog.Nop(),
		ReadHeaderTimeout: time.Second, IdleTimeout: time.Minute, WriteTimeout: time.Minute}
	s.conns = map[*conn]struct{}{}
	mc := &memConn{req: []byte("GET /latest/search/?categories=character&search=Jita+Trader&strict=true HTTP/1.1\r\n" +
		"Host: localhost:8080\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")}
	b.ReportAllocs()
	b.ResetTimer()
	mc.left = b.N
	c := s.newConn(mc)
	c.serve()
	if mc.left != 0 || mc.written == 0 {
		b.Fatalf("%d requests left, %d bytes written", mc.left, mc.written)
	}
}

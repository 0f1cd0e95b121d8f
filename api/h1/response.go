package h1

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// response is the http.ResponseWriter of one request. It writes what
// net/http writes for the same handler calls, byte for byte (Date aside;
// TestAnswersAreNetHTTPs compares): the body goes through a 2 KiB buffer
// as net/http's does, and a body the handler finishes within it gets a
// Content-Length, a longer one is chunked unless the handler declared its
// length; the head is the status line, the handler's headers in sorted
// order, then Date, Content-Length, a sniffed Content-Type, Connection
// and Transfer-Encoding. The answer collects in the connection's output
// buffer and leaves in one write when the handler returns (or on Flush,
// or every maxOut bytes).
type response struct {
	c      *conn
	header http.Header

	status      int
	wroteHeader bool // the handler's status is set
	committed   bool // the head is in the output buffer
	done        bool // the handler returned
	hijacked    bool

	declared int64 // the handler's Content-Length, or -1
	written  int64 // body bytes written
	chunked  bool
	noLength bool     // never compute a Content-Length (a bad one, or trailers)
	trailers []string // declared in the Trailer header
	close    bool     // close the connection after this answer
	sayClose bool     // add "Connection: close" to the head
	headAt   int      // where this answer starts in the output buffer

	// The handler's headers, read when it set the status (net/http
	// snapshots them then).
	hasType, hasEncoding, hasDate bool
}

// bufferBeforeChunking is net/http's: a body that the handler finishes
// within it gets a Content-Length; a longer one is sent chunked.
const bufferBeforeChunking = 2048

func (w *response) Header() http.Header { return w.header }

func (w *response) WriteHeader(code int) {
	if w.hijacked || w.wroteHeader || w.done {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.informational(code)
		return
	}
	w.wroteHeader, w.status = true, code
	w.declared = -1
	if cl := w.header.Get("Content-Length"); cl != "" {
		if v, err := strconv.ParseInt(cl, 10, 64); err == nil && v >= 0 {
			w.declared = v
		} else {
			w.noLength = true // net/http then chunks the body, without the header
		}
	}
	for _, v := range w.header["Trailer"] {
		w.noLength = true
		for _, k := range strings.Split(v, ",") {
			k = http.CanonicalHeaderKey(textproto.TrimString(k))
			if k != "" && httpguts.ValidTrailerHeader(k) {
				w.trailers = append(w.trailers, k)
			}
		}
	}
	for k := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			w.noLength = true
		}
	}
	_, w.hasType = w.header["Content-Type"]
	w.hasEncoding = w.header.Get("Content-Encoding") != ""
	_, w.hasDate = w.header["Date"]
	// Closing after this answer says so, as net/http does: in the
	// handler's own Connection header, or in one that replaces it.
	handlerClose := httpguts.HeaderValuesContainsToken(w.header["Connection"], "close")
	w.close = handlerClose || w.c.closeAfter()
	w.sayClose = w.close && !handlerClose
	w.headAt = len(w.c.out)
	w.c.out = appendStatusLine(w.c.out, code)
	w.c.out = appendHeaders(w.c.out, w.header, code, w.sayClose, w.noLength && bodyAllowed(code))
}

// informational writes a 1xx answer at once, as net/http does.
func (w *response) informational(code int) {
	c := w.c
	c.out = appendStatusLine(c.out, code)
	c.out = appendHeaders(c.out, w.header, code, false, false)
	c.out = append(c.out, "\r\n"...)
	_ = c.flushOut()
}

func (w *response) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if w.done {
		return 0, errors.New("h1: write after the handler returned")
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(p)) // even when refused, as net/http: the answer is then cut short and the connection closed
	if w.declared >= 0 && w.written > w.declared {
		return 0, http.ErrContentLength
	}
	return w.c.bw.Write(p)
}

func (w *response) WriteString(s string) (int, error) {
	return w.Write([]byte(s)) // gin writes bytes; a string is rare
}

// body is where the 2 KiB buffer empties, as net/http's chunkWriter: the
// first time, the head is finished with what the buffer held.
type body struct{ c *conn }

func (b body) Write(p []byte) (int, error) {
	w := b.c.res
	if !w.committed {
		w.commit(p)
	}
	if err := b.c.appendBody(p, w.chunked); err != nil {
		return 0, err
	}
	return len(p), nil
}

// commit puts the rest of the head in the output buffer; p is the body's
// start, sniffed for a Content-Type and, once the handler returned, the
// whole body.
func (w *response) commit(p []byte) {
	w.committed = true
	c := w.c
	allowed := bodyAllowed(w.status)
	if !w.hasDate {
		c.out = append(c.out, "Date: "...)
		c.out = append(c.out, httpDate()...)
		c.out = append(c.out, "\r\n"...)
	}
	if w.done && w.declared < 0 && !w.noLength && allowed {
		c.out = append(c.out, "Content-Length: "...)
		c.out = strconv.AppendInt(c.out, int64(len(p)), 10)
		c.out = append(c.out, "\r\n"...)
		w.declared = int64(len(p))
	}
	if allowed && !w.hasType && !w.hasEncoding && len(p) > 0 {
		c.out = append(c.out, "Content-Type: "...)
		c.out = append(c.out, http.DetectContentType(p)...)
		c.out = append(c.out, "\r\n"...)
	}
	if w.sayClose {
		c.out = append(c.out, "Connection: close\r\n"...)
	}
	w.chunked = w.declared < 0 && allowed
	if w.chunked {
		c.out = append(c.out, "Transfer-Encoding: chunked\r\n"...)
	}
	c.out = append(c.out, "\r\n"...)
}

// finish ends the answer once the handler returned, and reports whether
// the connection may carry another request.
func (w *response) finish() (keep bool) {
	if w.hijacked {
		w.done = true
		return false
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.done = true
	if err := w.c.bw.Flush(); err != nil {
		return false
	}
	if !w.committed {
		w.commit(nil)
	}
	if w.chunked {
		w.c.out = append(w.c.out, "0\r\n"...)
		if t := w.finalTrailers(); t != nil {
			w.c.out = appendHeaders(w.c.out, t, http.StatusOK, false, false)
		}
		w.c.out = append(w.c.out, "\r\n"...)
	}
	if w.declared >= 0 && bodyAllowed(w.status) && w.written != w.declared {
		w.close = true // a short body: the client and server would disagree on where the next answer starts
	}
	return !w.close
}

// finalTrailers are the trailers' values as the handler left them.
func (w *response) finalTrailers() http.Header {
	var t http.Header
	for k, vv := range w.header {
		if kk, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			if t == nil {
				t = http.Header{}
			}
			t[kk] = vv
		}
	}
	for _, k := range w.trailers {
		if t == nil {
			t = http.Header{}
		}
		for _, v := range w.header[k] {
			t.Add(k, v)
		}
	}
	return t
}

// Flush sends the head and what the body has so far.
func (w *response) Flush() {
	_ = w.FlushError()
}

// FlushError is Flush for http.ResponseController.
func (w *response) FlushError() error {
	if w.hijacked || w.done {
		return nil
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if err := w.c.bw.Flush(); err != nil {
		return err
	}
	if !w.committed {
		w.commit(nil)
	}
	return w.c.flushOut()
}

// Hijack hands the connection to the handler, with what the client sent
// beyond this request still readable from the reader.
func (w *response) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked || w.done {
		return nil, nil, http.ErrHijacked
	}
	w.c.rctx.stop() // the connection's reads are its new owner's
	if w.wroteHeader && !w.committed {
		w.c.out = w.c.out[:w.headAt] // a head not sent is not sent
	}
	if err := w.c.flushOut(); err != nil { // earlier answers, and this one's start
		return nil, nil, err
	}
	w.hijacked = true
	_ = w.c.nc.SetDeadline(time.Time{}) // the connection's new owner sets its own, as after net/http's Hijack
	return w.c.nc, bufio.NewReadWriter(w.c.br, bufio.NewWriter(w.c.nc)), nil
}

// CloseNotify is for gin's writer, which asserts it; nothing is sent on
// the channel (the request's context says when a client went away).
func (w *response) CloseNotify() <-chan bool { return w.c.neverClosed() }

func bodyAllowed(status int) bool {
	return (status < 100 || status > 199) && status != http.StatusNoContent && status != http.StatusNotModified
}

// appendStatusLine appends net/http's status line for code.
func appendStatusLine(b []byte, code int) []byte {
	b = append(b, "HTTP/1.1 "...)
	text := http.StatusText(code)
	if text == "" {
		return fmt.Appendf(b, "%03d status code %d\r\n", code, code)
	}
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	b = append(b, text...)
	return append(b, "\r\n"...)
}

// appendHeaders appends h's lines for an answer of status in net/http's
// order (sorted by key) and form (invalid names dropped, line breaks in
// values made spaces, then trimmed), leaving out Transfer-Encoding, which
// this writer sets itself, what the status must not carry, a length it
// will not keep (noLength), trailers, and a Connection header it
// replaces with "close".
func appendHeaders(b []byte, h http.Header, status int, close, noLength bool) []byte {
	var arr [24]string
	keys := arr[:0]
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch k {
		case "Transfer-Encoding":
			continue
		case "Content-Length":
			if !bodyAllowed(status) || noLength {
				continue
			}
		case "Content-Type":
			if status == http.StatusNotModified {
				continue
			}
		case "Connection":
			if close {
				continue
			}
		}
		if !httpguts.ValidHeaderFieldName(k) || strings.HasPrefix(k, http.TrailerPrefix) {
			continue
		}
		for _, v := range h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			b = appendValue(b, v)
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// appendValue appends v as net/http writes a header value.
func appendValue(b []byte, v string) []byte {
	start := len(b)
	b = append(b, v...)
	for i := start; i < len(b); i++ {
		if b[i] == '\r' || b[i] == '\n' {
			b[i] = ' '
		}
	}
	end := len(b)
	for end > start && (b[end-1] == ' ' || b[end-1] == '\t') {
		end--
	}
	lead := start
	for lead < end && (b[lead] == ' ' || b[lead] == '\t') {
		lead++
	}
	if lead > start {
		copy(b[start:], b[lead:end])
	}
	return b[:start+end-lead]
}

// dates caches the Date header's value for the current second.
var dates atomic.Pointer[dateValue]

type dateValue struct {
	sec  int64
	text []byte
}

func httpDate() []byte {
	now := time.Now()
	if d := dates.Load(); d != nil && d.sec == now.Unix() {
		return d.text
	}
	d := &dateValue{sec: now.Unix(), text: now.UTC().AppendFormat(nil, http.TimeFormat)}
	dates.Store(d)
	return d.text
}

package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"gds/api/esierr"
)

// defaultMaxRequestBytes bounds the request line with headers, and the
// body, unless Limits says otherwise.
const defaultMaxRequestBytes = 64 << 10

// requestLimits refuses requests over the size limits inside the error
// limiter, so the refusal is an ESI answer like any other: {"error"} with
// the error-limit headers, counted toward the limit, and 420 for a client
// already at it. Bodies are read through a limit too, for those that do
// not say their length (chunked).
func (s *server) requestLimits(c *gin.Context) {
	r := c.Request
	if n := headerBytes(r); n > s.maxHeader {
		writeError(c, http.StatusRequestHeaderFieldsTooLarge,
			fmt.Sprintf("request line and headers are larger than %d bytes", s.maxHeader))
		return
	}
	if r.ContentLength > s.maxBody {
		writeError(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", s.maxBody))
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(c.Writer, r.Body, s.maxBody)
	}
	c.Next()
}

// headerBytes is the size of the request line and header block as sent
// (net/http keeps Host apart from the other headers).
func headerBytes(r *http.Request) int64 {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return int64(n)
}

// bodyError is a request body that could not be read or was refused,
// with the status that says why and, for one item, where it is
// ("body[3]") and what it held.
type bodyError struct {
	status   int
	msg      string
	location string
	value    any
}

func (e *bodyError) Error() string { return e.msg }

// bodyItemError refuses item i of a JSON array body, raw.
func bodyItemError(i int, raw json.RawMessage, format string, args ...any) error {
	var value any = raw
	if !utf8.Valid(raw) {
		value = string(raw) // encoded with U+FFFD, as JSON must be
	}
	return &bodyError{status: http.StatusBadRequest, msg: fmt.Sprintf("request body[%d]: ", i) + fmt.Sprintf(format, args...),
		location: fmt.Sprintf("body[%d]", i), value: value}
}

// readBodyError names a failure to read a request body without the
// connection's details (socket addresses): too large (413), too slow
// (408), or cut off (400).
func readBodyError(err error) error {
	var mb *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mb):
		return &bodyError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes", mb.Limit)}
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &bodyError{status: http.StatusRequestTimeout, msg: "request body: not received in time"}
	default:
		return &bodyError{status: http.StatusBadRequest, msg: "request body: the connection ended before the body did"}
	}
}

// writeBodyError answers a request whose body was refused: the status
// bodyError gives, else 400, with a detail naming where in the body
// ("body", "body[3]", "body[3].day") as the message does.
func writeBodyError(c *gin.Context, err error) {
	status := http.StatusBadRequest
	msg := err.Error()
	d := esierr.Detail{Location: "body", Message: msg}
	var be *bodyError
	if errors.As(err, &be) {
		status = be.status
		if be.location != "" {
			d.Location, d.Value = be.location, be.value
		}
	}
	if d.Location == "body" {
		// "request body[3].day: missing" is at body[3].day.
		if rest, ok := strings.CutPrefix(msg, "request body"); ok {
			if at, _, found := strings.Cut(rest, ":"); found && !strings.ContainsAny(at, " ") {
				d.Location += at
			}
		}
	}
	if _, m, ok := strings.Cut(d.Message, ": "); ok && strings.HasPrefix(d.Message, "request body") {
		d.Message = m
	}
	writeErrorDetails(c, status, msg, d)
}

package api

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"
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

// bodyError is a request body that could not be read, with the status
// that says why.
type bodyError struct {
	status int
	msg    string
}

func (e *bodyError) Error() string { return e.msg }

// readBodyError names a failure to read a request body without the
// connection's details (socket addresses): too large (413), too slow
// (408), or cut off (400).
func readBodyError(err error) error {
	var mb *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mb):
		return &bodyError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", mb.Limit)}
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &bodyError{http.StatusRequestTimeout, "request body: not received in time"}
	default:
		return &bodyError{http.StatusBadRequest, "request body: the connection ended before the body did"}
	}
}

// writeBodyError answers a request whose body was refused: the status
// bodyError gives, else 400.
func writeBodyError(c *gin.Context, err error) {
	status := http.StatusBadRequest
	var be *bodyError
	if errors.As(err, &be) {
		status = be.status
	}
	writeError(c, status, err.Error())
}

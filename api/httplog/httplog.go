// Package httplog is the gin middleware both HTTP listeners share: one log
// line per request with a request ID, panic recovery into the log, and a
// request body limit. It never logs credentials: no headers but a few
// harmless ones, and the token query parameter redacted.
package httplog

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api/clientip"
	"gds/api/esierr"
)

// RequestIDHeader carries the request ID in and out.
const RequestIDHeader = "X-Request-Id"

// Redacted replaces secrets in logged URLs.
const Redacted = "REDACTED"

// secretParams are query parameters whose values never reach a log (ESI
// accepts an access token as ?token=).
var secretParams = []string{"token", "access_token"}

// Options configure Logger.
type Options struct {
	// Logger receives one line per request.
	Logger zerolog.Logger
	// Labels names the route (a template, not the raw path, so logs and
	// metrics group by it) and the version a request was served by; nil
	// means gin's matched path and no version.
	Labels func(c *gin.Context) (route, version string)
	// Observe, when set, is called once per request after it is answered
	// (for metrics), with the same labels as the log line.
	Observe func(route, version string, status int, d time.Duration)
	// ClientIP is the address logged as the client's (clientip.Resolver's
	// IP, so logs agree with the limiters); nil means the TCP peer.
	ClientIP func(r *http.Request) string
	// Keep says which requests are logged; the zero value logs all.
	Keep Keep
}

// RequestID returns the request's ID as Logger assigned it, or "". It
// lives in the answer's X-Request-Id header, where Logger puts it anyway
// (no gin context key, whose map is an allocation per request).
func RequestID(c *gin.Context) string {
	if v := c.Writer.Header()[RequestIDHeader]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Logger returns middleware that assigns every request an ID (the client's
// X-Request-Id when it is sane, else a random one), echoes it in the
// response, and logs one line when the request is answered.
func Logger(o Options) gin.HandlerFunc {
	clientIP := o.ClientIP
	if clientIP == nil {
		clientIP = func(r *http.Request) string { return clientip.Resolver{}.IP(r) }
	}
	labels := o.Labels
	if labels == nil {
		labels = func(c *gin.Context) (string, string) { return c.FullPath(), "" }
	}
	keep := o.Keep
	if keep.Rest > 1 && keep.Counts == nil {
		keep.Counts = &Counts{} // the sample's counter
	}
	return func(c *gin.Context) {
		start := time.Now()
		id := c.GetHeader(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Writer.Header()[RequestIDHeader] = []string{id} // canonical key

		c.Next()

		d := time.Since(start)
		status := c.Writer.Status()
		route, version := labels(c)
		if route == "" {
			route = "unmatched"
		}
		if o.Observe != nil {
			o.Observe(route, version, status, d)
		}
		ok, sampled := keep.keep(status, d)
		if !ok {
			return
		}
		// 503 is the service saying "not now" (not ready, overloaded), not
		// a fault to page someone about.
		ev := o.Logger.Info()
		switch {
		case status == http.StatusServiceUnavailable:
			ev = o.Logger.Warn()
		case status >= 500:
			ev = o.Logger.Error()
		}
		var ms [24]byte
		var path [256]byte
		ev = ev.Str("request_id", id).
			Str("method", c.Request.Method).
			Str("route", route).
			Bytes("path", appendRedactedURL(path[:0], c.Request.URL)).
			Int("status", status).
			RawJSON("latency_ms", appendMillis(ms[:0], d)).
			Int("bytes", max(c.Writer.Size(), 0)).
			Str("remote", clientIP(c.Request))
		if version != "" {
			ev = ev.Str("version", version)
		}
		if ua := c.Request.UserAgent(); ua != "" {
			ev = ev.Str("user_agent", ua)
		}
		if len(c.Errors) > 0 {
			ev = ev.Str("errors", c.Errors.String())
		}
		if sampled > 0 {
			ev = ev.Int("sampled", sampled) // this line stands for sampled requests
		}
		ev.Msg("request")
	}
}

// appendMillis appends d in milliseconds with up to three decimals, as
// zerolog's Float64 writes float64(d.Microseconds())/1000 (the shortest
// decimal that reads back as that number) without the float formatting.
func appendMillis(b []byte, d time.Duration) []byte {
	us := d.Microseconds()
	if us < 0 {
		b = append(b, '-')
		us = -us
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return b
	}
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}

// validRequestID accepts client IDs that are short printable ASCII without
// spaces, so a client cannot forge log structure or flood the log.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// requestIDs makes request IDs: 32 hex digits, a random prefix drawn once
// per process and a counter, so IDs never repeat within a process and
// hardly across processes, without reading the system's randomness (a
// system call) for every request.
var requestIDs struct {
	prefix [8]byte
	next   atomic.Uint64
}

func init() {
	_, _ = rand.Read(requestIDs.prefix[:]) // never fails (crypto/rand since Go 1.24)
}

func newRequestID() string {
	var b [16]byte
	copy(b[:8], requestIDs.prefix[:])
	binary.BigEndian.PutUint64(b[8:], requestIDs.next.Add(1))
	return hex.EncodeToString(b[:])
}

// RedactURL returns the path and query of u with the values of secret
// parameters replaced by Redacted.
func RedactURL(u *url.URL) string {
	if u.RawQuery == "" {
		return u.EscapedPath()
	}
	if !mayHoldSecret(u.RawQuery) {
		return u.EscapedPath() + "?" + u.RawQuery
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		// Unparseable queries are not logged at all rather than risk a
		// token slipping through.
		return u.EscapedPath() + "?" + Redacted
	}
	for _, p := range secretParams {
		if vs, ok := q[p]; ok {
			for i := range vs {
				vs[i] = Redacted
			}
		}
	}
	return u.EscapedPath() + "?" + q.Encode()
}

// appendRedactedURL appends RedactURL(u) to b, without making a string
// when u's query holds no secret (a log line's path).
func appendRedactedURL(b []byte, u *url.URL) []byte {
	if u.RawQuery != "" && mayHoldSecret(u.RawQuery) {
		return append(b, RedactURL(u)...)
	}
	b = append(b, u.EscapedPath()...)
	if u.RawQuery != "" {
		b = append(append(b, '?'), u.RawQuery...)
	}
	return b
}

// mayHoldSecret reports whether a raw query could name a secret parameter
// (any escape could spell one) or fail to parse; false lets it be logged as
// it came, without parsing it.
func mayHoldSecret(rawQuery string) bool {
	if strings.ContainsAny(rawQuery, "%;") {
		return true
	}
	for _, p := range secretParams {
		if strings.Contains(rawQuery, p) {
			return true
		}
	}
	return false
}

// Recover returns middleware that turns a panic into a logged error and a
// 500 JSON answer instead of a dropped connection.
func Recover(log zerolog.Logger) gin.HandlerFunc {
	return gin.CustomRecoveryWithWriter(nil, func(c *gin.Context, err any) {
		log.Error().Interface("panic", err).Str("request_id", RequestID(c)).
			Str("path", RedactURL(c.Request.URL)).Msg("handler panicked")
		c.AbortWithStatusJSON(http.StatusInternalServerError, esierr.New(http.StatusInternalServerError, "Internal error"))
	})
}

// BodyLimit returns middleware that refuses request bodies larger than n
// bytes: at once with 413 when Content-Length says so, else by making the
// body's reader fail past n (http.MaxBytesReader), which handlers decoding
// the body see as an *http.MaxBytesError.
func BodyLimit(n int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge,
				esierr.New(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body is larger than %d bytes", n)))
			return
		}
		if c.Request.Body != nil && c.Request.Body != http.NoBody {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, n)
		}
		c.Next()
	}
}

// TooLarge reports whether err comes from reading a body past BodyLimit.
func TooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}

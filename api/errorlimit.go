package api

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"gds/api/clientip"
	"gds/api/esierr"
	"gds/api/ratelimit"
)

// Defaults of Limits.
const (
	defaultErrorLimit  = 100
	defaultErrorWindow = time.Minute
)

// StatusErrorLimited is ESI's answer to a client that spent its error budget.
const StatusErrorLimited = 420

// reasonErrorLimited is the status line's reason phrase of a 420, after the
// "Error limited" response of ESI's documents (net/http knows no text for
// 420 and would write "420 status code 420").
const reasonErrorLimited = "Error Limited"

// Error limit headers ESI sends on every response.
const (
	HeaderErrorLimitRemain = "X-ESI-Error-Limit-Remain"
	HeaderErrorLimitReset  = "X-ESI-Error-Limit-Reset"
)

// errorLimiter answers 420 to a client that got ErrorLimit error answers
// (4xx and 5xx, except 420 itself) within one window, until that window
// ends, as ESI does. A window opens at a client's first error, so
// well-behaved clients cost no memory. A client is an IPv4 address or an
// IPv6 /64, as the rate limiter keys it (one subscriber usually holds a
// whole /64). Its windows are a ratelimit.Windows: every answer costs
// O(1), memory is bounded by Limits.ErrorClients (default 262,144
// clients, at most 12 MiB), and a flood of distinct clients beyond that
// never stops the counting of anyone else.
type errorLimiter struct {
	limit    int
	window   time.Duration
	now      func() time.Time
	metrics  Metrics
	clientIP clientip.Resolver
	windows  *ratelimit.Windows
}

func newErrorLimiter(l Limits, now func() time.Time, m Metrics, ip clientip.Resolver) *errorLimiter {
	el := &errorLimiter{limit: l.ErrorLimit, window: l.ErrorWindow, now: now, metrics: m, clientIP: ip}
	if el.limit == 0 {
		el.limit = defaultErrorLimit
	}
	if el.window <= 0 {
		el.window = defaultErrorWindow
	}
	el.windows = ratelimit.NewWindows(ratelimit.WindowsConfig{Window: el.window, Now: now, MaxClients: l.ErrorClients})
	return el
}

func (el *errorLimiter) handle(c *gin.Context) {
	if el.limit < 0 {
		c.Next()
		return
	}
	// X-Forwarded-For only from trusted proxies: it is the client's to
	// forge, so it must not pick whose budget an error is charged to.
	// Resolved once per request: the rate limiter reads it from the
	// writer (limitWriterOf).
	addr, now := el.clientIP.Addr(c.Request), el.now()
	remain, reset := el.stateOf(addr, now)
	if remain <= 0 {
		el.metrics.ErrorLimited()
		setErrorLimitHeaders(c.Writer.Header(), 0, reset)
		writeErrorLimited(c, fmt.Sprintf(
			"error limited: this client got %d error answers within %v; fix the requests, and retry in %d seconds",
			el.limit, el.window, reset))
		return
	}
	w := &limitWriter{el: el, addr: addr, now: now, remain: remain, reset: reset}
	w.commitWriter = commitWriter{c.Writer, w}
	c.Writer = w
	c.Next()
	w.commit() // a response without a body has not committed yet
	c.Writer = w.ResponseWriter
}

// limitWriter charges an error answer and sets the error limit headers
// just before the status line is committed, when the final status is
// known (gin commits on the first body write or WriteHeaderNow). It also
// settles the request's rate-limit ticket, when serveLimited hands it one,
// so a rate-limited request needs no writer of its own.
type limitWriter struct {
	commitWriter
	el            *errorLimiter
	addr          netip.Addr // the client, as clientip resolved it
	now           time.Time  // when the request came in (read once for both limiters)
	remain, reset int
	committed     bool
	rate          *rateGroup // nil: not rate limited (or not admitted)
	ticket        ratelimit.Ticket
}

func (w *limitWriter) commit() {
	if w.committed {
		return
	}
	w.committed = true
	status := w.ResponseWriter.Status()
	if w.rate != nil {
		setRateHeaders(w.Header(), w.rate, &w.ticket, status)
	}
	if status >= 400 && status != StatusErrorLimited {
		w.remain, w.reset = w.el.countOf(w.addr)
	}
	setErrorLimitHeaders(w.Header(), w.remain, w.reset)
}

// limitWriterOf finds the error limiter's writer beneath a handler's
// writer (only compression wraps it), or nil when the error limit is off.
func limitWriterOf(w gin.ResponseWriter) *limitWriter {
	if g, ok := w.(*gzipWriter); ok {
		w = g.ResponseWriter
	}
	lw, _ := w.(*limitWriter)
	return lw
}

// commitWriter calls its owner's commit before each call that can commit
// the status line, so that the owner sets its headers when the final
// status is known (limitWriter, rateWriter).
type commitWriter struct {
	gin.ResponseWriter
	owner interface{ commit() }
}

func (w commitWriter) WriteHeaderNow() { w.owner.commit(); w.ResponseWriter.WriteHeaderNow() }
func (w commitWriter) Flush()          { w.owner.commit(); w.ResponseWriter.Flush() }

func (w commitWriter) Write(b []byte) (int, error) {
	w.owner.commit()
	return w.ResponseWriter.Write(b)
}

func (w commitWriter) WriteString(s string) (int, error) {
	w.owner.commit()
	return w.ResponseWriter.WriteString(s)
}

func setErrorLimitHeaders(h http.Header, remain, reset int) {
	h[canonicalErrorLimitRemain] = headerInt(max(remain, 0))
	h[canonicalErrorLimitReset] = headerInt(reset)
}

// headerInt is n as a header value, shared for small numbers (see the
// shared header values in cache.go).
func headerInt(n int) []string {
	if n >= 0 && n < len(smallHeaderInts) {
		return smallHeaderInts[n]
	}
	return []string{strconv.Itoa(n)}
}

var smallHeaderInts = func() (v [1024][]string) {
	for i := range v {
		v[i] = []string{strconv.Itoa(i)}
	}
	return v
}()

// The error limit headers as net/http keys them, so setting them on every
// answer does not canonicalize them every time.
var (
	canonicalErrorLimitRemain = http.CanonicalHeaderKey(HeaderErrorLimitRemain)
	canonicalErrorLimitReset  = http.CanonicalHeaderKey(HeaderErrorLimitReset)
)

// ipAddr is the table key of a textual client address; an unreadable
// one is the zero Addr (all such share a window, as they did by "").
func ipAddr(ip string) netip.Addr {
	a, _ := netip.ParseAddr(ip)
	return a.Unmap()
}

// state returns the errors ip may still make and the seconds until its
// window resets.
func (el *errorLimiter) state(ip string) (remain, reset int) { return el.stateOf(ipAddr(ip), el.now()) }

// count charges one error to ip.
func (el *errorLimiter) count(ip string) (remain, reset int) { return el.countOf(ipAddr(ip)) }

func (el *errorLimiter) stateOf(ip netip.Addr, now time.Time) (remain, reset int) {
	count, left := el.windows.Get(el.windows.Key(ip), now)
	return el.limit - count, seconds(left)
}

func (el *errorLimiter) countOf(ip netip.Addr) (remain, reset int) {
	count, left := el.windows.Count(el.windows.Key(ip), el.now())
	return el.limit - count, seconds(left)
}

// seconds rounds d up to whole seconds, so "0" only ever means "now".
func seconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}

// writeErrorLimited answers 420 with ESI's reason phrase. net/http writes
// the status line from http.StatusText, which has none for 420, so on an
// HTTP/1.x connection the answer is written on the hijacked connection,
// which is then closed (a client over its error budget should back off
// anyway). HTTP/2 has no reason phrase, and a writer that cannot be
// hijacked (a test recorder) gets the plain answer.
func writeErrorLimited(c *gin.Context, msg string) {
	if c.Request.ProtoMajor != 1 || !hijackable(c.Writer) {
		writeError(c, StatusErrorLimited, msg)
		return
	}
	c.Status(StatusErrorLimited) // for the logs and metrics around
	h := c.Writer.Header().Clone()
	conn, rw, err := c.Writer.Hijack() // gin's: the answer counts as written
	if err != nil {
		writeError(c, StatusErrorLimited, msg)
		return
	}
	defer conn.Close()
	c.Abort()
	body := esierr.JSON(StatusErrorLimited, msg)
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Connection", "close")
	fmt.Fprintf(rw, "HTTP/1.1 %d %s\r\n", StatusErrorLimited, reasonErrorLimited)
	_ = h.Write(rw)
	_, _ = rw.WriteString("\r\n")
	if c.Request.Method != http.MethodHead {
		_, _ = rw.Write(body)
	}
	_ = rw.Flush()
}

// hijackable reports whether gin's writer can hijack the connection: gin's
// Hijack assumes the writer beneath it can, and panics otherwise.
func hijackable(w gin.ResponseWriter) bool {
	u, ok := w.(interface{ Unwrap() http.ResponseWriter })
	if !ok {
		return false
	}
	_, ok = u.Unwrap().(http.Hijacker)
	return ok
}

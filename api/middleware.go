package api

import (
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/klauspost/compress/gzip"
)

// Defaults of Limits.
const (
	defaultErrorLimit  = 100
	defaultErrorWindow = time.Minute
)

// StatusErrorLimited is ESI's answer to a client that spent its error budget.
const StatusErrorLimited = 420

// Error limit headers ESI sends on every response.
const (
	HeaderErrorLimitRemain = "X-ESI-Error-Limit-Remain"
	HeaderErrorLimitReset  = "X-ESI-Error-Limit-Reset"
)

// middleware is what runs before every route of the public API, outermost
// first: metrics see every answer (420s too), the error limiter counts
// what the client finally gets, and compression wraps the body last.
func (s *server) middleware() []gin.HandlerFunc {
	return []gin.HandlerFunc{
		s.observe,
		newErrorLimiter(s.d.Limits, s.now, s.metrics()).handle,
		compress,
	}
}

// metrics returns Deps.Metrics, or one that keeps nothing.
func (s *server) metrics() Metrics {
	if s.d.Metrics == nil {
		return noMetrics{}
	}
	return s.d.Metrics
}

type noMetrics struct{}

func (noMetrics) ObserveRequest(string, string, int, time.Duration) {}
func (noMetrics) SearchStats(int, int)                              {}
func (noMetrics) CacheHit()                                         {}
func (noMetrics) CacheMiss()                                        {}
func (noMetrics) ErrorLimited()                                     {}

// observe reports every request to Metrics by route template, so a metric
// has one series per route rather than one per ID.
func (s *server) observe(c *gin.Context) {
	m := s.metrics()
	if _, ok := m.(noMetrics); ok {
		c.Next()
		return
	}
	start := time.Now()
	panicked := true
	defer func() {
		status := c.Writer.Status()
		if panicked {
			// The recovery handler outside answers 500 after this returns.
			status = http.StatusInternalServerError
		}
		m.ObserveRequest(routeTemplate(c), VersionLabel(c), status, time.Since(start))
	}()
	c.Next()
	panicked = false
}

// routeTemplate names the request's route for metrics: the table's path, or
// gin's pattern for routes outside the table, or "unmatched".
func routeTemplate(c *gin.Context) string {
	if r, _ := RouteOf(c); r != nil {
		return r.Path
	}
	if p := c.FullPath(); p != "" {
		return p
	}
	return "unmatched"
}

// errorLimiter answers 420 to a client (by IP) that got ErrorLimit error
// answers (4xx and 5xx, except 420 itself) within one window, until that
// window ends, as ESI does. A window opens at a client's first error, so
// well-behaved clients cost no memory.
type errorLimiter struct {
	limit   int
	window  time.Duration
	now     func() time.Time
	metrics Metrics

	mu        sync.Mutex
	clients   map[string]*errorWindow
	lastSweep time.Time
}

type errorWindow struct {
	end    time.Time
	errors int
}

// maxErrorClients bounds the limiter's memory; when that many clients have
// open windows, new ones are not tracked until a sweep frees room.
const maxErrorClients = 100_000

func newErrorLimiter(l Limits, now func() time.Time, m Metrics) *errorLimiter {
	el := &errorLimiter{limit: l.ErrorLimit, window: l.ErrorWindow, now: now, metrics: m,
		clients: make(map[string]*errorWindow)}
	if el.limit == 0 {
		el.limit = defaultErrorLimit
	}
	if el.window <= 0 {
		el.window = defaultErrorWindow
	}
	return el
}

func (el *errorLimiter) handle(c *gin.Context) {
	if el.limit < 0 {
		c.Next()
		return
	}
	// RemoteIP, not ClientIP: X-Forwarded-For is the client's to forge, so
	// it must not pick whose budget an error is charged to.
	ip := c.RemoteIP()
	remain, reset := el.state(ip)
	if remain <= 0 {
		el.metrics.ErrorLimited()
		setErrorLimitHeaders(c.Writer.Header(), 0, reset)
		writeError(c, StatusErrorLimited, fmt.Sprintf(
			"error limited: this client got %d error answers within %v; fix the requests, and retry in %d seconds",
			el.limit, el.window, reset))
		return
	}
	w := &limitWriter{ResponseWriter: c.Writer, el: el, ip: ip, remain: remain, reset: reset}
	c.Writer = w
	c.Next()
	w.commit() // a response without a body has not committed yet
	c.Writer = w.ResponseWriter
}

// limitWriter charges an error answer and sets the error limit headers
// just before the status line is committed, when the final status is
// known (gin commits on the first body write or WriteHeaderNow).
type limitWriter struct {
	gin.ResponseWriter
	el            *errorLimiter
	ip            string
	remain, reset int
	committed     bool
}

func (w *limitWriter) commit() {
	if w.committed {
		return
	}
	w.committed = true
	if status := w.ResponseWriter.Status(); status >= 400 && status != StatusErrorLimited {
		w.remain, w.reset = w.el.count(w.ip)
	}
	setErrorLimitHeaders(w.Header(), w.remain, w.reset)
}

func (w *limitWriter) WriteHeaderNow() { w.commit(); w.ResponseWriter.WriteHeaderNow() }
func (w *limitWriter) Flush()          { w.commit(); w.ResponseWriter.Flush() }

func (w *limitWriter) Write(b []byte) (int, error) {
	w.commit()
	return w.ResponseWriter.Write(b)
}

func (w *limitWriter) WriteString(s string) (int, error) {
	w.commit()
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

// state returns the errors ip may still make and the seconds until its
// window resets.
func (el *errorLimiter) state(ip string) (remain, reset int) {
	el.mu.Lock()
	defer el.mu.Unlock()
	now := el.now()
	w := el.clients[ip]
	if w == nil || !now.Before(w.end) {
		return el.limit, seconds(el.window)
	}
	return el.limit - w.errors, seconds(w.end.Sub(now))
}

// count charges one error to ip.
func (el *errorLimiter) count(ip string) (remain, reset int) {
	el.mu.Lock()
	defer el.mu.Unlock()
	now := el.now()
	el.sweep(now)
	w := el.clients[ip]
	if w == nil || !now.Before(w.end) {
		if w == nil && len(el.clients) >= maxErrorClients {
			return el.limit, seconds(el.window)
		}
		w = &errorWindow{end: now.Add(el.window)}
		el.clients[ip] = w
	}
	w.errors++
	return el.limit - w.errors, seconds(w.end.Sub(now))
}

// sweep drops ended windows, at most once per window length so the cost
// stays proportional to the traffic.
func (el *errorLimiter) sweep(now time.Time) {
	if now.Sub(el.lastSweep) < el.window && len(el.clients) < maxErrorClients {
		return
	}
	el.lastSweep = now
	for ip, w := range el.clients {
		if !now.Before(w.end) {
			delete(el.clients, ip)
		}
	}
}

// seconds rounds d up to whole seconds, so "0" only ever means "now".
func seconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}

// minGzipBytes is the body size from which compressing pays for itself.
const minGzipBytes = 1024

// gzipWriters compress at klauspost/compress's fastest level: a search
// answer is a few kilobytes of digits that compress about as well at level
// 1 as at 6, and compression is most of the CPU an uncached search costs
// over HTTP (stdlib level 6 cost more than the search itself).
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// compress gzips bodies of at least minGzipBytes for clients that accept
// gzip. Every answer says Vary: Accept-Encoding, so shared caches keep the
// two encodings apart.
func compress(c *gin.Context) {
	addVary(c.Writer.Header(), "Accept-Encoding")
	if !acceptsGzip(c.Request.Header.Values("Accept-Encoding")) {
		c.Next()
		return
	}
	w := &gzipWriter{ResponseWriter: c.Writer}
	c.Writer = w
	finished := false
	defer func() {
		c.Writer = w.ResponseWriter
		if !finished {
			// The handler panicked: drop what it held back, the recovery
			// handler answers instead; the pooled writer still goes back.
			w.buf, w.plain = nil, true
		}
		w.close()
	}()
	c.Next()
	finished = true
}

// addVary adds v to h's Vary values, using the shared lists (see cache.go)
// for the two every search answer has.
func addVary(h http.Header, v string) {
	old := h["Vary"]
	switch {
	case len(old) == 0 && v == "Accept-Encoding":
		h["Vary"] = varyEncoding
	case len(old) == 1 && old[0] == "Accept-Encoding" && v == "Accept-Language":
		h["Vary"] = varyEncodingLanguage
	default:
		h["Vary"] = append(old[:len(old):len(old)], v)
	}
}

var (
	varyEncoding         = []string{"Accept-Encoding"}
	varyEncodingLanguage = []string{"Accept-Encoding", "Accept-Language"}
)

// acceptsGzip reports whether Accept-Encoding lists gzip (or *) with a
// non-zero q-value.
func acceptsGzip(headers []string) bool {
	for _, h := range headers {
		for part := range strings.SplitSeq(h, ",") {
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.TrimSpace(coding)
			if !strings.EqualFold(coding, "gzip") && coding != "*" {
				continue
			}
			name, value, _ := strings.Cut(strings.TrimSpace(params), "=")
			if strings.EqualFold(strings.TrimSpace(name), "q") {
				if q, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err != nil || q <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

// gzipWriter holds back the first minGzipBytes of a body to decide whether
// compressing it is worth it, then streams.
type gzipWriter struct {
	gin.ResponseWriter
	buf []byte
	gz  *gzip.Writer
	// plain: the body is passing through uncompressed.
	plain bool
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	switch {
	case w.gz != nil:
		return w.gz.Write(b)
	case w.plain:
		return w.ResponseWriter.Write(b)
	}
	w.buf = append(w.buf, b...)
	if len(w.buf) >= minGzipBytes {
		if err := w.startGzip(); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

func (w *gzipWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// WriteHeaderNow is held back until the encoding is decided; a response
// without a body is committed by gin after the handlers return.
func (w *gzipWriter) WriteHeaderNow() {}

// Written reports what the client will see as written, including held-back
// bytes, so handlers do not write a second body.
func (w *gzipWriter) Written() bool { return len(w.buf) > 0 || w.ResponseWriter.Written() }

func (w *gzipWriter) Flush() {
	if w.gz == nil && !w.plain {
		w.flushPlain()
	}
	if w.gz != nil {
		w.gz.Flush()
	}
	w.ResponseWriter.Flush()
}

func (w *gzipWriter) startGzip() error {
	h := w.Header()
	if h.Get("Content-Encoding") != "" || !compressible(w.ResponseWriter.Status()) {
		w.flushPlain()
		return nil
	}
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	w.gz = gzipWriters.Get().(*gzip.Writer)
	w.gz.Reset(w.ResponseWriter)
	_, err := w.gz.Write(w.buf)
	w.buf = nil
	return err
}

func compressible(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified && status >= 200
}

// flushPlain sends what is held back uncompressed and stops holding back.
func (w *gzipWriter) flushPlain() {
	w.plain = true
	if len(w.buf) > 0 {
		w.ResponseWriter.Write(w.buf)
		w.buf = nil
	}
}

func (w *gzipWriter) close() {
	if w.gz == nil {
		w.flushPlain()
		return
	}
	w.gz.Close()
	w.gz.Reset(nil)
	gzipWriters.Put(w.gz)
	w.gz = nil
}

// gate caps the searches running at once. A search beyond the cap waits a
// little for a slot (a burst of cache misses from many connections clears
// in well under a millisecond per search) and is answered 503 if none
// frees in time: a long queue would only make every answer late.
type gate struct {
	slots chan struct{}
	wait  time.Duration
}

// defaultQueueWait is how long a search waits for a slot by default.
const defaultQueueWait = 50 * time.Millisecond

func newGate(n int, wait time.Duration) gate {
	if n <= 0 {
		n = 4 * runtime.GOMAXPROCS(0)
	}
	if wait == 0 {
		wait = defaultQueueWait
	}
	return gate{slots: make(chan struct{}, n), wait: max(wait, 0)}
}

// enter takes a slot or writes the 503 and reports false; release the
// slot with leave.
func (g gate) enter(c *gin.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	if g.wait > 0 {
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
			return true
		case <-t.C:
		case <-c.Request.Context().Done():
		}
	}
	c.Header("Retry-After", "1")
	writeError(c, http.StatusServiceUnavailable, "too many searches at once; retry in a second")
	return false
}

func (g gate) leave() { <-g.slots }

package api

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/klauspost/compress/gzip"
)

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

// addVary adds v to h's Vary header. The value is one line naming every
// header ("Accept-Encoding, Accept-Language, X-Compatibility-Date"): some
// caches read only one Vary line (nginx before 1.23 takes the last), and
// a cache that missed a name would hand one variant to every client.
// The lines of the headers the API varies on are made once (see cache.go).
func addVary(h http.Header, v string) {
	old := h["Vary"]
	set := 0
	if len(old) > 0 {
		set = varySetOf(old)
	}
	bit := varyBit(v)
	switch {
	case len(old) > 1:
		h["Vary"] = append(old[:len(old):len(old)], v)
	case set >= 0 && bit != 0:
		h["Vary"] = varyLines[set|bit]
	case len(old) == 1:
		h["Vary"] = []string{old[0] + ", " + v}
	default:
		h["Vary"] = []string{v}
	}
}

// varyNames are the headers the API's answers vary on, in the order a
// Vary line names them.
var varyNames = [...]string{"Accept-Encoding", "Accept-Language", HeaderCompatibilityDate, HeaderTenant}

// varyLines holds the Vary line of every set of varyNames, by bit set.
var varyLines = func() [1 << len(varyNames)][]string {
	var out [1 << len(varyNames)][]string
	for set := 1; set < len(out); set++ {
		var names []string
		for i, n := range varyNames {
			if set&(1<<i) != 0 {
				names = append(names, n)
			}
		}
		out[set] = []string{strings.Join(names, ", ")}
	}
	return out
}()

func varyBit(v string) int {
	for i, n := range varyNames {
		if n == v {
			return 1 << i
		}
	}
	return 0
}

// varySetOf is the bit set whose shared line line is, or -1 for a line
// made elsewhere.
func varySetOf(line []string) int {
	if len(line) != 1 {
		return -1
	}
	for set, l := range varyLines {
		if set > 0 && &l[0] == &line[0] {
			return set
		}
	}
	return -1
}

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

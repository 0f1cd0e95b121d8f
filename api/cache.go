package api

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
)

// cacheMaxAge is how long clients may reuse a search answer, as ESI says.
const cacheMaxAge = time.Hour

// defaultCacheBytes bounds the response cache unless Limits says otherwise.
const defaultCacheBytes = 64 << 20

// entryOverhead approximates what an entry costs beyond its bytes (list
// element, map slot, headers), so many tiny entries still count.
const entryOverhead = 128

// cachedResponse is an encoded answer and its validator.
type cachedResponse struct {
	key  string
	body []byte
	etag string
}

func (e *cachedResponse) cost() int64 {
	return int64(len(e.key)+len(e.body)+len(e.etag)) + entryOverhead
}

// responseCache holds encoded answers of one generation, least recently
// used out first, bounded in bytes. A new generation empties it: answers of
// the old one must not outlive it.
type responseCache struct {
	max int64

	mu    sync.Mutex
	gen   uint64
	size  int64
	lru   list.List // of *cachedResponse, most recent at the front
	items map[string]*list.Element
}

// newResponseCache returns a cache of maxBytes, or nil (no caching) when
// maxBytes is negative; 0 means the default.
func newResponseCache(maxBytes int64) *responseCache {
	if maxBytes < 0 {
		return nil
	}
	if maxBytes == 0 {
		maxBytes = defaultCacheBytes
	}
	return &responseCache{max: maxBytes, items: make(map[string]*list.Element)}
}

// get returns the answer to key in generation gen.
func (rc *responseCache) get(gen uint64, key string) (*cachedResponse, bool) {
	if rc == nil {
		return nil, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.switchTo(gen)
	el, ok := rc.items[key]
	if !ok || gen != rc.gen {
		return nil, false
	}
	rc.lru.MoveToFront(el)
	return el.Value.(*cachedResponse), true
}

// put stores e as generation gen's answer, evicting the least recently
// used answers to stay within bounds.
func (rc *responseCache) put(gen uint64, e *cachedResponse) {
	if rc == nil || e.cost() > rc.max/4 {
		// One huge answer must not flush everything else.
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.switchTo(gen)
	if gen != rc.gen {
		// A search that began before a switch finished after it.
		return
	}
	if el, ok := rc.items[e.key]; ok {
		rc.remove(el)
	}
	rc.items[e.key] = rc.lru.PushFront(e)
	rc.size += e.cost()
	for rc.size > rc.max {
		rc.remove(rc.lru.Back())
	}
}

func (rc *responseCache) remove(el *list.Element) {
	e := rc.lru.Remove(el).(*cachedResponse)
	delete(rc.items, e.key)
	rc.size -= e.cost()
}

// switchTo empties the cache when gen is newer than what it holds
// (generation IDs only grow). An older gen leaves it alone: that is a
// search which pinned the previous generation just before the switch.
func (rc *responseCache) switchTo(gen uint64) {
	if gen > rc.gen {
		rc.gen = gen
		rc.lru.Init()
		clear(rc.items)
		rc.size = 0
	}
}

// len reports the number of cached answers.
func (rc *responseCache) len() int {
	if rc == nil {
		return 0
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.lru.Len()
}

// etagOf is the strong validator of an answer: it depends only on the
// generation and the normalized request, so it is known before searching
// and a matching If-None-Match costs no search at all.
func etagOf(gen uint64, key string) string {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], gen)
	h.Write(b[:])
	h.Write([]byte(key))
	var sum [sha256.Size]byte
	return `"` + hex.EncodeToString(h.Sum(sum[:0])[:16]) + `"`
}

// setCacheHeaders says how long and by whom an answer may be reused
// (private: only the caller's own client, as it depends on the token) and
// how to revalidate it. Every answer sets these, so the values that
// repeat are made once (header keys are written in canonical form).
func setCacheHeaders(c *gin.Context, private bool, now, modified time.Time, etag string) {
	h := c.Writer.Header()
	if private {
		h["Cache-Control"] = cacheControlPrivate
	} else {
		h["Cache-Control"] = cacheControlPublic
	}
	h["Expires"] = expiresDates.header(now.Add(cacheMaxAge))
	if !modified.IsZero() {
		h["Last-Modified"] = modifiedDates.header(modified)
	}
	h["Etag"] = []string{etag}
}

// Header values shared by every answer that sends them (also headerInt,
// addVary and contentLanguage). Each slice is full (length equals
// capacity), so a later Add copies rather than changing it, and nothing
// writes into a header's values.
var (
	cacheControlPublic  = []string{"public, max-age=3600"}
	cacheControlPrivate = []string{"private, max-age=3600"}
	cacheControlNoCache = []string{"no-cache"}
	expiresDates        httpDates
	modifiedDates       httpDates
)

// httpDates formats times as HTTP dates, remembering the last: every
// answer within a second has the same Expires, and every answer of a
// generation the same Last-Modified.
type httpDates struct {
	last atomic.Pointer[httpDate]
}

type httpDate struct {
	sec   int64
	value []string
}

func (d *httpDates) header(t time.Time) []string {
	sec := t.Unix()
	if p := d.last.Load(); p != nil && p.sec == sec {
		return p.value
	}
	p := &httpDate{sec: sec, value: []string{t.UTC().Format(http.TimeFormat)}}
	d.last.Store(p)
	return p.value
}

// notModified reports whether the request's If-None-Match names etag (or
// is "*"), in which case the client's copy is current. RFC 9110 §13.1.2:
// If-None-Match compares weakly, so W/"x" matches "x".
func notModified(r *http.Request, etag string) bool {
	for _, h := range r.Header.Values("If-None-Match") {
		for tag := range strings.SplitSeq(h, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}

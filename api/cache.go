package api

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
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

// entryOverhead is what an entry costs besides its key, body and ETag:
// the cachedResponse (64 bytes allocated), its list.Element (48) and its
// map slot (24 bytes of key and value, up to twice that while the map's
// table is between doublings, plus control bytes), with some margin: a
// flood of unique queries measured 1.00× the heap at 64+48+64.
const entryOverhead = 64 + 48 + 80

// cachedResponse is an encoded answer and its validator.
type cachedResponse struct {
	key  string
	body []byte
	etag string
}

// cost is what the entry keeps alive on the heap: each allocation as the
// Go allocator rounds it, the body by its capacity, so a flood of small
// answers to unique queries stays within the cache's bound.
func (e *cachedResponse) cost() int64 {
	return allocSize(len(e.key)) + allocSize(cap(e.body)) + allocSize(len(e.etag)) + entryOverhead
}

// allocSize is n rounded up the way Go's size classes round an allocation
// (at least as far: steps of 8 and 16 bytes up to 256, then of at most an
// eighth of the size, then whole 8 KiB pages).
func allocSize(n int) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 16:
		return int64((n + 7) &^ 7)
	case n <= 256:
		return int64((n + 15) &^ 15)
	case n <= 32<<10:
		step := 1 << (bits.Len(uint(n)) - 3)
		return int64((n + step - 1) &^ (step - 1))
	default:
		return int64((n + 8191) &^ 8191)
	}
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
func (rc *responseCache) get(gen uint64, key []byte) (*cachedResponse, bool) {
	if rc == nil {
		return nil, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.switchTo(gen)
	el, ok := rc.items[string(key)] // no copy for a lookup
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
	h["Expires"] = expiresDates.header(expiresAt(now))
	if !modified.IsZero() {
		h["Last-Modified"] = modifiedDates.header(modified)
	}
	h["Etag"] = []string{etag}
}

// expiresWindow aligns Expires to the wall clock: every answer within one
// UTC minute expires at that minute's start plus max-age, so the replicas
// of a fleet (clocks in sync) send the same Expires for the same answer,
// whichever of them the load balancer picks (docs/fleet.md). It is at most
// a minute before now+max-age: never fresher than Cache-Control says.
const expiresWindow = time.Minute

func expiresAt(now time.Time) time.Time { return now.Truncate(expiresWindow).Add(cacheMaxAge) }

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

package httplog

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Keep says which answered requests get a log line: every error (4xx and
// 5xx but the refusals 420 and 429, which a flood sends by the million),
// every slow one, and one in Rest of the others. The zero value logs every
// request.
type Keep struct {
	// Rest: one in Rest of the requests that are neither errors nor slow
	// is logged; 0 or 1 logs all of them, negative none.
	Rest int
	// Slow: a request answered in at least Slow is always logged; 0: no
	// request counts as slow.
	Slow time.Duration
	// Counts, when set, counts the lines written and dropped (exported in
	// /metrics).
	Counts *Counts
}

// Counts are a logger's written and dropped lines.
type Counts struct {
	Written, Dropped atomic.Uint64
	seen             atomic.Uint64 // requests eligible for sampling
}

// ParseKeep reads the --request-log flag: "all", "errors" (errors and
// slow requests only) or "1/N" (those, and one in N of the rest).
func ParseKeep(s string, slow time.Duration) (Keep, error) {
	k := Keep{Slow: slow}
	switch {
	case s == "all":
		k.Rest = 1
	case s == "errors":
		k.Rest = -1
	case strings.HasPrefix(s, "1/"):
		n, err := strconv.Atoi(s[2:])
		if err != nil || n < 1 {
			return k, fmt.Errorf("--request-log: %q: the sample must be 1/N with N a positive integer", s)
		}
		k.Rest = n
	default:
		return k, fmt.Errorf("--request-log: %q: must be all, errors or 1/N (errors, slow requests and one in N of the rest)", s)
	}
	return k, nil
}

// String is k as ParseKeep reads it.
func (k Keep) String() string {
	switch {
	case k.Rest <= 1 && k.Rest >= 0:
		return "all"
	case k.Rest < 0:
		return "errors"
	}
	return "1/" + strconv.Itoa(k.Rest)
}

// keep decides whether a request answered with status in d is logged,
// and counts the decision; sampled is N for a line kept as one in N.
func (k *Keep) keep(status int, d time.Duration) (ok bool, sampled int) {
	switch {
	case k.Rest == 0 || k.Rest == 1,
		status >= 400 && status != 420 && status != http.StatusTooManyRequests,
		k.Slow > 0 && d >= k.Slow:
		ok = true
	case k.Rest > 1:
		if k.Counts == nil || k.Counts.seen.Add(1)%uint64(k.Rest) == 0 {
			ok, sampled = true, k.Rest
		}
	}
	if k.Counts != nil {
		if ok {
			k.Counts.Written.Add(1)
		} else {
			k.Counts.Dropped.Add(1)
		}
	}
	return ok, sampled
}

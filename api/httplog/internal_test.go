package httplog

import (
	"math/rand/v2"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// TestAppendMillis: the latency field reads exactly as zerolog's Float64
// wrote float64(d.Microseconds())/1000 before.
func TestAppendMillis(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(us int64) {
		d := time.Duration(us) * time.Microsecond
		want := strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', -1, 64)
		if got := string(appendMillis(nil, d)); got != want {
			t.Fatalf("%d µs: %s, want %s", us, got, want)
		}
	}
	for us := int64(-2100); us <= 100_000; us++ {
		check(us)
	}
	for range 200_000 {
		check(r.Int64N(1 << 42))
	}
}

// FuzzAppendRedactedURL: the log line's path is RedactURL's, secrets
// redacted, however it is made.
func FuzzAppendRedactedURL(f *testing.F) {
	for _, s := range []string{"/v2/search/?search=jita&categories=character", "/a%20b/?token=x", "/x?access_token=1&b=2",
		"/x?%74oken=1", "/x?a=1;token=2", "/", "/v1/universe/types/34/", "/x?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.ParseRequestURI(s)
		if err != nil {
			return
		}
		if got, want := string(appendRedactedURL(nil, u)), RedactURL(u); got != want {
			t.Fatalf("appendRedactedURL(%q) = %q, RedactURL %q", s, got, want)
		}
	})
}

package api

import (
	"net/http"
	"testing"
	"time"
)

// TestExpiresAlignedToTheMinute: answers within one wall-clock minute share
// Expires (the minute's start plus max-age), so every replica of a fleet on
// one generation sends the same headers; the next minute moves it on, and
// it is never later than the answering time plus max-age.
func TestExpiresAlignedToTheMinute(t *testing.T) {
	ts := newTestServer(t, searchRecords())
	const path = "/v2/search/?search=jita&categories=character"
	get := func() http.Header {
		t.Helper()
		rec := ts.do(http.MethodGet, path, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d", rec.Code)
		}
		return rec.Header()
	}
	first := get()
	want := testEpoch.Add(time.Hour).Format(http.TimeFormat)
	for _, step := range []time.Duration{0, 17 * time.Second, 42*time.Second + 999*time.Millisecond} {
		ts.clock.Set(testEpoch.Add(step))
		h := get()
		if got := h.Get("Expires"); got != want {
			t.Errorf("at +%v: Expires %q, want %q (the minute's start plus max-age)", step, got, want)
		}
		if h.Get("ETag") != first.Get("ETag") || h.Get("Last-Modified") != first.Get("Last-Modified") {
			t.Errorf("at +%v: validators changed within a generation", step)
		}
		exp, err := http.ParseTime(h.Get("Expires"))
		if err != nil {
			t.Fatal(err)
		}
		now := testEpoch.Add(step)
		if exp.After(now.Add(cacheMaxAge)) || !exp.After(now.Add(cacheMaxAge-time.Minute)) {
			t.Errorf("at +%v: Expires %v outside (now+59m, now+60m]", step, exp)
		}
	}
	ts.clock.Set(testEpoch.Add(time.Minute + time.Second))
	if got, want := get().Get("Expires"), testEpoch.Add(61*time.Minute).Format(http.TimeFormat); got != want {
		t.Errorf("next minute: Expires %q, want %q", got, want)
	}
}

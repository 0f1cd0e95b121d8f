package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkErrorAnswersUnderFlood measures a normal client's error answers
// (a 400 each, through the whole handler) while a flood of distinct
// clients, more than the error limiter keeps, errs alongside: the
// reported p50 and p99 are the normal client's. Numbers in
// docs/reliability.md.
//
//	go test -run '^$' -bench ErrorAnswersUnderFlood -benchtime 2000x ./api
//
// GDS_BENCH_FLOOD sets the flood's clients before timing (default
// 300,000).
func BenchmarkErrorAnswersUnderFlood(b *testing.B) {
	flooded := 300_000
	if s := os.Getenv("GDS_BENCH_FLOOD"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			flooded = n
		}
	}
	ts := newTestServer(b, searchRecords(), func(d *Deps) {
		d.Limits.RateLimitsOff = true
		d.Limits.ErrorLimit = 1 << 30 // the normal client is never limited: its answers are what is timed
	})
	const bad = "/v2/search/?search=ab&categories=character"
	serve := func(addr string) int {
		req := httptest.NewRequest(http.MethodGet, bad, nil)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		ts.h.ServeHTTP(rec, req)
		return rec.Code
	}
	flood := func(i int) string {
		return fmt.Sprintf("10.%d.%d.%d:1000", byte(i>>16), byte(i>>8), byte(i))
	}
	// Fill the limiter past its bound before timing.
	for i := range flooded {
		serve(flood(i))
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() { // and keep flooding while the normal client is timed
		defer close(done)
		for i := flooded; !stop.Load(); i++ {
			serve(flood(i))
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if code := serve("192.0.2.200:4000"); code != http.StatusBadRequest {
			b.Fatalf("normal client: %d", code)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	stop.Store(true)
	<-done
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

//go:build unix

package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkLocalServed is POST /latest/local/ end to end, body in and
// answer out, through the real engine over a generated generation of
// 200,000 characters (4,000 corporations, 200 alliances, the 10M
// benchmark's proportions), with the response cache and the rate limits
// off: 16 bodies of 1,000 names of one character each, in turn, written
// out as net/http would write them (wireWriter); cpu-ns/op is the
// process's processor time per answer:
//
//	go test -run '^$' -bench LocalServed -benchmem ./api
func BenchmarkLocalServed(b *testing.B) {
	ts, bodies := localBench(b, 200_000, 16)
	b.ReportAllocs()
	i, cpu := 0, processCPU(b)
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/latest/local/", strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "text/plain")
		w := &wireWriter{h: http.Header{}}
		ts.h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatal(w.status)
		}
		i++
	}
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(max(i, 1)), "cpu-ns/op")
}

// processCPU is the processor time the process has used, in nanoseconds:
// a busy machine stretches it less than the wall-clock time.
func processCPU(tb testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

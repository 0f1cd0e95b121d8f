//go:build unix

package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api/admin"
	"gds/api/httplog"
)

// BenchmarkStrictServed is a strict public search through the middleware
// gds serve installs (the request log, the metrics, the error limiter),
// with the response cache and the rate limits off as in the harness's
// strict row, written out as net/http would write it (wireWriter). Its
// allocations are exact; its time is the whole per-request cost of gds's
// own code on that path, without the connection's system calls:
// go test -run '^$' -bench StrictServed -count 10 ./api
func BenchmarkStrictServed(b *testing.B) {
	ts := newTestServer(b, searchRecords(), func(d *Deps) {
		d.Limits.CacheBytes, d.Limits.RateLimitsOff = -1, true
		d.Metrics = admin.NewMetrics()
		d.Middleware = []gin.HandlerFunc{httplog.Logger(httplog.Options{
			Logger: zerolog.New(io.Discard),
			Labels: Labels,
		})}
	})
	req := httptest.NewRequest(http.MethodGet, "/latest/search/?categories=character&search=Jita+Trader&strict=true", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := &wireWriter{h: http.Header{}}
		ts.h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatal(w.status)
		}
	}
}

//go:build unix

package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"gds/api/admin"
	"gds/api/httplog"
	"gds/indexer"
	"gds/query"
	"gds/snapshots/envtest"
)

// BenchmarkContainsServed is the harness's contains-cache-off row in
// process: each contains text of a bench query set in turn, one character
// search each, through the router and the middleware gds serve installs
// (request log, metrics, error limiter), cache and rate limits off, over
// an existing data directory opened as gds serve opens it, written out
// as net/http would write it (wireWriter). cpu-ns/op is the process's
// processor time per answer: everything but the connection's system
// calls and HTTP parsing. It only runs when both are named:
//
//	GDS_BENCH_DATA=/path/data GDS_BENCH_QUERIES=/path/queries.json \
//	  go test -run '^$' -bench ContainsServed -benchtime 17910x -benchmem ./api
func BenchmarkContainsServed(b *testing.B) {
	env := envtest.Getenv(b, "a data directory and a bench query set", "GDS_BENCH_DATA", "GDS_BENCH_QUERIES")
	var paths []string
	for _, text := range envtest.ContainsTexts(b, env[1]) {
		paths = append(paths, "/latest/search/?categories=character&search="+url.QueryEscape(text))
	}
	_, ts := serveData(b, env[0], servedMiddleware)
	benchGets(b, ts, paths, false)
}

// servedMiddleware installs the middleware gds serve installs (request
// log, here discarded, metrics, error limiter).
func servedMiddleware(d *Deps) {
	d.Metrics = admin.NewMetrics()
	d.Middleware = []gin.HandlerFunc{httplog.Logger(httplog.Options{
		Logger: zerolog.New(io.Discard),
		Labels: Labels,
	})}
}

// benchGets answers GET paths in turn through ts's router (benchServe);
// warm first answers each once, as a server that has answered a while
// has the pages of its mapped files faulted in.
func benchGets(b *testing.B, ts *testServer, paths []string, warm bool) {
	reqs := make([]*http.Request, len(paths))
	for i, p := range paths {
		reqs[i] = httptest.NewRequest(http.MethodGet, p, nil)
	}
	first := 0
	if warm {
		first = len(reqs)
	}
	benchServe(b, ts, first, func(i int) *http.Request { return reqs[i%len(reqs)] })
}

// benchServe answers the requests req makes (the i-th for i = 0, 1, …)
// through ts's router, written out as net/http would write them
// (wireWriter), each a 200, and reports the process's CPU per answer
// (cpu-ns/op). The first warm answers come before the timing.
func benchServe(b *testing.B, ts *testServer, warm int, req func(i int) *http.Request) {
	serve := func(i int) {
		r := req(i)
		w := &wireWriter{h: http.Header{}}
		if ts.h.ServeHTTP(w, r); w.status != http.StatusOK {
			b.Fatal(r.URL, w.status)
		}
	}
	for i := range warm {
		serve(i)
	}
	b.ReportAllocs()
	i, cpu := 0, cpuTime(b)
	for b.Loop() {
		serve(i)
		i++
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(max(i, 1)), "cpu-ns/op")
}

// serveData serves the generation in the data directory data as gds
// serve does on a large machine (tables and stores in memory), its
// response cache and rate limits off, with tune's changes to its Deps.
func serveData(b *testing.B, data string, tune func(*Deps)) (*indexer.Manager, *testServer) {
	return serveDataWith(b, indexer.Options{DataDir: data, TablesInMemory: true, StoresInMemoryAuto: true}, tune)
}

// serveDataWith is serveData with the manager's options o (its logger
// discards).
func serveDataWith(b *testing.B, o indexer.Options, tune func(*Deps)) (*indexer.Manager, *testServer) {
	o.Logger = zerolog.New(io.Discard)
	m, err := indexer.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m, newTestServerWith(b, Deps{Views: query.New(m), Logger: zerolog.New(io.Discard)}, func(d *Deps) {
		d.Limits.CacheBytes, d.Limits.RateLimitsOff = -1, true
		tune(d)
	})
}

//go:build unix

package api

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"gds/query"
	"gds/snapshots"
)

// BenchmarkLocalServed is POST /latest/local/ end to end, body in and
// answer out, through the real engine over a generated generation of
// 200,000 characters (4,000 corporations, 200 alliances, the 10M
// benchmark's proportions), with the response cache and the rate limits
// off: 16 bodies of 1,000 names of one character each, in turn, written
// out as net/http would write them (wireWriter); cpu-ns/op is the
// process's processor time per answer. With GDS_BENCH_DATA, over the
// generation of an existing data directory opened as gds serve opens it
// instead, the names drawn from its character table:
//
//	go test -run '^$' -bench LocalServed -benchmem ./api
//	GDS_BENCH_DATA=/var/tmp/w10m/data go test -run '^$' -bench LocalServed -benchmem ./api
func BenchmarkLocalServed(b *testing.B) {
	var ts *testServer
	var bodies []string
	if data := os.Getenv("GDS_BENCH_DATA"); data != "" {
		ts, bodies = localBenchData(b, data, 16)
	} else {
		ts, bodies = localBench(b, 200_000, 16)
	}
	benchServe(b, ts, 0, func(i int) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/latest/local/", strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "text/plain")
		return req
	})
}

// localBenchData serves the generation in the data directory data as
// gds serve does (tables and stores in memory when they fit) and draws n
// bodies of 1,000 names of one character each from its character table.
func localBenchData(b *testing.B, data string, n int) (*testServer, []string) {
	m, ts := serveData(b, data, func(*Deps) {})
	g := m.Acquire()
	if g == nil {
		b.Fatal("no live generation")
	}
	defer g.Release()
	ct := g.Tables(snapshots.CategoryCharacter)
	if ct == nil || ct.Base.Len() == 0 {
		b.Fatal("no characters")
	}
	t := ct.Base
	rng := rand.New(rand.NewPCG(7, 37))
	bodies := make([]string, n)
	for i := range bodies {
		var sb strings.Builder
		for names := 0; names < query.MaxLocalNames; {
			name := t.Name(uint32(rng.IntN(t.Len())))
			found := 0
			t.Exact(name, func(uint32, int64) bool { found++; return found < 2 })
			if found == 1 {
				sb.Write(name)
				sb.WriteByte('\n')
				names++
			}
		}
		bodies[i] = sb.String()
	}
	return ts, bodies
}

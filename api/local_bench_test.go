package api

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer/indexertest"
	"gds/indexer/nametable"
	"gds/query"
	"gds/snapshots"
	"gds/snapshots/synth"
)

// BenchmarkLocalServed is POST /latest/local/ end to end, body in and
// answer out, through the real engine over a generated generation of
// 200,000 characters (4,000 corporations, 200 alliances, the 10M
// benchmark's proportions), with the response cache and the rate limits
// off: 16 bodies of 1,000 names of one character each, in turn, written
// out as net/http would write them (wireWriter):
//
//	go test -run '^$' -bench LocalServed -benchmem ./api
func BenchmarkLocalServed(b *testing.B) {
	ts, bodies := localBench(b, 200_000, 16)
	b.ReportAllocs()
	i := 0
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
}

// localBench serves a generation of chars generated characters and
// returns n text bodies of 1,000 names drawn from those that are one
// character's (generated names repeat; the game's do not).
func localBench(tb testing.TB, chars int64, n int) (*testServer, []string) {
	tb.Helper()
	snap := indexertest.Generated(tb, synth.Config{Characters: chars, Corporations: chars / 50, Alliances: chars / 1000, Seed: 7})
	m := indexertest.Manager(tb, snap.Dir)
	ts := newTestServerWith(tb, Deps{Views: query.New(m), Logger: zerolog.New(io.Discard)}, func(d *Deps) {
		d.Limits.CacheBytes, d.Limits.RateLimitsOff = -1, true
	})
	ts.manager = m
	count := map[string]int{}
	var names []string
	err := snap.Each(snapshots.Characters, func(rec snapshots.Record, _ snapshots.Line) error {
		name := rec.(*snapshots.Character).Name
		count[nametable.Fold(name)]++
		names = append(names, name)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	names = slices.DeleteFunc(names, func(s string) bool { return count[nametable.Fold(s)] > 1 })
	rng := rand.New(rand.NewPCG(7, 37))
	bodies := make([]string, n)
	for i := range bodies {
		var sb strings.Builder
		for range query.MaxLocalNames {
			sb.WriteString(names[rng.IntN(len(names))])
			sb.WriteByte('\n')
		}
		bodies[i] = sb.String()
	}
	return ts, bodies
}

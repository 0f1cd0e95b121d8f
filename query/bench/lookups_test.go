//go:build bench

package bench

import (
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/query"
	"gds/snapshots"
)

// runSearch runs the search child; the serving memory it reports is its
// peak before the lookups on the generation opened a second time.
func runSearch(t *testing.T, a helperArgs, gs *searchOut) {
	t.Helper()
	peak := runHelper(t, "search", a, gs)
	gs.MaxRSS = gs.HWM
	if gs.HWM == 0 {
		gs.MaxRSS = peak
	}
}

// timeLookups fetches every character the query set found (at most
// 200,000, in a shuffled order, each once: mostly first touches of the
// store's pages) from the record store and times each lookup.
func timeLookups(s *query.Searcher, results [][]int64) (Timing, error) {
	seen := map[int64]bool{}
	var ids []int64
	for _, r := range results {
		for _, id := range r {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	ids = ids[:min(len(ids), 200_000)]
	v, err := s.View()
	if err != nil {
		return Timing{}, err
	}
	defer v.Close()
	lat := make([]time.Duration, 0, len(ids))
	errs := 0
	start := time.Now()
	for _, id := range ids {
		t0 := time.Now()
		raw, err := v.Raw(snapshots.Characters, id)
		lat = append(lat, time.Since(t0))
		if err != nil || len(raw) == 0 {
			errs++
		}
	}
	return summarize(lat, time.Since(start), errs), nil
}

// timeLookupsOpened is timeLookups on data opened again with its record
// stores held in memory (gds serve --stores-in-memory=true) or mapped
// (=false).
func timeLookupsOpened(data string, held bool, results [][]int64) (Timing, error) {
	m, err := indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard), TablesInMemory: true, StoresInMemory: held})
	if err != nil {
		return Timing{}, err
	}
	defer m.Close()
	return timeLookups(query.New(m), results)
}

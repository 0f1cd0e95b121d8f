package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/query"
	"gds/query/analyst"
	"gds/snapshots"
)

// openHooked opens data with a hook run at the start of every bleve phase.
func openHooked(t *testing.T, data string, hook func(ctx context.Context, gen uint64) error) *indexer.Manager {
	t.Helper()
	o := indexer.WithBeforeBleve(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard), ShardSize: 700}, hook)
	m, err := indexer.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// bleveGate holds every bleve phase at its start once armed, telling
// entered whose phase waits, until hold is closed.
type bleveGate struct {
	armed   atomic.Bool
	hold    chan struct{}
	entered chan uint64
}

func openGated(t *testing.T, data string) (*indexer.Manager, *bleveGate) {
	t.Helper()
	g := &bleveGate{hold: make(chan struct{}), entered: make(chan uint64, 4)}
	m := openHooked(t, data, func(ctx context.Context, gen uint64) error {
		if !g.armed.Load() {
			return nil
		}
		g.entered <- gen
		select {
		case <-g.hold:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	return m, g
}

func analystsAnswer(t *testing.T, m *indexer.Manager, q string) (*analyst.Result, error) {
	t.Helper()
	return analyst.New(m).Query(context.Background(), analyst.Request{Query: q, Category: "character", Limit: 100})
}

// While a build's bleve phase is held, its generation already answers
// searches; the analysts' queries are answered by the previous generation
// and say so; once the phase ends they move to the new one, and the old
// generation is deleted.
func TestSearchLiveBeforeBleve(t *testing.T) {
	data := t.TempDir()
	m, gate := openGated(t, data)
	hold, entered := gate.hold, gate.entered
	defer m.Close()
	first := build(t, m, pilots(t, 1000, "Old pilot"), false)
	gate.armed.Store(true)
	done := make(chan indexer.BuildResult, 1)
	second := pilots(t, 1500, "Fresh flyer")
	go func() {
		res, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: second, Full: true, Trigger: "test"})
		if err != nil {
			t.Errorf("second build: %v", err)
		}
		done <- res
	}()
	gen := <-entered
	if gen == first.Generation {
		t.Fatalf("the bleve phase ran for generation %d, the first", gen)
	}
	// Searches, lookups: the new generation.
	if live := m.Live(); live == nil || live.ID != gen || !live.BlevePending {
		t.Fatalf("live while bleve is held = %+v, want %d with bleve pending", live, gen)
	}
	if got := searchCategory(t, m, "fresh flyer 149", snapshots.CategoryCharacter); len(got) != 11 {
		t.Errorf("search of the new names found %d, want 11", len(got))
	}
	if got := searchCategory(t, m, "old pilot", snapshots.CategoryCharacter); len(got) != 0 {
		t.Errorf("search of the old names found %d in the new generation", len(got))
	}
	p := m.Parts()
	if p.Search != gen || p.Analysts != first.Generation || p.Bleve != indexer.BleveBuilding || p.SearchableAt.IsZero() {
		t.Errorf("parts while bleve is held = %+v", p)
	}
	// Analysts: the first generation, which says so.
	res, err := analystsAnswer(t, m, "words:old")
	if err != nil {
		t.Fatal(err)
	}
	if res.Generation != first.Generation || res.Total != 1000 {
		t.Errorf("analysts' answer while bleve is held: generation %d, %d hits; want %d, 1000", res.Generation, res.Total, first.Generation)
	}
	g := m.Acquire()
	if _, err := g.Index(snapshots.CategoryCharacter); !errors.Is(err, indexer.ErrBlevePending) {
		t.Errorf("the new generation's index while pending: %v, want ErrBlevePending", err)
	}
	g.Release()
	close(hold)
	r := <-done
	if r.Generation != gen || r.Searchable <= 0 || r.Searchable > r.Duration {
		t.Errorf("build result %+v: want generation %d, 0 < searchable <= duration", r, gen)
	}
	if p := m.Parts(); p.Analysts != gen || p.Bleve != indexer.BleveLive || p.BleveLiveAt.Before(p.SearchableAt) {
		t.Errorf("parts after the bleve phase = %+v", p)
	}
	res, err = analystsAnswer(t, m, "words:fresh")
	if err != nil {
		t.Fatal(err)
	}
	if res.Generation != gen || res.Total != 1500 {
		t.Errorf("analysts' answer after the phase: generation %d, %d hits; want %d, 1500", res.Generation, res.Total, gen)
	}
	if live := m.Live(); live.BlevePending || live.BuildDuration < live.SearchableAfter {
		t.Errorf("live meta after the phase = %+v", live)
	}
	waitFor(t, "the first generation to be deleted", func() bool {
		_, err := os.Stat(filepath.Join(data, "generations", fmt.Sprintf("%06d", first.Generation)))
		return os.IsNotExist(err)
	})
}

// A failed bleve phase leaves the new generation serving searches, the
// analysts on the old one, the status saying so; a restart completes it,
// and a first generation's analysts' queries answer 503-worthy ErrNotReady
// meanwhile.
func TestFailedBleveKeepsSearchAndRestartCompletes(t *testing.T) {
	data := t.TempDir()
	boom := errors.New("bleve phase failed on purpose")
	m := openHooked(t, data, func(context.Context, uint64) error { return boom })
	snap := pilots(t, 800, "Lone pilot")
	_, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: snap, Trigger: "test"})
	if !errors.Is(err, boom) && (err == nil || err.Error() == "") {
		t.Fatalf("build with a failing bleve phase = %v", err)
	}
	live := m.Live()
	if live == nil || !live.BlevePending {
		t.Fatalf("live after the failed phase = %+v, want a generation with bleve pending", live)
	}
	if got := searchCategory(t, m, "lone pilot 79", snapshots.CategoryCharacter); len(got) != 11 {
		t.Errorf("search found %d, want 11", len(got))
	}
	if p := m.Parts(); p.Search != live.ID || p.Analysts != 0 || p.Bleve != indexer.BleveFailed || p.BleveError == "" {
		t.Errorf("parts after the failed phase = %+v", p)
	}
	if _, err := analystsAnswer(t, m, "words:lone"); !errors.Is(err, query.ErrNotReady) {
		t.Errorf("analysts' query without any bleve part = %v, want ErrNotReady", err)
	}
	m.Close()

	again := open(t, data)
	defer again.Close()
	waitFor(t, "the restart to complete the bleve part", func() bool {
		p := again.Parts()
		return p.Analysts == live.ID && p.Bleve == indexer.BleveLive
	})
	res, err := analystsAnswer(t, again, "words:lone")
	if err != nil || res.Generation != live.ID || res.Total != 800 {
		t.Fatalf("analysts after the restart: %+v, %v", res, err)
	}
	if now := again.Live(); now.ID != live.ID || now.BlevePending {
		t.Errorf("live after the restart = %+v", now)
	}
	// The next build of another snapshot patches the completed shards.
	next := pilots(t, 801, "Lone pilot")
	if r := build(t, again, next, false); !r.Incremental {
		t.Errorf("the build after a completed bleve part was not incremental: %+v", r)
	}
	if got := bleveIDs(t, again, "words:lone"); len(got) != 801 {
		t.Errorf("bleve after the incremental build holds %d, want 801", len(got))
	}
}

// A shard built whole is merged into one segment at the end of its build
// (and answers the same either way).
func TestShardsMergedToOneSegment(t *testing.T) {
	for _, keep := range []bool{false, true} {
		data := t.TempDir()
		// 25 batches: more than bleve merges in one task (ten).
		m, err := indexer.Open(indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard), ShardSize: 1000, BatchSize: 40, KeepSegments: keep})
		if err != nil {
			t.Fatal(err)
		}
		res := build(t, m, pilots(t, 1000, "Seg pilot"), false)
		// Unmerged, bleve's own tiers may merge small segments or not.
		shard := filepath.Join(data, "generations", fmt.Sprintf("%06d", res.Generation), "character", "bleve-0")
		zaps, _ := filepath.Glob(filepath.Join(shard, "store", "*.zap"))
		if n := rootSegments(t, shard); !keep && (n != 1 || len(zaps) != 1) {
			t.Errorf("keep segments %v: shard 0 answers from %d segments and holds %d files", keep, n, len(zaps))
		}
		if got := bleveIDs(t, m, "words:seg"); len(got) != 1000 {
			t.Errorf("keep segments %v: bleve finds %d of 1000", keep, len(got))
		}
		m.Close()
	}
}

// rootSegments is how many segments the shard in dir answers from.
func rootSegments(t *testing.T, dir string) uint64 {
	t.Helper()
	idx, err := bleve.OpenUsing(dir, map[string]interface{}{"read_only": true})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	st, _ := idx.StatsMap()["index"].(map[string]interface{})
	n, _ := st["TotFileSegmentsAtRoot"].(uint64)
	return n
}

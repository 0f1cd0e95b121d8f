package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query"
	"gds/query/analyst"
	"gds/snapshots"
)

// analystQuery runs an analyst's query over g, which the caller holds.
func analystQuery(g *indexer.Generation, q string, cat snapshots.Category, limit int) ([]analyst.Hit, error) {
	res, err := analyst.On(g).Query(context.Background(), analyst.Request{Query: q, Category: cat, Limit: limit})
	if err != nil {
		return nil, err
	}
	return res.Hits, nil
}

// TestOpenReadOnlyBesideManager opens the generation a Manager is serving
// from a second handle, twice at once, and checks that the Manager keeps
// serving and can still build afterwards: what gds query does beside a
// running gds serve.
func TestOpenReadOnlyBesideManager(t *testing.T) {
	snap := indexertest.JitaAmarr(t)
	dir, m := indexertest.ServedData(t, snap)
	a, err := indexer.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := indexer.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*indexer.Generation{a, b} {
		hits, err := analystQuery(g, "name:jita", "", 10)
		if err != nil || len(hits) != 1 {
			t.Fatalf("read-only query: %v %v", hits, err)
		}
	}
	a.Release()
	live := m.Acquire()
	if live == nil {
		t.Fatal("manager lost its generation")
	}
	if hits, err := analystQuery(live, "name:amarr", "", 10); err != nil || len(hits) != 1 {
		t.Fatalf("manager query while another handle is open: %v %v", hits, err)
	}
	live.Release()
	res, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: snap, Trigger: "test", Full: true})
	if err != nil || res.Generation != 2 {
		t.Fatalf("rebuild with a read-only handle open: %+v %v", res, err)
	}
	// b still reads the retired generation it holds.
	if hits, err := analystQuery(b, "name:jita", "", 10); err != nil || len(hits) != 1 {
		t.Fatalf("read-only handle after the switch: %v %v", hits, err)
	}
	b.Release()
	c, err := indexer.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if c.Meta.ID != 2 {
		t.Errorf("OpenReadOnly after rebuild: generation %d, want 2", c.Meta.ID)
	}
}

func TestOpenReadOnlyEmpty(t *testing.T) {
	if _, err := indexer.OpenReadOnly(t.TempDir()); !errors.Is(err, indexer.ErrNoGeneration) {
		t.Errorf("err = %v, want ErrNoGeneration", err)
	}
}

// zapMappings counts the bleve segment files under dir this process maps.
func zapMappings(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("no /proc/self/maps: %v", err)
	}
	n := 0
	for line := range strings.Lines(string(raw)) {
		if strings.Contains(line, dir) && strings.HasSuffix(strings.TrimSpace(line), ".zap") {
			n++
		}
	}
	return n
}

// A generation opens its bleve shards on the first analyst query that needs
// them: building, checking and searching leave no segment file mapped.
func TestBleveOpensOnFirstAnalystQuery(t *testing.T) {
	dir, m := indexertest.ServedData(t, indexertest.JitaAmarr(t))
	res, err := query.New(m).Search(context.Background(), query.Request{Text: "jita",
		Categories: []snapshots.Category{snapshots.CategoryCharacter, snapshots.CategorySolarSystem}})
	if err != nil || len(res.IDs[snapshots.CategorySolarSystem]) != 1 {
		t.Fatalf("search: %+v %v", res, err)
	}
	if n := zapMappings(t, dir); n != 0 {
		t.Fatalf("after build and search, %d bleve segment files are mapped; want none", n)
	}
	g := m.Acquire()
	defer g.Release()
	hits, err := analystQuery(g, "name:jita", snapshots.CategorySolarSystem, 10)
	if err != nil || len(hits) != 1 || hits[0].ID != 30000142 {
		t.Fatalf("query: %+v %v", hits, err)
	}
	solar := zapMappings(t, filepath.Join(g.Dir(), string(snapshots.CategorySolarSystem)))
	if solar == 0 || solar != zapMappings(t, dir) {
		t.Errorf("after a solar system query: %d solar system segment files mapped of %d; want only those, at least one", solar, zapMappings(t, dir))
	}
}

// A damaged bleve index fails the analysts' queries that need it with an
// error naming the category; searches, which do not read bleve, go on.
func TestDamagedBleveFailsOnlyAnalystQueries(t *testing.T) {
	_, m := indexertest.ServedData(t, indexertest.JitaAmarr(t))
	g := m.Acquire()
	defer g.Release()
	if err := os.RemoveAll(filepath.Join(g.Dir(), string(snapshots.CategoryCharacter), "bleve-0")); err != nil {
		t.Fatal(err)
	}
	if _, err := analystQuery(g, "name:jita", "", 10); err == nil || !strings.Contains(err.Error(), "character") {
		t.Errorf("query over a damaged index: err = %v, want one naming character", err)
	}
	if hits, err := analystQuery(g, "name:jita", snapshots.CategorySolarSystem, 10); err != nil || len(hits) != 1 {
		t.Errorf("query of an undamaged category: %+v %v", hits, err)
	}
	res, err := query.New(m).Search(context.Background(), query.Request{Text: "jita", Categories: []snapshots.Category{snapshots.CategoryCharacter}})
	if err != nil || len(res.IDs[snapshots.CategoryCharacter]) != 1 {
		t.Errorf("search beside a damaged bleve index: %+v %v", res, err)
	}
}

// A generation closes the bleve shards analysts opened once they have been
// idle for Options.AnalystIdle, and opens them again for the next query;
// queries running meanwhile are never cut short.
func TestBleveClosesWhenAnalystsIdle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	m, err := indexer.Open(indexer.Options{DataDir: dir, Logger: zerolog.New(io.Discard), AnalystIdle: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	indexertest.Build(t, m, indexer.BuildRequest{Snapshot: indexertest.JitaAmarr(t), Trigger: "test"})
	g := m.Acquire()
	defer g.Release()
	query := func() {
		t.Helper()
		hits, err := analystQuery(g, "name:jita", "", 10)
		if err != nil || len(hits) != 1 {
			t.Fatalf("query: %+v %v", hits, err)
		}
	}
	waitUnmapped := func() {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); zapMappings(t, dir) > 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d segment files still mapped after the analysts went idle", zapMappings(t, dir))
			}
		}
	}
	query()
	if zapMappings(t, dir) == 0 {
		t.Fatal("no segment file mapped right after a query")
	}
	waitUnmapped()
	query() // opened again
	waitUnmapped()

	// Queries overlapping the idle time, from several goroutines.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 30 {
				hits, err := analystQuery(g, "name:jita", "", 10)
				if err == nil && len(hits) != 1 {
					err = fmt.Errorf("%d hits", len(hits))
				}
				if err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Duration(j%3) * 10 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("query beside idle closing: %v", err)
	}
	waitUnmapped()
}

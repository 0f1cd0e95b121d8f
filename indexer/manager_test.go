package indexer_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/query"
	"gds/query/analyst"
	"gds/snapshots"
)

func characters(n int, name func(i int) string) []snapshots.Record {
	out := make([]snapshots.Record, n)
	for i := range out {
		out[i] = &snapshots.Character{Entity: indexertest.Named(int64(90000000+i), name(i)), CorporationID: 98000001}
	}
	return out
}

// pilots is a snapshot of n characters named "<prefix> 0" and on.
func pilots(t *testing.T, n int, prefix string) string {
	t.Helper()
	return indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: characters(n, func(i int) string { return fmt.Sprintf("%s %d", prefix, i) })})
}

func open(t *testing.T, data string) *indexer.Manager {
	t.Helper()
	return openWith(t, indexer.Options{DataDir: data})
}

// openWith opens a manager with opts, its logger and shard size set as
// open's.
func openWith(t *testing.T, opts indexer.Options) *indexer.Manager {
	t.Helper()
	opts.Logger, opts.ShardSize = zerolog.New(io.Discard), 700
	m, err := indexer.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func build(t *testing.T, m *indexer.Manager, snap string, full bool) indexer.BuildResult {
	t.Helper()
	return indexertest.Build(t, m, indexer.BuildRequest{Snapshot: snap, Full: full, Trigger: "test"})
}

func searchAll(t *testing.T, m *indexer.Manager, texts []string) map[string][]int64 {
	t.Helper()
	s := query.New(m)
	out := map[string][]int64{}
	for _, text := range texts {
		for _, strict := range []bool{false, true} {
			res, err := s.Search(context.Background(), query.Request{Text: text, Strict: strict,
				Categories: []snapshots.Category{snapshots.CategoryCharacter}})
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%s/%v", text, strict)] = res.IDs[snapshots.CategoryCharacter]
		}
	}
	return out
}

func TestGenerationRecordsSnapshotAndCounts(t *testing.T) {
	snap := indexertest.Snapshot(t, indexertest.Records{
		snapshots.Characters:   characters(1500, func(i int) string { return fmt.Sprintf("Pilot %d", i) }),
		snapshots.SolarSystems: {&snapshots.SolarSystem{Entity: indexertest.Named(30000142, "Jita"), ConstellationID: 20000020}},
	})
	m := open(t, t.TempDir())
	defer m.Close()
	res := build(t, m, snap, false)
	meta := m.Live()
	if meta == nil || meta.ID != res.Generation {
		t.Fatalf("live %+v, build %+v", meta, res)
	}
	s, err := snapshots.Open(snap)
	if err != nil {
		t.Fatal(err)
	}
	if meta.SnapshotHash != s.Hash {
		t.Errorf("generation records snapshot %s, want %s", meta.SnapshotHash, s.Hash)
	}
	want := map[snapshots.Category]int{snapshots.CategoryCharacter: 1500, snapshots.CategorySolarSystem: 1}
	if !reflect.DeepEqual(meta.Counts, want) {
		t.Errorf("counts %v, want %v", meta.Counts, want)
	}
	if meta.Shards[snapshots.CategoryCharacter] != 4 {
		t.Errorf("1500 characters at 700 a shard: %d shards, want 4 (3, made even)", meta.Shards[snapshots.CategoryCharacter])
	}
	if meta.Shards[snapshots.CategorySolarSystem] != 1 {
		t.Errorf("1 solar system at 700 a shard: %d shards, want 1", meta.Shards[snapshots.CategorySolarSystem])
	}
	// The same snapshot again changes nothing.
	again := build(t, m, snap, false)
	if !again.Unchanged || m.Live().ID != meta.ID {
		t.Errorf("rebuild of the live snapshot: %+v", again)
	}
}

// TestSwitchUnderConcurrentSearches runs searches while generations are
// replaced back to back: every search answers from one whole generation
// (the old or the new names, never a mix, never an error), and retired
// generations are deleted once released.
func TestSwitchUnderConcurrentSearches(t *testing.T) {
	data := t.TempDir()
	snapA := pilots(t, 300, "Alpha")
	snapB := pilots(t, 300, "Bravo")
	m := open(t, data)
	defer m.Close()
	build(t, m, snapA, false)
	s := query.New(m)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var searches, bad atomic.Int64
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				// Yield between searches so the builds still get the CPU on
				// a loaded machine.
				time.Sleep(100 * time.Microsecond)
				v, err := s.View()
				if err != nil {
					bad.Add(1)
					continue
				}
				a, errA := v.Search(context.Background(), query.Request{Text: "alpha", Categories: []snapshots.Category{snapshots.CategoryCharacter}})
				b, errB := v.Search(context.Background(), query.Request{Text: "bravo", Categories: []snapshots.Category{snapshots.CategoryCharacter}})
				v.Close()
				na, nb := len(a.IDs[snapshots.CategoryCharacter]), len(b.IDs[snapshots.CategoryCharacter])
				if errA != nil || errB != nil || !((na == 300 && nb == 0) || (na == 0 && nb == 300)) {
					bad.Add(1)
				}
				searches.Add(1)
			}
		}()
	}
	for i := 0; i < 6; i++ {
		snap := snapA
		if i%2 == 0 {
			snap = snapB
		}
		build(t, m, snap, true)
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d of %d searches saw a missing or mixed generation", bad.Load(), searches.Load())
	}
	// Only the live generation remains on disk.
	ents, _ := os.ReadDir(filepath.Join(data, "generations"))
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("generations on disk: %v, want only the live one", names)
	}
}

func TestFailedBuildKeepsLiveGeneration(t *testing.T) {
	data := t.TempDir()
	good := pilots(t, 50, "Good")
	m := open(t, data)
	defer m.Close()
	res := build(t, m, good, false)

	// A snapshot whose file does not match its manifest.
	bad := pilots(t, 50, "Bad")
	f, err := os.OpenFile(filepath.Join(bad, "characters.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":99999999,"name":"Sneaky","corporation_id":98000001}` + "\n")
	f.Close()

	for _, snap := range []string{bad, filepath.Join(t.TempDir(), "missing")} {
		r, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: snap, Trigger: "test"})
		if err == nil || r.OK() {
			t.Fatalf("build of %s succeeded", snap)
		}
		if live := m.Live(); live == nil || live.ID != res.Generation {
			t.Fatalf("live generation changed after a failed build: %+v", live)
		}
		st := m.Status()
		if st.LastBuild == nil || st.LastBuild.Error == "" {
			t.Fatalf("status does not show the failure: %+v", st.LastBuild)
		}
	}
	if st := m.Status(); st.Failures != 2 {
		t.Errorf("failures %d, want 2", st.Failures)
	}
	got := searchAll(t, m, []string{"good"})
	if len(got["good/false"]) != 50 {
		t.Fatalf("old generation no longer answers: %v", got)
	}
	// Nothing half-built is left behind.
	ents, _ := os.ReadDir(filepath.Join(data, "generations"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".building") {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

// TestRestartAfterKilledBuild leaves a half-written build directory, as a
// kill -9 in the middle of a build would, and checks that a restart serves
// the last good generation and removes the leftover.
func TestRestartAfterKilledBuild(t *testing.T) {
	data := t.TempDir()
	snap := pilots(t, 40, "Kept")
	m := open(t, data)
	res := build(t, m, snap, false)
	m.Close()

	partial := filepath.Join(data, "generations", fmt.Sprintf("%06d.building", res.Generation+1))
	if err := os.MkdirAll(filepath.Join(partial, "character"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(partial, "character", "base.tbl"), []byte("half a table"), 0o644)

	m2 := open(t, data)
	defer m2.Close()
	if live := m2.Live(); live == nil || live.ID != res.Generation {
		t.Fatalf("restart serves %+v, want generation %d", live, res.Generation)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Fatalf("partial build still on disk: %v", err)
	}
	if got := searchAll(t, m2, []string{"kept"}); len(got["kept/false"]) != 40 {
		t.Fatalf("restarted search: %v", got)
	}
	// The next build does not reuse the number of the killed one's files.
	snap2 := pilots(t, 41, "Kept")
	if r := build(t, m2, snap2, false); r.Generation <= res.Generation {
		t.Fatalf("new generation %d not after %d", r.Generation, res.Generation)
	}
}

// TestIncrementalEqualsFull changes a small share of records and checks
// that the patched generation answers exactly as a full rebuild does,
// through both the search tables and bleve.
func TestIncrementalEqualsFull(t *testing.T) {
	base := func(i int) string { return fmt.Sprintf("Name %d Ani", i) }
	before := characters(2000, base)
	after := characters(2000, base)
	after = append(after[:10], after[20:]...) // 10 removed
	for i := 100; i < 140; i++ {              // 40 renamed
		after[i].(*snapshots.Character).Name = fmt.Sprintf("Renamed %d Ell", i)
	}
	after = append(after, characters(2010, func(i int) string { return fmt.Sprintf("Newcomer %d", i) })[2000:]...) // 10 added
	systems := []snapshots.Record{
		&snapshots.SolarSystem{Entity: indexertest.Named(30000142, "Jita"), ConstellationID: 20000020},
		&snapshots.SolarSystem{Entity: indexertest.Named(30000144, "Perimeter"), ConstellationID: 20000020},
	}
	snapBefore := indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: before, snapshots.SolarSystems: systems})
	snapAfter := indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: after, snapshots.SolarSystems: systems})

	inc := open(t, t.TempDir())
	defer inc.Close()
	build(t, inc, snapBefore, false)
	prev := inc.Acquire()
	r := build(t, inc, snapAfter, false)
	if !r.Incremental || r.Changed != 60 {
		t.Fatalf("incremental build: %+v, want incremental with 60 changes", r)
	}
	// The unchanged solar systems file was reused, not rebuilt: its files
	// are the previous generation's (hard links).
	cur := inc.Acquire()
	for _, rel := range []string{"records/solar_systems.data", "solar_system/base.tbl"} {
		a, errA := os.Stat(filepath.Join(prev.Dir(), rel))
		b, errB := os.Stat(filepath.Join(cur.Dir(), rel))
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			t.Errorf("%s was not reused from the previous generation (%v, %v)", rel, errA, errB)
		}
	}
	cur.Release()
	prev.Release()
	if got := searchCategory(t, inc, "jita", snapshots.CategorySolarSystem); !reflect.DeepEqual(got, []int64{30000142}) {
		t.Errorf("reused category answers %v", got)
	}
	full := open(t, t.TempDir())
	defer full.Close()
	if r := build(t, full, snapAfter, true); r.Incremental {
		t.Fatalf("full build reported incremental")
	}
	texts := []string{"ani", "ell", "renamed 10", "newcomer", "name 15 ani", "Name 1"}
	if a, b := searchAll(t, inc, texts), searchAll(t, full, texts); !reflect.DeepEqual(a, b) {
		t.Fatalf("incremental and full answer differently:\n%v\n%v", a, b)
	}
	for _, q := range []string{"words:renamed", "name:\"name 15 ani\"", "words:ani", "words:newcomer"} {
		if a, b := bleveIDs(t, inc, q), bleveIDs(t, full, q); !reflect.DeepEqual(a, b) {
			t.Fatalf("bleve %q: incremental %d hits, full %d", q, len(a), len(b))
		}
	}
}

func searchCategory(t *testing.T, m *indexer.Manager, text string, cat snapshots.Category) []int64 {
	t.Helper()
	res, err := query.New(m).Search(context.Background(), query.Request{Text: text, Categories: []snapshots.Category{cat}})
	if err != nil {
		t.Fatal(err)
	}
	return res.IDs[cat]
}

func bleveIDs(t *testing.T, m *indexer.Manager, q string) []string {
	t.Helper()
	g := m.Acquire()
	defer g.Release()
	req := bleve.NewSearchRequestOptions(bleve.NewQueryStringQuery(q), 10000, 0, false)
	req.SortBy([]string{"_id"})
	idx, err := g.Index(snapshots.CategoryCharacter)
	if err != nil {
		t.Fatal(err)
	}
	res, err := idx.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

func TestConcurrentTriggersBuildOnce(t *testing.T) {
	snap := pilots(t, 3000, "Pilot")
	m := open(t, t.TempDir())
	defer m.Close()
	id, coalesced := m.Start(indexer.BuildRequest{Snapshot: snap, Trigger: "admin"})
	if coalesced {
		t.Fatal("first trigger coalesced")
	}
	res := indexertest.Build(t, m, indexer.BuildRequest{Snapshot: snap, Trigger: "cli"})
	if !res.Coalesced || res.ID != id {
		t.Fatalf("second trigger: %+v, want coalesced into %s", res, id)
	}
	if live := m.Live(); live == nil || live.ID != res.Generation {
		t.Fatalf("live %+v", live)
	}
}

func TestSchedule(t *testing.T) {
	snap := pilots(t, 10, "Pilot")
	m := open(t, t.TempDir())
	defer m.Close()
	if err := m.SetSchedule("not a schedule", snap); err == nil {
		t.Fatal("bad cron spec accepted")
	}
	if err := m.SetSchedule("@every 1s", snap); err != nil {
		t.Fatal(err)
	}
	st := m.Status()
	if st.Schedule == nil || st.Schedule.Spec != "@every 1s" || st.Schedule.Next.IsZero() {
		t.Fatalf("schedule status %+v", st.Schedule)
	}
	// Live comes first (searches), the build's result once its bleve part
	// is complete too.
	waitFor(t, "the scheduled build", func() bool { return m.Status().LastBuild != nil })
	if m.Live() == nil {
		t.Fatal("the schedule never built")
	}
	if st := m.Status(); st.LastBuild == nil || st.LastBuild.Trigger != "schedule" {
		t.Fatalf("last build %+v", st.LastBuild)
	}
}

// TestTwoProcessesOneDataDir stands for `gds index` running beside a
// server on the same data directory: builds of either never collide on a
// generation number, and opening a manager never removes another's build
// in progress.
func TestTwoProcessesOneDataDir(t *testing.T) {
	data := t.TempDir()
	snapA := pilots(t, 30, "Alpha")
	snapB := pilots(t, 30, "Bravo")
	server := open(t, data)
	defer server.Close()
	first := build(t, server, snapA, false)

	cli := open(t, data)
	second := build(t, cli, snapB, false)
	cli.Close()
	if second.Generation <= first.Generation {
		t.Fatalf("second process built generation %d after %d", second.Generation, first.Generation)
	}
	// The server's own next build takes a fresh number instead of failing.
	third := build(t, server, snapB, true)
	if third.Generation <= second.Generation {
		t.Fatalf("server built generation %d after %d", third.Generation, second.Generation)
	}

	// A build directory of a live builder (the lock is held) survives Open.
	lockFile, err := os.OpenFile(filepath.Join(data, "build.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lockFile.Close()
	if err := syscall.Flock(int(lockFile.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	busy := filepath.Join(data, "generations", "000999.building")
	os.MkdirAll(busy, 0o755)
	other := open(t, data)
	other.Close()
	if _, err := os.Stat(busy); err != nil {
		t.Fatalf("Open removed a build in progress: %v", err)
	}
	syscall.Flock(int(lockFile.Fd()), syscall.LOCK_UN)
	other = open(t, data)
	other.Close()
	if _, err := os.Stat(busy); !os.IsNotExist(err) {
		t.Fatalf("Open kept an abandoned build: %v", err)
	}
}

// TestCancelWhileShardsBuild stops the manager while bleve shards are being
// built in the background phase: the build fails, waits for every shard to
// stop, leaves no build directory, and a restart serves searches from the
// new generation and completes its bleve part.
func TestCancelWhileShardsBuild(t *testing.T) {
	data := t.TempDir()
	m := open(t, data)
	first := build(t, m, pilots(t, 20, "Old"), false)
	big := pilots(t, 40_000, "New pilot")
	before := runtime.NumGoroutine()
	done := make(chan error, 1)
	go func() {
		_, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: big, Full: true, Trigger: "test"})
		done <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if p, ok := m.Progress(); ok && p.Phase == "bleve" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the build never reached its bleve phase")
		}
		time.Sleep(time.Millisecond)
	}
	m.Close()
	if err := <-done; err == nil {
		t.Fatal("a build cancelled while its shards were building succeeded")
	}
	ents, _ := os.ReadDir(filepath.Join(data, "generations"))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".building") {
			t.Errorf("leftover %s", e.Name())
		}
	}
	for deadline := time.Now().Add(time.Minute); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the cancelled build, %d before", n, before)
	}
	// The tables and stores went live before the shards were cancelled:
	// a restart serves searches from the new generation, analysts from
	// the first, and completes the new one's shards.
	again := open(t, data)
	defer again.Close()
	live := again.Live()
	if live == nil || live.ID == first.Generation {
		t.Fatalf("after a restart the live generation is %+v, want the one after %d", live, first.Generation)
	}
	waitFor(t, "the restart to complete the bleve part", func() bool {
		p := again.Parts()
		return p.Analysts == live.ID && p.Bleve == indexer.BleveLive
	})
	if got := bleveIDs(t, again, "words:pilot"); len(got) == 0 {
		t.Error("the completed bleve part finds nothing")
	}
	if _, err := os.Stat(filepath.Join(data, "generations", fmt.Sprintf("%06d", first.Generation))); !os.IsNotExist(err) {
		t.Errorf("generation %d is still on disk after the analysts moved on: %v", first.Generation, err)
	}
}

// waitFor polls cond until it holds, failing after a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// rebuiltInFull opens data again and builds snap, which the generation
// first was built from: after what changed, the build must make a new
// full generation rather than find the snapshot unchanged or patch it.
func rebuiltInFull(t *testing.T, data, snap string, first indexer.BuildResult, what string) *indexer.Manager {
	t.Helper()
	m := open(t, data)
	again := build(t, m, snap, false)
	if again.Unchanged || again.Incremental || again.Generation <= first.Generation {
		m.Close()
		t.Fatalf("rebuild after %s: %+v, want a new full generation", what, again)
	}
	return m
}

// A category of more than half a shard is built as two shards of
// contiguous keys (an even number: one of 500 at 700 a shard), and the
// analysts' queries find every document across them, as from one.
func TestHalfShardCategorySplitInTwo(t *testing.T) {
	snap := indexertest.Snapshot(t, indexertest.Records{
		snapshots.Characters: characters(500, func(i int) string { return fmt.Sprintf("Pilot %d", i) }),
	})
	m := open(t, t.TempDir()) // 700 a shard
	defer m.Close()
	build(t, m, snap, false)
	meta := m.Live()
	cat := snapshots.CategoryCharacter
	if n, bounds := meta.Shards[cat], meta.ShardBounds[cat]; n != 2 || len(bounds) != 1 || bounds[0] != 90000250 {
		t.Fatalf("500 characters at 700 a shard: %d shards, bounds %v; want 2, [90000250]", n, bounds)
	}
	a := analyst.New(m)
	for q, want := range map[string]int{"*": 500, "words:pilot": 500, "name:pilot*": 500, "id:90000249": 1, "id:90000250": 1, "words:499": 1} {
		res, err := a.Query(context.Background(), analyst.Request{Query: q, Category: cat, Limit: 1000})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if int(res.Total) != want || len(res.Hits) != want {
			t.Errorf("%s: total %d, %d hits; want %d", q, res.Total, len(res.Hits), want)
		}
	}
}

package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// isClosed reports whether ch is closed (nil is not).
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// The gate is busy while every slot is taken or a search waits, and
// closes the channel it handed out when that ends.
func TestGateBusy(t *testing.T) {
	g := newGate(2, time.Hour, time.Hour)
	ctx := context.Background()
	if g.busy.Load() || g.idleWait() != nil {
		t.Fatal("an empty gate is busy")
	}
	_ = g.acquire(ctx)
	if g.busy.Load() {
		t.Fatal("busy with a slot free")
	}
	_ = g.acquire(ctx)
	idle := g.idleWait()
	if !g.busy.Load() || idle == nil || isClosed(idle) {
		t.Fatal("not busy with every slot taken")
	}
	got := make(chan error)
	go func() { got <- g.acquire(ctx) }()
	waitQueued(t, g, 1)
	g.leave() // the slot goes to the waiting search: still every slot taken
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if !g.busy.Load() || isClosed(idle) {
		t.Fatal("not busy after a slot went from one search to the next")
	}
	g.leave()
	if g.busy.Load() || !isClosed(idle) || g.idleWait() != nil {
		t.Fatal("still busy with a slot free")
	}
	g.leave()

	// A search that gives up waiting leaves the gate busy while the slot
	// stays taken.
	short := newGate(1, time.Millisecond, time.Millisecond)
	_ = short.acquire(ctx)
	if err := short.acquire(ctx); err != errGateFull {
		t.Fatalf("got %v, want errGateFull", err)
	}
	if !short.busy.Load() {
		t.Fatal("not busy with the only slot taken")
	}
	short.leave()
	if short.busy.Load() {
		t.Fatal("busy with no search")
	}
}

// waitPauses waits until y has begun n pauses.
func waitPauses(t *testing.T, y *BuildYield, n uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for p, _ := y.Stats(); p < n; p, _ = y.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("%d pauses, want %d", p, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A build goroutine pauses while the searches are busy and goes on as a
// slot frees, not when its bound runs out.
func TestBuildYieldWaitsForASlot(t *testing.T) {
	y := NewBuildYield(time.Hour)
	y.Pace(context.Background()) // no gate yet: nothing to give way to
	g := newGate(1, time.Hour, time.Hour)
	y.attach(g)
	y.Pace(context.Background())
	if p, _ := y.Stats(); p != 0 {
		t.Fatalf("%d pauses with the searches idle", p)
	}
	_ = g.acquire(context.Background())
	done := make(chan struct{})
	go func() { y.Pace(context.Background()); close(done) }()
	waitPauses(t, y, 1)
	if isClosed(done) {
		t.Fatal("the pause ended with the slot still taken")
	}
	g.leave()
	<-done
	if p, d := y.Stats(); p != 1 || d <= 0 {
		t.Fatalf("%d pauses of %v, want one", p, d)
	}

	// A build that is cancelled stops pausing.
	_ = g.acquire(context.Background())
	defer g.leave()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	y.quiet.Store(0)
	y.Pace(ctx)
}

// However busy the searches, a pause lasts at most the bound, and as long
// again passes before the next one.
func TestBuildYieldBound(t *testing.T) {
	const bound = 50 * time.Millisecond
	g := newGate(1, time.Hour, time.Hour)
	_ = g.acquire(context.Background())
	defer g.leave()
	y := NewBuildYield(bound)
	y.attach(g)
	start := time.Now()
	y.Pace(context.Background())
	took := time.Since(start)
	if time.Now().UnixNano() < y.quiet.Load() {
		y.Pace(context.Background()) // within the quiet time after the pause: no pause
	}
	if p, d := y.Stats(); p != 1 || d < bound || took < bound {
		t.Fatalf("%d pauses of %v (the first took %v), want one of the bound %v", p, d, took, bound)
	}
	if q := time.Unix(0, y.quiet.Load()); q.Before(start.Add(2 * bound)) {
		t.Fatalf("quiet until %v, want at least twice the bound after the pause began (%v)", q, start)
	}

	off := NewBuildYield(0)
	off.attach(g)
	off.Pace(context.Background())
	if p, _ := off.Stats(); p != 0 {
		t.Fatal("a zero bound paused")
	}
}

// A build in a server whose searches are busy pauses, goes on once a slot
// frees and makes the same generation as a build that never yields.
func TestBuildYieldBuildsTheSameGeneration(t *testing.T) {
	recs := indexertest.Records{}
	for i := range int64(3000) {
		recs[snapshots.Characters] = append(recs[snapshots.Characters], &snapshots.Character{
			Entity: indexertest.Named(90000001+i, fmt.Sprintf("Pilot %d of Jita", i*7919%3001)), CorporationID: 98000001 + i%5})
	}
	for i := range int64(1500) {
		recs[snapshots.SolarSystems] = append(recs[snapshots.SolarSystems], &snapshots.SolarSystem{
			Entity: indexertest.Named(30000001+i, fmt.Sprintf("System %d", i)), ConstellationID: 20000001 + i%9})
	}
	snap := indexertest.Snapshot(t, recs)
	want := indexertest.Manager(t, snap).Acquire()
	defer want.Release()

	g := newGate(1, time.Hour, time.Hour)
	_ = g.acquire(context.Background()) // every slot taken
	y := NewBuildYield(time.Hour)
	y.attach(g)
	m, err := indexer.Open(indexer.Options{DataDir: filepath.Join(t.TempDir(), "data"), Logger: zerolog.New(io.Discard), Pacer: y})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	done := make(chan error, 1)
	go func() {
		_, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: snap, Trigger: "test"})
		done <- err
	}()
	waitPauses(t, y, 1)
	select {
	case err := <-done:
		t.Fatalf("the build finished (%v) while paused", err)
	default:
	}
	g.leave()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := m.Acquire()
	defer got.Release()
	sameGeneration(t, got, want)
}

// sameGeneration compares two generations' meta and, byte for byte, every
// file but bleve's (which differ between any two builds of a snapshot).
func sameGeneration(t *testing.T, got, want *indexer.Generation) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"counts", got.Meta.Counts, want.Meta.Counts},
		{"records", got.Meta.Records, want.Meta.Records},
		{"shards", got.Meta.Shards, want.Meta.Shards},
		{"bounds", got.Meta.ShardBounds, want.Meta.ShardBounds},
		{"files", got.Meta.Files, want.Meta.Files},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s: %v, want %v", f.name, f.got, f.want)
		}
	}
	files := 0
	err := filepath.WalkDir(want.Dir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want.Dir(), path)
		if rel == indexer.MetaFile || strings.Contains(rel, "bleve-") {
			return nil
		}
		a, err := os.ReadFile(filepath.Join(got.Dir(), rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs", rel)
		}
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no files compared")
	}
}

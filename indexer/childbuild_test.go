package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// fakeChild stands for the gds index a server runs as its child process
// (Options.BuildChild): it builds with a Manager of its own on the same
// data directory, as gds index does.
type fakeChild struct {
	opts  indexer.Options // the child's Manager's
	calls atomic.Int32
	// hold, when set, keeps the child from building until it is closed.
	hold chan struct{}
	// fail, when set, is the child's failure before it builds anything.
	fail error
	// built, when set, is called with the directory of the generation
	// the child built.
	built func(dir string)
}

const fakePID = 4242

func (c *fakeChild) build(ctx context.Context, req indexer.BuildRequest, r indexer.ChildReport) (indexer.BuildResult, error) {
	c.calls.Add(1)
	r.Started(fakePID)
	if c.hold != nil {
		select {
		case <-c.hold:
		case <-ctx.Done():
			return indexer.BuildResult{}, ctx.Err()
		}
	}
	if c.fail != nil {
		return indexer.BuildResult{}, c.fail
	}
	m, err := indexer.Open(c.opts)
	if err != nil {
		return indexer.BuildResult{}, err
	}
	defer m.Close()
	r.Progress(indexer.Progress{Phase: "verify"})
	res, err := m.Build(ctx, req)
	if err == nil && c.built != nil {
		c.built(filepath.Join(c.opts.DataDir, "generations", fmt.Sprintf("%06d", res.Generation)))
	}
	return res, err
}

// childSetup opens a server's Manager on a fresh data directory whose
// builds run in child, and builds first (in the server: nothing is live).
func childSetup(t *testing.T, first string) (*indexer.Manager, *fakeChild, indexer.BuildResult) {
	t.Helper()
	data := t.TempDir()
	child := &fakeChild{opts: indexer.Options{DataDir: data, Logger: zerolog.New(io.Discard), ShardSize: 700, KeepRetired: true}}
	server := openWith(t, indexer.Options{DataDir: data, BuildChild: child.build})
	t.Cleanup(func() { server.Close() })
	res := build(t, server, first, false)
	if n := child.calls.Load(); n != 0 {
		t.Fatalf("the first build (nothing live) ran in a child %d times", n)
	}
	return server, child, res
}

// renamedPilots are 1000 characters "Pilot i", the ones in renamed called
// "Renamed i" instead.
func renamedPilots(t *testing.T, renamed ...int) string {
	return indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: characters(1000, func(i int) string {
		if slices.Contains(renamed, i) {
			return fmt.Sprintf("Renamed %d", i)
		}
		return fmt.Sprintf("Pilot %d", i)
	})})
}

// TestBuildChildMakesItsGenerationLive: a build while a generation is live
// runs in the child, incrementally; the server shows the child's process
// while it runs and makes the child's generation live for searches and
// analysts when it ends.
func TestBuildChildMakesItsGenerationLive(t *testing.T) {
	server, child, first := childSetup(t, renamedPilots(t))
	child.hold = make(chan struct{})
	id, _ := server.Start(indexer.BuildRequest{Snapshot: renamedPilots(t, 7), Trigger: "test"})
	waitFor(t, "the child's process in the status", func() bool {
		b := server.Status().Building
		return b != nil && b.ID == id && b.PID == fakePID
	})
	if live := server.Live(); live.ID != first.Generation {
		t.Fatalf("live %d while the child builds, want %d", live.ID, first.Generation)
	}
	close(child.hold)
	waitFor(t, "the child's build to end", func() bool { return server.Status().Building == nil })

	st := server.Status()
	res := st.LastBuild
	if res == nil || !res.OK() || res.Generation <= first.Generation || !res.Incremental || res.Changed != 1 || res.Searchable == 0 {
		t.Fatalf("last build %+v, want an incremental generation past %d", res, first.Generation)
	}
	if st.Live.ID != res.Generation || st.Failures != 0 || child.calls.Load() != 1 {
		t.Fatalf("live %d, failures %d, child runs %d; want %d, 0, 1", st.Live.ID, st.Failures, child.calls.Load(), res.Generation)
	}
	if p := server.Parts(); p.Analysts != res.Generation || p.Bleve != indexer.BleveLive {
		t.Errorf("parts %+v: analysts should answer from %d", p, res.Generation)
	}
	if ids := searchCategory(t, server, "Renamed 7", snapshots.CategoryCharacter); !slices.Equal(ids, []int64{90000007}) {
		t.Errorf("search of the renamed character: %v", ids)
	}
	if ids := bleveIDs(t, server, "words:renamed"); !slices.Equal(ids, []string{"90000007"}) {
		t.Errorf("analysts' query of the renamed character: %v", ids)
	}
	waitFor(t, "the retired generation's removal by the server", func() bool {
		_, err := os.Stat(filepath.Join(child.opts.DataDir, "generations", fmt.Sprintf("%06d", first.Generation)))
		return os.IsNotExist(err)
	})
}

// TestBuildChildFailureKeepsLiveGeneration: a child that fails leaves the
// live generation serving, and the failure in the status.
func TestBuildChildFailureKeepsLiveGeneration(t *testing.T) {
	server, child, first := childSetup(t, renamedPilots(t))
	child.fail = errors.New("gds index exited: exit status 1")
	_, err := server.Build(context.Background(), indexer.BuildRequest{Snapshot: renamedPilots(t, 7), Trigger: "test"})
	if err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("build with a failing child: %v", err)
	}
	st := server.Status()
	if st.Live.ID != first.Generation || st.Failures != 1 || st.LastBuild == nil || !strings.Contains(st.LastBuild.Error, "exit status 1") {
		t.Fatalf("after a failed child: live %d, failures %d, last %+v", st.Live.ID, st.Failures, st.LastBuild)
	}
	if ids := searchCategory(t, server, "Pilot 7", snapshots.CategoryCharacter); !slices.Contains(ids, 90000007) {
		t.Errorf("search after the failed child: %v", ids)
	}
}

// TestBuildChildOfAnotherVersion: a generation this gds would read
// wrongly (a child of another version: names folded otherwise) is not
// made live.
func TestBuildChildOfAnotherVersion(t *testing.T) {
	server, child, first := childSetup(t, renamedPilots(t))
	child.built = func(dir string) {
		indexertest.EditMeta(t, dir, func(meta map[string]any) { meta["fold"] = 99 })
	}
	_, err := server.Build(context.Background(), indexer.BuildRequest{Snapshot: renamedPilots(t, 7), Trigger: "test"})
	if err == nil || !strings.Contains(err.Error(), "folded") {
		t.Fatalf("build whose child wrote another version's generation: %v", err)
	}
	if st := server.Status(); st.Live.ID != first.Generation || st.Failures != 1 {
		t.Fatalf("live %d, failures %d; want %d, 1", st.Live.ID, st.Failures, first.Generation)
	}
}

// TestBuildChildBleveFailure: a child whose bleve phase fails made its
// generation CURRENT: it goes live for searches, analysts keep the
// previous one; the next build of the snapshot completes the bleve part in
// a child, and the server's analysts move to it.
func TestBuildChildBleveFailure(t *testing.T) {
	server, child, first := childSetup(t, renamedPilots(t))
	healthy := child.opts
	child.opts = indexer.WithBeforeBleve(healthy, func(context.Context, uint64) error { return errors.New("disk full") })
	snap := renamedPilots(t, 7)
	if _, err := server.Build(context.Background(), indexer.BuildRequest{Snapshot: snap, Trigger: "test"}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("build whose child's bleve phase fails: %v", err)
	}
	second := server.Live().ID
	if second <= first.Generation {
		t.Fatalf("live %d after the child's phase one, want past %d", second, first.Generation)
	}
	if p := server.Parts(); p.Analysts != first.Generation || p.Bleve != indexer.BleveFailed {
		t.Fatalf("parts %+v: analysts should stay on %d, bleve failed", p, first.Generation)
	}
	if ids := searchCategory(t, server, "Renamed 7", snapshots.CategoryCharacter); !slices.Equal(ids, []int64{90000007}) {
		t.Errorf("search of the renamed character: %v", ids)
	}

	child.opts = healthy
	indexertest.Build(t, server, indexer.BuildRequest{Snapshot: snap, Trigger: "test"})
	if p := server.Parts(); p.Search != second || p.Analysts != second || p.Bleve != indexer.BleveLive {
		t.Fatalf("parts %+v after the child completed generation %d", p, second)
	}
	if ids := bleveIDs(t, server, "words:renamed"); !slices.Equal(ids, []string{"90000007"}) {
		t.Errorf("analysts' query of the renamed character: %v", ids)
	}
	if n := child.calls.Load(); n != 2 {
		t.Errorf("child runs %d, want 2", n)
	}
}

// TestBuildChildStopsWithManager: closing the server's Manager stops the
// running child and leaves the live generation as it was.
func TestBuildChildStopsWithManager(t *testing.T) {
	data := t.TempDir()
	child := &fakeChild{hold: make(chan struct{})}
	server := openWith(t, indexer.Options{DataDir: data, BuildChild: child.build})
	first := build(t, server, renamedPilots(t), false)
	server.Start(indexer.BuildRequest{Snapshot: renamedPilots(t, 7), Trigger: "test"})
	waitFor(t, "the child to run", func() bool { return child.calls.Load() == 1 })
	server.Close()
	again := open(t, data)
	defer again.Close()
	if live := again.Live(); live == nil || live.ID != first.Generation {
		t.Fatalf("live after the stopped child: %+v, want %d", live, first.Generation)
	}
}

// TestKeepRetired: a Manager that keeps retired generations leaves the one
// its build replaced on disk, for the next Open to remove.
func TestKeepRetired(t *testing.T) {
	data := t.TempDir()
	m := openWith(t, indexer.Options{DataDir: data, KeepRetired: true})
	first := build(t, m, renamedPilots(t), false)
	build(t, m, renamedPilots(t, 7), false)
	m.Close()
	dir := filepath.Join(data, "generations", fmt.Sprintf("%06d", first.Generation))
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("retired generation removed: %v", err)
	}
	open(t, data).Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Open kept the retired generation: %v", err)
	}
}

package indexer_test

import (
	"context"
	"fmt"
	"testing"

	"gds/indexer"
	"gds/indexer/indexertest"
	"gds/snapshots"
)

// An incremental build goes live for searches before its bleve shards are
// patched: while the patch is held, searches find the renamed names, the
// analysts' queries answer from the previous generation (which still has
// the old names), and once the patch is done they answer from the new one.
func TestIncrementalPatchAfterLive(t *testing.T) {
	m, gate := openGated(t, t.TempDir())
	defer m.Close()
	name := func(i int) string { return fmt.Sprintf("Steady pilot %d", i) }
	first := build(t, m, indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: characters(1000, name)}), false)
	waitFor(t, "the first generation's bleve part", func() bool { return m.Parts().Analysts == first.Generation })

	gate.armed.Store(true)
	renamed := func(i int) string {
		if i%100 == 7 {
			return fmt.Sprintf("Renamed ace %d", i)
		}
		return name(i)
	}
	done := make(chan indexer.BuildResult, 1)
	go func() {
		res, err := m.Build(context.Background(), indexer.BuildRequest{Snapshot: indexertest.Snapshot(t, indexertest.Records{snapshots.Characters: characters(1000, renamed)}), Trigger: "test"})
		if err != nil {
			t.Errorf("incremental build: %v", err)
		}
		done <- res
	}()
	var gen uint64
	select {
	case gen = <-gate.entered:
	case r := <-done:
		t.Fatalf("the incremental build ended without a bleve phase: %+v", r)
	}
	if live := m.Live(); live == nil || live.ID != gen || !live.Incremental || !live.BlevePending {
		t.Fatalf("live while the patch is held = %+v, want incremental generation %d with bleve pending", live, gen)
	}
	if got := searchCategory(t, m, "renamed ace", snapshots.CategoryCharacter); len(got) != 10 {
		t.Errorf("search of the renamed names found %d, want 10", len(got))
	}
	res, err := analystsAnswer(t, m, "words:renamed")
	if err != nil {
		t.Fatal(err)
	}
	if res.Generation != first.Generation || res.Total != 0 {
		t.Errorf("analysts while the patch is held: generation %d, %d hits; want %d, 0", res.Generation, res.Total, first.Generation)
	}
	close(gate.hold)
	r := <-done
	if r.Generation != gen || !r.Incremental || r.Searchable <= 0 || r.Searchable > r.Duration {
		t.Errorf("build result %+v", r)
	}
	for q, want := range map[string]uint64{"words:renamed": 10, "words:steady": 990} {
		res, err := analystsAnswer(t, m, q)
		if err != nil {
			t.Fatal(err)
		}
		if res.Generation != gen || res.Total != want {
			t.Errorf("analysts %s after the patch: generation %d, %d hits; want %d, %d", q, res.Generation, res.Total, gen, want)
		}
	}
}

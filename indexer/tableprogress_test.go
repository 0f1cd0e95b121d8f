package indexer

import (
	"context"
	"fmt"
	"testing"

	"gds/indexer/pace"
	"gds/snapshots"
)

// Writing a category's tables goes over its names tableSteps times, each
// step counted in its context (the progress finishTable reports); the
// job's progress is that count in names, never past them.
func TestWriteTablesCountsItsSteps(t *testing.T) {
	const n = 3000
	docs := make([]docInfo, n)
	cols := newTableColumns(snapshots.CategoryCharacter, n)
	for i := range docs {
		docs[i] = docInfo{id: int64(90000000 + i), name: fmt.Sprintf("Pilot %d", i%1000)}
	}
	job := &tableJob{cat: snapshots.CategoryCharacter, n: n}
	if _, err := writeTables(pace.WithWork(context.Background(), &job.work), t.TempDir(), docs, cols, true); err != nil {
		t.Fatal(err)
	}
	if got := job.work.Load(); got != tableSteps*n {
		t.Fatalf("counted %d units of work, want %d (%d steps of %d names)", got, tableSteps*n, tableSteps, n)
	}
	if p := job.progress(); p.Done != n || p.Total != n || p.Phase != "tables" || p.Kind != string(snapshots.CategoryCharacter) {
		t.Fatalf("progress at the end %+v", p)
	}
	for _, c := range []struct{ work, done int64 }{{0, 0}, {tableSteps*n/2 + 1, n / 2}, {tableSteps*n + 5*n, n}} {
		var j tableJob
		j.n = n
		j.work.Store(c.work)
		if p := j.progress(); p.Done != c.done {
			t.Errorf("after %d units of work: %d of %d names done, want %d", c.work, p.Done, p.Total, c.done)
		}
	}
}

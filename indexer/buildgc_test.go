package indexer

import (
	"runtime/debug"
	"testing"
)

func TestTuneGCRestores(t *testing.T) {
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	limit := debug.SetMemoryLimit(-1)
	restore := TuneGC(400, true)
	if got := debug.SetGCPercent(-1); got != 400 {
		t.Errorf("GOGC during the build = %d, want 400", got)
	}
	debug.SetGCPercent(400)
	want := int64(DefaultBuildMemoryLimit)
	if total := memoryBudget(); total > 0 {
		want = min(want, total/2)
	}
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("memory limit during the build = %d, want %d", got, want)
	}
	restore()
	if got := debug.SetGCPercent(-1); got != before {
		t.Errorf("GOGC after = %d, want %d", got, before)
	}
	debug.SetGCPercent(before)
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("memory limit after = %d, want %d", got, limit)
	}
}

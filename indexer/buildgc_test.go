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

// A build of a snapshot larger than the default limit holds raises the
// limit TuneGC set for its duration, to at most half the memory; a
// smaller one, or a limit TuneGC did not set, is left alone.
func TestRaiseMemoryLimit(t *testing.T) {
	budget := memoryBudget
	t.Cleanup(func() { memoryBudget = budget })
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	before := limit()
	memoryBudget = func() int64 { return 64 << 30 }
	raiseMemoryLimit(58_000_000)() // not TuneGC's: nothing to raise
	if got := limit(); got != before {
		t.Fatalf("a limit TuneGC did not set became %d", got)
	}
	restore := TuneGC(400, true)
	defer restore()
	for _, c := range []struct {
		budget, records, want int64
	}{
		{64 << 30, 10_000_000, DefaultBuildMemoryLimit},
		{64 << 30, 58_000_000, 58_000_000 * buildBytesPerRecord},
		{8 << 30, 58_000_000, 4 << 30},
	} {
		memoryBudget = func() int64 { return c.budget }
		undo := raiseMemoryLimit(c.records)
		if got := limit(); got != c.want {
			t.Errorf("%d records, %d bytes of memory: limit %d, want %d", c.records, c.budget, got, c.want)
		}
		undo()
		if got := limit(); got != DefaultBuildMemoryLimit {
			t.Errorf("after the build of %d records: limit %d, want TuneGC's %d", c.records, got, int64(DefaultBuildMemoryLimit))
		}
	}
}

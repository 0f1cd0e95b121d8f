package indexer

import (
	"runtime/debug"
	"sync/atomic"
)

// DefaultBuildGCPercent is the GOGC a process whose job is one build (gds
// index) runs it with: a build's heap is mostly short-lived garbage of
// bleve's segment building, and letting it grow to five times what it
// holds between collections trades memory for a shorter build (figures in
// docs/performance.md).
const DefaultBuildGCPercent = 400

// DefaultServeGCPercent is the GOGC gds serve runs with. A server's heap
// holds a few MB (its tables and stores are outside it), so at Go's
// default the collector runs every few requests of a local's size; at 400
// a local at 10M names costs 12% less CPU (docs/performance.md). The soft
// limit of TuneGC bounds the heap while a build runs in the server.
const DefaultServeGCPercent = 400

// DefaultBuildMemoryLimit is the soft memory limit (Go's GOMEMLIMIT) a
// build process runs under: above what a 10M-name build holds live at its
// peak, so the collector runs when the heap nears it rather than letting
// GOGC grow it to several times that (figures in docs/performance.md).
const DefaultBuildMemoryLimit = 2560 << 20

// buildBytesPerRecord is the soft memory limit a build of a large
// snapshot runs under, per record of the snapshot (raiseMemoryLimit). A
// build holds its largest category's documents live until its tables are
// written: at 50M characters (58.0M records) about 4.3 GiB, 80 bytes a
// record, which a limit of 2.5 GiB left the collector running without
// pause (a full build 9m24s, 986 s of CPU); under 5 GiB it took 5m38s and
// 587 s, its peak 5.1 GiB anonymous (2026-11-29, docs/performance.md).
// 92 bytes a record leaves the collector a sixth over what is live; up to
// 28M records DefaultBuildMemoryLimit is the higher.
const buildBytesPerRecord = 92

// tunedLimit is the soft memory limit TuneGC set, 0 when it set none (an
// operator's GOMEMLIMIT, or none at all, stays as it is).
var tunedLimit atomic.Int64

// TuneGC sets the process's GOGC to percent and, when capMemory and
// percent is above Go's default, a soft memory limit of
// DefaultBuildMemoryLimit (at most half the memory the process may use,
// memoryBudget), so the collector runs sooner rather than let a build's
// heap outgrow a small machine; a build of a larger snapshot raises it
// while it runs (raiseMemoryLimit). It returns what restores both
// settings. Both are process-wide: gds index and gds serve call it at
// their start.
func TuneGC(percent int, capMemory bool) (restore func()) {
	oldPercent := debug.SetGCPercent(percent)
	oldLimit := debug.SetMemoryLimit(-1)
	if capMemory && percent > 100 {
		limit := int64(DefaultBuildMemoryLimit)
		if total := memoryBudget(); total > 0 {
			limit = min(limit, total/2)
		}
		debug.SetMemoryLimit(limit)
		tunedLimit.Store(limit)
	}
	return func() {
		tunedLimit.Store(0)
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}

// raiseMemoryLimit raises the soft memory limit TuneGC set to what a
// build of a snapshot of records holds live, with room for the collector
// (buildBytesPerRecord; at most half the memory the process may use), and
// returns what restores it. A limit TuneGC did not set, or one already as
// high, is left as it is.
func raiseMemoryLimit(records int64) (restore func()) {
	base := tunedLimit.Load()
	want := records * buildBytesPerRecord
	if total := memoryBudget(); total > 0 {
		want = min(want, total/2)
	}
	if base == 0 || want <= base {
		return func() {}
	}
	debug.SetMemoryLimit(want)
	return func() { debug.SetMemoryLimit(base) }
}

package indexer

import "runtime/debug"

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

// TuneGC sets the process's GOGC to percent and, when capMemory and
// percent is above Go's default, a soft memory limit of
// DefaultBuildMemoryLimit (at most half the memory the process may use,
// memoryBudget), so the collector runs sooner rather than let a build's
// heap outgrow a small machine. It returns what restores both settings.
// Both are process-wide: gds index and gds serve call it at their start.
func TuneGC(percent int, capMemory bool) (restore func()) {
	oldPercent := debug.SetGCPercent(percent)
	oldLimit := debug.SetMemoryLimit(-1)
	if capMemory && percent > 100 {
		limit := int64(DefaultBuildMemoryLimit)
		if total := memoryBudget(); total > 0 {
			limit = min(limit, total/2)
		}
		debug.SetMemoryLimit(limit)
	}
	return func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}

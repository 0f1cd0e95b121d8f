package indexer

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
)

// DefaultBuildGCPercent is the GOGC a process whose job is one build (gds
// index) runs it with: a build's heap is mostly short-lived garbage of
// bleve's segment building, and letting it grow to five times what it
// holds between collections trades memory for a shorter build (figures in
// docs/performance.md). A server keeps Go's default: its reindexes share
// the process with searches.
const DefaultBuildGCPercent = 400

// TuneGCForBuild sets the process's GOGC to percent and, when capMemory
// and percent is above Go's default, a soft memory limit of half the
// machine's memory, so the collector runs sooner rather than outgrow a
// small machine. It returns what restores both settings. Both are
// process-wide: call it only where nothing else shares the process.
func TuneGCForBuild(percent int, capMemory bool) (restore func()) {
	oldPercent := debug.SetGCPercent(percent)
	oldLimit := debug.SetMemoryLimit(-1)
	if total := totalMemory(); capMemory && total > 0 && percent > 100 {
		debug.SetMemoryLimit(total / 2)
	}
	return func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
}

// totalMemory is the machine's memory in bytes from /proc/meminfo, or 0.
func totalMemory() int64 {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

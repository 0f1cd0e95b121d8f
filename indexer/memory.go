package indexer

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Options.StoresInMemoryAuto holds a generation's record stores in
// memory when their files take at most 1/AutoHoldShare of the memory the
// process may use (memoryBudget): at 10M characters their files (packed
// records) take about 470 MB, an eighth of a 3.7 GiB machine.
const AutoHoldShare = 8

// memoryBudget is the memory the process may use, in bytes: the
// machine's (MemTotal), or its cgroup's limit when that is lower; 0 when
// neither can be read. A variable, so that tests can pretend.
var memoryBudget = func() int64 {
	total := totalMemory()
	if limit := cgroupMemoryLimit(); limit > 0 && (total == 0 || limit < total) {
		return limit
	}
	return total
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

// cgroupMemoryLimit is the memory limit of the cgroup the process sees
// at /sys/fs/cgroup (a container's own: v2's memory.max, or v1's
// memory.limit_in_bytes) in bytes, or 0 when there is none or it cannot
// be read.
func cgroupMemoryLimit() int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // "max", or v1's "unlimited"
			return 0
		}
		return n
	}
	return 0
}

// storesFit reports whether the record stores in dir (a generation's
// records directory) take at most 1/AutoHoldShare of memoryBudget, and
// how many bytes they take.
func storesFit(dir string) (bool, int64) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, 0
	}
	var size int64
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".data", ".delta", ".idx", ".idx-base", ".idx-delta":
		default:
			continue
		}
		if info, err := e.Info(); err == nil {
			size += info.Size()
		}
	}
	budget := memoryBudget()
	return budget > 0 && size <= budget/AutoHoldShare, size
}

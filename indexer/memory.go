package indexer

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
)

// AutoHoldShare: the parts of a generation held in memory when they fit
// (Options.TablesInMemoryAuto, StoresInMemoryAuto) take together at most
// 1/AutoHoldShare of the memory the process may use (memoryBudget). At
// 10M characters the name tables, record stores and typo indexes take
// 1.26 GB, within a seventh of a 16 GiB machine; at 50M the tables alone
// take 3.29 GB, within a seventh of a 24 GiB machine (3.6 GB) but not an
// eighth, and a search of tables mapped rather than held is far slower
// (docs/performance.md).
const AutoHoldShare = 7

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

// inMemory says what of a generation is read into memory of the process's
// own instead of mapped: its name tables (nametable.Load) with their typo
// indexes (typo.Load), and what its record stores' lookups read
// (openStore); each always, or when it fits (plan).
type inMemory struct{ tables, tablesWhenFit, stores, storesWhenFit bool }

func (o Options) inMemory() inMemory {
	return inMemory{tables: o.TablesInMemory, tablesWhenFit: o.TablesInMemoryAuto,
		stores: o.StoresInMemory, storesWhenFit: o.StoresInMemoryAuto}
}

// held is what a generation holds in memory of the process's own.
type held struct{ tables, stores, typos bool }

// MarshalZerologObject adds the parts held to a log line.
func (h held) MarshalZerologObject(e *zerolog.Event) {
	e.Bool("tables_held", h.tables).Bool("stores_held", h.stores).Bool("typos_held", h.typos)
}

// plan decides what the generation in dir (of categories cats) holds. The
// parts held when they fit share one budget, 1/AutoHoldShare of
// memoryBudget: what the parts held always take is set aside first, then
// the rest are considered in the order requests read them, the name
// tables (every search), the record stores (every lookup), the typo
// indexes (suggestions only), each held when it fits what those before it
// left. Parts never held take nothing. The typo indexes follow the
// tables' choice when it is always or never.
func (h inMemory) plan(dir string, cats []string) held {
	parts := []struct {
		always, whenFit bool
		size            func() int64
	}{
		{h.tables, h.tablesWhenFit, func() int64 { return tableBytes(dir, cats, ".tbl") }},
		{h.stores, h.storesWhenFit, func() int64 { return storeBytes(filepath.Join(dir, recordsDir)) }},
		{h.tables, h.tablesWhenFit, func() int64 { return tableBytes(dir, cats, typoExt) }},
	}
	var left int64
	if h.tablesWhenFit || h.storesWhenFit {
		left = memoryBudget() / AutoHoldShare
		for _, p := range parts {
			if p.always {
				left -= p.size()
			}
		}
	}
	var hold [3]bool
	for i, p := range parts {
		hold[i] = p.always
		if !p.always && p.whenFit {
			if n := p.size(); n <= left {
				left -= n
				hold[i] = true
			}
		}
	}
	return held{tables: hold[0], stores: hold[1], typos: hold[2]}
}

// tableBytes is the size of the files ending in ext in the directories of
// cats under dir: a generation's name tables (".tbl") or typo indexes.
func tableBytes(dir string, cats []string, ext string) int64 {
	var size int64
	for _, cat := range cats {
		size += filesBytes(filepath.Join(dir, cat), func(name string) bool { return filepath.Ext(name) == ext })
	}
	return size
}

// storeBytes is the size of the record stores' files in dir (a
// generation's records directory).
func storeBytes(dir string) int64 {
	return filesBytes(dir, func(name string) bool {
		switch filepath.Ext(name) {
		case ".data", ".delta", ".idx", ".idx-base", ".idx-delta":
			return true
		}
		return false
	})
}

// filesBytes is the size of the files in dir whose names match.
func filesBytes(dir string, match func(string) bool) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var size int64
	for _, e := range entries {
		if !match(e.Name()) {
			continue
		}
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			size += info.Size()
		}
	}
	return size
}

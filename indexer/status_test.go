package indexer_test

import (
	"os"
	"path/filepath"
	"testing"

	"gds/indexer"
	"gds/snapshots/disk"
)

// builtRecords builds a small generation in a new data directory and
// returns the directory and the bytes of the generation's record files
// matching each pattern (*.data, *.idx).
func builtRecords(t *testing.T, patterns ...string) (string, []int64) {
	t.Helper()
	data := t.TempDir()
	m := open(t, data)
	defer m.Close()
	build(t, m, newWorld(5, 2000).snapshot(t), true)
	g := m.Acquire()
	defer g.Release()
	sizes := make([]int64, len(patterns))
	for i, p := range patterns {
		files, err := filepath.Glob(filepath.Join(g.Dir(), "records", p))
		if err != nil || len(files) == 0 {
			t.Fatalf("record files %s: %v %v", p, files, err)
		}
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			sizes[i] += st.Size()
		}
	}
	return data, sizes
}

// The status says how much memory the process holds generations' files
// in: at least the live generation's record data with StoresInMemory, and
// that memory is let go when the manager closes.
func TestStatusCountsHeldMemory(t *testing.T) {
	data, sizes := builtRecords(t, "*.data")
	dataBytes := sizes[0]

	before := disk.HeldBytes()
	mapped := open(t, data)
	if st := mapped.Status(); st.HeldBytes != before || st.StoresHeld {
		t.Errorf("a manager that maps its generation: held %d bytes, %d before it opened (stores held: %v)", st.HeldBytes, before, st.StoresHeld)
	}
	mapped.Close()
	held := openWith(t, indexer.Options{DataDir: data, TablesInMemory: true, StoresInMemory: true})
	if st := held.Status(); st.HeldBytes-before < dataBytes || !st.StoresHeld {
		t.Errorf("stores and tables held in memory: held %d bytes more, less than the %d bytes of record data (stores held: %v)", st.HeldBytes-before, dataBytes, st.StoresHeld)
	}
	held.Close()
	if got := disk.HeldBytes(); got != before {
		t.Errorf("held %d bytes after the manager closed, %d before", got, before)
	}
}

// statusWithMemory opens a manager with opts where the process may use
// memory bytes, and returns its status and the bytes it held more than
// before it opened.
func statusWithMemory(t *testing.T, opts indexer.Options, memory int64) (indexer.Status, int64) {
	t.Helper()
	defer indexer.SetMemoryBudget(memory)()
	before := disk.HeldBytes()
	m := openWith(t, opts)
	defer m.Close()
	st := m.Status()
	return st, st.HeldBytes - before
}

// StoresInMemoryAuto holds a generation's record stores when their files
// take at most 1/AutoHoldShare of the memory the process may use, and
// maps them otherwise; the status says which.
func TestStoresHeldWhenTheyFit(t *testing.T) {
	data, sizes := builtRecords(t, "*.data", "*.idx")
	dataBytes, storeBytes := sizes[0], sizes[0]+sizes[1]
	opts := indexer.Options{DataDir: data, StoresInMemoryAuto: true}
	for _, c := range []struct {
		budget int64
		held   bool
	}{
		{storeBytes * indexer.AutoHoldShare, true},
		{storeBytes*indexer.AutoHoldShare - 1, false},
	} {
		st, held := statusWithMemory(t, opts, c.budget)
		if st.StoresHeld != c.held {
			t.Errorf("stores of %d bytes, memory %d: held %v, want %v", storeBytes, c.budget, st.StoresHeld, c.held)
		}
		if c.held && held < dataBytes {
			t.Errorf("stores held: %d bytes held, less than the %d bytes of record data", held, dataBytes)
		}
		if !c.held && held != 0 {
			t.Errorf("stores mapped: %d bytes held", held)
		}
	}
}

// TablesInMemoryAuto holds the name tables first: with room for them
// alone, the stores and the typo indexes stay mapped; with room for
// everything, all is held. The status says which.
func TestTablesHeldFirstWhenTheyFit(t *testing.T) {
	data, sizes := builtRecords(t, "*.data", "*.idx")
	storeBytes := sizes[0] + sizes[1]
	m := open(t, data)
	g := m.Acquire()
	var tableBytes, typoBytes int64
	for ext, n := range map[string]*int64{"*.tbl": &tableBytes, "*.typ": &typoBytes} {
		files, _ := filepath.Glob(filepath.Join(g.Dir(), "*", ext))
		for _, f := range files {
			if st, err := os.Stat(f); err == nil {
				*n += st.Size()
			}
		}
	}
	g.Release()
	m.Close()
	if tableBytes == 0 || typoBytes == 0 {
		t.Fatalf("tables of %d bytes, typo indexes of %d", tableBytes, typoBytes)
	}
	opts := indexer.Options{DataDir: data, TablesInMemoryAuto: true, StoresInMemoryAuto: true}
	for _, c := range []struct {
		budget                int64
		tables, stores, typos bool
	}{
		{tableBytes, true, false, false},
		{tableBytes + storeBytes + typoBytes, true, true, true},
	} {
		st, held := statusWithMemory(t, opts, c.budget*indexer.AutoHoldShare)
		if st.TablesHeld != c.tables || st.StoresHeld != c.stores || st.TyposHeld != c.typos {
			t.Errorf("room for %d bytes: tables, stores, typo indexes held %v %v %v, want %v %v %v",
				c.budget, st.TablesHeld, st.StoresHeld, st.TyposHeld, c.tables, c.stores, c.typos)
		}
		if held < tableBytes {
			t.Errorf("room for %d bytes: %d bytes held, less than the tables' %d", c.budget, held, tableBytes)
		}
	}
}

package indexer_test

import (
	"os"
	"path/filepath"
	"testing"

	"gds/indexer"
	"gds/snapshots/disk"
)

// The status says how much memory the process holds generations' files
// in: at least the live generation's record data with StoresInMemory, and
// that memory is let go when the manager closes.
func TestStatusCountsHeldMemory(t *testing.T) {
	w := newWorld(5, 2000)
	data := t.TempDir()
	m := open(t, data)
	build(t, m, w.snapshot(t), true)
	g := m.Acquire()
	records, err := filepath.Glob(filepath.Join(g.Dir(), "records", "*.data"))
	g.Release()
	m.Close()
	if err != nil || len(records) == 0 {
		t.Fatalf("record data files: %v %v", records, err)
	}
	var dataBytes int64
	for _, r := range records {
		st, err := os.Stat(r)
		if err != nil {
			t.Fatal(err)
		}
		dataBytes += st.Size()
	}

	before := disk.HeldBytes()
	mapped := open(t, data)
	if got := mapped.Status().HeldBytes; got != before {
		t.Errorf("a manager that maps its generation: held %d bytes, %d before it opened", got, before)
	}
	mapped.Close()
	held := openWith(t, indexer.Options{DataDir: data, TablesInMemory: true, StoresInMemory: true})
	if got := held.Status().HeldBytes; got-before < dataBytes {
		t.Errorf("stores and tables held in memory: held %d bytes more, less than the %d bytes of record data", got-before, dataBytes)
	}
	held.Close()
	if got := disk.HeldBytes(); got != before {
		t.Errorf("held %d bytes after the manager closed, %d before", got, before)
	}
}

// StoresInMemoryAuto holds a generation's record stores when their files
// take at most 1/AutoHoldShare of the memory the process may use, and
// maps them otherwise; the status says which.
func TestStoresHeldWhenTheyFit(t *testing.T) {
	w := newWorld(5, 2000)
	data := t.TempDir()
	m := open(t, data)
	build(t, m, w.snapshot(t), true)
	g := m.Acquire()
	var storeBytes, dataBytes int64
	for _, ext := range []string{"*.data", "*.idx"} {
		files, err := filepath.Glob(filepath.Join(g.Dir(), "records", ext))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s files: %v %v", ext, files, err)
		}
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			storeBytes += st.Size()
			if ext == "*.data" {
				dataBytes += st.Size()
			}
		}
	}
	g.Release()
	if m.Status().StoresHeld {
		t.Error("a manager without StoresInMemory or StoresInMemoryAuto holds its stores")
	}
	m.Close()

	opts := indexer.Options{DataDir: data, StoresInMemoryAuto: true}
	for _, c := range []struct {
		budget int64
		held   bool
	}{
		{storeBytes * indexer.AutoHoldShare, true},
		{storeBytes*indexer.AutoHoldShare - 1, false},
	} {
		restore := indexer.SetMemoryBudget(c.budget)
		before := disk.HeldBytes()
		m := openWith(t, opts)
		st := m.Status()
		held := st.HeldBytes - before
		m.Close()
		restore()
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

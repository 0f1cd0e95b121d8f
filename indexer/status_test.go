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

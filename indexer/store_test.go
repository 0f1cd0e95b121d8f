package indexer

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// A store whose index places records outside its data files (damaged after
// the build) still opens, without reading every record's bounds; the
// damaged records read as nil and the others as written.
func TestStoreDamagedRecordReadsNil(t *testing.T) {
	dir := t.TempDir()
	sw, err := newStoreWriter(dir, "things", nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{`{"id":1}`, `{"id":2}`, `{"id":3}`}
	for i, l := range lines {
		if err := sw.add(int64(i+1), []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.close(); err != nil {
		t.Fatal(err)
	}
	idxPath := filepath.Join(dir, "things.idx")
	raw, err := os.ReadFile(idxPath)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	starts := 24 + 8*n
	// record 2 (position 1) starts inside the base but runs past its end;
	// record 3 (position 2) starts beyond base and delta.
	binary.LittleEndian.PutUint64(raw[starts+8:], binary.LittleEndian.Uint64(raw[16:])-4) // base size - 4
	binary.LittleEndian.PutUint64(raw[starts+16:], 1<<40)
	if err := os.WriteFile(idxPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := openStore(dir, "things")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	if got := string(s.Raw(0)); got != lines[0] {
		t.Errorf("record 1 = %q, want %q", got, lines[0])
	}
	for _, key := range []int64{2, 3} {
		got, ok := s.Get(key)
		if !ok || got != nil {
			t.Errorf("damaged record %d = %q, %v; want nil, true", key, got, ok)
		}
	}
}

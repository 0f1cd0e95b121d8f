package recstore

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gds/snapshots/disk/disktest"
)

// TestSpoolFileMatchesMemory adds the same values to a spool on disk and
// one in memory and reads both back (the one on disk twice), across chunk
// boundaries.
func TestSpoolFileMatchesMemory(t *testing.T) {
	for _, n := range []int{0, 1, spoolChunk - 1, spoolChunk, 2*spoolChunk + 7} {
		disk, err := newSpool[uint64](t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		mem, _ := newSpool[uint64]("")
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		for range n {
			v := rng.Uint64()
			disk.add(v)
			mem.add(v)
		}
		read := func(s *spool[uint64]) []uint64 {
			var all []uint64
			if err := s.each(func(v []uint64) error { all = append(all, v...); return nil }); err != nil {
				t.Fatal(err)
			}
			return all
		}
		got, want := read(disk), read(mem)
		if again := read(disk); !slices.Equal(again, got) {
			t.Fatalf("n %d: a second read gives %d values, the first %d", n, len(again), len(got))
		}
		if !slices.Equal(got, want) || len(got) != n || disk.n != n {
			t.Fatalf("n %d: read %d values from disk, %d from memory (equal %v)", n, len(got), len(want), slices.Equal(got, want))
		}
		if disk.first != mem.first || disk.last != mem.last {
			t.Fatalf("n %d: first, last %d, %d on disk, %d, %d in memory", n, disk.first, disk.last, mem.first, mem.last)
		}
		disk.close()
	}
}

// TestSpilledIndexMatchesMemory writes a store's index from arrays
// spilled to disk and from the same arrays in memory: the files are the
// same bytes, narrow keys or wide, and no temporary file is left behind.
func TestSpilledIndexMatchesMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := spoolChunk + 999
	narrow, wide := make([]int64, n), make([]int64, n)
	recs := make([][]byte, n)
	for i := range n {
		narrow[i] = 90000000 + int64(3*i)
		wide[i] = int64(i) << 20 // spans more than a uint32
		recs[i] = record(rng, narrow[i])
	}
	for name, keys := range map[string][]int64{"narrow": narrow, "wide": wide} {
		write := func(inMemory bool) []byte {
			dir := t.TempDir()
			sw, err := NewWriter(dir, "things", nil)
			if err != nil {
				t.Fatal(err)
			}
			if inMemory {
				sw.closeSpools()
				_ = sw.spools("")
			}
			sw.Reserve(n)
			for i, k := range keys {
				if err := sw.Add(k, recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := sw.Close(); err != nil {
				t.Fatal(err)
			}
			disktest.AssertOnly(t, dir, "things.data", "things"+idxWhole)
			idx, err := os.ReadFile(filepath.Join(dir, "things"+idxWhole))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir, "things", false)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Len() != n || s.Key(n-1) != keys[n-1] {
				t.Fatalf("%s: store of %d records, last key %d", name, s.Len(), s.Key(s.Len()-1))
			}
			return idx
		}
		if spilled, held := write(false), write(true); !bytes.Equal(spilled, held) {
			t.Fatalf("%s: index from spilled arrays (%d bytes) differs from the one held in memory (%d bytes)", name, len(spilled), len(held))
		}
	}
}

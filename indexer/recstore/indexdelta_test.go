package recstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// writeDelta writes next (keys ascending) as a delta store over prev (in
// prevDir) into dir, keeping what prev holds unchanged.
func writeDelta(t testing.TB, prev *Store, prevDir, dir string, keys []int64, next map[int64][]byte) *Writer {
	t.Helper()
	sw, err := NewDeltaWriter(dir, "things", prev, prevDir)
	if err != nil {
		t.Fatal(err)
	}
	pi := 0
	for _, k := range keys {
		for pi < prev.Len() && prev.Key(pi) < k {
			pi++
		}
		if pi < prev.Len() && prev.Key(pi) == k && prev.Hash(pi) == prev.HashOf(next[k]) {
			err = sw.Keep(pi, next[k])
		} else {
			err = sw.Add(k, next[k])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return sw
}

// writeMap writes the records of m as a full store in dir.
func writeMap(t testing.TB, dir string, m map[int64][]byte) {
	t.Helper()
	keys := sortedKeys(m)
	recs := make([][]byte, len(keys))
	for i, k := range keys {
		recs[i] = m[k]
	}
	writeStore(t, dir, keys, recs)
}

// fileSize is the size of dir/name.
func fileSize(t *testing.T, dir, name string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A store read through its base index and an index delta reads as the
// same records written whole: positions, keys, hashes, records, lookups
// of present and absent keys, after records changed, removed and added
// (before the first key, between keys, after the last), over a chain of
// incremental builds, mapped and held in memory. Split places every
// position at its record in the base index or the delta, and the index
// delta of a 1% change is a small part of the whole index.
func TestIndexDeltaReadsAsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	want := map[int64][]byte{}
	for i := range 5000 {
		k := int64(90000000 + 4*i)
		want[k] = record(rng, k)
	}
	prevDir := t.TempDir()
	writeMap(t, prevDir, want)
	prev, err := Open(prevDir, "things", false)
	if err != nil {
		t.Fatal(err)
	}
	for step := range 5 {
		next := map[int64][]byte{}
		for k, v := range want {
			switch r := rng.IntN(200); {
			case r == 0: // removed
			case r == 1:
				next[k] = fmt.Appendf(bytes.Clone(v[:len(v)-1]), `,"step":%d}`, step)
			default:
				next[k] = v
			}
		}
		for range 20 {
			k := int64(90000001 + 4*rng.IntN(5000))
			next[k] = record(rng, k)
		}
		first, last := int64(89000000-step), int64(90100000+step)
		next[first], next[last] = record(rng, first), record(rng, last)
		keys := sortedKeys(next)
		dir := t.TempDir()
		sw := writeDelta(t, prev, prevDir, dir, keys, next)
		if err := sw.Close(); err != nil {
			t.Fatal(err)
		}
		whole := t.TempDir()
		writeMap(t, whole, next)
		if d, w := fileSize(t, dir, "things"+idxDelta), fileSize(t, whole, "things"+idxWhole); step == 0 && d*5 > w {
			t.Errorf("step %d: index delta %d bytes, the whole index %d", step, d, w)
		}
		if _, err := os.Stat(filepath.Join(dir, "things"+idxWhole)); !os.IsNotExist(err) {
			t.Fatalf("step %d: a delta store has a whole index (%v)", step, err)
		}
		w, err := Open(whole, "things", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, inMemory := range []bool{false, true} {
			s, err := Open(dir, "things", inMemory)
			if err != nil {
				t.Fatal(err)
			}
			sameStore(t, s, w)
			s.Close()
		}
		w.Close()
		prev.Close()
		if prev, err = Open(dir, "things", step%2 == 1); err != nil {
			t.Fatal(err)
		}
		want, prevDir = next, dir
	}
	prev.Close()
}

// sameStore checks that s reads as w, and that s.Split places each record.
func sameStore(t *testing.T, s, w *Store) {
	t.Helper()
	if s.Len() != w.Len() {
		t.Fatalf("%d records, written whole %d", s.Len(), w.Len())
	}
	base, delta, ok := s.IndexDelta()
	if !ok || base == 0 || delta == 0 {
		t.Fatalf("IndexDelta() = %d, %d, %v", base, delta, ok)
	}
	seen := 0
	for i := range w.Len() {
		k := w.Key(i)
		if s.Key(i) != k || s.Hash(i) != w.Hash(i) || !bytes.Equal(s.Raw(i), w.Raw(i)) {
			t.Fatalf("position %d: key %d hash %x %q, written whole %d %x %q", i, s.Key(i), s.Hash(i), s.Raw(i), k, w.Hash(i), w.Raw(i))
		}
		if p, found := s.Find(k); !found || p != i {
			t.Fatalf("Find(%d) = %d, %v; want %d", k, p, found, i)
		}
		p, found := s.Find(k + 1)
		if q, wfound := w.Find(k + 1); p != q || found != wfound {
			t.Fatalf("Find(%d) = %d, %v; written whole %d, %v", k+1, p, found, q, wfound)
		}
		j, inDelta := s.Split(i)
		switch {
		case inDelta && s.idxd.keys[j] != k, !inDelta && s.under.Key(j) != k:
			t.Fatalf("Split(%d) = %d, %v: another record than key %d", i, j, inDelta, k)
		case inDelta:
			seen++
		}
	}
	if seen != delta {
		t.Fatalf("Split placed %d records in the delta, which holds %d", seen, delta)
	}
}

// A store whose index names delta blocks (written with a delta before
// index deltas) gets its index whole from the next delta writer, which
// reads as written; once written whole, the store takes index deltas again.
func TestIndexDeltaAfterAWholeIndexDelta(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	want := map[int64][]byte{}
	for i := range 500 {
		want[int64(1000+2*i)] = record(rng, int64(1000+2*i))
	}
	dir0 := t.TempDir()
	writeMap(t, dir0, want)
	s0 := openStore(t, dir0)
	change := func(m map[int64][]byte) map[int64][]byte {
		next := map[int64][]byte{}
		for k, v := range m {
			next[k] = v
		}
		k := int64(1001 + 2*rng.IntN(500))
		next[k] = record(rng, k)
		return next
	}
	// the old way: a delta with its index whole
	want = change(want)
	dir1 := t.TempDir()
	sw := writeDelta(t, s0, dir0, dir1, sortedKeys(want), want)
	sw.split = false
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir1, "things"+idxBase))
	s1 := openStore(t, dir1)
	want = change(want)
	dir2 := t.TempDir()
	sw = writeDelta(t, s1, dir1, dir2, sortedKeys(want), want)
	if _, ok := sw.IndexDelta(); ok {
		t.Fatal("a delta writer over an index naming delta blocks writes an index delta")
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, dir2)
	if _, _, ok := s2.IndexDelta(); ok {
		t.Fatal("the store reads an index delta")
	}
	checkStore(t, s2, sortedKeys(want), want)
}

// An index delta paired with another base index than its own is refused.
func TestIndexDeltaRefusesAnotherBase(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var keys []int64
	var recs [][]byte
	for i := range 300 {
		keys, recs = append(keys, int64(10+i)), append(recs, record(rng, int64(10+i)))
	}
	base := t.TempDir()
	writeStore(t, base, keys, recs)
	prev := openStore(t, base)
	next := map[int64][]byte{}
	for i, k := range keys {
		next[k] = recs[i]
	}
	next[10] = record(rng, 10)
	dir := t.TempDir()
	if err := writeDelta(t, prev, base, dir, keys, next).Close(); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	writeStore(t, other, keys[:299], recs[:299])
	idx, err := os.ReadFile(filepath.Join(other, "things"+idxWhole))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "things"+idxBase))
	if err := os.WriteFile(filepath.Join(dir, "things"+idxBase), idx, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir, "things", false); err == nil {
		s.Close()
		t.Fatal("an index delta over another base opened")
	}
}

// FuzzStoreIndexDelta opens a base index with index-delta and data bytes
// as a store and reads every record: damaged or hostile files give an
// error, never a crash.
func FuzzStoreIndexDelta(f *testing.F) {
	rng := rand.New(rand.NewPCG(17, 18))
	var keys []int64
	var recs [][]byte
	next := map[int64][]byte{}
	for i := range 60 {
		k := int64(100 + 2*i)
		keys, recs = append(keys, k), append(recs, record(rng, k))
		next[k] = recs[i]
	}
	base := f.TempDir()
	writeStore(f, base, keys, recs)
	prev, err := Open(base, "things", false)
	if err != nil {
		f.Fatal(err)
	}
	for i := 0; i < 60; i += 7 {
		next[keys[i]+1] = record(rng, keys[i]+1)
		delete(next, keys[i+1])
		r := record(rng, keys[i+2])
		next[keys[i+2]] = fmt.Appendf(r[:len(r)-1], `,"new":1}`)
	}
	dir := f.TempDir()
	if err := writeDelta(f, prev, base, dir, sortedKeys(next), next).Close(); err != nil {
		f.Fatal(err)
	}
	prev.Close()
	read := func(name string) []byte {
		b, _ := os.ReadFile(filepath.Join(dir, "things"+name))
		return b
	}
	idx, data := read(idxBase), read(".data")
	idxd, delta := read(idxDelta), read(".delta")
	f.Add(idxd, delta)
	f.Add(idxd[:len(idxd)/2], delta)
	f.Add(idxd, delta[:len(delta)/2])
	f.Add([]byte(deltaMagic), []byte(nil))
	f.Fuzz(func(t *testing.T, idxd, delta []byte) {
		s := &Store{}
		if err := s.parseSplit(idx, idxd, data, delta); err != nil {
			return
		}
		defer s.Close()
		for i := range min(s.Len(), 200) {
			s.Key(i)
			s.Hash(i)
			s.Split(i)
			s.Find(s.Key(i))
			s.Read(i, func([]byte) error { return nil })
		}
	})
}

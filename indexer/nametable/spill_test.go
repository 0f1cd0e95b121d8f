package nametable

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestRunsWriteTheSameTable writes one table with its postings spilled
// as one run and as many (a few hundred postings a run, from one scan and
// from three in parallel): the files are the same bytes, every list holds
// the bytes of the list built from every name at once, the table's
// checksum is the one GDSTBL06's layout gives these names, and the table
// finds what a scan of the names finds.
func TestRunsWriteTheSameTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	words := []string{"kiri", "otsu", "azbel", "sato", "kirjuun", "ωωω", "x", "ab"}
	var entries []Entry
	access := Access{}
	for i := range 5000 {
		name := fmt.Sprintf("%s %s%d", words[rng.IntN(len(words))], words[rng.IntN(len(words))], rng.IntN(50))
		entries = append(entries, Entry{ID: int64(7000 + i), Folded: name})
		if i%7 == 0 {
			access[int64(7000+i)] = []int64{int64(1 + i%4)}
		}
	}
	var ordered []Entry
	write := func(perRun, parts int) []byte {
		t.Helper()
		defer func(was, from, procs int) {
			postingsPerRun, scanInParallelFrom = was, from
			runtime.GOMAXPROCS(procs)
		}(postingsPerRun, scanInParallelFrom, runtime.GOMAXPROCS(parts))
		postingsPerRun = perRun
		if parts > 1 {
			scanInParallelFrom = 0
		}
		path := filepath.Join(t.TempDir(), "t.tbl")
		ordered = append([]Entry(nil), entries...)
		if err := Write(context.Background(), path, ordered, access, nil); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, pattern := range []string{".postings-*", ".runs-*"} {
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), pattern)); len(left) > 0 {
				t.Fatalf("temporary files left beside the table: %v", left)
			}
		}
		return raw
	}
	one, many, parallel := write(1<<30, 1), write(300, 1), write(300, 3)
	if !bytes.Equal(one, many) || !bytes.Equal(one, parallel) {
		t.Fatalf("tables written from many runs differ from one written from one (%d, %d and %d bytes)", len(many), len(parallel), len(one))
	}
	const want = "7ac88b2aaa37647a1b2d7f9be8d24a39d777f88b0c6ed434b77548652ad90378"
	if sum := fmt.Sprintf("%x", sha256.Sum256(one)); sum != want {
		t.Errorf("table checksum %s, want %s (a change of layout changes it)", sum, want)
	}
	tbl, err := parseTable(many)
	if err != nil {
		t.Fatal(err)
	}
	grams := listsAtOnce(ordered, gramsOf)
	for _, c := range []struct {
		name string
		kind listKind
		got  postingLists[uint32]
	}{{"grams", gramsOf, tbl.grams}, {"prefix", prefixOf, tbl.prefix}, {"quads", quadsOf, tbl.quads}, {"prefix4", prefix4Of, tbl.prefix4}} {
		m := listsAtOnce(ordered, c.kind)
		if len(m) != len(c.got.keys) {
			t.Errorf("%s: %d lists, want %d", c.name, len(c.got.keys), len(m))
			continue
		}
		for i, k := range c.got.keys {
			bm := m[k]
			if bm == nil {
				t.Fatalf("%s: list of key %x, a key no name has", c.name, k)
			}
			var want []byte
			card := bm.GetCardinality()
			if c.name != "quads" || card*quadShare <= min(grams[k>>8].GetCardinality(), grams[k&0xffffff].GetCardinality()) {
				bm.RunOptimize()
				want, _ = bm.ToBytes()
			}
			off, n := c.got.offs[2*i], c.got.offs[2*i+1]
			if !bytes.Equal(c.got.blob[off:off+n], want) {
				t.Fatalf("%s: list of key %x differs from the list built at once", c.name, k)
			}
		}
	}
	for _, text := range []string{"kir", "zbel sa", "ωω", "otsu otsu1", "o k"} {
		want := 0
		for _, e := range entries {
			if bytes.Contains([]byte(e.Folded), []byte(text)) {
				want++
			}
		}
		got := 0
		tbl.Contains([]byte(text), nil, &Stats{}, 0, func(uint32, Match) bool { got++; return true })
		if got != want || want == 0 {
			t.Errorf("%q: %d names found, %d hold it", text, got, want)
		}
	}
}

// listsAtOnce builds every list of kind from entries (in ordinal order)
// in memory.
func listsAtOnce(entries []Entry, kind listKind) map[uint32]*roaring.Bitmap {
	m := map[uint32]*roaring.Bitmap{}
	var buf []uint32
	for i, e := range entries {
		buf = kind.keys(e.Folded, buf[:0])
		for _, k := range buf {
			if m[k] == nil {
				m[k] = roaring.New()
			}
			m[k].Add(uint32(i))
		}
	}
	return m
}

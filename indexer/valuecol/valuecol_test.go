package valuecol

import (
	"cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A written file answers every range as a scan of the values would, for
// repeated values, empty columns and bounds on, between and beyond the
// values.
func TestRangeMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 5000
	type doc struct {
		v   int64
		has bool
	}
	docs := make([]doc, n)
	var cols []Column
	a := Column{Name: "a"}
	for o := range docs {
		if rng.IntN(5) > 0 {
			docs[o] = doc{v: rng.Int64N(300) - 150, has: true}
			a.Entries = append(a.Entries, Entry{docs[o].v, uint32(o)})
		}
	}
	rng.Shuffle(len(a.Entries), func(i, j int) { a.Entries[i], a.Entries[j] = a.Entries[j], a.Entries[i] })
	cols = append(cols, a, Column{Name: "empty"})
	path := filepath.Join(t.TempDir(), "base.cols")
	if err := Write(path, n, cols); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, n+1); err == nil {
		t.Fatal("opened for another table's length")
	}
	f, err := Open(path, n)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !f.Has("a") || !f.Has("empty") || f.Has("b") || f.Count("empty") != 0 {
		t.Fatalf("columns: a %v, empty %v (%d), b %v", f.Has("a"), f.Has("empty"), f.Count("empty"), f.Has("b"))
	}
	for range 300 {
		lo, hi := rng.Int64N(340)-170, rng.Int64N(340)-170
		var want []uint32
		for o, d := range docs {
			if d.has && d.v >= lo && d.v <= hi {
				want = append(want, uint32(o))
			}
		}
		got := slices.Clone(f.Range("a", lo, hi))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("[%d, %d]: %d ordinals, want %d", lo, hi, len(got), len(want))
		}
		if bm := f.Bitmap("a", lo, hi); !slices.Equal(bm.ToArray(), want) {
			t.Fatalf("[%d, %d]: bitmap of %d, want %d", lo, hi, bm.GetCardinality(), len(want))
		}
		if len(f.Range("empty", lo, hi)) != 0 || len(f.Range("b", lo, hi)) != 0 {
			t.Fatal("an empty or missing column matched")
		}
	}
	seen := 0
	prev := int64(-1 << 63)
	f.Each("a", func(o uint32, v int64) {
		if !docs[o].has || docs[o].v != v || v < prev {
			t.Fatalf("Each: ordinal %d value %d, want %d in order", o, v, docs[o].v)
		}
		prev = v
		seen++
	})
	if seen != len(a.Entries) {
		t.Fatalf("Each saw %d values, want %d", seen, len(a.Entries))
	}
}

// Files that are not what Write makes are refused on open, never read out
// of range: truncated, a repeated or too large ordinal, values out of
// order.
func TestOpenRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ok.cols")
	if err := Write(path, 10, []Column{{Name: "x", Entries: []Entry{{5, 0}, {1, 4}, {3, 9}}}}); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parse(good, 10, true, ignore); err != nil {
		t.Fatal(err)
	}
	// Header 24 + one entry 32 + name 1, padded to 64: values at 64, ordinals at 88.
	for name, damage := range map[string]func(b []byte) []byte{
		"truncated":      func(b []byte) []byte { return b[:len(b)-4] },
		"magic":          func(b []byte) []byte { b[0] = 'X'; return b },
		"ordinal >= n":   func(b []byte) []byte { b[88] = 10; return b },
		"repeated":       func(b []byte) []byte { b[92] = b[88]; return b },
		"out of order":   func(b []byte) []byte { b[64] = 200; return b },
		"many columns":   func(b []byte) []byte { b[16] = 200; return b },
		"huge count":     func(b []byte) []byte { b[24+16+7] = 0x7f; return b },
		"name past file": func(b []byte) []byte { b[24] = 250; return b },
	} {
		if _, err := parse(damage(slices.Clone(good)), 10, true, ignore); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

// A file checked whole while a File holds it (the same device, inode,
// size and time: a hard link too) opens without its values checked again;
// once no File holds it, or once its time says it was written since, it
// is checked whole again. The test damages a value in place and puts the
// time back, as nothing but a test would.
func TestOpenChecksAFileOncePerContent(t *testing.T) {
	dir := t.TempDir()
	path, link := filepath.Join(dir, "base.cols"), filepath.Join(dir, "next.cols")
	if err := Write(path, 10, []Column{{Name: "x", Entries: []Entry{{5, 0}, {1, 4}, {3, 9}}}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	held, err := Open(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	damage := func(mtime time.Time) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{200}, 64); err != nil { // the first value: out of order
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	damage(fi.ModTime())
	for _, p := range []string{path, link} {
		f, err := Open(p, 10)
		if err != nil {
			t.Fatalf("%s, checked while held: %v", filepath.Base(p), err)
		}
		f.Close()
	}
	if _, err := Open(path, 11); err == nil {
		t.Error("opened for another number of ordinals")
	}
	damage(fi.ModTime().Add(time.Second))
	if _, err := Open(path, 10); err == nil {
		t.Error("a file written since its check opened unchecked")
	}
	damage(fi.ModTime())
	held.Close()
	if _, err := Open(link, 10); err == nil {
		t.Error("opened unchecked after the last File holding it closed")
	}
}

// FuzzParse: any bytes either open as columns whose every range stays in
// the table, or are refused; never a panic.
func FuzzParse(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.cols")
	if err := Write(path, 6, []Column{{Name: "x", Entries: []Entry{{5, 0}, {-1, 4}, {3, 5}}}, {Name: "y"}}); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(path)
	f.Add(seed, 6)
	f.Add([]byte(magic), 0)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		file, err := parse(b, n, true, ignore)
		if err != nil {
			return
		}
		for name := range file.cols {
			for _, o := range file.Range(name, -1<<63, 1<<63-1) {
				if int(o) >= n {
					t.Fatalf("ordinal %d of %d", o, n)
				}
			}
			file.Bitmap(name, 0, 10)
		}
	})
}

// sortEntries orders values as int64s, negative ones first, keeping each
// value with its ordinal, for the radix sort's sizes and the small ones'.
func TestSortEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 100, 5000, 70000} {
		es := make([]Entry, n)
		for i := range es {
			switch rng.IntN(3) {
			case 0:
				es[i].Value = rng.Int64() - rng.Int64()
			case 1:
				es[i].Value = int64(rng.IntN(5)) - 2
			default:
				es[i].Value = 1_600_000_000_000_000_000 + rng.Int64N(1e15)
			}
			es[i].Ord = uint32(i)
		}
		want := slices.Clone(es)
		slices.SortStableFunc(want, func(a, b Entry) int { return cmp.Compare(a.Value, b.Value) })
		sortEntries(es)
		for i := range es {
			if es[i].Value != want[i].Value {
				t.Fatalf("%d entries: %d at %d, want %d", n, es[i].Value, i, want[i].Value)
			}
		}
		byOrd := func(a, b Entry) int { return cmp.Or(cmp.Compare(a.Value, b.Value), cmp.Compare(a.Ord, b.Ord)) }
		slices.SortFunc(es, byOrd)
		slices.SortFunc(want, byOrd)
		if !slices.Equal(es, want) {
			t.Fatalf("%d entries: the sort lost or changed entries", n)
		}
	}
}

// TestWriteEachChecksLengths refuses a column whose values are not as
// many as its spec announced (the header is written before them).
func TestWriteEachChecksLengths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.cols")
	specs := []Spec{{Name: "x", Len: 2}}
	err := WriteEach(path, 4, specs, func(int) ([]Entry, error) { return []Entry{{1, 0}}, nil })
	if err == nil {
		t.Fatal("a column of 1 value announced as 2 was written")
	}
	if _, serr := os.Stat(path); !os.IsNotExist(serr) {
		t.Fatalf("a file is left at %s: %v", path, serr)
	}
}

// ignore is parse's read for bytes that are not a mapping.
func ignore(from, to int) {}

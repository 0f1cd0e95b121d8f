//go:build bench

package recstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"gds/snapshots/envtest"
)

// TestStoreFirstTouch times first-touch lookups in a real store, the way
// the bench's lookup figure does (200,000 records, shuffled, each once, a
// fresh open), and splits each into its steps. GDS_STORE_DIR names a
// records directory (a copy: with GDS_STORE_COLD=1 its files' cached pages
// are dropped first, so every touch reads the disk); GDS_STORE_IN_MEMORY=1
// opens it as gds serve does (Options.StoresInMemory).
//
//	GDS_STORE_DIR=/tmp/x/records go test -tags bench -run TestStoreFirstTouch -v ./indexer/recstore
func TestStoreFirstTouch(t *testing.T) {
	dir := envtest.Getenv(t, "a records directory", "GDS_STORE_DIR")[0]
	kind := "characters"
	if k := os.Getenv("GDS_STORE_KIND"); k != "" {
		kind = k
	}
	s, err := Open(dir, kind, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 5))
	pos := rng.Perm(s.Len())[:min(s.Len(), 200_000)]
	keys := make([]int64, len(pos))
	for j, i := range pos {
		keys[j] = s.Key(i)
	}
	// Reading the keys above touched their pages; a second fresh open
	// maps the files anew (the pages stay in the kernel's cache unless
	// dropped).
	s.Close()
	if os.Getenv("GDS_STORE_COLD") == "1" {
		for _, ext := range []string{".data", ".idx"} {
			dropCache(t, filepath.Join(dir, kind+ext))
		}
	}
	inMemory := os.Getenv("GDS_STORE_IN_MEMORY") == "1"
	t0 := time.Now()
	s, err = Open(dir, kind, inMemory)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("opened in %v (in memory: %v)", time.Since(t0), inMemory)
	if r, err := os.ReadFile("/proc/self/smaps_rollup"); err == nil {
		for _, l := range bytes.Split(r, []byte("\n")) {
			if bytes.HasPrefix(l, []byte("AnonHugePages")) || bytes.HasPrefix(l, []byte("Rss")) || bytes.HasPrefix(l, []byte("FilePmd")) {
				t.Logf("%s", l)
			}
		}
	}
	lat := make([]time.Duration, len(keys))
	if os.Getenv("GDS_STORE_FAULTS") == "1" {
		var with, without []time.Duration
		var r0, r1 syscall.Rusage
		for _, k := range keys {
			syscall.Getrusage(syscall.RUSAGE_THREAD, &r0)
			t0 := time.Now()
			s.Get(k, func(raw []byte) error { return nil })
			d := time.Since(t0)
			syscall.Getrusage(syscall.RUSAGE_THREAD, &r1)
			if r1.Minflt+r1.Majflt > r0.Minflt+r0.Majflt {
				with = append(with, d)
			} else {
				without = append(without, d)
			}
		}
		report(t, "with a fault", with)
		report(t, "without", without)
		return
	}
	var ru0, ru1 syscall.Rusage
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	c0 := cpuTime()
	total := 0
	for j, k := range keys {
		t0 := time.Now()
		ok, err := s.Get(k, func(raw []byte) error {
			total += len(append([]byte(nil), raw...))
			return nil
		})
		lat[j] = time.Since(t0)
		if !ok || err != nil {
			t.Fatalf("key %d: %v %v", k, ok, err)
		}
	}
	cpu := cpuTime() - c0
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	runtime.ReadMemStats(&ms1)
	t.Logf("CPU %.1f µs a lookup", float64(cpu)/float64(len(keys))/1e3)
	report(t, "lookups", lat)
	t.Logf("%d collections during the lookups", ms1.NumGC-ms0.NumGC)
	t.Logf("minor faults %.2f, major faults %.3f per lookup; %d bytes a record",
		float64(ru1.Minflt-ru0.Minflt)/float64(len(keys)), float64(ru1.Majflt-ru0.Majflt)/float64(len(keys)), total/len(keys))
	// Warm: the same lookups again, every page now mapped.
	for j, k := range keys {
		t0 := time.Now()
		s.Get(k, func(raw []byte) error { return nil })
		lat[j] = time.Since(t0)
	}
	report(t, "again, warm", lat)
	s.Close()
}

func report(t *testing.T, what string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	q := func(p float64) float64 { return float64(s[int(p*float64(len(s)-1))]) / 1e3 }
	t.Logf("%s: n %d p50 %.1f µs mean %.1f µs p90 %.1f p99 %.1f p99.9 %.1f µs", what, len(s), q(0.5),
		float64(sum)/float64(len(s))/1e3, q(0.9), q(0.99), q(0.999))
}

// dropCache asks the kernel to drop a file's cached pages (its own copy:
// nothing else maps it).
func dropCache(t *testing.T, name string) {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const fadvDontneed = 4
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontneed, 0, 0); e != 0 {
		t.Fatal(e)
	}
}

// TestStoreRewrite writes a store in GDS_STORE_DIR (characters, or
// GDS_STORE_KIND) again, whole, in the current format, into GDS_STORE_OUT,
// keeping its records, order and hashes (its .by-<group> files stay valid).
// GDS_STORE_BLOCK, GDS_STORE_DICT and GDS_STORE_LEVEL try other block and
// dictionary sizes and encoder levels; GDS_STORE_ENTROPY=1 codes blocks
// with tables of their own, and GDS_STORE_PACK=0 keeps the lines rather
// than packing them, as stores written before 2026-11-25 are.
//
//	GDS_STORE_DIR=/tmp/x/records GDS_STORE_OUT=/tmp/y go test -tags bench -run TestStoreRewrite -v ./indexer/recstore
func TestStoreRewrite(t *testing.T) {
	env := envtest.Getenv(t, "a records directory and the directory to write it to", "GDS_STORE_DIR", "GDS_STORE_OUT")
	dir, out := env[0], env[1]
	kind := cmp.Or(os.Getenv("GDS_STORE_KIND"), "characters")
	s, err := Open(dir, kind, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.MkdirAll(out, 0o700); err != nil {
		t.Fatal(err)
	}
	sw, err := NewWriter(out, kind, nil)
	if err != nil {
		t.Fatal(err)
	}
	sw.bw.target, _ = strconv.Atoi(os.Getenv("GDS_STORE_BLOCK"))
	sw.bw.dictWant, _ = strconv.Atoi(os.Getenv("GDS_STORE_DICT"))
	lv, _ := strconv.Atoi(os.Getenv("GDS_STORE_LEVEL"))
	sw.bw.level = zstd.EncoderLevel(lv)
	sw.bw.entropy = os.Getenv("GDS_STORE_ENTROPY") == "1"
	if os.Getenv("GDS_STORE_PACK") == "0" {
		sw.bw.pack = nil
	}
	sw.Reserve(s.Len())
	t0, c0 := time.Now(), cpuTime()
	// Block by block: each decoded once (positions follow the blocks in
	// a store written whole).
	var bb blockBufs
	var line []byte
	i := 0
	for b := range s.blk.blocks {
		block, err := s.blk.decode(b, s, &bb)
		if err != nil {
			t.Fatal(err)
		}
		for slot, rest := 0, block; len(rest) > 0; i, slot = i+1, slot+1 {
			if s.blk.block(i) != b {
				t.Fatalf("record %d is not in block %d", i, b)
			}
			var raw []byte
			if s.blk.shapes != nil {
				rec, ok := packedRecord(rest, 0)
				if !ok {
					t.Fatalf("record %d damaged", i)
				}
				rest = rest[len(rec)+binary.PutUvarint(make([]byte, 10), uint64(len(rec))):]
				if line, err = s.blk.shapes.Unpack(line[:0], rec, s.Key(i)); err != nil {
					t.Fatal(err)
				}
				raw = line
			} else {
				k := bytes.IndexByte(rest, '\n')
				raw, rest = rest[:k], rest[k+1:]
			}
			if err := sw.addHashed(s.Key(i), raw, s.Hash(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if i != s.Len() {
		t.Fatalf("%d records of %d", i, s.Len())
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, ext := range []string{".data", ".idx"} {
		st, err := os.Stat(filepath.Join(out, kind+ext))
		if err != nil {
			t.Fatal(err)
		}
		size += st.Size()
	}
	t.Logf("%d records in %v (%.1f s of CPU): %d bytes, %.1f a record", s.Len(), time.Since(t0).Round(time.Millisecond),
		float64(cpuTime()-c0)/1e9, size, float64(size)/float64(s.Len()))
}

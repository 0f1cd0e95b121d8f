package recstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"gds/snapshots/disk"
)

// writeStore writes records (keys ascending) as a full store in dir.
func writeStore(t testing.TB, dir string, keys []int64, recs [][]byte) {
	t.Helper()
	writeStoreFormat(t, dir, keys, recs, false)
}

// writeStoreFormat is writeStore, in GDSSTO03 (2 KiB blocks and a 32 KiB
// dictionary, whole frames) when v3 is set.
func writeStoreFormat(t testing.TB, dir string, keys []int64, recs [][]byte, v3 bool) {
	t.Helper()
	writeStoreWith(t, dir, keys, recs, func(bw *blockWriter) {
		if v3 {
			bw.whole, bw.target, bw.dictWant, bw.pack = true, 2<<10, 32<<10, nil
		}
	})
}

// writeStoreWith is writeStore with the block writer's settings changed
// by set.
func writeStoreWith(t testing.TB, dir string, keys []int64, recs [][]byte, set func(*blockWriter)) {
	t.Helper()
	sw, err := NewWriter(dir, "things", nil)
	if err != nil {
		t.Fatal(err)
	}
	set(sw.bw)
	for i, k := range keys {
		if err := sw.Add(k, recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
}

// openStore opens the store "things" in dir (its files mapped), closed
// when the test ends.
func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir, "things", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// record is a JSON line shaped like a snapshot's character, of varying length.
func record(rng *rand.Rand, key int64) []byte {
	return fmt.Appendf(nil, `{"id":%d,"name":"%s","corporation_id":%d,"birthday":"2003-05-06T00:%02d:38Z","security_status":%.6f}`,
		key, strings.Repeat("ab", rng.IntN(40)), 98000000+rng.IntN(5000), rng.IntN(60), rng.Float64()*10-5)
}

func readAll(t *testing.T, s *Store) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for i := range s.Len() {
		err := s.Read(i, func(raw []byte) error {
			out[s.Key(i)] = string(raw)
			return nil
		})
		if err != nil {
			t.Fatalf("record %d: %v", s.Key(i), err)
		}
	}
	return out
}

// Every record reads back byte-identical, by position and by key, from a
// full store and from the chain of delta stores written over it (records
// kept from the base, from the previous delta, changed and added), and the
// hashes let the next writer tell kept from changed. Keys both narrow and
// wide (past uint32 offsets) are covered; the wide store's base is written
// as stores before 2026-11-25 were (its lines, with entropy coding), and
// its deltas as lines without; the narrow one's records are packed, its
// deltas adding shapes of their own. Each store reads alike mapped and
// held in memory (as gds serve opens them), and every other step writes
// its delta over a store held in memory.
func TestStoreRecordsReadBackAcrossDeltas(t *testing.T) {
	for _, wide := range []bool{false, true} {
		t.Run(fmt.Sprint("wide=", wide), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(fmt.Sprint(wide)))))
			want := map[int64][]byte{}
			var keys []int64
			for i := range 3000 {
				k := int64(90000000 + 3*i)
				if wide && i == 2999 {
					k = 1 << 40
				}
				keys = append(keys, k)
				want[k] = record(rng, k)
			}
			prevDir := t.TempDir()
			recs := make([][]byte, len(keys))
			for i, k := range keys {
				recs[i] = want[k]
			}
			writeStoreWith(t, prevDir, keys, recs, func(bw *blockWriter) {
				if wide {
					bw.entropy, bw.pack = true, nil
				}
			})
			prev, err := Open(prevDir, "things", false)
			if err != nil {
				t.Fatal(err)
			}
			if packed := prev.blk.shapes != nil; packed == wide {
				t.Fatalf("base packed: %v", packed)
			}
			checkStore(t, prev, keys, want)
			checkInMemory(t, prevDir, keys, want)
			for step := range 4 {
				if step%2 == 1 {
					prev.Close()
					if prev, err = Open(prevDir, "things", true); err != nil {
						t.Fatal(err)
					}
				}
				// change 3%, delete 1%, add 2% (new keys in between the old ones)
				next := map[int64][]byte{}
				for k, v := range want {
					switch r := rng.IntN(100); {
					case r < 3:
						// a field the base's records lack: a new shape
						r := record(rng, k)
						next[k] = fmt.Appendf(r[:len(r)-1], `,"step":%d}`, step)
					case r < 4:
					default:
						next[k] = v
					}
				}
				for range 60 {
					k := int64(90000001 + 3*rng.IntN(3000))
					next[k] = record(rng, k)
				}
				dir := t.TempDir()
				sw, err := NewDeltaWriter(dir, "things", prev, prevDir)
				if err != nil {
					t.Fatal(err)
				}
				keys = sortedKeys(next)
				pi, kept, changed := 0, 0, 0
				for _, k := range keys {
					for pi < prev.Len() && prev.Key(pi) < k {
						pi++
					}
					if pi < prev.Len() && prev.Key(pi) == k && prev.Hash(pi) == prev.HashOf(next[k]) {
						err = sw.Keep(pi, next[k])
						kept++
					} else {
						err = sw.Add(k, next[k])
						changed++
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if err := sw.Close(); err != nil {
					t.Fatal(err)
				}
				if kept < len(keys)*9/10 || changed == 0 {
					t.Fatalf("step %d: kept %d, changed %d of %d", step, kept, changed, len(keys))
				}
				prev.Close()
				if prev, err = Open(dir, "things", false); err != nil {
					t.Fatal(err)
				}
				if prev.DeltaShare() == 0 {
					t.Fatalf("step %d wrote no delta", step)
				}
				if _, _, ok := prev.IndexDelta(); !ok {
					t.Fatalf("step %d wrote its index whole, not an index delta", step)
				}
				if packed := prev.blk.shapes != nil; packed == wide || packed && prev.blk.shapes.Len() < 2 {
					t.Fatalf("step %d: packed %v, shapes %v", step, packed, prev.blk.shapes)
				}
				checkStore(t, prev, keys, next)
				checkInMemory(t, dir, keys, next)
				want, prevDir = next, dir
			}
			prev.Close()
		})
	}
}

// checkInMemory opens the store in dir held in memory and checks that it
// reads as checkStore wants, from memory of its own: neither its data nor
// the index parts a lookup reads lie in a mapping of its files.
func checkInMemory(t *testing.T, dir string, keys []int64, want map[int64][]byte) {
	t.Helper()
	s, err := Open(dir, "things", true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.sample32 == nil && s.sample == nil {
		t.Fatal("a store held in memory has no key sample")
	}
	checkStore(t, s, keys, want)
	held := map[string][]byte{"base": s.base, "delta": s.delta, "keys": disk.AsBytes(s.keys32)}
	if s.keys != nil {
		held["keys"] = disk.AsBytes(s.keys)
	}
	if s.blk != nil {
		held["block starts"], held["block offsets"] = disk.AsBytes(s.blk.starts), disk.AsBytes(s.blk.offs32)
		held["locations"], held["dictionary"] = disk.AsBytes(s.blk.locs), s.blk.dict
	}
	for what, b := range held {
		for _, m := range s.maps {
			if len(b) > 0 && len(m) > 0 && uintptr(unsafe.Pointer(&b[0])) < uintptr(unsafe.Pointer(&m[0]))+uintptr(len(m)) &&
				uintptr(unsafe.Pointer(&m[0])) < uintptr(unsafe.Pointer(&b[0]))+uintptr(len(b)) {
				t.Fatalf("the store's %s lie in a mapped file, not in memory of its own", what)
			}
		}
	}
	if len(s.held) == 0 || len(s.base) == 0 || len(held["keys"]) == 0 {
		t.Fatalf("a store opened in memory holds %d copies, %d bytes of base, %d of keys", len(s.held), len(s.base), len(held["keys"]))
	}
}

func sortedKeys(m map[int64][]byte) []int64 {
	var keys []int64
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func checkStore(t *testing.T, s *Store, keys []int64, want map[int64][]byte) {
	t.Helper()
	if s.Len() != len(keys) {
		t.Fatalf("store holds %d records, want %d", s.Len(), len(keys))
	}
	got := readAll(t, s)
	probes := []int64{math.MinInt64, -1, 0, math.MaxInt64}
	for _, k := range keys {
		probes = append(probes, k-1, k, k+1)
	}
	pos := make([]int, len(probes))
	s.FindAll(probes, pos)
	for j, k := range probes {
		if i, ok := s.Find(k); ok != (pos[j] >= 0) || ok && i != pos[j] {
			t.Fatalf("FindAll places key %d at %d; Find at %d, %v", k, pos[j], i, ok)
		}
	}
	for i, k := range keys {
		if s.Key(i) != k {
			t.Fatalf("key %d = %d, want %d", i, s.Key(i), k)
		}
		if got[k] != string(want[k]) {
			t.Fatalf("record %d = %q, want %q", k, got[k], want[k])
		}
		if s.Hash(i) != HashRecord(want[k]) {
			t.Fatalf("record %d: hash differs", k)
		}
		var raw []byte
		if ok, err := s.Get(k, func(r []byte) error { raw = bytes.Clone(r); return nil }); !ok || err != nil || !bytes.Equal(raw, want[k]) {
			t.Fatalf("Get(%d) = %q, %v, %v", k, raw, ok, err)
		}
		if ok, _ := s.Get(k+1, func([]byte) error { return nil }); ok && want[k+1] == nil {
			t.Fatalf("Get(%d) found a record never written", k+1)
		}
	}
}

// A store whose index places records outside its data files (damaged after
// the build) still opens, without reading every record's bounds; the
// damaged records read as ErrDamagedRecord and the others as written. Both
// block formats: GDSSTO04 (block starts, uint32 offsets) and GDSSTO03
// (locations, uint64 offsets).
func TestStoreDamagedRecordReads(t *testing.T) {
	for _, c := range []struct{ v3, starts bool }{{false, false}, {false, true}, {true, false}} {
		v3 := c.v3
		t.Run(fmt.Sprintf("v3=%v,starts=%v", c.v3, c.starts), func(t *testing.T) {
			dir := t.TempDir()
			// three records of 5,000 bytes: three blocks
			lines := [][]byte{}
			for i := range 3 {
				lines = append(lines, fmt.Appendf(nil, `{"id":%d,"s":"%s"}`, i+1, strings.Repeat(string(rune('a'+i)), 5000)))
			}
			writeStoreFormat(t, dir, []int64{1, 2, 3}, lines, v3)
			idxPath := filepath.Join(dir, "things.idx")
			raw, err := os.ReadFile(idxPath)
			if err != nil {
				t.Fatal(err)
			}
			u := func(at int) uint64 { return binary.LittleEndian.Uint64(raw[at:]) }
			const n = 3
			if u(24) != 3 {
				t.Fatalf("%d blocks, want 3", u(24))
			}
			locs := v3Header + int(disk.Pad8(u(56))) + int(disk.Pad8(4*n))
			if v3 {
				offs := locs + int(disk.Pad8(4*n)) + 8*n
				// record 2's block now ends past the base; record 3's
				// block number is beyond the last block.
				binary.LittleEndian.PutUint64(raw[offs+16:], u(16)+100)
				binary.LittleEndian.PutUint32(raw[locs+8:], 1000<<blockShift)
			} else {
				if u(48) != flagKeys32|flagOffs32|flagStarts|flagPacked {
					t.Fatalf("flags %#x", u(48))
				}
				offs := locs + int(disk.Pad8(4*(3+1))) + 8*n
				if c.starts {
					// block 2 now starts at record 3: record 2 falls in
					// block 1 (which holds one record), record 3 in block
					// 2 (which starts and ends there).
					binary.LittleEndian.PutUint32(raw[locs+4:], 2)
				} else {
					// block 2 (record 2's) now ends past the base, and
					// block 3 (record 3's) starts there.
					binary.LittleEndian.PutUint32(raw[offs+8:], uint32(u(16))+100)
				}
			}
			if err := os.WriteFile(idxPath, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, dir)
			if s.Compressed() == v3 {
				t.Errorf("compressed() = %v: only the current format takes a delta", s.Compressed())
			}
			if got := string(s.Raw(0)); got != string(lines[0]) {
				t.Errorf("record 1 = %.20q, want %.20q", got, lines[0])
			}
			for _, key := range []int64{2, 3} {
				ok, err := s.Get(key, func([]byte) error { t.Errorf("damaged record %d read", key); return nil })
				if !ok || !errors.Is(err, ErrDamagedRecord) {
					t.Errorf("damaged record %d: %v, %v; want true, ErrDamagedRecord", key, ok, err)
				}
			}
		})
	}
}

// A generation written with GDSSTO03 (2 KiB blocks, whole frames,
// locations, uint64 offsets) is still read, record for record.
func TestStoreReadsV3(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	want := map[int64][]byte{}
	var keys []int64
	var recs [][]byte
	for i := range 2000 {
		k := int64(90000000 + 7*i)
		keys = append(keys, k)
		recs = append(recs, record(rng, k))
		want[k] = recs[i]
	}
	writeStoreFormat(t, dir, keys, recs, true)
	idx, err := os.ReadFile(filepath.Join(dir, "things.idx"))
	if err != nil {
		t.Fatal(err)
	}
	if string(idx[:8]) != storeMagicV3 {
		t.Fatalf("wrote %q", idx[:8])
	}
	checkEarlierStore(t, dir, keys, want, "a GDSSTO03 store reads as current: an incremental build would add bare frames to it")
}

// A generation written before record stores were compressed (GDSSTO02:
// raw JSON lines) is still read.
func TestStoreReadsRawLineFormat(t *testing.T) {
	dir := t.TempDir()
	lines := []string{`{"id":5}`, `{"id":9,"name":"x"}`}
	data := []byte(lines[0] + "\n" + lines[1] + "\n")
	idx := []byte(storeMagicV2)
	for _, v := range []uint64{2, uint64(len(data)), 5, 9, 0, uint64(len(lines[0]) + 1)} { // n, base, keys, starts
		idx = binary.LittleEndian.AppendUint64(idx, v)
	}
	idx = binary.LittleEndian.AppendUint32(idx, uint32(len(lines[0])))
	idx = binary.LittleEndian.AppendUint32(idx, uint32(len(lines[1])))
	idx = binary.LittleEndian.AppendUint64(idx, HashRecord([]byte(lines[0])))
	idx = binary.LittleEndian.AppendUint64(idx, HashRecord([]byte(lines[1])))
	for name, b := range map[string][]byte{"things.idx": idx, "things.data": data} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	checkEarlierStore(t, dir, []int64{5, 9}, map[int64][]byte{5: []byte(lines[0]), 9: []byte(lines[1])},
		"a GDSSTO02 store reads as compressed: an incremental build would add blocks to raw lines")
}

// checkEarlierStore opens the store "things" an earlier format wrote in
// dir: it must not read as the current format (failing with why) and
// must hold want under keys.
func checkEarlierStore(t *testing.T, dir string, keys []int64, want map[int64][]byte, why string) {
	t.Helper()
	s := openStore(t, dir)
	if s.Compressed() {
		t.Fatal(why)
	}
	checkStore(t, s, keys, want)
}

// FuzzStoreParse opens index and data bytes as a store and reads every
// record: damaged or hostile files give an error, never a crash.
func FuzzStoreParse(f *testing.F) {
	dir := f.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var keys []int64
	var recs [][]byte
	for i := range 40 {
		keys = append(keys, int64(100+i))
		recs = append(recs, record(rng, int64(100+i)))
	}
	writeStore(f, dir, keys, recs)
	idx, _ := os.ReadFile(filepath.Join(dir, "things.idx"))
	data, _ := os.ReadFile(filepath.Join(dir, "things.data"))
	f.Add(idx, data, []byte(nil))
	f.Add(idx[:len(idx)/2], data, []byte(nil))
	f.Add(idx, data[:len(data)/2], data[len(data)/2:])
	f.Add([]byte(storeMagic+"\x02\x00\x00\x00\x00\x00\x00\x00"), []byte{}, []byte(nil))
	// the same records as GDSSTO03, and with a delta (locations, not block
	// starts)
	v3 := f.TempDir()
	writeStoreFormat(f, v3, keys, recs, true)
	idx3, _ := os.ReadFile(filepath.Join(v3, "things.idx"))
	data3, _ := os.ReadFile(filepath.Join(v3, "things.data"))
	f.Add(idx3, data3, []byte(nil))
	prev, err := Open(dir, "things", false)
	if err != nil {
		f.Fatal(err)
	}
	delta := f.TempDir()
	sw, err := NewDeltaWriter(delta, "things", prev, dir)
	if err != nil {
		f.Fatal(err)
	}
	sw.split = false // the index whole, as before index deltas
	for i := range keys {
		if i%3 == 0 {
			err = sw.Add(keys[i], record(rng, keys[i]))
		} else {
			err = sw.Keep(i, recs[i])
		}
		if err != nil {
			f.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		f.Fatal(err)
	}
	prev.Close()
	idxD, _ := os.ReadFile(filepath.Join(delta, "things.idx"))
	dataD, _ := os.ReadFile(filepath.Join(delta, "things.delta"))
	f.Add(idxD, data, dataD)
	f.Fuzz(func(t *testing.T, idx, data, delta []byte) {
		s := &Store{}
		if err := s.parse(idx, data, delta); err != nil {
			return
		}
		defer s.Close()
		for i := range min(s.Len(), 200) {
			s.Key(i)
			s.Split(i)
			s.Read(i, func([]byte) error { return nil })
		}
	})
}

// BenchmarkStoreGet looks up random keys in a store of 1M records shaped
// like characters; each lookup decodes one block into a pooled buffer.
func BenchmarkStoreGet(b *testing.B) {
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 1_000_000
	keys := make([]int64, n)
	sw, err := NewWriter(dir, "things", nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range keys {
		keys[i] = int64(90000000 + 11*i + rng.IntN(10))
		if err := sw.Add(keys[i], record(rng, keys[i])); err != nil {
			b.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		b.Fatal(err)
	}
	s := openStore(b, dir)
	var size int64
	for _, ext := range []string{".data", ".idx"} {
		st, _ := os.Stat(filepath.Join(dir, "things"+ext))
		size += st.Size()
	}
	var total int
	read := func(raw []byte) error { total += len(raw); return nil }
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if ok, err := s.Get(keys[rng.IntN(n)], read); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
	// CPU time per lookup: on a busy machine wall time per op mostly
	// measures waiting for a core.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(size)/n, "disk-B/record")
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// A store's blocks are written without entropy coding: every block's
// literals are raw (or one repeated byte), with no Huffman table to read
// at lookup; with entropy set they are Huffman-coded. The blocks hold the
// lines here: packed records leave zstd few literals worth a table.
func TestStoreBlocksWithoutEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var keys []int64
	var recs [][]byte
	for i := range 4000 {
		k := int64(90000000 + i)
		keys, recs = append(keys, k), append(recs, record(rng, k))
	}
	for _, entropy := range []bool{false, true} {
		dir := t.TempDir()
		writeStoreWith(t, dir, keys, recs, func(bw *blockWriter) { bw.entropy, bw.pack = entropy, nil })
		s, err := Open(dir, "things", false)
		if err != nil {
			t.Fatal(err)
		}
		coded := 0
		for b := range s.blk.blocks {
			if literalsType(t, s.span(s.blk.off(b), s.blk.off(b+1))) >= 2 {
				coded++
			}
		}
		s.Close()
		if entropy && coded == 0 || !entropy && coded > 0 {
			t.Errorf("entropy %v: %d of %d blocks have Huffman-coded literals", entropy, coded, s.blk.blocks)
		}
	}
}

// literalsType is the literals section type (0 raw, 1 RLE, 2 Huffman, 3
// Huffman with the previous table) of a frame stored without its magic
// number, whose first block is compressed; RFC 8878 section 3.1.1.
func literalsType(t *testing.T, frame []byte) byte {
	t.Helper()
	fhd := frame[0]
	p := 1
	single := fhd&0x20 != 0
	if !single {
		p++ // window descriptor
	}
	p += []int{0, 1, 2, 4}[fhd&3] // dictionary ID
	switch fhd >> 6 {             // frame content size
	case 0:
		if single {
			p++
		}
	case 1:
		p += 2
	case 2:
		p += 4
	case 3:
		p += 8
	}
	if blockType := frame[p] >> 1 & 3; blockType != 2 {
		t.Fatalf("first block of type %d, not compressed", blockType)
	}
	return frame[p+3] & 3
}

// FuzzPackedRecord: a damaged block of packed records gives no record,
// never a crash or bytes outside the block.
func FuzzPackedRecord(f *testing.F) {
	f.Add([]byte{2, 1, 0, 3, 0, 'a', 'b'}, 1)
	f.Add([]byte{0x80}, 0)
	f.Add([]byte{5, 1}, 0)
	f.Fuzz(func(t *testing.T, blk []byte, slot int) {
		if slot < 0 || slot > 64 {
			return
		}
		rec, ok := packedRecord(blk, slot)
		if ok && len(rec) > len(blk) {
			t.Fatalf("record of %d bytes from a block of %d", len(rec), len(blk))
		}
	})
}

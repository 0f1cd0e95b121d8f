package recstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"

	"github.com/cespare/xxhash/v2"

	"gds/snapshots/disk"
)

// Store holds one kind's records as the snapshot had them (raw JSON, in
// key order), memory-mapped (or held in memory: Open), for lookups by
// key without holding millions of records in the heap. A record's hash
// lets the next build see what changed. Its files and versions: the
// package doc; the index's layout: blocks.go.
type Store struct {
	keys   []int64  // the keys, when they do not fit keys32
	keys32 []uint32 // key - keyBase, when every key fits
	// Every sampleEvery-th key (of keys or keys32), made when the store is
	// opened, held or mapped: Find searches it first, then a span of
	// sampleEvery keys, a few cache lines instead of one miss per step
	// of a search over the whole array.
	sample   []int64
	sample32 []uint32
	keyBase  int64
	n        int
	hashes   []uint64
	base     []byte
	delta    []byte
	baseSize uint64
	fnv      bool // hashes are FNV-64a (a GDSSTO01 store)

	// A GDSSTO01/02 store: raw lines, by start and length.
	starts []uint64
	lens   []uint32

	// A GDSSTO03 or GDSSTO04 store: zstd blocks.
	blk *blockReader

	// A store with an index delta (indexdelta.go): its base index's own
	// reading (records by base position), the delta, and the positions of
	// the delta's records; the hashes are merged at their first use.
	under    *Store
	idxd     *indexDelta
	dpos     []uint32
	hashOnce sync.Once

	groups map[string][]int64 // name → sorted (group key, position) pairs
	maps   [][]byte
	held   []*disk.Loaded // what a store opened in memory holds
	files  *dataFiles     // what a mapped block store reads its blocks from
}

const (
	storeMagicV1 = "GDSSTO01"
	storeMagicV2 = "GDSSTO02"
	storeMagicV3 = "GDSSTO03"
	storeMagic   = "GDSSTO04"
)

// FormatVersions are the record-store format a build writes (the magic
// of its index files) and those a generation's stores are read in, oldest
// first, for `gds version`.
func FormatVersions() (writes string, reads []string) {
	return storeMagic, []string{storeMagicV1, storeMagicV2, storeMagicV3, storeMagic}
}

// ErrDamagedRecord is returned for a record the index places outside the
// data files, or whose block does not decode (files damaged after the build).
var ErrDamagedRecord = errors.New("record store damaged")

// Len is the number of records.
func (s *Store) Len() int { return s.n }

// Key returns the key at position i.
func (s *Store) Key(i int) int64 {
	if s.keys32 != nil {
		return s.keyBase + int64(s.keys32[i])
	}
	return s.keys[i]
}

// Hash returns the hash of the record at position i.
func (s *Store) Hash(i int) uint64 {
	if s.idxd != nil {
		s.hashOnce.Do(s.mergeHashes)
	}
	return s.hashes[i]
}

// HashOf hashes raw the way this store's hashes were made, so a build can
// compare a line with the record it replaces.
func (s *Store) HashOf(raw []byte) uint64 {
	if s.fnv {
		h := fnv.New64a()
		h.Write(raw)
		return h.Sum64()
	}
	return HashRecord(raw)
}

// Read calls fn with the record at position i, without its newline; raw is
// valid only during the call (it is a pooled buffer, or the mapped file).
// It returns ErrDamagedRecord, without calling fn, when the files no longer
// hold the record.
//
// The bounds are checked here, per record, rather than for every record
// when the store opens: that would read the whole index into the serving
// process's memory.
func (s *Store) Read(i int, fn func(raw []byte) error) error {
	if s.blk != nil {
		return s.blk.read(i, s, fn)
	}
	raw := s.rawLine(i)
	if raw == nil {
		return ErrDamagedRecord
	}
	return fn(raw)
}

// Raw returns a copy of the record at position i, or nil when the files no
// longer hold it. Read avoids the copy.
func (s *Store) Raw(i int) []byte {
	var out []byte
	s.Read(i, func(raw []byte) error {
		out = append(make([]byte, 0, len(raw)), raw...)
		return nil
	})
	return out
}

// rawLine is the record at position i of a raw-line store.
func (s *Store) rawLine(i int) []byte {
	start, n := s.starts[i], uint64(s.lens[i])
	return s.span(start, start+n)
}

// span returns bytes [start, end) of base and delta taken as one, or nil
// when they straddle the two or fall outside.
func (s *Store) span(start, end uint64) []byte {
	if end < start {
		return nil
	}
	if end <= s.baseSize {
		return s.base[start:end]
	}
	if start < s.baseSize {
		return nil
	}
	start, end = start-s.baseSize, end-s.baseSize
	if end > uint64(len(s.delta)) {
		return nil
	}
	return s.delta[start:end]
}

// Compressed reports whether the store is in the current (block) format,
// which an incremental build can add a delta to.
func (s *Store) Compressed() bool { return s.blk != nil && s.blk.bare }

// DeltaShare is the size of the delta file relative to the base file.
func (s *Store) DeltaShare() float64 {
	return float64(len(s.delta)) / float64(max(s.baseSize, 1))
}

// Get calls fn with the record with key (see Read); ok is false when there
// is none.
func (s *Store) Get(key int64, fn func(raw []byte) error) (ok bool, err error) {
	i, ok := s.Find(key)
	if !ok {
		return false, nil
	}
	return true, s.Read(i, fn)
}

// Group returns the positions of the records whose group key under name is
// key (structures by corporation, documents by path hash), ascending.
func (s *Store) Group(name string, key int64) []int {
	pairs := s.groups[name]
	n := len(pairs) / 2
	lo, hi := 0, n
	for lo < hi {
		m := (lo + hi) / 2
		if pairs[2*m] < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	var out []int
	for j := lo; j < n && pairs[2*j] == key; j++ {
		if p := pairs[2*j+1]; p >= 0 && p < int64(s.n) {
			out = append(out, int(p))
		}
	}
	return out
}

// groupKeys returns, by position, each record's key in the named group.
func (s *Store) groupKeys(name string) ([]int64, bool) {
	pairs, ok := s.groups[name]
	if !ok {
		return nil, false
	}
	out := make([]int64, s.Len())
	for j := 0; j+1 < len(pairs); j += 2 {
		if p := pairs[j+1]; p >= 0 && int(p) < len(out) {
			out[p] = pairs[j]
		}
	}
	return out, true
}

// Close unmaps the store's files and lets go of what it holds in memory.
func (s *Store) Close() error {
	var first error
	for _, m := range s.maps {
		if err := disk.Unmap(m); err != nil && first == nil {
			first = err
		}
	}
	s.maps = nil
	for _, l := range s.held {
		if err := l.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.held = nil
	if s.files != nil {
		if err := s.files.close(); err != nil && first == nil {
			first = err
		}
		s.files = nil
	}
	if s.blk != nil {
		s.blk.close()
	}
	return first
}

// HashRecord is the hash stored per record: xxhash64 of its raw line.
func HashRecord(raw []byte) uint64 { return xxhash.Sum64(raw) }

// HashPath is the group key of a document path.
func HashPath(path string) int64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	return int64(h.Sum64() >> 1)
}

// Open maps a kind's store in dir. inMemory holds what a lookup reads
// in memory of the process's own instead (holdInMemory).
func Open(dir, kind string, inMemory bool, groups ...string) (*Store, error) {
	s := &Store{groups: map[string][]int64{}}
	fail := func(err error) (*Store, error) {
		s.Close()
		return nil, fmt.Errorf("store %s: %w", kind, err)
	}
	mapFile := func(name string) ([]byte, error) {
		m, err := disk.Map(filepath.Join(dir, kind+name), false)
		if m != nil {
			s.maps = append(s.maps, m)
		}
		return m, err
	}
	dataFile := mapFile
	if inMemory {
		dataFile = func(name string) ([]byte, error) {
			l, err := disk.Load(filepath.Join(dir, kind+name))
			if err != nil {
				return nil, err
			}
			s.held = append(s.held, l)
			return l.Bytes, nil
		}
	}
	idxd, err := mapFile(idxDelta)
	if err != nil && !os.IsNotExist(err) {
		return fail(err)
	}
	idxName := idxWhole
	if idxd != nil {
		idxName = idxBase
	}
	idx, err := mapFile(idxName)
	if err != nil {
		return fail(err)
	}
	data, err := dataFile(".data")
	if err != nil {
		return fail(err)
	}
	delta, err := dataFile(".delta")
	if err != nil && !os.IsNotExist(err) {
		return fail(err)
	}
	if idxd != nil {
		err = s.parseSplit(idx, idxd, data, delta)
	} else {
		err = s.parse(idx, data, delta)
	}
	if err != nil {
		return fail(err)
	}
	if inMemory {
		s.holdInMemory()
		disk.Release(idx) // read to copy; its hashes are for builds
	}
	// The sample, held or mapped: without it a key is a binary search of
	// the whole key column, a miss a level (26 at 50M keys).
	if s.keys32 != nil {
		s.sample32 = sampleKeys(s.keys32)
	} else {
		s.sample = sampleKeys(s.keys)
	}
	if !inMemory {
		// Checked and sampled: the index's pages leave the resident set,
		// kept by the page cache; lookups map again those they read (at
		// 50M names the characters' index is 190 MiB, which searches
		// never read).
		disk.Release(idx)
	}
	if !inMemory && s.blk != nil && s.blk.bare {
		if s.files, err = openDataFiles(dir, kind, delta != nil); err != nil {
			return fail(err)
		}
	}
	for _, g := range groups {
		m, err := mapFile(".by-" + g)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return fail(err)
		}
		s.groups[g] = disk.FromBytes[int64](m)
	}
	return s, nil
}

// holdInMemory copies the parts of the index a lookup reads (the keys,
// where each record lies, the blocks' dictionary) into memory of the
// process's own. The index's hashes, which only a build reads, stay
// mapped. Memory that cannot be had leaves the store mapped: slower when
// the kernel has dropped its pages, never wrong.
//
// Mapped, a store is in the page cache, which the kernel empties of pages
// nobody read for a while; the first lookup of a record there then waits
// for the disk (first lookups at 10M names: p99 16.5–31.9 µs mapped,
// 13.0–13.9 µs held, 2026-11-25; docs/performance.md).
func (s *Store) holdInMemory() {
	var parts [][]byte
	var set []func([]byte)
	hold := func(b []byte, to func([]byte)) {
		parts, set = append(parts, b), append(set, to)
	}
	if s.keys32 != nil {
		hold(disk.AsBytes(s.keys32), func(b []byte) { s.keys32 = disk.FromBytes[uint32](b) })
	} else {
		hold(disk.AsBytes(s.keys), func(b []byte) { s.keys = disk.FromBytes[int64](b) })
	}
	if b := s.blk; b != nil {
		hold(b.dict, func(c []byte) { b.dict = c })
		hold(disk.AsBytes(b.locs), func(c []byte) { b.locs = disk.FromBytes[uint32](c) })
		hold(disk.AsBytes(b.starts), func(c []byte) { b.starts = disk.FromBytes[uint32](c) })
		hold(disk.AsBytes(b.offs), func(c []byte) { b.offs = disk.FromBytes[uint64](c) })
		hold(disk.AsBytes(b.offs32), func(c []byte) { b.offs32 = disk.FromBytes[uint32](c) })
	} else {
		hold(disk.AsBytes(s.starts), func(b []byte) { s.starts = disk.FromBytes[uint64](b) })
		hold(disk.AsBytes(s.lens), func(b []byte) { s.lens = disk.FromBytes[uint32](b) })
	}
	l, copies, err := disk.Copy(parts...)
	if err != nil {
		return
	}
	for i, c := range copies {
		if len(c) > 0 {
			set[i](c)
		}
	}
	if s.blk != nil {
		// A decoder over the copied dictionary; should none be had, the
		// one there is reads the mapped copy of the same bytes.
		_ = s.blk.newDecoder()
	}
	s.held = append(s.held, l)
}

// parse reads an index file over its data files; every slice aliases them.
func (s *Store) parse(idx, data, delta []byte) error {
	if err := s.parseIndex(idx); err != nil {
		return err
	}
	if uint64(len(data)) != s.baseSize {
		return fmt.Errorf("data file is %d bytes, index says %d", len(data), s.baseSize)
	}
	s.base, s.delta = data, delta
	if s.blk != nil {
		return s.blk.newDecoder()
	}
	return nil
}

// parseIndex reads an index file; every slice aliases it.
func (s *Store) parseIndex(idx []byte) error {
	if len(idx) < 16 {
		return fmt.Errorf("bad index file")
	}
	n64 := binary.LittleEndian.Uint64(idx[8:])
	if n64 > uint64(len(idx)) {
		return fmt.Errorf("index file is %d bytes, too small for %d records", len(idx), n64)
	}
	n := int(n64)
	s.n = n
	var err error
	switch string(idx[:8]) {
	case storeMagic:
		err = s.parseBlocks(idx, n, true)
	case storeMagicV3:
		err = s.parseBlocks(idx, n, false)
	case storeMagicV2:
		err = s.parseV2(idx, n)
	case storeMagicV1:
		err = s.parseV1(idx, n)
	default:
		return fmt.Errorf("bad index file")
	}
	return err
}

func (s *Store) parseV2(idx []byte, n int) error {
	need := 24 + 8*n + 8*n + int(disk.Pad8(uint64(4*n))) + 8*n
	if len(idx) < 24 || len(idx) != need {
		return fmt.Errorf("index file is %d bytes, want %d", len(idx), need)
	}
	s.baseSize = binary.LittleEndian.Uint64(idx[16:])
	p := 24
	s.keys = disk.FromBytes[int64](idx[p : p+8*n])
	p += 8 * n
	s.starts = disk.FromBytes[uint64](idx[p : p+8*n])
	p += 8 * n
	s.lens = disk.FromBytes[uint32](idx[p : p+4*n])
	p += int(disk.Pad8(uint64(4 * n)))
	s.hashes = disk.FromBytes[uint64](idx[p : p+8*n])
	return nil
}

// parseV1 reads a GDSSTO01 index: keys, n+1 offsets (each record ends with
// a newline just before the next offset), FNV-64a hashes.
func (s *Store) parseV1(idx []byte, n int) error {
	need := 16 + 8*n + 8*(n+1) + 8*n
	if len(idx) != need {
		return fmt.Errorf("index file is %d bytes, want %d", len(idx), need)
	}
	p := 16
	s.keys = disk.FromBytes[int64](idx[p : p+8*n])
	p += 8 * n
	offs := disk.FromBytes[uint64](idx[p : p+8*(n+1)])
	p += 8 * (n + 1)
	s.hashes = disk.FromBytes[uint64](idx[p : p+8*n])
	s.starts = offs[:n]
	s.lens = make([]uint32, n)
	for i := range n {
		if offs[i+1] <= offs[i] {
			return fmt.Errorf("record %d has no bytes", i)
		}
		s.lens[i] = uint32(offs[i+1] - offs[i] - 1)
	}
	s.baseSize = offs[n]
	s.fnv = true
	return nil
}

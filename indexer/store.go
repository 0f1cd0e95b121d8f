package indexer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/cespare/xxhash/v2"

	"gds/snapshots/disk"
)

// Store holds one kind's records as the snapshot had them (raw JSON, in
// key order), memory-mapped, for lookups by key without holding millions of
// records in the heap. A record's hash lets the next build see what changed.
//
// Files:
//
//	<kind>.data   records, one per line: the base, written by a full build
//	              and shared (hard-linked) by the incremental builds after it
//	<kind>.delta  records added or changed since the base was written
//	              (incremental builds only; rewritten by each)
//	<kind>.idx    "GDSSTO02", count n, base size, then keys (n), starts (n;
//	              positions in base+delta taken as one), lengths (n, uint32,
//	              padded to 8 bytes) and hashes (n, xxhash64 of the line)
//	<kind>.by-<group>  sorted (group key, position) pairs
//
// Stores written before the delta file existed ("GDSSTO01": keys, n+1
// offsets, FNV-64a hashes, no delta) are still read.
type Store struct {
	keys     []int64
	starts   []uint64
	lens     []uint32
	hashes   []uint64
	base     []byte
	delta    []byte
	baseSize uint64
	fnv      bool               // hashes are FNV-64a (a GDSSTO01 store)
	groups   map[string][]int64 // name → sorted (group key, position) pairs
	maps     [][]byte
}

const (
	storeMagicV1 = "GDSSTO01"
	storeMagic   = "GDSSTO02"
)

// Len is the number of records.
func (s *Store) Len() int { return len(s.keys) }

// Key returns the key at position i.
func (s *Store) Key(i int) int64 { return s.keys[i] }

// Hash returns the hash of the record at position i.
func (s *Store) Hash(i int) uint64 { return s.hashes[i] }

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

// Raw returns the record at position i, without its newline, or nil when
// the index places it outside the data files (files damaged after the
// build). It aliases the mapped file.
//
// The bounds are checked here, per record, rather than for every record
// when the store opens: that would read the whole index (120 MB of starts
// and lengths at 10M characters) into the serving process's memory.
func (s *Store) Raw(i int) []byte {
	start, n := s.starts[i], uint64(s.lens[i])
	if start < s.baseSize {
		if n > s.baseSize-start {
			return nil
		}
		return s.base[start : start+n]
	}
	start -= s.baseSize
	if start > uint64(len(s.delta)) || n > uint64(len(s.delta))-start {
		return nil
	}
	return s.delta[start : start+n]
}

// inDelta reports whether the record at position i lives in the delta file.
func (s *Store) inDelta(i int) bool { return s.starts[i] >= s.baseSize }

// DeltaShare is the size of the delta file relative to the base file.
func (s *Store) DeltaShare() float64 {
	return float64(len(s.delta)) / float64(max(s.baseSize, 1))
}

// Find returns the position of key.
func (s *Store) Find(key int64) (int, bool) { return slices.BinarySearch(s.keys, key) }

// Get returns the record with key (nil if the files are damaged: see Raw).
func (s *Store) Get(key int64) ([]byte, bool) {
	i, ok := s.Find(key)
	if !ok {
		return nil, false
	}
	return s.Raw(i), true
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
		out = append(out, int(pairs[2*j+1]))
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

// Close unmaps the store's files.
func (s *Store) Close() error {
	var first error
	for _, m := range s.maps {
		if err := disk.Unmap(m); err != nil && first == nil {
			first = err
		}
	}
	s.maps = nil
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

// storeWriter writes a Store. A full writer puts every record in a new
// base file; a delta writer (newDeltaStoreWriter) hard-links the previous
// store's base and writes only records that are not in it to a delta file.
type storeWriter struct {
	dir, kind string
	f         *os.File // the file new records go to: base or delta
	w         *bufio.Writer
	keys      []int64
	starts    []uint64
	lens      []uint32
	hashes    []uint64
	size      uint64 // bytes written to f
	baseSize  uint64 // of a delta writer's shared base; 0 for a full writer
	delta     bool
	prev      *Store // the previous store, when records are kept from it
	prevGroup map[string][]int64
	groups    map[string][]int64
}

// newStoreWriter starts a store written whole. prev, when set, is the
// previous generation's store, which keep takes unchanged records from.
func newStoreWriter(dir, kind string, prev *Store) (*storeWriter, error) {
	if err := os.Remove(filepath.Join(dir, kind+".delta")); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	f, err := disk.CreateFresh(filepath.Join(dir, kind+".data"), disk.PrivateFile)
	if err != nil {
		return nil, err
	}
	sw := &storeWriter{dir: dir, kind: kind, f: f, w: bufio.NewWriterSize(f, 1<<20), groups: map[string][]int64{}}
	sw.from(prev)
	return sw, nil
}

// newDeltaStoreWriter starts a store that shares prev's base file (linked
// into dir) and writes the rest to a delta file.
func newDeltaStoreWriter(dir, kind string, prev *Store, prevDir string) (*storeWriter, error) {
	base := filepath.Join(dir, kind+".data")
	if err := os.Remove(base); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if err := disk.LinkOrCopy(filepath.Join(prevDir, kind+".data"), base, disk.PrivateFile); err != nil {
		return nil, err
	}
	f, err := disk.CreateFresh(filepath.Join(dir, kind+".delta"), disk.PrivateFile)
	if err != nil {
		return nil, err
	}
	sw := &storeWriter{dir: dir, kind: kind, f: f, w: bufio.NewWriterSize(f, 1<<20), groups: map[string][]int64{},
		baseSize: prev.baseSize, delta: true}
	sw.from(prev)
	return sw, nil
}

func (sw *storeWriter) from(prev *Store) {
	if prev == nil {
		return
	}
	sw.prev, sw.prevGroup = prev, map[string][]int64{}
	for name := range prev.groups {
		sw.prevGroup[name], _ = prev.groupKeys(name)
	}
}

// reserve makes room for n records.
func (sw *storeWriter) reserve(n int) {
	sw.keys = slices.Grow(sw.keys, n)
	sw.starts = slices.Grow(sw.starts, n)
	sw.lens = slices.Grow(sw.lens, n)
	sw.hashes = slices.Grow(sw.hashes, n)
}

// add appends a new or changed record; keys arrive ascending (the snapshot
// guarantees it).
func (sw *storeWriter) add(key int64, raw []byte) error {
	return sw.addHashed(key, raw, HashRecord(raw))
}

func (sw *storeWriter) addHashed(key int64, raw []byte, hash uint64) error {
	if len(raw) > math.MaxUint32 {
		return fmt.Errorf("record %d is too large (%d bytes)", key, len(raw))
	}
	sw.keys = append(sw.keys, key)
	sw.starts = append(sw.starts, sw.baseSize+sw.size)
	sw.lens = append(sw.lens, uint32(len(raw)))
	sw.hashes = append(sw.hashes, hash)
	n, err := sw.w.Write(raw)
	sw.size += uint64(n)
	if err != nil {
		return err
	}
	if err := sw.w.WriteByte('\n'); err != nil {
		return err
	}
	sw.size++
	return nil
}

// keep carries the previous store's record at position pi over unchanged;
// raw is its line (the same bytes). A delta writer leaves a record of the
// shared base where it is and copies one of the previous delta; a full
// writer writes it again. Its group keys come along.
func (sw *storeWriter) keep(pi int, raw []byte) error {
	p := sw.prev
	var err error
	switch {
	case !sw.delta:
		err = sw.add(p.keys[pi], raw) // hashed anew: p may use the old hash
	case p.inDelta(pi):
		err = sw.addHashed(p.keys[pi], raw, p.hashes[pi])
	default:
		sw.keys = append(sw.keys, p.keys[pi])
		sw.starts = append(sw.starts, p.starts[pi])
		sw.lens = append(sw.lens, p.lens[pi])
		sw.hashes = append(sw.hashes, p.hashes[pi])
	}
	if err != nil {
		return err
	}
	for name, keys := range sw.prevGroup {
		sw.group(name, keys[pi])
	}
	return nil
}

// group files the record just added under key in the named group.
func (sw *storeWriter) group(name string, key int64) {
	sw.groups[name] = append(sw.groups[name], key, int64(len(sw.keys)-1))
}

func (sw *storeWriter) close() error {
	if err := sw.w.Flush(); err != nil {
		sw.f.Close()
		return err
	}
	if err := sw.f.Sync(); err != nil {
		sw.f.Close()
		return err
	}
	if err := sw.f.Close(); err != nil {
		return err
	}
	base := sw.baseSize
	if !sw.delta {
		base = sw.size
	}
	n := len(sw.keys)
	idx := make([]byte, 0, 24+8*n*3+int(pad8(uint64(4*n))))
	idx = append(idx, storeMagic...)
	idx = binary.LittleEndian.AppendUint64(idx, uint64(n))
	idx = binary.LittleEndian.AppendUint64(idx, base)
	idx = append(idx, asBytes(sw.keys)...)
	idx = append(idx, asBytes(sw.starts)...)
	idx = append(idx, asBytes(sw.lens)...)
	for len(idx)%8 != 0 {
		idx = append(idx, 0)
	}
	idx = append(idx, asBytes(sw.hashes)...)
	if err := disk.WriteFileSync(filepath.Join(sw.dir, sw.kind+".idx"), idx, disk.PrivateFile); err != nil {
		return err
	}
	for name, pairs := range sw.groups {
		sortPairs(pairs)
		if err := disk.WriteFileSync(filepath.Join(sw.dir, sw.kind+".by-"+name), asBytes(pairs), disk.PrivateFile); err != nil {
			return err
		}
	}
	return nil
}

func sortPairs(p []int64) {
	n := len(p) / 2
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if p[2*a] != p[2*b] {
			if p[2*a] < p[2*b] {
				return -1
			}
			return 1
		}
		return int(p[2*a+1] - p[2*b+1])
	})
	out := make([]int64, len(p))
	for j, i := range idx {
		out[2*j], out[2*j+1] = p[2*i], p[2*i+1]
	}
	copy(p, out)
}

// openStore maps a kind's store in dir.
func openStore(dir, kind string, groups ...string) (*Store, error) {
	s := &Store{groups: map[string][]int64{}}
	fail := func(err error) (*Store, error) {
		s.Close()
		return nil, fmt.Errorf("store %s: %w", kind, err)
	}
	idx, err := disk.Map(filepath.Join(dir, kind+".idx"), false)
	if err != nil {
		return fail(err)
	}
	if idx != nil {
		s.maps = append(s.maps, idx)
	}
	if len(idx) < 16 || (string(idx[:8]) != storeMagic && string(idx[:8]) != storeMagicV1) {
		return fail(fmt.Errorf("bad index file"))
	}
	n := int(binary.LittleEndian.Uint64(idx[8:]))
	if string(idx[:8]) == storeMagicV1 {
		err = s.parseV1(idx, n)
	} else {
		err = s.parseV2(idx, n)
	}
	if err != nil {
		return fail(err)
	}
	data, err := disk.Map(filepath.Join(dir, kind+".data"), false)
	if err != nil {
		return fail(err)
	}
	if data != nil {
		s.maps = append(s.maps, data)
	}
	if uint64(len(data)) != s.baseSize {
		return fail(fmt.Errorf("data file is %d bytes, index says %d", len(data), s.baseSize))
	}
	s.base = data
	delta, err := disk.Map(filepath.Join(dir, kind+".delta"), false)
	if err != nil && !os.IsNotExist(err) {
		return fail(err)
	}
	if delta != nil {
		s.maps = append(s.maps, delta)
	}
	s.delta = delta
	for _, g := range groups {
		m, err := disk.Map(filepath.Join(dir, kind+".by-"+g), false)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return fail(err)
		}
		if m != nil {
			s.maps = append(s.maps, m)
		}
		s.groups[g] = fromBytes[int64](m)
	}
	return s, nil
}

func (s *Store) parseV2(idx []byte, n int) error {
	need := 24 + 8*n + 8*n + int(pad8(uint64(4*n))) + 8*n
	if len(idx) < 24 || len(idx) != need {
		return fmt.Errorf("index file is %d bytes, want %d", len(idx), need)
	}
	s.baseSize = binary.LittleEndian.Uint64(idx[16:])
	p := 24
	s.keys = fromBytes[int64](idx[p : p+8*n])
	p += 8 * n
	s.starts = fromBytes[uint64](idx[p : p+8*n])
	p += 8 * n
	s.lens = fromBytes[uint32](idx[p : p+4*n])
	p += int(pad8(uint64(4 * n)))
	s.hashes = fromBytes[uint64](idx[p : p+8*n])
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
	s.keys = fromBytes[int64](idx[p : p+8*n])
	p += 8 * n
	offs := fromBytes[uint64](idx[p : p+8*(n+1)])
	p += 8 * (n + 1)
	s.hashes = fromBytes[uint64](idx[p : p+8*n])
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

package indexer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Store holds one kind's records as the snapshot had them (raw JSON, in
// key order), memory-mapped, for lookups by key without holding millions of
// records in the heap. A record's hash lets the next build see what changed.
//
// Files: <kind>.data (the records, one per line) and <kind>.idx (magic,
// count, then keys, offsets (count+1) and hashes).
type Store struct {
	keys   []int64
	offs   []uint64
	hashes []uint64
	data   []byte
	groups map[string][]int64 // name → sorted (group key, position) pairs
	maps   [][]byte
}

const storeMagic = "GDSSTO01"

// Len is the number of records.
func (s *Store) Len() int { return len(s.keys) }

// Key returns the key at position i.
func (s *Store) Key(i int) int64 { return s.keys[i] }

// Hash returns the hash of the record at position i.
func (s *Store) Hash(i int) uint64 { return s.hashes[i] }

// Raw returns the record at position i. It aliases the mapped file.
func (s *Store) Raw(i int) []byte { return s.data[s.offs[i] : s.offs[i+1]-1] } // without its newline

// Find returns the position of key.
func (s *Store) Find(key int64) (int, bool) { return slices.BinarySearch(s.keys, key) }

// Get returns the record with key.
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

// Close unmaps the store's files.
func (s *Store) Close() error {
	var first error
	for _, m := range s.maps {
		if err := syscall.Munmap(m); err != nil && first == nil {
			first = err
		}
	}
	s.maps = nil
	return first
}

// HashRecord is the hash stored per record: FNV-64a of its raw line.
func HashRecord(raw []byte) uint64 {
	h := fnv.New64a()
	h.Write(raw)
	return h.Sum64()
}

// HashPath is the group key of a document path.
func HashPath(path string) int64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	return int64(h.Sum64() >> 1)
}

// storeWriter writes a Store.
type storeWriter struct {
	dir, kind string
	f         *os.File
	w         *bufio.Writer
	keys      []int64
	offs      []uint64
	hashes    []uint64
	size      uint64
	groups    map[string][]int64
}

func newStoreWriter(dir, kind string) (*storeWriter, error) {
	f, err := os.Create(filepath.Join(dir, kind+".data"))
	if err != nil {
		return nil, err
	}
	return &storeWriter{dir: dir, kind: kind, f: f, w: bufio.NewWriterSize(f, 1<<20), groups: map[string][]int64{}}, nil
}

// add appends a record; keys arrive ascending (the snapshot guarantees it).
func (sw *storeWriter) add(key int64, raw []byte) error {
	sw.keys = append(sw.keys, key)
	sw.offs = append(sw.offs, sw.size)
	sw.hashes = append(sw.hashes, HashRecord(raw))
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
	// Offsets point at record starts; the extra last one ends the data.
	offs := make([]uint64, 0, len(sw.offs)+1)
	offs = append(offs, sw.offs...)
	offs = append(offs, sw.size)
	idx := []byte(storeMagic)
	idx = binary.LittleEndian.AppendUint64(idx, uint64(len(sw.keys)))
	idx = append(idx, asBytes(sw.keys)...)
	idx = append(idx, asBytes(offs)...)
	idx = append(idx, asBytes(sw.hashes)...)
	if err := writeFileSync(filepath.Join(sw.dir, sw.kind+".idx"), idx); err != nil {
		return err
	}
	for name, pairs := range sw.groups {
		sortPairs(pairs)
		if err := writeFileSync(filepath.Join(sw.dir, sw.kind+".by-"+name), asBytes(pairs)); err != nil {
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

func writeFileSync(name string, data []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func mapFile(name string) ([]byte, error) { return mapFileFlags(name, 0) }

// mapFileFlags maps a file read-only with extra mmap flags.
func mapFileFlags(name string, flags int) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, nil
	}
	return syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED|flags)
}

// openStore maps a kind's store in dir.
func openStore(dir, kind string, groups ...string) (*Store, error) {
	s := &Store{groups: map[string][]int64{}}
	fail := func(err error) (*Store, error) {
		s.Close()
		return nil, fmt.Errorf("store %s: %w", kind, err)
	}
	idx, err := mapFile(filepath.Join(dir, kind+".idx"))
	if err != nil {
		return fail(err)
	}
	if idx != nil {
		s.maps = append(s.maps, idx)
	}
	if len(idx) < 16 || string(idx[:8]) != storeMagic {
		return fail(fmt.Errorf("bad index file"))
	}
	n := int(binary.LittleEndian.Uint64(idx[8:]))
	need := 16 + 8*n + 8*(n+1) + 8*n
	if len(idx) != need {
		return fail(fmt.Errorf("index file is %d bytes, want %d", len(idx), need))
	}
	p := 16
	s.keys = fromBytes[int64](idx[p : p+8*n])
	p += 8 * n
	s.offs = fromBytes[uint64](idx[p : p+8*(n+1)])
	p += 8 * (n + 1)
	s.hashes = fromBytes[uint64](idx[p : p+8*n])
	data, err := mapFile(filepath.Join(dir, kind+".data"))
	if err != nil {
		return fail(err)
	}
	if data != nil {
		s.maps = append(s.maps, data)
	}
	if uint64(len(data)) != s.offs[n] {
		return fail(fmt.Errorf("data file is %d bytes, index says %d", len(data), s.offs[n]))
	}
	s.data = data
	for _, g := range groups {
		m, err := mapFile(filepath.Join(dir, kind+".by-"+g))
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

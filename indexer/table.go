package indexer

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/snapshots/disk"
)

// A table is the search side of one category in one language: every name,
// folded, numbered by rank (shorter names first, then lower ID), so that
// walking any posting list in ascending ordinal order visits names in the
// order results are returned, and a search can stop once it has enough.
//
// Built at index time and memory-mapped at serve time, it holds:
//   - ids: ordinal → ID;
//   - offsets and names: ordinal → folded name, for verification;
//   - slots: an open-addressing hash table of folded names for strict search;
//   - grams: trigram (three bytes of the folded UTF-8 name) → ordinals of
//     names containing it; trigrams span spaces and punctuation, so "p An"
//     and "O'm" are as cheap as any other text;
//   - prefixes: first trigram → ordinals of names starting with it;
//   - access (structures): character ID → ordinals it may access;
//   - mask (language overlays): ordinals of the base table this overlay
//     replaces.
type Table struct {
	n       int
	ids     []int64
	offsets []uint32
	names   []byte
	slots   []uint32 // ordinal+1, 0 when empty
	// grouped (tables since GDSTBL02): a slot holds the lowest ordinal of
	// a distinct name; dupKeys lists the slots' ordinals whose name other
	// ordinals share, and dupOffs/dupList all ordinals of each, ascending.
	// A strict search then costs one probe and one name comparison
	// however many names are equal.
	grouped bool
	dupKeys []uint32
	dupOffs []uint32 // pairs: offset, length into dupList
	dupList []uint32
	grams   postingLists
	prefix  postingLists
	mask    *roaring.Bitmap

	accessKeys []int64
	accessOffs []uint64 // pairs: offset, length into mm
	mm         []byte
}

// Entry is one name handed to the table builder.
type Entry struct {
	ID     int64
	Folded string
	// Access lists the characters that may see the entry (structures only).
	Access []int64
}

const (
	tableMagic   = "GDSTBL02"
	tableMagicV1 = "GDSTBL01" // slots held every ordinal, duplicates included
	headerFields = 16
)

// section indices in the header
const (
	secIDs = iota
	secOffsets
	secNames
	secSlots
	secGramKeys
	secGramOffs
	secPrefixKeys
	secPrefixOffs
	secAccessKeys
	secAccessOffs
	secMask
	secBitmaps
	secDupKeys
	secDupOffs
	secDupList
	secCount
)

// Len is the number of names in the table.
func (t *Table) Len() int { return t.n }

// ID returns the ID at ordinal o.
func (t *Table) ID(o uint32) int64 { return t.ids[o] }

// Name returns the folded name at ordinal o. It aliases the mapped file.
func (t *Table) Name(o uint32) []byte { return t.names[t.offsets[o]:t.offsets[o+1]] }

// Gram returns the ordinals of names containing the trigram, or nil.
func (t *Table) Gram(g uint32) *roaring.Bitmap { return t.grams.get(g) }

// Prefix returns the ordinals of names whose first trigram is g, or nil.
func (t *Table) Prefix(g uint32) *roaring.Bitmap { return t.prefix.get(g) }

// postingLists finds posting lists by trigram in the mapped file. A list is
// decoded (its container headers built over the mapped bytes) the first
// time a search asks for it and kept: opening a table costs nothing per
// list, and rare trigrams never cost heap.
type postingLists struct {
	keys    []uint32 // sorted
	offs    []uint64 // pairs: offset, length into blob
	blob    []byte
	decoded []atomic.Pointer[roaring.Bitmap]
}

func newPostingLists(keys []uint32, offs []uint64, blob []byte) (postingLists, error) {
	if len(offs) != 2*len(keys) {
		return postingLists{}, errors.New("posting list index is inconsistent")
	}
	for i := range keys {
		if offs[2*i]+offs[2*i+1] > uint64(len(blob)) {
			return postingLists{}, fmt.Errorf("posting list %d out of range", i)
		}
	}
	return postingLists{keys: keys, offs: offs, blob: blob, decoded: make([]atomic.Pointer[roaring.Bitmap], len(keys))}, nil
}

func (p *postingLists) get(g uint32) *roaring.Bitmap {
	i, ok := slices.BinarySearch(p.keys, g)
	if !ok {
		return nil
	}
	if bm := p.decoded[i].Load(); bm != nil {
		return bm
	}
	bm := roaring.New()
	if _, err := bm.FromBuffer(p.blob[p.offs[2*i] : p.offs[2*i]+p.offs[2*i+1]]); err != nil {
		return nil // checked at open: cannot happen for a table that opened
	}
	if !p.decoded[i].CompareAndSwap(nil, bm) {
		return p.decoded[i].Load()
	}
	return bm
}

// Mask returns the ordinals of the base table an overlay replaces, or nil.
func (t *Table) Mask() *roaring.Bitmap { return t.mask }

// Access returns the ordinals character may access, or nil.
func (t *Table) Access(character int64) *roaring.Bitmap {
	i, ok := slices.BinarySearch(t.accessKeys, character)
	if !ok {
		return nil
	}
	off, n := t.accessOffs[2*i], t.accessOffs[2*i+1]
	bm := roaring.New()
	if _, err := bm.FromBuffer(t.mm[off : off+n]); err != nil {
		return nil
	}
	return bm
}

// Exact calls fn with the ordinals whose folded name equals text, in
// ascending order.
func (t *Table) Exact(text []byte, fn func(o uint32) bool) {
	if len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	if t.grouped {
		for i := hashName(text) & mask; ; i = (i + 1) & mask {
			v := t.slots[i]
			if v == 0 {
				return
			}
			o := v - 1
			if string(t.Name(o)) != string(text) {
				continue
			}
			if j, ok := slices.BinarySearch(t.dupKeys, o); ok {
				off, n := t.dupOffs[2*j], t.dupOffs[2*j+1]
				for _, d := range t.dupList[off : off+n] {
					if !fn(d) {
						return
					}
				}
				return
			}
			fn(o)
			return
		}
	}
	var found [8]uint32
	hits := found[:0]
	for i := hashName(text) & mask; ; i = (i + 1) & mask {
		v := t.slots[i]
		if v == 0 {
			break
		}
		if string(t.Name(v-1)) == string(text) {
			hits = append(hits, v-1)
		}
	}
	slices.Sort(hits)
	for _, o := range hits {
		if !fn(o) {
			return
		}
	}
}

// Gram3 packs three bytes into a trigram key.
func Gram3(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func hashName(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// WriteTable builds a table from entries (in any order; ascending ID is
// fastest) and writes it to path atomically, leaving entries in ordinal
// order. mask, when set, is stored as the overlay mask.
func WriteTable(path string, entries []Entry, mask *roaring.Bitmap) error {
	rankOrder(entries)
	n := len(entries)
	ids := make([]int64, n)
	offsets := make([]uint32, n+1)
	var size uint64
	for i, e := range entries {
		ids[i] = e.ID
		offsets[i] = uint32(size)
		size += uint64(len(e.Folded))
		if size > 1<<32-1 {
			return fmt.Errorf("table %s: names exceed 4 GiB; shard the category", path)
		}
	}
	offsets[n] = uint32(size)

	nslots := 1
	for nslots < n*2 {
		nslots <<= 1
	}
	if n == 0 {
		nslots = 0
	}
	slots := make([]uint32, nslots)
	dups := map[uint32][]uint32{}
	for i, e := range entries {
		hmask := uint64(nslots - 1)
		for j := hashName([]byte(e.Folded)) & hmask; ; j = (j + 1) & hmask {
			v := slots[j]
			if v == 0 {
				slots[j] = uint32(i) + 1
				break
			}
			if entries[v-1].Folded == e.Folded { // a duplicate of the lower ordinal v-1
				if dups[v-1] == nil {
					dups[v-1] = []uint32{v - 1}
				}
				dups[v-1] = append(dups[v-1], uint32(i))
				break
			}
		}
	}
	dupKeys := make([]uint32, 0, len(dups))
	for k := range dups {
		dupKeys = append(dupKeys, k)
	}
	slices.Sort(dupKeys)
	dupOffs := make([]uint32, 0, 2*len(dupKeys))
	var dupList []uint32
	for _, k := range dupKeys {
		dupOffs = append(dupOffs, uint32(len(dupList)), uint32(len(dups[k])))
		dupList = append(dupList, dups[k]...)
	}
	grams, prefix := postings(entries)
	access := map[int64]*roaring.Bitmap{}
	for i, e := range entries {
		for _, c := range e.Access {
			bm := access[c]
			if bm == nil {
				bm = roaring.New()
				access[c] = bm
			}
			bm.Add(uint32(i))
		}
	}

	f, err := os.CreateTemp(filepath.Dir(path), ".table-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	w := &sectionWriter{w: bufio.NewWriterSize(f, 1<<20)}
	var header [headerFields * 2]uint64
	w.write(make([]byte, len(tableMagic)+8+len(header)*8)) // placeholder
	sec := func(i int, write func()) {
		w.align()
		start := w.n
		write()
		header[2*i], header[2*i+1] = start, w.n-start
	}
	sec(secIDs, func() { w.write(asBytes(ids)) })
	sec(secOffsets, func() { w.write(asBytes(offsets)) })
	sec(secNames, func() {
		for _, e := range entries {
			w.write([]byte(e.Folded))
		}
	})
	sec(secSlots, func() { w.write(asBytes(slots)) })
	var bitmaps [][]byte
	var gramKeys, prefixKeys []uint32
	var gramOffs, prefixOffs []uint64
	var accessKeys []int64
	var accessOffs []uint64
	// Bitmaps go last; their offsets are computed before writing.
	blobStart := uint64(0)
	addBitmaps := func(m map[uint32]*roaring.Bitmap, keys *[]uint32, offs *[]uint64) {
		for k := range m {
			*keys = append(*keys, k)
		}
		slices.Sort(*keys)
		for _, k := range *keys {
			bm := m[k]
			bm.RunOptimize()
			b, _ := bm.ToBytes()
			*offs = append(*offs, blobStart, uint64(len(b)))
			blobStart += pad8(uint64(len(b)))
			bitmaps = append(bitmaps, b)
		}
	}
	addBitmaps(grams, &gramKeys, &gramOffs)
	addBitmaps(prefix, &prefixKeys, &prefixOffs)
	for c := range access {
		accessKeys = append(accessKeys, c)
	}
	slices.Sort(accessKeys)
	for _, c := range accessKeys {
		b, _ := access[c].ToBytes()
		accessOffs = append(accessOffs, blobStart, uint64(len(b)))
		blobStart += pad8(uint64(len(b)))
		bitmaps = append(bitmaps, b)
	}
	var maskBytes []byte
	if mask != nil {
		maskBytes, _ = mask.ToBytes()
	}
	sec(secGramKeys, func() { w.write(asBytes(gramKeys)) })
	sec(secGramOffs, func() { w.write(asBytes(gramOffs)) })
	sec(secPrefixKeys, func() { w.write(asBytes(prefixKeys)) })
	sec(secPrefixOffs, func() { w.write(asBytes(prefixOffs)) })
	sec(secAccessKeys, func() { w.write(asBytes(accessKeys)) })
	sec(secAccessOffs, func() { w.write(asBytes(accessOffs)) })
	sec(secMask, func() { w.write(maskBytes) })
	sec(secDupKeys, func() { w.write(asBytes(dupKeys)) })
	sec(secDupOffs, func() { w.write(asBytes(dupOffs)) })
	sec(secDupList, func() { w.write(asBytes(dupList)) })
	// The bitmaps stay the last section: their offsets count from it.
	sec(secBitmaps, func() {
		for _, b := range bitmaps {
			w.write(b)
			w.align()
		}
	})
	if w.err != nil {
		f.Close()
		return w.err
	}
	if err := w.w.(*bufio.Writer).Flush(); err != nil {
		f.Close()
		return err
	}
	// Fill in the header now that every section's place is known.
	hdr := make([]byte, 0, len(tableMagic)+8+len(header)*8)
	hdr = append(hdr, tableMagic...)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(n))
	for _, v := range header {
		hdr = binary.LittleEndian.AppendUint64(hdr, v)
	}
	if _, err := f.WriteAt(hdr, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func addTo(m map[uint32]*roaring.Bitmap, k uint32, o uint32) {
	bm := m[k]
	if bm == nil {
		bm = roaring.New()
		m[k] = bm
	}
	bm.Add(o)
}

// rankOrder sorts entries by name length in runes, then ID. Snapshots
// stream records in ascending ID, so a stable counting sort by length is
// enough; other input falls back to a comparison sort.
func rankOrder(entries []Entry) {
	lens := make([]int32, len(entries))
	ascending := true
	maxLen := int32(0)
	for i, e := range entries {
		lens[i] = int32(utf8.RuneCountInString(e.Folded))
		maxLen = max(maxLen, lens[i])
		if i > 0 && entries[i-1].ID >= e.ID {
			ascending = false
		}
	}
	if !ascending {
		idx := make([]int, len(entries))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int {
			if lens[a] != lens[b] {
				return int(lens[a] - lens[b])
			}
			return cmp.Compare(entries[a].ID, entries[b].ID)
		})
		sorted := make([]Entry, len(entries))
		for j, i := range idx {
			sorted[j] = entries[i]
		}
		copy(entries, sorted)
		return
	}
	start := make([]int, maxLen+2)
	for _, l := range lens {
		start[l+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	sorted := make([]Entry, len(entries))
	for i, e := range entries {
		sorted[start[lens[i]]] = e
		start[lens[i]]++
	}
	copy(entries, sorted)
}

// postings builds the trigram and first-trigram posting lists, splitting
// the ordinals into ranges built in parallel and joined in order.
func postings(entries []Entry) (grams, prefix map[uint32]*roaring.Bitmap) {
	parts := runtime.GOMAXPROCS(0)
	if len(entries) < 100000 {
		parts = 1
	}
	type result struct{ grams, prefix map[uint32]*roaring.Bitmap }
	results := make([]result, parts)
	var wg sync.WaitGroup
	chunk := (len(entries) + parts - 1) / parts
	for p := 0; p < parts; p++ {
		lo, hi := p*chunk, min((p+1)*chunk, len(entries))
		wg.Add(1)
		go func(p, lo, hi int) {
			defer wg.Done()
			g, f := map[uint32]*roaring.Bitmap{}, map[uint32]*roaring.Bitmap{}
			for i := lo; i < hi; i++ {
				name := entries[i].Folded
				for j := 0; j+3 <= len(name); j++ {
					addTo(g, uint32(name[j])<<16|uint32(name[j+1])<<8|uint32(name[j+2]), uint32(i))
				}
				if len(name) >= 3 {
					addTo(f, uint32(name[0])<<16|uint32(name[1])<<8|uint32(name[2]), uint32(i))
				}
			}
			results[p] = result{g, f}
		}(p, lo, hi)
	}
	wg.Wait()
	grams, prefix = results[0].grams, results[0].prefix
	for _, r := range results[1:] {
		for k, bm := range r.grams {
			if have := grams[k]; have != nil {
				have.Or(bm)
			} else {
				grams[k] = bm
			}
		}
		for k, bm := range r.prefix {
			if have := prefix[k]; have != nil {
				have.Or(bm)
			} else {
				prefix[k] = bm
			}
		}
	}
	return grams, prefix
}

type sectionWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (s *sectionWriter) write(b []byte) {
	if s.err != nil {
		return
	}
	k, err := s.w.Write(b)
	s.n += uint64(k)
	s.err = err
}

func (s *sectionWriter) align() {
	if p := pad8(s.n) - s.n; p > 0 {
		s.write(make([]byte, p))
	}
}

func pad8(n uint64) uint64 { return (n + 7) &^ 7 }

func asBytes[T int64 | uint64 | uint32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

func fromBytes[T int64 | uint64 | uint32](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

// OpenTable maps a table file read-only. The mapping is populated up
// front: a search touches names all over the table, and a first touch of
// each page would otherwise cost a page fault inside a search.
func OpenTable(path string) (*Table, error) {
	mm, err := disk.Map(path, true)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", path, err)
	}
	if hdrLen := len(tableMagic) + 8 + headerFields*2*8; len(mm) < hdrLen {
		disk.Unmap(mm)
		return nil, fmt.Errorf("table %s: too short (%d bytes)", path, len(mm))
	}
	t, err := parseTable(mm)
	if err != nil {
		disk.Unmap(mm)
		return nil, fmt.Errorf("table %s: %w", path, err)
	}
	return t, nil
}

func parseTable(mm []byte) (*Table, error) {
	magic := string(mm[:len(tableMagic)])
	if magic != tableMagic && magic != tableMagicV1 {
		return nil, errors.New("not a gds table (bad magic)")
	}
	p := len(tableMagic)
	n := binary.LittleEndian.Uint64(mm[p:])
	p += 8
	var secs [secCount][]byte
	for i := 0; i < secCount; i++ {
		off := binary.LittleEndian.Uint64(mm[p+16*i:])
		l := binary.LittleEndian.Uint64(mm[p+16*i+8:])
		if off+l > uint64(len(mm)) || off%8 != 0 {
			return nil, fmt.Errorf("section %d out of range", i)
		}
		secs[i] = mm[off : off+l]
	}
	t := &Table{
		n:          int(n),
		ids:        fromBytes[int64](secs[secIDs]),
		offsets:    fromBytes[uint32](secs[secOffsets]),
		names:      secs[secNames],
		slots:      fromBytes[uint32](secs[secSlots]),
		accessKeys: fromBytes[int64](secs[secAccessKeys]),
		accessOffs: fromBytes[uint64](secs[secAccessOffs]),
		mm:         mm,
	}
	if len(t.ids) != t.n || len(t.offsets) != t.n+1 || int(t.offsets[t.n]) != len(t.names) {
		return nil, errors.New("sections disagree on the number of names")
	}
	if magic == tableMagic {
		t.grouped = true
		t.dupKeys = fromBytes[uint32](secs[secDupKeys])
		t.dupOffs = fromBytes[uint32](secs[secDupOffs])
		t.dupList = fromBytes[uint32](secs[secDupList])
		if len(t.dupOffs) != 2*len(t.dupKeys) {
			return nil, errors.New("duplicate-name index is inconsistent")
		}
		for i := range t.dupKeys {
			if uint64(t.dupOffs[2*i])+uint64(t.dupOffs[2*i+1]) > uint64(len(t.dupList)) || t.dupKeys[i] >= uint32(t.n) {
				return nil, fmt.Errorf("duplicate-name list %d out of range", i)
			}
		}
		for _, o := range t.dupList {
			if o >= uint32(t.n) {
				return nil, errors.New("duplicate-name list names a missing ordinal")
			}
		}
	}
	blob := secs[secBitmaps]
	blobOff := uint64(len(mm) - len(blob))
	if len(blob) == 0 {
		blobOff = uint64(len(mm))
	}
	// Access offsets are stored relative to the blob; keep an absolute copy.
	abs := make([]uint64, len(t.accessOffs))
	for i := 0; i < len(abs); i += 2 {
		abs[i], abs[i+1] = t.accessOffs[i]+blobOff, t.accessOffs[i+1]
	}
	t.accessOffs = abs
	var err error
	if t.grams, err = newPostingLists(fromBytes[uint32](secs[secGramKeys]), fromBytes[uint64](secs[secGramOffs]), blob); err != nil {
		return nil, err
	}
	if t.prefix, err = newPostingLists(fromBytes[uint32](secs[secPrefixKeys]), fromBytes[uint64](secs[secPrefixOffs]), blob); err != nil {
		return nil, err
	}
	if m := secs[secMask]; len(m) > 0 {
		t.mask = roaring.New()
		if _, err := t.mask.FromBuffer(m); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Close unmaps the table; no method may be called afterwards.
func (t *Table) Close() error {
	if t.mm == nil {
		return nil
	}
	err := disk.Unmap(t.mm)
	t.mm = nil
	return err
}

// GramBytes returns the posting list of trigram g as stored: a roaring
// bitmap in the portable serialization format
// (https://github.com/RoaringBitmap/RoaringFormatSpec), aliasing the mapped
// file, or nil. Callers that read containers in place use it instead of
// Gram.
func (t *Table) GramBytes(g uint32) []byte { return t.grams.bytes(g) }

// PrefixBytes is Prefix as stored (see GramBytes), or nil.
func (t *Table) PrefixBytes(g uint32) []byte { return t.prefix.bytes(g) }

// AccessBytes is Access as stored (see GramBytes), or nil.
func (t *Table) AccessBytes(character int64) []byte {
	i, ok := slices.BinarySearch(t.accessKeys, character)
	if !ok {
		return nil
	}
	off, n := t.accessOffs[2*i], t.accessOffs[2*i+1]
	return t.mm[off : off+n : off+n]
}

func (p *postingLists) bytes(g uint32) []byte {
	i, ok := slices.BinarySearch(p.keys, g)
	if !ok {
		return nil
	}
	off, n := p.offs[2*i], p.offs[2*i+1]
	return p.blob[off : off+n : off+n]
}

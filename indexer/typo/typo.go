// Package typo owns the typo-index file format end to end: writing the
// index of a name table's words (Write), opening it (Open, Load), and the
// lookups that answer a suggestion (Index.Search, Index.Tickers).
//
// A typo index sits beside a name table (base.typ beside base.tbl) and
// speaks of the same ordinals. It holds:
//   - the distinct words of the table's folded names (a word is a run of
//     letters and digits), sorted, each with the ordinals of the names
//     that contain it (ascending: rank order);
//   - a deletion neighbourhood (SymSpell): every spelling of each word of
//     4 or more runes with up to DictDeletes(runes) runes deleted, hashed,
//     with the word it came from, grouped in buckets by the hash's top
//     bits. Two words are within k edits (insert, delete, substitute,
//     transpose) only if deleting at most k runes from each gives one
//     spelling, so a query word's own deletions find every word within
//     its budget; each candidate is then checked by an edit distance;
//   - the tickers of the names (corporations and alliances), folded and
//     sorted, each with its ordinal.
//
// The file: the magic (8 bytes), the number of ordinals (uint64), then
// secCount (offset, length) pairs of uint64, little-endian; the sections
// follow, each 8-byte aligned, and are read in place.
//
// Versions: GDSTYP01 (2026-11-27), the first.
package typo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"gds/snapshots/disk"
)

const magic = "GDSTYP01"

// Version numbers the format; a generation records it (indexer.Meta).
const Version = 1

// Sections in the header.
const (
	secWordOffs = iota // uint32 per word and one more: where each word starts in secWords
	secWords           // the words' bytes
	secPostOffs        // uint32 per word and one more: where its ordinals start in secPosts
	secPosts           // uint32 ordinals
	secBuckets         // uint32 per bucket and one more: where its entries start in secDeletes
	secDeletes         // uint64 entries: hash << 32 | word, sorted
	secTickOffs        // uint32 per ticker and one more: where it starts in secTicks
	secTicks           // the tickers' bytes
	secTickOrds        // uint32 per ticker: its ordinal
	secCount
)

const headerLen = len(magic) + 8 + secCount*16

// Index is an open typo index.
type Index struct {
	n        int
	wordOffs []uint32
	words    []byte
	postOffs []uint32
	posts    []uint32
	buckets  []uint32
	bucketSh uint // hash >> bucketSh is the bucket
	deletes  []uint64
	tickOffs []uint32
	ticks    []byte
	tickOrds []uint32
	loaded   *disk.Loaded
	// mapped is the whole mapping of the index's file when it was opened
	// lazily (Open), whose pages a read that goes over them releases
	// behind it (releaseBehind); nil when it is held in memory.
	mapped []byte
	// same is the table when posts keep only the first ordinal of each
	// name (KeepFirsts).
	same Namesakes
	// freeFirsts frees the memory of KeepFirsts' lists.
	freeFirsts func() error
}

// Open maps the typo index at path, written for a table of n ordinals,
// without populating the mapping (disk.LoadLazily): only suggestions read
// it, each a few of its pages. Parse's check reads it whole; its pages
// then leave the process's resident set (disk.Release), kept by the page
// cache for as long as the kernel likes.
func Open(path string, n int) (*Index, error) {
	x, err := open(path, n, disk.LoadLazily, true)
	if err != nil {
		return nil, err
	}
	disk.Release(x.loaded.Bytes)
	return x, nil
}

// Load reads the typo index at path into memory (as nametable.Load does
// for tables).
func Load(path string, n int) (*Index, error) { return open(path, n, disk.Load, false) }

// open loads the index at path; lazy says load maps it, so that the
// check releases the pages it has read as it goes (releaseBehind).
func open(path string, n int, load func(string) (*disk.Loaded, error), lazy bool) (*Index, error) {
	l, err := load(path)
	if err != nil {
		return nil, err
	}
	x, err := parse(l.Bytes, n, lazy)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("typo index %s: %w", path, err)
	}
	x.loaded = l
	return x, nil
}

// ErrCorrupt is the error of a file that is not a typo index of the table
// it should describe.
var ErrCorrupt = errors.New("not a valid typo index")

// Parse reads an index from b (which it aliases), checking every offset so
// that no lookup can read outside it; n is its table's number of ordinals.
func Parse(b []byte, n int) (*Index, error) { return parse(b, n, false) }

// parse is Parse; lazy says b is a mapping whose pages the check may
// release as it reads them.
func parse(b []byte, n int, lazy bool) (*Index, error) {
	if len(b) < headerLen || string(b[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	if got := binary.LittleEndian.Uint64(b[8:]); got != uint64(n) {
		return nil, fmt.Errorf("%w: written for %d names, the table has %d", ErrCorrupt, got, n)
	}
	var secs [secCount][]byte
	for i := range secs {
		off := binary.LittleEndian.Uint64(b[16+16*i:])
		ln := binary.LittleEndian.Uint64(b[24+16*i:])
		if off%8 != 0 || off > uint64(len(b)) || ln > uint64(len(b))-off {
			return nil, fmt.Errorf("%w: section %d out of bounds", ErrCorrupt, i)
		}
		secs[i] = b[off : off+ln]
	}
	x := &Index{n: n, words: secs[secWords], ticks: secs[secTicks]}
	if lazy {
		x.mapped = b
	}
	x.wordOffs = fromBytes[uint32](secs[secWordOffs])
	x.postOffs = fromBytes[uint32](secs[secPostOffs])
	x.posts = fromBytes[uint32](secs[secPosts])
	x.buckets = fromBytes[uint32](secs[secBuckets])
	x.deletes = fromBytes[uint64](secs[secDeletes])
	x.tickOffs = fromBytes[uint32](secs[secTickOffs])
	x.tickOrds = fromBytes[uint32](secs[secTickOrds])
	if err := x.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return x, nil
}

// check validates the index's structure once, so lookups need not.
func (x *Index) check() error {
	w := len(x.wordOffs) - 1
	if w < 0 || len(x.postOffs) != w+1 {
		return errors.New("word lists disagree")
	}
	if err := ascending(x.wordOffs, len(x.words)); err != nil {
		return fmt.Errorf("words: %v", err)
	}
	if err := ascending(x.postOffs, len(x.posts)); err != nil {
		return fmt.Errorf("postings: %v", err)
	}
	read := releaseBehind(x, x.posts)
	for i := range w {
		list := x.posts[x.postOffs[i]:x.postOffs[i+1]]
		for j, o := range list {
			if int(o) >= x.n || (j > 0 && o <= list[j-1]) {
				return fmt.Errorf("postings of word %d are not ascending ordinals", i)
			}
		}
		read(int(x.postOffs[i+1]))
	}
	nb := len(x.buckets) - 1
	if nb < 1 || nb&(nb-1) != 0 {
		return errors.New("bucket count is not a power of two")
	}
	x.bucketSh = uint(32 - bitsOf(nb))
	if err := ascending(x.buckets, len(x.deletes)); err != nil {
		return fmt.Errorf("buckets: %v", err)
	}
	read = releaseBehind(x, x.deletes)
	for b := range nb {
		for _, e := range x.deletes[x.buckets[b]:x.buckets[b+1]] {
			if int(uint32(e)) >= w || int(uint32(e>>32)>>x.bucketSh) != b {
				return errors.New("a deletion entry is out of place")
			}
		}
		read(int(x.buckets[b+1]))
	}
	t := len(x.tickOffs) - 1
	if t < 0 || len(x.tickOrds) != t {
		return errors.New("ticker lists disagree")
	}
	if err := ascending(x.tickOffs, len(x.ticks)); err != nil {
		return fmt.Errorf("tickers: %v", err)
	}
	for _, o := range x.tickOrds {
		if int(o) >= x.n {
			return errors.New("a ticker's ordinal is out of range")
		}
	}
	return nil
}

// ascending checks offsets that start at 0, never decrease and end at n.
func ascending(offs []uint32, n int) error {
	if offs[0] != 0 || int(offs[len(offs)-1]) != n {
		return errors.New("offsets do not span their data")
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return errors.New("offsets decrease")
		}
	}
	return nil
}

func bitsOf(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}

// Close lets go of the file; no method may be called afterwards.
func (x *Index) Close() error {
	if x.freeFirsts != nil {
		free := x.freeFirsts
		x.freeFirsts, x.postOffs, x.posts = nil, nil, nil
		_ = free()
	}
	if x.loaded == nil {
		return nil
	}
	l := x.loaded
	x.loaded, x.mapped = nil, nil
	return l.Close()
}

// Len is the number of ordinals of the table the index describes.
func (x *Index) Len() int { return x.n }

// Words is the number of distinct words.
func (x *Index) Words() int { return len(x.wordOffs) - 1 }

func (x *Index) word(i uint32) []byte { return x.words[x.wordOffs[i]:x.wordOffs[i+1]] }

func (x *Index) postings(i uint32) []uint32 { return x.posts[x.postOffs[i]:x.postOffs[i+1]] }

func fromBytes[T uint32 | uint64](b []byte) []T {
	var z T
	if len(b) == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

func asBytes[T uint32 | uint64](s []T) []byte {
	var z T
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

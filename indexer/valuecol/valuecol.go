// Package valuecol owns the value-column file format end to end: writing
// it at index time and reading it, memory-mapped, at query time.
//
// A value-column file sits beside a name table and holds, for each numeric
// or date field of the table's documents (and the ID keywords of the
// categories the tables answer alone), the values sorted with the table
// ordinal of each document that has one. A range of values is then a
// contiguous slice found by two binary searches, and its ordinals a bitmap
// built without visiting any document that does not match: what answers a
// date range over millions of documents in milliseconds, where an inverted
// index must count every match.
//
// Values are int64s whose order is the order of the values they stand for
// (the caller's encoding: bleve's sortable bits of a float64, nanoseconds
// of an instant, an ID itself), so one comparison serves every type.
package valuecol

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/snapshots/disk"
)

// The file: the magic (8 bytes), the table's number of ordinals (uint64),
// the number of columns (uint64), then per column four uint64s (the name's
// offset and length, the number of values, the offset of the values);
// then the names and, 8-aligned, each column's values (int64) followed by
// its ordinals (uint32). Integers are little-endian, as the machine holds
// them (the arrays are read in place).
const magic = "GDSVCOL1"

// FormatVersions are the value-column format Write writes and those Open
// reads, for `gds version`.
func FormatVersions() (writes string, reads []string) { return magic, []string{magic} }

const dirEntry = 4 * 8

// Column is one field's values, each with the ordinal that holds it, in
// any order for Write (which sorts them in place).
type Column struct {
	Name    string
	Entries []Entry
}

// Entry is one ordinal's value.
type Entry struct {
	Value int64
	Ord   uint32
}

// Write writes the columns of a table of n ordinals to path atomically.
// Each column's values are sorted, with their ordinals, in place; an
// ordinal appears at most once per column.
func Write(path string, n int, cols []Column) error {
	specs := make([]Spec, len(cols))
	for k, c := range cols {
		specs[k] = Spec{Name: c.Name, Len: len(c.Entries)}
	}
	return WriteEach(path, n, specs, func(k int) ([]Entry, error) { return cols[k].Entries, nil })
}

// Spec names a column WriteEach writes and says how many values it holds.
type Spec struct {
	Name string
	Len  int
}

// WriteEach writes the columns specs name, of a table of n ordinals, to
// path atomically, as Write does, asking load for each column's values in
// turn (in any order, specs[k].Len of them; sorted in place) and holding
// none of them past its own: a caller that keeps its columns elsewhere
// (on disk) holds one column at a time.
func WriteEach(path string, n int, specs []Spec, load func(k int) ([]Entry, error)) error {
	err := disk.ReplaceFile(path, disk.PrivateFile, func(f *os.File) error {
		// Columns are mapped and read at random, as tables are: written in
		// huge-page-sized pieces (disk.HugeChunk).
		w := disk.NewChunkWriter(f, disk.HugeChunk)
		hdr := make([]byte, 0, 24+dirEntry*len(specs))
		hdr = append(hdr, magic...)
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(n))
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(specs)))
		off := uint64(cap(hdr))
		var names []byte
		for _, c := range specs {
			names = append(names, c.Name...)
		}
		nameOff := off
		off = disk.Pad8(off + uint64(len(names)))
		for _, c := range specs {
			hdr = binary.LittleEndian.AppendUint64(hdr, nameOff)
			hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(c.Name)))
			hdr = binary.LittleEndian.AppendUint64(hdr, uint64(c.Len))
			hdr = binary.LittleEndian.AppendUint64(hdr, off)
			nameOff += uint64(len(c.Name))
			off = disk.Pad8(off + uint64(c.Len)*12)
		}
		at := uint64(len(hdr) + len(names))
		w.Write(hdr)
		w.Write(names)
		for k, c := range specs {
			es, err := load(k)
			if err != nil {
				return err
			}
			if len(es) != c.Len {
				return fmt.Errorf("column %s: %d values, %d announced", c.Name, len(es), c.Len)
			}
			sortEntries(es)
			w.Write(make([]byte, disk.Pad8(at)-at))
			writeColumn(w, es)
			at = disk.Pad8(at) + uint64(len(es))*12
		}
		return w.Flush()
	})
	if err != nil {
		return fmt.Errorf("value columns %s: %w", path, err)
	}
	return nil
}

// writeColumn writes a column's values, then its ordinals.
func writeColumn(w *disk.ChunkWriter, es []Entry) {
	buf := make([]byte, 0, 64<<10)
	flush := func(limit int) {
		if len(buf) > limit {
			w.Write(buf)
			buf = buf[:0]
		}
	}
	for _, e := range es {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.Value))
		flush(cap(buf) - 8)
	}
	flush(0)
	for _, e := range es {
		buf = binary.LittleEndian.AppendUint32(buf, e.Ord)
		flush(cap(buf) - 4)
	}
	flush(0)
}

// sortEntries sorts entries by value (equal values in no set order of
// ordinals): a least-significant-digit radix sort, 16 bits a pass,
// skipping the digits every value shares, since a comparison sort of
// millions of entries takes many seconds on a busy machine.
func sortEntries(es []Entry) {
	if len(es) < 4096 {
		slices.SortFunc(es, func(a, b Entry) int { return cmp.Compare(a.Value, b.Value) })
		return
	}
	key := func(e Entry, shift uint) int { return int((uint64(e.Value)^1<<63)>>shift) & 0xffff }
	src, dst := es, make([]Entry, len(es))
	count := make([]int, 1<<16)
	for shift := uint(0); shift < 64; shift += 16 {
		clear(count)
		for _, e := range src {
			count[key(e, shift)]++
		}
		if count[key(src[0], shift)] == len(src) {
			continue // every value has this digit
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, e := range src {
			k := key(e, shift)
			dst[count[k]] = e
			count[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &es[0] {
		copy(es, src)
	}
}

// File is an open value-column file.
type File struct {
	n    int
	cols map[string]column
	mm   []byte
	// release lets go of the file's place among the checked ones (nil
	// where the system tells no FileID).
	release func() error
}

// checked holds, for each value-column file checked whole by Open, a
// place while a File holds the file mapped.
var checked disk.Shared[checkedKey, struct{}]

// checkedKey is a file and the number of ordinals it was checked for.
type checkedKey struct {
	id disk.FileID
	n  int
}

type column struct {
	values []int64
	ords   []uint32
}

// Open maps the value columns of a table of n ordinals read-only, and
// checks them: every section in the file, values in order, each ordinal
// below n and at most once per column. The check lets go of the pages it
// read as it goes, and they are left to the page cache until a range
// reads them (10M values are 120 MB). A file that a File still open in
// this process was checked from (the same FileID: a generation and the
// next share their base table's columns by a hard link) has its sections
// checked again, not its values: at 50M names that is most of the CPU of
// opening the generation an incremental build makes.
func Open(path string, n int) (*File, error) {
	mm, id, hasID, err := disk.MapID(path, false)
	if err != nil {
		return nil, fmt.Errorf("value columns %s: %w", path, err)
	}
	key := checkedKey{id, n}
	var release func() error
	if hasID {
		_, release, _ = checked.Take(key)
	}
	f, err := parse(mm, n, release == nil, func(from, to int) { disk.ReleasePages(mm, from, to) })
	if err != nil {
		if release != nil {
			release()
		}
		disk.Unmap(mm)
		return nil, fmt.Errorf("value columns %s: %w", path, err)
	}
	if hasID && release == nil {
		_, release = checked.Put(key, struct{}{}, nil)
	}
	f.release = release
	disk.Release(mm) // checked whole; ranges are rare enough not to hold it resident
	return f, nil
}

// checkStretch is how many entries of a column parse checks before it
// tells read which bytes it is done with: 48 MiB of them. Open lets go of
// their pages (disk.ReleasePages), where a whole file (1.44 GB at 50M
// characters) would otherwise be resident at once, beside the name tables
// a server holds.
const checkStretch = 1 << 22

// parse reads and checks a value-column file; read(from, to) says that
// the check is done with mm[from:to]. deep checks every value and ordinal
// too, else only that the sections lie in the file.
func parse(mm []byte, n int, deep bool, read func(from, to int)) (*File, error) {
	if len(mm) < 24 || string(mm[:8]) != magic {
		return nil, errors.New("not a gds value-column file (bad magic)")
	}
	if got := binary.LittleEndian.Uint64(mm[8:]); got != uint64(n) {
		return nil, fmt.Errorf("written for %d ordinals, the table has %d", got, n)
	}
	k := binary.LittleEndian.Uint64(mm[16:])
	size := uint64(len(mm))
	if k > (size-24)/dirEntry {
		return nil, fmt.Errorf("%d columns do not fit in %d bytes", k, size)
	}
	f := &File{n: n, cols: make(map[string]column, k), mm: mm}
	var seen []uint64
	if deep {
		seen = make([]uint64, (n+63)/64)
	}
	for i := range k {
		d := mm[24+i*dirEntry:]
		nameOff, nameLen := binary.LittleEndian.Uint64(d), binary.LittleEndian.Uint64(d[8:])
		count, off := binary.LittleEndian.Uint64(d[16:]), binary.LittleEndian.Uint64(d[24:])
		if nameOff > size || nameLen > size-nameOff || off%8 != 0 || off > size || count > (size-off)/12 || count > uint64(n) {
			return nil, fmt.Errorf("column %d out of range", i)
		}
		name := string(mm[nameOff : nameOff+nameLen])
		if _, dup := f.cols[name]; dup {
			return nil, fmt.Errorf("column %q twice", name)
		}
		c := column{values: disk.FromBytes[int64](mm[off : off+8*count]), ords: disk.FromBytes[uint32](mm[off+8*count : off+12*count])}
		clear(seen)
		for lo := 0; deep && lo < len(c.ords); lo += checkStretch {
			hi := min(lo+checkStretch, len(c.ords))
			for j := lo; j < hi; j++ {
				if j > 0 && c.values[j] < c.values[j-1] {
					return nil, fmt.Errorf("column %q: values out of order", name)
				}
				o := c.ords[j]
				if o >= uint32(n) || seen[o/64]&(1<<(o%64)) != 0 {
					return nil, fmt.Errorf("column %q: ordinal %d out of range or repeated", name, o)
				}
				seen[o/64] |= 1 << (o % 64)
			}
			read(int(off)+8*lo, int(off)+8*hi)
			read(int(off+8*count)+4*lo, int(off+8*count)+4*hi)
		}
		f.cols[name] = c
	}
	return f, nil
}

// Len is the number of ordinals of the table the columns describe.
func (f *File) Len() int { return f.n }

// Has reports whether the file holds a column for name (every field of the
// table's documents with a column has one, empty or not).
func (f *File) Has(name string) bool { _, ok := f.cols[name]; return ok }

// Count is the number of ordinals with a value of name.
func (f *File) Count(name string) int { return len(f.cols[name].ords) }

// Range returns the ordinals whose value of name is from lo to hi, both
// included, in value order. It aliases the mapped file.
func (f *File) Range(name string, lo, hi int64) []uint32 {
	c := f.cols[name]
	if lo > hi {
		return nil
	}
	i := sort.Search(len(c.values), func(i int) bool { return c.values[i] >= lo })
	j := i + sort.Search(len(c.values)-i, func(k int) bool { return c.values[i+k] > hi })
	return c.ords[i:j]
}

// Bitmap returns the ordinals whose value of name is from lo to hi, both
// included, as a bitmap.
func (f *File) Bitmap(name string, lo, hi int64) *roaring.Bitmap {
	ords := f.Range(name, lo, hi)
	if len(ords) < f.n/32 {
		bm := roaring.New()
		bm.AddMany(ords)
		return bm
	}
	// Many: set bits in a dense bitset (a pass over the slice) and let
	// roaring pick each container's kind once.
	words := make([]uint64, (f.n+63)/64)
	for _, o := range ords {
		words[o/64] |= 1 << (o % 64)
	}
	return roaring.FromDense(words, false)
}

// Each calls fn with every ordinal that has a value of name, in value
// order.
func (f *File) Each(name string, fn func(o uint32, v int64)) {
	c := f.cols[name]
	for i, o := range c.ords {
		fn(o, c.values[i])
	}
}

// Values returns name's values in order and the ordinal of each. Both
// alias the mapped file: the caller must not write them.
func (f *File) Values(name string) ([]int64, []uint32) {
	c := f.cols[name]
	return c.values, c.ords
}

// Close unmaps the file; no method may be called afterwards.
func (f *File) Close() error {
	if f == nil || f.mm == nil {
		return nil
	}
	if f.release != nil { // before the mapping goes, which holds the file's inode
		f.release()
		f.release = nil
	}
	err := disk.Unmap(f.mm)
	f.mm, f.cols = nil, nil
	return err
}

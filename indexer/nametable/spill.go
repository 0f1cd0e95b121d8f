package nametable

import (
	"bufio"
	"context"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/pace"
	"gds/snapshots/disk"
)

// A table's posting lists, built for every name at once, would cost more
// than its names, and their serialized bytes as much again. Write builds
// them a range of keys at a time instead (one pass over the names for
// each range, its lists about postingsPerPass postings, or more where
// that would take more than passesAtMost passes), writes each
// range's lists to a temporary file beside the table as soon as they are
// built, and copies that file into the table's last section: a pass's
// lists are all it holds of them. The bytes are those of lists built all
// at once, as each list is built from the same names in the same order.

// postingsPerPass is what one pass over the names builds at least (a
// key whose postings pass it gets a pass of its own): about 32 MiB of
// lists at two bytes a posting, and as much again while the parallel
// parts' lists are joined. Tests lower it.
var postingsPerPass uint64 = 1 << 24

// passesAtMost bounds the passes over the names a kind of list takes
// (each pass reads every name): past postingsPerPass × passesAtMost
// postings a pass builds more, so that the passes' work grows with the
// names, not with their square. At 50M names a pass of trigrams holds
// about 46M postings.
const passesAtMost = 12

// keysOf appends the keys a folded name is listed under to buf.
type keysOf func(name string, buf []uint32) []uint32

// A kind of posting list: its keys and how wide they are.
type listKind struct {
	keys keysOf
	bits uint // every key is below 1<<bits (at least 16)
}

var (
	gramsOf = listKind{bits: 24, keys: func(name string, buf []uint32) []uint32 {
		for j := 0; j+3 <= len(name); j++ {
			buf = append(buf, gram3(name[j:]))
		}
		return buf
	}}
	prefixOf = listKind{bits: 24, keys: func(name string, buf []uint32) []uint32 {
		if len(name) >= 3 {
			buf = append(buf, gram3(name))
		}
		return buf
	}}
	// quadsOf lists a name under its four-byte grams (GDSTBL05).
	quadsOf = listKind{bits: 32, keys: func(name string, buf []uint32) []uint32 {
		for j := 0; j+4 <= len(name); j++ {
			buf = append(buf, gram4(name[j:]))
		}
		return buf
	}}
	// prefix4Of lists a name under its first four bytes (GDSTBL05).
	prefix4Of = listKind{bits: 32, keys: func(name string, buf []uint32) []uint32 {
		if len(name) >= 4 {
			buf = append(buf, gram4(name))
		}
		return buf
	}}
)

// lists are the posting lists of one kind a blob holds: their keys in
// ascending order, each list's (offset, length) pair in the blob and its
// number of ordinals.
type lists struct {
	keys  []uint32
	offs  []uint64
	cards []uint32
}

// sections are the keys' and pairs' sections of the table.
func (l lists) sections() (keys, offs section) {
	return raw(disk.AsBytes(l.keys)), raw(disk.AsBytes(l.offs))
}

// card is the number of ordinals in key k's list (0 when it has none).
func (l lists) card(k uint32) uint64 {
	if i, ok := slices.BinarySearch(l.keys, k); ok {
		return uint64(l.cards[i])
	}
	return 0
}

// quadShare: a four-byte gram's list is kept when it holds at most
// 1/quadShare of the ordinals of its shorter trigram's list. Past that it
// saves a walk less than it costs in memory (a server holds its tables in
// memory), and its two trigrams' lists stand in for it. At 10M names
// (2026-11-29, the bench's contains texts, BenchmarkWalkTable): every
// four-byte list kept adds 239 MB to the character table and takes the
// walk from about 80 to 46 µs of CPU a text; a share of 2 adds 101 MB
// (50-54 µs), 4 adds 49 MB (58-61 µs), within the serving memory target.
const quadShare = 4

// implies reports whether the trigram lists l stand in for four-byte gram
// k's list of card ordinals (see quadShare): it is then left out, written
// empty.
func (l lists) implies(k uint32, card uint64) bool {
	return card*quadShare > min(l.card(k>>8), l.card(k&0xffffff))
}

// blobFile collects serialized bitmaps, each padded to 8 bytes, in a
// temporary file.
type blobFile struct {
	f    *os.File
	w    *bufio.Writer
	size uint64
}

// newBlobFile creates the temporary file in dir, unlinked at once:
// nothing is left behind, however the build ends.
func newBlobFile(dir string) (*blobFile, error) {
	f, err := os.CreateTemp(dir, ".postings-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return &blobFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// close closes the file, which goes with it.
func (b *blobFile) close() { _ = b.f.Close() }

// add writes bm as ToBytes serializes it (WriteTo, without the copy).
func (b *blobFile) add(bm *roaring.Bitmap) (off, n uint64, err error) {
	k, err := bm.WriteTo(b.w)
	if err != nil {
		return 0, 0, err
	}
	off, n = b.size, uint64(k)
	var zeros [8]byte
	pad := disk.Pad8(n) - n
	if _, err := b.w.Write(zeros[:pad]); err != nil {
		return 0, 0, err
	}
	b.size += n + pad
	return off, n, nil
}

// addLists adds the posting lists of the keys the names of entries (in
// ordinal order) are listed under, run-optimized, in ascending key order,
// a range of keys at a time. A list omit reports (by its key and number
// of ordinals) is left out: written empty.
func (b *blobFile) addLists(ctx context.Context, entries []Entry, kind listKind, omit func(k uint32, card uint64) bool) (l lists, err error) {
	// Postings per key's top 16 bits, to cut the keys into ranges.
	shift := kind.bits - 16
	counts := make([]uint64, 1<<16)
	var buf []uint32
	var total uint64
	for _, e := range entries {
		buf = kind.keys(e.Folded, buf[:0])
		for _, k := range buf {
			counts[k>>shift]++
		}
		total += uint64(len(buf))
	}
	perPass := max(postingsPerPass, total/passesAtMost)
	for lo := 0; lo < len(counts); {
		hi, sum := lo, uint64(0)
		for hi < len(counts) && (hi == lo || sum+counts[hi] <= perPass) {
			sum += counts[hi]
			hi++
		}
		if sum > 0 {
			m := buildLists(ctx, entries, kind.keys, uint64(lo)<<shift, uint64(hi)<<shift)
			start := len(l.keys)
			for k := range m {
				l.keys = append(l.keys, k)
			}
			slices.Sort(l.keys[start:])
			for _, k := range l.keys[start:] {
				bm := m[k]
				card := bm.GetCardinality()
				l.cards = append(l.cards, uint32(card))
				delete(m, k)
				if omit != nil && omit(k, card) {
					l.offs = append(l.offs, b.size, 0)
					continue
				}
				bm.RunOptimize()
				off, n, err := b.add(bm)
				if err != nil {
					return lists{}, err
				}
				l.offs = append(l.offs, off, n)
			}
		}
		lo = hi
	}
	return l, nil
}

// addAccess adds access lists in ascending character order and returns
// the characters and their (offset, length) pairs.
func (b *blobFile) addAccess(m map[int64]*roaring.Bitmap) (keys []int64, offs []uint64, err error) {
	for c := range m {
		keys = append(keys, c)
	}
	slices.Sort(keys)
	for _, c := range keys {
		off, n, err := b.add(m[c])
		if err != nil {
			return nil, nil, err
		}
		offs = append(offs, off, n)
	}
	return keys, offs, nil
}

// copyTo writes the file's bitmaps to w.
func (b *blobFile) copyTo(w *sectionWriter) {
	if w.err != nil {
		return
	}
	if w.err = b.w.Flush(); w.err != nil {
		return
	}
	if _, w.err = b.f.Seek(0, io.SeekStart); w.err != nil {
		return
	}
	buf := make([]byte, 1<<20)
	for {
		k, err := b.f.Read(buf)
		w.write(buf[:k])
		if err == io.EOF {
			return
		}
		if err != nil && w.err == nil {
			w.err = err
		}
		if w.err != nil {
			return
		}
	}
}

// buildLists builds the posting lists of the keys in [lo, hi) the names
// of entries are listed under, splitting the ordinals into ranges built
// in parallel and joined in order.
func buildLists(ctx context.Context, entries []Entry, keys keysOf, lo, hi uint64) map[uint32]*roaring.Bitmap {
	parts := runtime.GOMAXPROCS(0)
	if len(entries) < 100000 {
		parts = 1
	}
	results := make([]map[uint32]*roaring.Bitmap, parts)
	var wg sync.WaitGroup
	chunk := (len(entries) + parts - 1) / parts
	for p := 0; p < parts; p++ {
		first, end := p*chunk, min((p+1)*chunk, len(entries))
		wg.Add(1)
		go func(p, first, end int) {
			defer wg.Done()
			m := map[uint32]*roaring.Bitmap{}
			tick := pace.Every(ctx, namesPerPace)
			var buf []uint32
			for i := first; i < end; i++ {
				tick()
				buf = keys(entries[i].Folded, buf[:0])
				for _, k := range buf {
					if uint64(k) >= lo && uint64(k) < hi {
						addTo(m, k, uint32(i))
					}
				}
			}
			results[p] = m
		}(p, first, end)
	}
	wg.Wait()
	lists := results[0]
	for _, r := range results[1:] {
		for k, bm := range r {
			if have := lists[k]; have != nil {
				have.Or(bm)
			} else {
				lists[k] = bm
			}
		}
	}
	return lists
}

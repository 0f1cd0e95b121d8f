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
// each range, its lists about postingsPerPass postings), writes each
// range's lists to a temporary file beside the table as soon as they are
// built, and copies that file into the table's last section: a pass's
// lists are all it holds of them. The bytes are those of lists built all
// at once, as each list is built from the same names in the same order.

// postingsPerPass bounds the postings one pass over the names builds (a
// key whose postings pass it gets a pass of its own): about 32 MiB of
// lists at two bytes a posting, and as much again while the parallel
// parts' lists are joined. Tests lower it.
var postingsPerPass uint64 = 1 << 24

// keysOf appends the keys a folded name is listed under to buf.
type keysOf func(name string, buf []uint32) []uint32

// gramsOf appends the trigrams of name.
func gramsOf(name string, buf []uint32) []uint32 {
	for j := 0; j+3 <= len(name); j++ {
		buf = append(buf, uint32(name[j])<<16|uint32(name[j+1])<<8|uint32(name[j+2]))
	}
	return buf
}

// prefixOf appends the first trigram of name, if it has one.
func prefixOf(name string, buf []uint32) []uint32 {
	if len(name) >= 3 {
		buf = append(buf, uint32(name[0])<<16|uint32(name[1])<<8|uint32(name[2]))
	}
	return buf
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
// a range of keys at a time, and returns the keys and their (offset,
// length) pairs. Keys are trigrams: below 1<<24.
func (b *blobFile) addLists(ctx context.Context, entries []Entry, keys keysOf) (ks []uint32, offs []uint64, err error) {
	// Postings per key's top 16 bits, to cut the keys into ranges.
	counts := make([]uint64, 1<<16)
	var buf []uint32
	for _, e := range entries {
		buf = keys(e.Folded, buf[:0])
		for _, k := range buf {
			counts[k>>8]++
		}
	}
	for lo := 0; lo < len(counts); {
		hi, sum := lo, uint64(0)
		for hi < len(counts) && (hi == lo || sum+counts[hi] <= postingsPerPass) {
			sum += counts[hi]
			hi++
		}
		if sum > 0 {
			m := buildLists(ctx, entries, keys, uint32(lo)<<8, uint32(hi)<<8)
			start := len(ks)
			for k := range m {
				ks = append(ks, k)
			}
			slices.Sort(ks[start:])
			for _, k := range ks[start:] {
				bm := m[k]
				bm.RunOptimize()
				off, n, err := b.add(bm)
				if err != nil {
					return nil, nil, err
				}
				offs = append(offs, off, n)
				delete(m, k)
			}
		}
		lo = hi
	}
	return ks, offs, nil
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
func buildLists(ctx context.Context, entries []Entry, keys keysOf, lo, hi uint32) map[uint32]*roaring.Bitmap {
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
					if k >= lo && k < hi {
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

package nametable

import (
	"bufio"
	"context"
	"io"
	"os"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/pace"
	"gds/snapshots/disk"
)

// A table's posting lists, built for every name at once, would cost more
// than its names, and their serialized bytes as much again. Write builds
// each kind's lists from sorted runs of postings instead (runs.go) and
// writes each list to a temporary file beside the table as soon as it is
// built; that file is copied into the table's last section.

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
	dir  string       // where the runs' files go
	bufs []runBuffers // the runs' buffers, from one kind of list to the next
}

// newBlobFile creates the temporary file in dir, unlinked at once:
// nothing is left behind, however the build ends.
func newBlobFile(dir string) (*blobFile, error) {
	f, err := disk.UnlinkedTemp(dir, ".postings-*")
	if err != nil {
		return nil, err
	}
	return &blobFile{f: f, w: bufio.NewWriterSize(f, 1<<20), dir: dir}, nil
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
// ordinal order) are listed under, run-optimized, in ascending key order.
// A list omit reports (by its key and number of ordinals) is left out:
// written empty.
func (b *blobFile) addLists(ctx context.Context, entries []Entry, kind listKind, omit func(k uint32, card uint64) bool) (l lists, err error) {
	if len(b.bufs) == 0 {
		b.bufs = make([]runBuffers, scanParts(len(entries)))
	}
	files, err := spillAll(ctx, b.dir, entries, kind, b.bufs)
	if err != nil {
		return lists{}, err
	}
	defer closeRuns(files)
	tick := pace.Every(ctx, namesPerPace)
	var bm *roaring.Bitmap
	start := func(k uint32) {
		tick()
		l.keys = append(l.keys, k)
		bm = roaring.New()
	}
	add := func(ords []uint32) { bm.AddMany(ords) }
	done := func() error {
		k, card := l.keys[len(l.keys)-1], bm.GetCardinality()
		l.cards = append(l.cards, uint32(card))
		if omit != nil && omit(k, card) {
			l.offs = append(l.offs, b.size, 0)
			return nil
		}
		bm.RunOptimize()
		off, n, err := b.add(bm)
		l.offs = append(l.offs, off, n)
		return err
	}
	if err := mergeRuns(files, start, add, done); err != nil {
		return lists{}, err
	}
	return l, nil
}

// postings are a table's posting lists, written to its blob.
type postings struct{ grams, prefix, quads, prefix4 lists }

// addPostings writes the posting lists of entries to b: by trigram and by
// first trigram, and with quads (GDSTBL05 on) by four bytes and by first
// four bytes, reporting each as work done.
func (b *blobFile) addPostings(ctx context.Context, entries []Entry, quads bool) (p postings, err error) {
	add := func(to *lists, kind listKind, omit func(k uint32, card uint64) bool) (err error) {
		pace.Pace(ctx)
		if *to, err = b.addLists(ctx, entries, kind, omit); err == nil {
			pace.Worked(ctx, len(entries))
		}
		return err
	}
	if err = add(&p.grams, gramsOf, nil); err == nil {
		err = add(&p.prefix, prefixOf, nil)
	}
	if err == nil && quads {
		// A quad's list that its trigrams' lists imply is left out.
		if err = add(&p.quads, quadsOf, p.grams.implies); err == nil {
			err = add(&p.prefix4, prefix4Of, nil)
		}
	}
	return p, err
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

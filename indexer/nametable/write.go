package nametable

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/pace"
	"gds/snapshots/disk"
)

// Entry is one name handed to Write.
type Entry struct {
	ID     int64
	Folded string
	// Access lists the characters that may see the entry (structures only).
	Access []int64
}

// Write builds a table from entries (in any order; ascending ID is
// fastest) and writes it to path atomically, leaving entries in ordinal
// order. mask, when set, is stored as the overlay mask. ctx's pacer (a
// build in a server) is asked between the steps and while the postings
// are built.
func Write(ctx context.Context, path string, entries []Entry, mask *roaring.Bitmap) error {
	rankOrder(entries)
	pace.Pace(ctx)
	ids, offsets, err := nameIndex(entries)
	if err != nil {
		return fmt.Errorf("table %s: %w", path, err)
	}
	pace.Pace(ctx)
	slots, dups := strictIndex(entries)
	pace.Pace(ctx)
	magic := tableMagic
	base, narrow := idBase(ids)
	switch {
	case !narrow:
		magic = tableMagicV2
	case writeLayout != "":
		magic = writeLayout
	}
	p := postings(ctx, entries, magic == tableMagicV5)
	p.omitImplied()
	pace.Pace(ctx)

	// Every bitmap goes in one blob, the file's last section; the lists
	// say where each one is in it.
	var blob bitmapBlob
	gramKeys, gramOffs := blob.addAll(p.grams)
	prefixKeys, prefixOffs := blob.addAll(p.prefix)
	quadKeys, quadOffs := blob.addAll(p.quads)
	prefix4Keys, prefix4Offs := blob.addAll(p.prefix4)
	accessKeys, accessOffs := blob.addAccess(accessLists(entries))
	var maskBytes []byte
	if mask != nil {
		maskBytes, _ = mask.ToBytes()
	}

	var secs [secCount]section
	for i := range secs {
		secs[i] = raw(nil)
	}
	allNames := func(w *sectionWriter) {
		for _, e := range entries {
			w.writeString(e.Folded)
		}
	}
	switch magic {
	case tableMagicV5, tableMagicV4:
		secs[secCells], secs[secBands], secs[secNames], secs[secOverflow] = writeCells(entries, base, planBands(entries))
	case tableMagicV3:
		secs[secRecs] = raw(disk.AsBytes(pairRecs(ids, offsets, base)))
		secs[secIDBase] = raw(binary.LittleEndian.AppendUint64(nil, uint64(base)))
		secs[secNames] = allNames
	default:
		secs[secIDs] = raw(disk.AsBytes(ids))
		secs[secOffsets] = raw(disk.AsBytes(offsets))
		secs[secNames] = allNames
	}
	secs[secSlots] = raw(disk.AsBytes(slots))
	secs[secGramKeys] = raw(disk.AsBytes(gramKeys))
	secs[secGramOffs] = raw(disk.AsBytes(gramOffs))
	secs[secPrefixKeys] = raw(disk.AsBytes(prefixKeys))
	secs[secPrefixOffs] = raw(disk.AsBytes(prefixOffs))
	secs[secQuadKeys] = raw(disk.AsBytes(quadKeys))
	secs[secQuadOffs] = raw(disk.AsBytes(quadOffs))
	secs[secPrefix4Keys] = raw(disk.AsBytes(prefix4Keys))
	secs[secPrefix4Offs] = raw(disk.AsBytes(prefix4Offs))
	secs[secAccessKeys] = raw(disk.AsBytes(accessKeys))
	secs[secAccessOffs] = raw(disk.AsBytes(accessOffs))
	secs[secMask] = raw(maskBytes)
	secs[secDupKeys] = raw(disk.AsBytes(dups.keys))
	secs[secDupOffs] = raw(disk.AsBytes(dups.offs))
	secs[secDupList] = raw(disk.AsBytes(dups.list))
	secs[secBitmaps] = func(w *sectionWriter) {
		for _, b := range blob.parts {
			w.write(b)
			w.align()
		}
	}
	return writeFile(path, magic, uint64(len(entries)), &secs)
}

// namesPerPace is how many names a goroutine building postings adds
// between two questions to its build's pacer.
const namesPerPace = 4096

// writeLayout, when set, is the magic of an older layout to write
// instead (tests of reading those): GDSTBL04, GDSTBL03 or GDSTBL02.
var writeLayout = ""

// idBase returns the smallest ID, or ok false when the IDs span more than
// a uint32 from it (such a table is written as GDSTBL02).
func idBase(ids []int64) (base int64, ok bool) {
	if len(ids) == 0 {
		return 0, true
	}
	base = slices.Min(ids)
	return base, uint64(slices.Max(ids))-uint64(base) <= math.MaxUint32
}

// pairRecs returns the IDs as offsets from base, each beside its name's
// offset (GDSTBL03's records).
func pairRecs(ids []int64, offsets []uint32, base int64) (recs []uint32) {
	recs = make([]uint32, 0, 2*len(offsets))
	for o, off := range offsets {
		var id uint32
		if o < len(ids) {
			id = uint32(ids[o] - base)
		}
		recs = append(recs, id, off)
	}
	return recs
}

// nameIndex returns the IDs and the offsets of the names, in ordinal order.
func nameIndex(entries []Entry) (ids []int64, offsets []uint32, err error) {
	n := len(entries)
	ids = make([]int64, n)
	offsets = make([]uint32, n+1)
	var size uint64
	for i, e := range entries {
		ids[i] = e.ID
		offsets[i] = uint32(size)
		size += uint64(len(e.Folded))
		if size > 1<<32-1 {
			return nil, nil, fmt.Errorf("names exceed 4 GiB; shard the category")
		}
	}
	offsets[n] = uint32(size)
	return ids, offsets, nil
}

// resize returns slots in a table of the smallest power of two at least
// twice the distinct names, when that is smaller: names that repeat (a
// generated set of 10M character names holds 1.75M distinct ones) would
// otherwise leave most of a table sized by entries empty, and Exact's
// probes end as soon in either.
func resize(slots []uint32, distinct int, entries []Entry) []uint32 {
	n := 1
	for n < distinct*2 {
		n <<= 1
	}
	if n >= len(slots) {
		return slots
	}
	out := make([]uint32, n)
	mask := uint64(n - 1)
	for _, v := range slots {
		if v == 0 {
			continue
		}
		for j := hashName([]byte(entries[v-1].Folded)) & mask; ; j = (j + 1) & mask {
			if out[j] == 0 {
				out[j] = v
				break
			}
		}
	}
	return out
}

// dupLists lists, for each slot ordinal whose name other ordinals share
// (keys, ascending), all the ordinals of that name: offs holds (offset,
// length) pairs into list.
type dupLists struct {
	keys, offs, list []uint32
}

// strictIndex builds the open-addressing hash table of folded names (a
// power of two at least twice the distinct names; a slot holds the lowest
// ordinal of a name, plus one) and the lists of ordinals sharing a name.
func strictIndex(entries []Entry) (slots []uint32, d dupLists) {
	n := len(entries)
	nslots := 1
	for nslots < n*2 {
		nslots <<= 1
	}
	if n == 0 {
		nslots = 0
	}
	slots = make([]uint32, nslots)
	dups := map[uint32][]uint32{}
	hmask := uint64(nslots - 1)
	distinct := 0
	for i, e := range entries {
		for j := hashName([]byte(e.Folded)) & hmask; ; j = (j + 1) & hmask {
			v := slots[j]
			if v == 0 {
				slots[j] = uint32(i) + 1
				distinct++
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
	slots = resize(slots, distinct, entries)
	d.keys = make([]uint32, 0, len(dups))
	for k := range dups {
		d.keys = append(d.keys, k)
	}
	slices.Sort(d.keys)
	d.offs = make([]uint32, 0, 2*len(d.keys))
	for _, k := range d.keys {
		d.offs = append(d.offs, uint32(len(d.list)), uint32(len(dups[k])))
		d.list = append(d.list, dups[k]...)
	}
	return slots, d
}

// accessLists returns, per character, the ordinals it may access.
func accessLists(entries []Entry) map[int64]*roaring.Bitmap {
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
	return access
}

// bitmapBlob collects serialized bitmaps, each padded to 8 bytes, and
// where each one starts.
type bitmapBlob struct {
	parts [][]byte
	size  uint64
}

func (b *bitmapBlob) add(bm *roaring.Bitmap) (off, n uint64) {
	raw, _ := bm.ToBytes()
	off = b.size
	b.parts = append(b.parts, raw)
	b.size += disk.Pad8(uint64(len(raw)))
	return off, uint64(len(raw))
}

// addAll adds posting lists, run-optimized, in ascending trigram order and
// returns the trigrams and their (offset, length) pairs.
func (b *bitmapBlob) addAll(m map[uint32]*roaring.Bitmap) (keys []uint32, offs []uint64) {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		bm := m[k]
		if bm == nil { // left out: an empty list
			offs = append(offs, b.size, 0)
			continue
		}
		bm.RunOptimize()
		off, n := b.add(bm)
		offs = append(offs, off, n)
	}
	return keys, offs
}

// addAccess adds access lists in ascending character order and returns
// the characters and their (offset, length) pairs.
func (b *bitmapBlob) addAccess(m map[int64]*roaring.Bitmap) (keys []int64, offs []uint64) {
	for c := range m {
		keys = append(keys, c)
	}
	slices.Sort(keys)
	for _, c := range keys {
		off, n := b.add(m[c])
		offs = append(offs, off, n)
	}
	return keys, offs
}

// writeOrder is the order sections lie in the file. The bitmaps stay last:
// their offsets count from the start of their section, found from the end.
var writeOrder = [secCount]int{
	secIDs, secOffsets, secNames, secSlots,
	secGramKeys, secGramOffs, secPrefixKeys, secPrefixOffs, secAccessKeys, secAccessOffs,
	secMask, secDupKeys, secDupOffs, secDupList, secOverflow,
	secQuadKeys, secQuadOffs, secPrefix4Keys, secPrefix4Offs,
	secBitmaps,
}

// A section writes one section's bytes.
type section func(w *sectionWriter)

func raw(b []byte) section { return func(w *sectionWriter) { w.write(b) } }

// writeFile writes the header and the sections, each 8-byte aligned, to a
// temporary file beside path, syncs it and renames it into place.
func writeFile(path, magic string, n uint64, secs *[secCount]section) error {
	return disk.ReplaceFile(path, disk.PrivateFile, func(f *os.File) error {
		fields := fieldsOf(magic)
		header := make([]uint64, 2*fields)
		hdrLen := len(magic) + 8 + len(header)*8
		w := &sectionWriter{w: disk.NewChunkWriter(f, disk.HugeChunk)}
		w.write(make([]byte, hdrLen)) // filled in last
		for _, i := range writeOrder {
			if i >= fields {
				continue // a section older tables lack (empty: see Write)
			}
			w.align()
			start := w.n
			secs[i](w)
			header[2*i], header[2*i+1] = start, w.n-start
		}
		if w.err != nil {
			return w.err
		}
		if err := w.w.Flush(); err != nil {
			return err
		}
		hdr := make([]byte, 0, hdrLen)
		hdr = append(hdr, magic...)
		hdr = binary.LittleEndian.AppendUint64(hdr, n)
		for _, v := range header {
			hdr = binary.LittleEndian.AppendUint64(hdr, v)
		}
		_, err := f.WriteAt(hdr, 0)
		return err
	})
}

func addTo(m map[uint32]*roaring.Bitmap, k uint32, o uint32) {
	bm := m[k]
	if bm == nil {
		bm = roaring.New()
		m[k] = bm
	}
	bm.Add(o)
}

// rankOrder sorts entries into their table order (RankOrdinals).
func rankOrder(entries []Entry) {
	ord := RankOrdinals(entries)
	sorted := make([]Entry, len(entries))
	for i, e := range entries {
		sorted[ord[i]] = e
	}
	copy(entries, sorted)
}

// RankOrdinals returns, for each entry, its ordinal in the table Write
// makes of entries: ordered by name length in runes, then ID (unique in a
// table, so the order is the same however it is found). Snapshots stream
// records in ascending ID, so a counting sort by length is enough; other
// input falls back to a comparison sort. Files written beside a table
// (value columns) name its records by these ordinals.
func RankOrdinals(entries []Entry) []uint32 {
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
	ord := make([]uint32, len(entries))
	if !ascending {
		idx := make([]uint32, len(entries))
		for i := range idx {
			idx[i] = uint32(i)
		}
		slices.SortFunc(idx, func(a, b uint32) int {
			if lens[a] != lens[b] {
				return int(lens[a] - lens[b])
			}
			return cmp.Compare(entries[a].ID, entries[b].ID)
		})
		for o, i := range idx {
			ord[i] = uint32(o)
		}
		return ord
	}
	start := make([]uint32, maxLen+2)
	for _, l := range lens {
		start[l+1]++
	}
	for l := 1; l < len(start); l++ {
		start[l] += start[l-1]
	}
	for i, l := range lens {
		ord[i] = start[l]
		start[l]++
	}
	return ord
}

// gramPostings are a table's posting lists by key: trigram, first
// trigram, four-byte gram, first four bytes.
type gramPostings struct {
	grams, prefix, quads, prefix4 map[uint32]*roaring.Bitmap
}

// add adds ordinal o's name to the lists; quads: the four-byte ones too.
func (p *gramPostings) add(name string, o uint32, quads bool) {
	for j := 0; j+3 <= len(name); j++ {
		g := uint32(name[j])<<16 | uint32(name[j+1])<<8 | uint32(name[j+2])
		addTo(p.grams, g, o)
		if quads && j+4 <= len(name) {
			addTo(p.quads, g<<8|uint32(name[j+3]), o)
		}
	}
	if len(name) >= 3 {
		addTo(p.prefix, uint32(name[0])<<16|uint32(name[1])<<8|uint32(name[2]), o)
	}
	if quads && len(name) >= 4 {
		addTo(p.prefix4, uint32(name[0])<<24|uint32(name[1])<<16|uint32(name[2])<<8|uint32(name[3]), o)
	}
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

// omitImplied leaves out (a nil list, written empty) the four-byte gram
// lists that are not kept (see quadShare).
func (p *gramPostings) omitImplied() {
	for k, bm := range p.quads {
		shorter := min(p.grams[k>>8].GetCardinality(), p.grams[k&0xffffff].GetCardinality())
		if bm.GetCardinality()*quadShare > shorter {
			p.quads[k] = nil
		}
	}
}

// join adds q's lists, of higher ordinals, to p's.
func (p *gramPostings) join(q gramPostings) {
	for _, m := range []struct{ to, from map[uint32]*roaring.Bitmap }{{p.grams, q.grams}, {p.prefix, q.prefix}, {p.quads, q.quads}, {p.prefix4, q.prefix4}} {
		for k, bm := range m.from {
			if have := m.to[k]; have != nil {
				have.Or(bm)
			} else {
				m.to[k] = bm
			}
		}
	}
}

// postings builds the trigram and first-trigram posting lists, and with
// quads the four-byte gram and first-four-byte ones, splitting the ordinals into ranges built in parallel and
// joined in order.
func postings(ctx context.Context, entries []Entry, quads bool) gramPostings {
	parts := runtime.GOMAXPROCS(0)
	if len(entries) < 100000 {
		parts = 1
	}
	results := make([]gramPostings, parts)
	var wg sync.WaitGroup
	chunk := (len(entries) + parts - 1) / parts
	for p := 0; p < parts; p++ {
		lo, hi := p*chunk, min((p+1)*chunk, len(entries))
		wg.Add(1)
		go func(p, lo, hi int) {
			defer wg.Done()
			r := gramPostings{grams: map[uint32]*roaring.Bitmap{}, prefix: map[uint32]*roaring.Bitmap{},
				quads: map[uint32]*roaring.Bitmap{}, prefix4: map[uint32]*roaring.Bitmap{}}
			tick := pace.Every(ctx, namesPerPace)
			for i := lo; i < hi; i++ {
				tick()
				r.add(entries[i].Folded, uint32(i), quads)
			}
			results[p] = r
		}(p, lo, hi)
	}
	wg.Wait()
	for _, r := range results[1:] {
		results[0].join(r)
	}
	return results[0]
}

// sectionWriter counts what it writes and keeps the first error.
type sectionWriter struct {
	w   *disk.ChunkWriter
	n   uint64
	err error
}

func (s *sectionWriter) writeString(b string) {
	if s.err != nil {
		return
	}
	k, err := s.w.WriteString(b)
	s.n += uint64(k)
	s.err = err
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
	if p := disk.Pad8(s.n) - s.n; p > 0 {
		s.write(make([]byte, p))
	}
}

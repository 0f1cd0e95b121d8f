package nametable

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/indexer/pace"
	"gds/snapshots/disk"
)

// Entry is one name handed to Write.
type Entry struct {
	ID     int64
	Folded string
}

// Access lists, by entry ID, the characters that may see the entry. Only
// structures have access lists: kept beside the entries rather than in
// each, it costs a table of any other kind nothing.
type Access map[int64][]int64

// Write builds a table from entries (in any order; ascending ID is
// fastest) and their access lists (nil for a kind without them) and
// writes it to path atomically, leaving entries in ordinal order. mask,
// when set, is stored as the overlay mask. ctx's pacer (a build in a
// server) is asked between the steps and while the postings are built;
// ctx's work count (pace.Worked) gains the number of entries after each
// of the WriteSteps steps.
func Write(ctx context.Context, path string, entries []Entry, access Access, mask *roaring.Bitmap) error {
	if err := checkNames(entries); err != nil {
		return fmt.Errorf("table %s: %w", path, err)
	}
	worked := func() { pace.Worked(ctx, len(entries)) }
	rankOrder(entries)
	pace.Pace(ctx)
	slots, dups := strictIndex(entries)
	worked()
	magic := tableMagic
	base, narrow := idBase(entries)
	switch {
	case !narrow:
		magic = tableMagicV2
	case writeLayout != "":
		magic = writeLayout
	}

	// Every bitmap goes in one blob, the file's last section; the lists
	// say where each one is in it.
	blob, err := newBlobFile(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("table %s: %w", path, err)
	}
	defer blob.close()
	post, err := blob.addPostings(ctx, entries, magic == tableMagicV6 || magic == tableMagicV5)
	if err != nil {
		return fmt.Errorf("table %s: %w", path, err)
	}
	blob.bufs = nil // the runs' buffers, free before the cells are built
	accessKeys, accessOffs, err := blob.addAccess(accessLists(entries, access))
	if err != nil {
		return fmt.Errorf("table %s: %w", path, err)
	}
	pace.Pace(ctx)
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
	case tableMagicV6, tableMagicV5, tableMagicV4:
		secs[secCells], secs[secBands], secs[secNames], secs[secOverflow] = writeCells(entries, base, planBands(entries))
	case tableMagicV3:
		ids, offsets := nameIndex(entries)
		secs[secRecs] = raw(disk.AsBytes(pairRecs(ids, offsets, base)))
		secs[secIDBase] = raw(binary.LittleEndian.AppendUint64(nil, uint64(base)))
		secs[secNames] = allNames
	default:
		ids, offsets := nameIndex(entries)
		secs[secIDs] = raw(disk.AsBytes(ids))
		secs[secOffsets] = raw(disk.AsBytes(offsets))
		secs[secNames] = allNames
	}
	secs[secSlots] = raw(disk.AsBytes(slots))
	secs[secGramKeys], secs[secGramOffs] = post.grams.sections()
	secs[secPrefixKeys], secs[secPrefixOffs] = post.prefix.sections()
	secs[secQuadKeys], secs[secQuadOffs] = post.quads.sections()
	secs[secPrefix4Keys], secs[secPrefix4Offs] = post.prefix4.sections()
	secs[secAccessKeys] = raw(disk.AsBytes(accessKeys))
	secs[secAccessOffs] = raw(disk.AsBytes(accessOffs))
	secs[secMask] = raw(maskBytes)
	secs[secDupKeys] = raw(disk.AsBytes(dups.keys))
	secs[secDupOffs] = raw(disk.AsBytes(dups.offs))
	secs[secDupList] = raw(disk.AsBytes(dups.list))
	if magic == tableMagicV6 {
		secs[secDupIDs] = raw(disk.AsBytes(dupIDs(entries, dups.list, base)))
	}
	secs[secBitmaps] = blob.copyTo
	if err := writeFile(path, magic, uint64(len(entries)), &secs); err != nil {
		return err
	}
	worked()
	return nil
}

// WriteSteps is how many times Write adds its number of entries to its
// context's work count (pace.Worked): after the name hash table, after
// each of the four kinds of posting lists, and once the file is written.
// A table of an older layout (tests) counts fewer.
const WriteSteps = 6

// namesPerPace is how many names a goroutine building postings adds
// between two questions to its build's pacer.
const namesPerPace = 4096

// writeLayout, when set, is the magic of an older layout to write
// instead (tests of reading those): GDSTBL04, GDSTBL03 or GDSTBL02.
var writeLayout = ""

// idBase returns the smallest ID, or ok false when the IDs span more than
// a uint32 from it (such a table is written as GDSTBL02).
func idBase(entries []Entry) (base int64, ok bool) {
	if len(entries) == 0 {
		return 0, true
	}
	lo, hi := entries[0].ID, entries[0].ID
	for _, e := range entries[1:] {
		lo, hi = min(lo, e.ID), max(hi, e.ID)
	}
	return lo, uint64(hi)-uint64(lo) <= math.MaxUint32
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

// checkNames fails when the names pass 4 GiB, which offsets of 32 bits
// cannot address.
func checkNames(entries []Entry) error {
	var size uint64
	for _, e := range entries {
		size += uint64(len(e.Folded))
	}
	if size > 1<<32-1 {
		return fmt.Errorf("names exceed 4 GiB; shard the category")
	}
	return nil
}

// nameIndex returns the IDs and the offsets of the names, in ordinal
// order (the layouts before GDSTBL04; checkNames has passed).
func nameIndex(entries []Entry) (ids []int64, offsets []uint32) {
	n := len(entries)
	ids = make([]int64, n)
	offsets = make([]uint32, n+1)
	var size uint64
	for i, e := range entries {
		ids[i] = e.ID
		offsets[i] = uint32(size)
		size += uint64(len(e.Folded))
	}
	offsets[n] = uint32(size)
	return ids, offsets
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
func accessLists(entries []Entry, access Access) map[int64]*roaring.Bitmap {
	lists := map[int64]*roaring.Bitmap{}
	if len(access) == 0 {
		return lists
	}
	for i, e := range entries {
		for _, c := range access[e.ID] {
			bm := lists[c]
			if bm == nil {
				bm = roaring.New()
				lists[c] = bm
			}
			bm.Add(uint32(i))
		}
	}
	return lists
}

// dupIDs is the IDs of the ordinals in list less base (secDupIDs), for
// entries in ordinal order whose IDs fit a uint32 from base.
func dupIDs(entries []Entry, list []uint32, base int64) []uint32 {
	ids := make([]uint32, len(list))
	for i, o := range list {
		ids[i] = uint32(entries[o].ID - base)
	}
	return ids
}

// writeOrder is the order sections lie in the file. The bitmaps stay last:
// their offsets count from the start of their section, found from the end.
var writeOrder = [secCount]int{
	secIDs, secOffsets, secNames, secSlots,
	secGramKeys, secGramOffs, secPrefixKeys, secPrefixOffs, secAccessKeys, secAccessOffs,
	secMask, secDupKeys, secDupOffs, secDupList, secOverflow,
	secQuadKeys, secQuadOffs, secPrefix4Keys, secPrefix4Offs, secDupIDs,
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

// rankOrder sorts entries into their table order (RankOrdinals), in
// place: each cycle of the permutation is followed by swaps, rather than
// a sorted copy of every entry.
func rankOrder(entries []Entry) {
	ord := RankOrdinals(entries)
	for i := range ord {
		for j := ord[i]; j != uint32(i); j = ord[i] {
			entries[i], entries[j] = entries[j], entries[i]
			ord[i], ord[j] = ord[j], j
		}
	}
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

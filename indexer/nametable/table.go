// Package nametable owns the name-table file format end to end: writing a
// table (Write), opening it memory-mapped (Open), the walks that answer a
// contains or strict search (Table.Contains, Table.Strict), exact lookups
// (Table.Exact) and the case folding that the names are stored in and
// search texts must be given in (Fold). Callers see ordinals, IDs and
// names; the bytes of the posting lists stay inside.
package nametable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/snapshots/disk"
)

// A table is the search side of one category in one language: every name,
// folded, numbered by rank (shorter names first, then lower ID), so that
// walking any posting list in ascending ordinal order visits names in the
// order results are returned, and a search can stop once it has enough.
//
// Built at index time and memory-mapped at serve time, it holds:
//   - cells: per ordinal its ID (from a base) and its folded name, in one
//     fixed-size cell per band of names of one length, so that a search's
//     candidate costs one cache miss for both (GDSTBL04, cells.go; older
//     tables keep each ID beside where its name starts in names,
//     GDSTBL03, or the IDs and offsets apart);
//   - slots: an open-addressing hash table of folded names for strict search;
//   - grams: trigram (three bytes of the folded UTF-8 name) → ordinals of
//     names containing it; trigrams span spaces and punctuation, so "p An"
//     and "O'm" are as cheap as any other text;
//   - prefixes: first trigram → ordinals of names starting with it;
//   - quads (GDSTBL05): four bytes of the folded name → ordinals of names
//     containing them, which a text of four bytes or more is searched by:
//     far shorter lists than its trigrams', and a text of four bytes
//     needs no intersection at all; a list that would hold more than a
//     quarter of its shorter trigram's is left out (an empty list: the
//     walk takes its two trigrams', see quadShare); and first four bytes
//     → ordinals of names starting with them, for its prefix matches;
//   - access (structures): character ID → ordinals it may access;
//   - mask (language overlays): ordinals of the base table this overlay
//     replaces.
type Table struct {
	n int
	// cl (GDSTBL04): the cells, and names holds only the names that
	// overflow them.
	cl    cellLayout
	cells bool
	// recs (GDSTBL03): pairs of uint32, the ID less idBase and where the
	// name starts, for ordinals 0 to n (the last pair's name start is
	// where the names end).
	recs   []uint32
	idBase int64
	// ids and offsets: tables before GDSTBL03.
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
	// dupIDs (GDSTBL06): the IDs of dupList's ordinals less idBase, in the
	// same places, so that a strict search reads its namesakes' IDs one
	// after another rather than each from its own cell.
	dupIDs []uint32
	// dupBits (grouped tables, once opened): a bit an ordinal, set for
	// dupKeys' ordinals, so that a name no other ordinal shares (nearly
	// every name a local pastes) needs one read, not a search of
	// dupKeys (markDups; outside the Go heap, freed by Close).
	dupBits     []uint64
	freeDupBits func() error
	grams       postingLists[uint32]
	prefix      postingLists[uint32]
	quads       postingLists[uint32]
	prefix4     postingLists[uint32] // by the first four bytes
	hasQuad     bool                 // quads and prefix4 hold every list (GDSTBL05)
	mask        *roaring.Bitmap
	// accessLists holds, by character, the ordinals it may access.
	accessLists postingLists[int64]
	breaks      lineBreaks // LineBreaks' set, found on first use

	mm     []byte
	loaded *disk.Loaded // what holds mm
}

// The file: the magic (8 bytes), the number of names (uint64), then
// fieldsOf(magic) (offset, length) pairs of uint64, one per section, all
// little-endian; then the sections, each 8-byte aligned, in writeOrder.
// Integer arrays are stored as the machine holds them (little-endian on
// every platform gds runs on) and mapped in place. Bitmaps are roaring's
// portable serialization, each 8-byte aligned in the last section; the
// gram, prefix, quad and access offsets count from that section's start.
//
// GDSTBL06 is GDSTBL05 with the IDs of the duplicate-name lists
// (secDupIDs, one more header field): a strict search for a name
// thousands of pilots share reads their IDs in one run of bytes.
// GDSTBL05 is GDSTBL04 with the four-byte gram lists (secQuadKeys,
// secQuadOffs) and the first-four-byte lists (secPrefix4Keys,
// secPrefix4Offs): four more header fields; keys pack the bytes
// big-endian (gram4); a four-byte gram's list may be empty (left out). GDSTBL04 holds the IDs and names in cells (secCells,
// secBands, and the names that overflow their cells in secNames, indexed
// by secOverflow; see cells.go). GDSTBL03 holds the IDs and name offsets as pairs
// (secRecs) and the IDs' base (secIDBase); GDSTBL02 and GDSTBL01 hold
// them in two sections (secIDs, secOffsets); all three hold every name in
// secNames. A table whose IDs span more than uint32 offsets from the
// smallest (none of EVE's categories) is written as GDSTBL02.
const (
	tableMagic   = tableMagicV6
	tableMagicV6 = "GDSTBL06" // namesakes' IDs beside their ordinals
	tableMagicV5 = "GDSTBL05" // four-byte gram lists
	tableMagicV3 = "GDSTBL03" // IDs beside their names' offsets
	tableMagicV2 = "GDSTBL02" // IDs and name offsets apart
	tableMagicV1 = "GDSTBL01" // slots held every ordinal, duplicates included
	// headerFieldsV4 and headerFieldsV5 are the numbers of sections of
	// tables before GDSTBL05 and of GDSTBL05.
	headerFieldsV4 = 16
	headerFieldsV5 = 20
)

// FormatVersions are the table format Write writes (the magic of its
// files) and those Open reads, oldest first, for `gds version`.
func FormatVersions() (writes string, reads []string) {
	return tableMagic, []string{tableMagicV1, tableMagicV2, tableMagicV3, tableMagicV4, tableMagicV5, tableMagicV6}
}

// fieldsOf is the number of sections in the header of a table of magic.
func fieldsOf(magic string) int {
	switch magic {
	case tableMagicV6:
		return secCount
	case tableMagicV5:
		return headerFieldsV5
	}
	return headerFieldsV4
}

// Section indices in the header.
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
	secOverflow // GDSTBL04: the names that overflow their cells
	secQuadKeys // GDSTBL05: the four-byte gram lists
	secQuadOffs
	secPrefix4Keys // GDSTBL05: the first-four-byte lists
	secPrefix4Offs
	secDupIDs // GDSTBL06: the IDs of secDupList's ordinals
	secCount

	// GDSTBL03's sections in the places of secIDs and secOffsets.
	secRecs   = secIDs
	secIDBase = secOffsets
)

// Len is the number of names in the table.
func (t *Table) Len() int { return t.n }

// ID returns the ID at ordinal o.
func (t *Table) ID(o uint32) int64 {
	if t.cells {
		return t.idBase + int64(binary.LittleEndian.Uint32(t.cl.cells[t.cl.cellOf(o):]))
	}
	if t.recs != nil {
		return t.idBase + int64(t.recs[2*o])
	}
	return t.ids[o]
}

// Name returns the folded name at ordinal o. It aliases the mapped file.
func (t *Table) Name(o uint32) []byte {
	if t.cells {
		at := t.cl.cellOf(o)
		if n := int(t.cl.cells[at+4]); n != overflowLen {
			return t.cl.cells[at+cellHead : at+cellHead+n]
		}
		return t.overflowName(o)
	}
	if t.recs != nil {
		return t.names[t.recs[2*o+1]:t.recs[2*o+3]]
	}
	return t.names[t.offsets[o]:t.offsets[o+1]]
}

// fetch reads the IDs and the starts of the names of the ordinals in
// batch and returns a byte of what it read, for the caller to keep (so
// that the reads stay). The loads of one pass do not depend on one
// another, so their cache misses overlap, where verifying one name after
// another would wait for each in turn: one pass over the cells
// (GDSTBL04), or over the name offsets (with the IDs beside them,
// GDSTBL03) and then the names.
func (t *Table) fetch(batch []uint32) byte {
	var touch byte
	if t.cells {
		for _, o := range batch {
			touch += t.cl.cells[t.cl.cellOf(o)+4]
		}
		return touch
	}
	var off uint32
	for _, o := range batch {
		if t.recs != nil {
			off += t.recs[2*o+1]
		} else {
			off += t.offsets[o]
		}
	}
	touch = byte(off)
	for _, o := range batch {
		if name := t.Name(o); len(name) > 0 {
			touch += name[0] + byte(t.ID(o))
		}
	}
	return touch
}

// Warm reads what Exact reads first for each of texts (its slot and the
// name there) and returns a byte of what it read, for the caller to keep.
// The loads of one pass do not depend on one another, so their cache
// misses overlap; Exact on each text then finds them in the cache.
func (t *Table) Warm(texts [][]byte) byte {
	if len(t.slots) == 0 {
		return 0
	}
	mask := uint64(len(t.slots) - 1)
	var touch byte
	var batch [64]uint32
	for len(texts) > 0 {
		chunk := texts[:min(len(texts), len(batch))]
		texts = texts[len(chunk):]
		n := 0
		for _, text := range chunk {
			if v := t.slots[hashName(text)&mask]; v != 0 {
				batch[n] = v - 1
				n++
			}
		}
		touch += t.fetch(batch[:n]) + t.warmDups(batch[:n])
	}
	return touch
}

// findDup is the index in dupKeys of ordinal o, if it is there: the last
// key not above o, found by halving the range with conditional moves
// rather than branches.
func (t *Table) findDup(o uint32) (int, bool) {
	base, n := 0, len(t.dupKeys)
	if n == 0 || t.dupBits != nil && t.dupBits[o>>6]&(1<<(o&63)) == 0 {
		return 0, false
	}
	for n > 1 {
		half, step := n/2, 0
		if t.dupKeys[base+half] <= o {
			step = half
		}
		base += step
		n -= half
	}
	return base, t.dupKeys[base] == o
}

// warmDups makes findDup's reads for the ordinals in batch, a step of
// every search at a time: the reads of a step do not depend on one
// another, so that their cache misses overlap, where a search of
// millions of keys would wait for each of its deeper reads in turn.
// Then, for those that have namesakes, it reads where their lists are
// and the lists' first ordinals and IDs, again a step at a time.
func (t *Table) warmDups(batch []uint32) byte {
	if !t.grouped || len(t.dupKeys) == 0 {
		return 0
	}
	var touch byte
	var shared [64]uint32
	if t.dupBits != nil { // only the ordinals whose bit is set search dupKeys
		n := 0
		for _, o := range batch {
			w := t.dupBits[o>>6]
			touch += byte(w)
			if w&(1<<(o&63)) != 0 {
				shared[n] = o
				n++
			}
		}
		batch = shared[:n]
	}
	var base [64]int
	for n := len(t.dupKeys); n > 1; {
		half := n / 2
		for k, o := range batch {
			step := 0
			if t.dupKeys[base[k]+half] <= o {
				step = half
			}
			base[k] += step
		}
		n -= half
	}
	var off [64]uint32
	n := 0
	for k, o := range batch {
		if j := base[k]; t.dupKeys[j] == o && t.dupOffs[2*j+1] > 0 {
			off[n] = t.dupOffs[2*j]
			n++
		}
	}
	for _, at := range off[:n] {
		touch += byte(t.dupList[at])
		if t.dupIDs != nil {
			touch += byte(t.dupIDs[at])
		}
	}
	return touch
}

// postingLists finds lists of ordinals by key in the mapped file: by
// trigram, by first trigram, by character (access lists). A walk reads
// them in place (see rlist): opening a table costs nothing per list.
type postingLists[K uint32 | int64] struct {
	keys []K      // sorted
	offs []uint64 // pairs: offset, length into blob
	blob []byte
}

// newPostingLists checks every list (see check) for a table of n names,
// once, so that walks need not; keyText names a key in errors. With
// omitted, a list may be empty: left out (see Write).
func newPostingLists[K uint32 | int64](what string, keys []K, offs []uint64, blob []byte, n int, keyText func(K) string, omitted bool) (postingLists[K], error) {
	if len(offs) != 2*len(keys) {
		return postingLists[K]{}, fmt.Errorf("%s list index is inconsistent", what)
	}
	for i := range keys {
		if i > 0 && keys[i] <= keys[i-1] {
			return postingLists[K]{}, fmt.Errorf("%s lists out of order", what)
		}
		off, l := offs[2*i], offs[2*i+1]
		if off > uint64(len(blob)) || l > uint64(len(blob))-off {
			return postingLists[K]{}, fmt.Errorf("%s list %d out of range", what, i)
		}
		if l == 0 && omitted {
			continue
		}
		if err := check(blob[off:off+l], n); err != nil {
			return postingLists[K]{}, fmt.Errorf("%s list of %s: %w", what, keyText(keys[i]), err)
		}
	}
	return postingLists[K]{keys: keys, offs: offs, blob: blob}, nil
}

// bytes is the list of key as stored, or nil.
func (p *postingLists[K]) bytes(key K) []byte {
	i, ok := slices.BinarySearch(p.keys, key)
	if !ok {
		return nil
	}
	off, n := p.offs[2*i], p.offs[2*i+1]
	return p.blob[off : off+n : off+n]
}

// gramText is the three bytes a trigram key packs.
func gramText(g uint32) string { return string([]byte{byte(g >> 16), byte(g >> 8), byte(g)}) }

// quotedGram names a trigram key in errors.
func quotedGram(g uint32) string { return strconv.Quote(gramText(g)) }

// quotedQuad names a four-byte gram key in errors.
func quotedQuad(g uint32) string {
	return strconv.Quote(string([]byte{byte(g >> 24), byte(g >> 16), byte(g >> 8), byte(g)}))
}

// characterText names an access list's key in errors.
func characterText(c int64) string { return "character " + strconv.FormatInt(c, 10) }

// Mask returns the ordinals of the base table an overlay replaces, or nil.
func (t *Table) Mask() *roaring.Bitmap { return t.mask }

// access returns the ordinals character may access, decoded, or nil.
func (t *Table) access(character int64) *roaring.Bitmap {
	raw := t.accessBytes(character)
	if raw == nil {
		return nil
	}
	bm := roaring.New()
	if _, err := bm.FromBuffer(raw); err != nil {
		return nil
	}
	return bm
}

// Masked is the number of base ordinals an overlay or delta hides.
func (t *Table) Masked() int {
	if t.mask == nil {
		return 0
	}
	return int(t.mask.GetCardinality())
}

// Exact calls fn with the ordinals whose folded name equals text, in
// ascending order, and their IDs.
func (t *Table) Exact(text []byte, fn func(o uint32, id int64) bool) {
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
			if j, ok := t.findDup(o); ok {
				t.namesakes(j, fn)
				return
			}
			fn(o, t.ID(o))
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
		if !fn(o, t.ID(o)) {
			return
		}
	}
}

// namesakes calls fn with the ordinals of duplicate group j and their
// IDs, until fn returns false: the IDs from dupIDs where the table has
// them (GDSTBL06), else each from its ordinal's cell.
func (t *Table) namesakes(j int, fn func(o uint32, id int64) bool) {
	off, n := t.dupOffs[2*j], t.dupOffs[2*j+1]
	list := t.dupList[off : off+n]
	if t.dupIDs == nil {
		for _, o := range list {
			if !fn(o, t.ID(o)) {
				return
			}
		}
		return
	}
	ids := t.dupIDs[off : off+n]
	for k, o := range list {
		if !fn(o, t.idBase+int64(ids[k])) {
			return
		}
	}
}

// Prefetch asks for the cells of the ordinals in batch without waiting
// for them (tables before GDSTBL04: nothing), for a caller about to read
// their names one after another: their cache misses then overlap.
func (t *Table) Prefetch(batch []uint32) {
	if !t.cells {
		return
	}
	for _, o := range batch {
		t.cl.prefetchCell(o)
	}
}

// Repeats calls fn with every ordinal whose folded name a lower ordinal
// has too (each name's ordinals but its first), from the duplicate-name
// index. It reports false, calling fn with none, for a table without one
// (before GDSTBL02), whose repeats it cannot tell without reading every
// name.
func (t *Table) Repeats(fn func(o uint32)) bool {
	if !t.grouped {
		return false
	}
	for i := range t.dupKeys {
		off, n := t.dupOffs[2*i], t.dupOffs[2*i+1]
		for _, o := range t.dupList[off : off+n] {
			if o != t.dupKeys[i] {
				fn(o)
			}
		}
	}
	return true
}

// Close unmaps the table; no method may be called afterwards.
func (t *Table) Close() error {
	var err error
	if t.freeDupBits != nil {
		err = t.freeDupBits()
		t.dupBits, t.freeDupBits = nil, nil
	}
	if t.loaded == nil {
		return err
	}
	err = errors.Join(err, t.loaded.Close())
	t.mm, t.loaded = nil, nil
	return err
}

// markDups makes dupBits from dupKeys.
func (t *Table) markDups() error {
	if !t.grouped || len(t.dupKeys) == 0 {
		return nil
	}
	mem, free, err := disk.Anon(8 * ((t.n + 63) / 64))
	if err != nil {
		return err
	}
	bits := disk.FromBytes[uint64](mem)
	for _, o := range t.dupKeys {
		bits[o>>6] |= 1 << (o & 63)
	}
	t.dupBits, t.freeDupBits = bits, free
	return nil
}

// gramBytes returns the posting list of trigram g as stored: a roaring
// bitmap in the portable serialization format
// (https://github.com/RoaringBitmap/RoaringFormatSpec), aliasing the mapped
// file, or nil. Walks read its containers in place (see rlist).
func (t *Table) gramBytes(g uint32) []byte { return t.grams.bytes(g) }

// prefixBytes is the list of names whose first trigram is g, as stored
// (see gramBytes), or nil.
func (t *Table) prefixBytes(g uint32) []byte { return t.prefix.bytes(g) }

// accessBytes is access as stored (see gramBytes), or nil.
func (t *Table) accessBytes(character int64) []byte { return t.accessLists.bytes(character) }

// Entries returns the table's names and their access lists (nil when
// none has one) as Write takes them, in ordinal order, leaving out the
// ordinals in skip (may be nil) and the IDs drop reports (may be nil):
// what rewriting a table from an older one needs, without the records.
func (t *Table) Entries(skip *roaring.Bitmap, drop func(id int64) bool) (entries []Entry, access Access) {
	byOrd := make(map[uint32][]int64)
	for _, c := range t.accessLists.keys {
		if bm := t.access(c); bm != nil {
			it := bm.Iterator()
			for it.HasNext() {
				o := it.Next()
				byOrd[o] = append(byOrd[o], c)
			}
		}
	}
	entries = make([]Entry, 0, t.n)
	for o := 0; o < t.n; o++ {
		if skip != nil && skip.Contains(uint32(o)) {
			continue
		}
		id := t.ID(uint32(o))
		if drop != nil && drop(id) {
			continue
		}
		entries = append(entries, Entry{ID: id, Folded: string(t.Name(uint32(o)))})
		if a := byOrd[uint32(o)]; a != nil {
			if access == nil {
				access = Access{}
			}
			access[id] = a
		}
	}
	return entries, access
}

// gram3 packs three bytes into a trigram key.
func gram3[T string | []byte](b T) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// gram4 packs four bytes into a four-byte gram key.
func gram4[T string | []byte](b T) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// hashName places a folded name in the strict-search hash table.
func hashName(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

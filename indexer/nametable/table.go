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

// FileID is the FileID of the file the table was opened from (while it
// is open); false for a table not opened from a file, or where the system
// tells none.
func (t *Table) FileID() (disk.FileID, bool) {
	if t.loaded == nil {
		return disk.FileID{}, false
	}
	return t.loaded.ID()
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

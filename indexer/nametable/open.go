package nametable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"gds/snapshots/disk"
)

// Opening a table file: mapping or loading it, and checking every section
// before a search reads it.

// parseRecs reads the IDs and name offsets: pairs and a base (recs and
// base, a GDSTBL03 table's secRecs and secIDBase, when its base says
// so), or two arrays (tables before).
func (t *Table) parseRecs(magic string, recs, base []byte) error {
	if magic == tableMagicV3 {
		if len(base) != 8 {
			return errors.New("ID base damaged")
		}
		t.recs = disk.FromBytes[uint32](recs)
		t.idBase = int64(binary.LittleEndian.Uint64(base))
		if len(t.recs) != 2*(t.n+1) || int(t.recs[2*t.n+1]) != len(t.names) {
			return errors.New("sections disagree on the number of names")
		}
		for o := range t.n {
			if t.recs[2*o+1] > t.recs[2*o+3] {
				return fmt.Errorf("name %d out of range", o)
			}
		}
		return nil
	}
	t.ids, t.offsets = disk.FromBytes[int64](recs), disk.FromBytes[uint32](base)
	if len(t.ids) != t.n || len(t.offsets) != t.n+1 || int(t.offsets[t.n]) != len(t.names) {
		return errors.New("sections disagree on the number of names")
	}
	for o := range t.n {
		if t.offsets[o] > t.offsets[o+1] {
			return fmt.Errorf("name %d out of range", o)
		}
	}
	return nil
}

// Open maps a table file read-only. The mapping is populated up
// front: a search touches names all over the table, and a first touch of
// each page would otherwise cost a page fault inside a search.
func Open(path string) (*Table, error) { return open(path, disk.LoadMapped) }

// Load reads a table file into memory for a server (disk.Load: on Linux,
// anonymous memory in transparent huge pages, one copy for every table
// loaded from the same file), where Open maps the file. A contains search
// reads lists and names all over the table: in huge pages it misses the
// TLB far less, whatever state the page cache holds the file in.
func Load(path string) (*Table, error) { return open(path, disk.Load) }

func open(path string, load func(string) (*disk.Loaded, error)) (*Table, error) {
	l, err := load(path)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", path, err)
	}
	t, err := parseTable(l.Bytes)
	if err == nil {
		err = t.markDups()
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("table %s: %w", path, err)
	}
	t.loaded = l
	return t, nil
}

// parseTable reads a mapped table and checks what its searches and
// lookups will read, so that they stay in bounds whatever the file holds.
func parseTable(mm []byte) (*Table, error) {
	if len(mm) < len(tableMagic) {
		return nil, fmt.Errorf("too short (%d bytes)", len(mm))
	}
	magic := string(mm[:len(tableMagic)])
	_, reads := FormatVersions()
	if !slices.Contains(reads, magic) {
		return nil, errors.New("not a gds table (bad magic)")
	}
	fields := fieldsOf(magic)
	if hdrLen := len(tableMagic) + 8 + fields*2*8; len(mm) < hdrLen {
		return nil, fmt.Errorf("too short (%d bytes)", len(mm))
	}
	p := len(tableMagic)
	n := binary.LittleEndian.Uint64(mm[p:])
	p += 8
	var secs [secCount][]byte
	for i := 0; i < fields; i++ {
		off := binary.LittleEndian.Uint64(mm[p+16*i:])
		l := binary.LittleEndian.Uint64(mm[p+16*i+8:])
		if off > uint64(len(mm)) || l > uint64(len(mm))-off || off%8 != 0 {
			return nil, fmt.Errorf("section %d out of range", i)
		}
		secs[i] = mm[off : off+l]
	}
	t := &Table{
		n:     int(n),
		names: secs[secNames],
		slots: disk.FromBytes[uint32](secs[secSlots]),
		mm:    mm,
	}
	if n > 1<<32-2 {
		return nil, errors.New("too many names")
	}
	t.hasQuad = magic == tableMagicV5 || magic == tableMagicV6
	if magic == tableMagicV4 || t.hasQuad {
		t.cells = true
		if err := t.parseCells(secs[secCells], secs[secBands], secs[secOverflow]); err != nil {
			return nil, err
		}
	} else if err := t.parseRecs(magic, secs[secRecs], secs[secIDBase]); err != nil {
		return nil, err
	}
	if err := t.checkSlots(); err != nil {
		return nil, err
	}
	if magic != tableMagicV1 {
		if err := t.parseDups(secs[secDupKeys], secs[secDupOffs], secs[secDupList]); err != nil {
			return nil, err
		}
	}
	if magic == tableMagicV6 {
		if t.dupIDs = disk.FromBytes[uint32](secs[secDupIDs]); len(t.dupIDs) != len(t.dupList) {
			return nil, errors.New("duplicate-name IDs disagree with their list")
		}
	}
	blob := secs[secBitmaps]
	var err error
	if t.accessLists, err = newPostingLists("access", disk.FromBytes[int64](secs[secAccessKeys]), disk.FromBytes[uint64](secs[secAccessOffs]), blob, t.n, characterText, false); err != nil {
		return nil, err
	}
	if t.grams, err = newPostingLists("trigram", disk.FromBytes[uint32](secs[secGramKeys]), disk.FromBytes[uint64](secs[secGramOffs]), blob, t.n, quotedGram, false); err != nil {
		return nil, err
	}
	if t.prefix, err = newPostingLists("prefix", disk.FromBytes[uint32](secs[secPrefixKeys]), disk.FromBytes[uint64](secs[secPrefixOffs]), blob, t.n, quotedGram, false); err != nil {
		return nil, err
	}
	if t.quads, err = newPostingLists("four-byte gram", disk.FromBytes[uint32](secs[secQuadKeys]), disk.FromBytes[uint64](secs[secQuadOffs]), blob, t.n, quotedQuad, true); err != nil {
		return nil, err
	}
	if t.prefix4, err = newPostingLists("four-byte prefix", disk.FromBytes[uint32](secs[secPrefix4Keys]), disk.FromBytes[uint64](secs[secPrefix4Offs]), blob, t.n, quotedQuad, false); err != nil {
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

// checkSlots checks the name hash table: every slot empty or an ordinal
// of the table, and at least one empty, so that a probe for a missing
// name ends.
func (t *Table) checkSlots() error {
	empty := false
	for _, v := range t.slots {
		if v > uint32(t.n) {
			return errors.New("name hash table names a missing ordinal")
		}
		empty = empty || v == 0
	}
	if len(t.slots) > 0 && !empty {
		return errors.New("name hash table is full")
	}
	return nil
}

// parseDups reads the duplicate-name index (tables from GDSTBL02 on):
// each group's first ordinal, its list's offset and length, and the lists,
// every one in bounds and naming ordinals of the table.
func (t *Table) parseDups(keys, offs, list []byte) error {
	t.grouped = true
	t.dupKeys = disk.FromBytes[uint32](keys)
	t.dupOffs = disk.FromBytes[uint32](offs)
	t.dupList = disk.FromBytes[uint32](list)
	if len(t.dupOffs) != 2*len(t.dupKeys) {
		return errors.New("duplicate-name index is inconsistent")
	}
	for i := range t.dupKeys {
		if uint64(t.dupOffs[2*i])+uint64(t.dupOffs[2*i+1]) > uint64(len(t.dupList)) || t.dupKeys[i] >= uint32(t.n) {
			return fmt.Errorf("duplicate-name list %d out of range", i)
		}
	}
	for _, o := range t.dupList {
		if o >= uint32(t.n) {
			return errors.New("duplicate-name list names a missing ordinal")
		}
	}
	return nil
}

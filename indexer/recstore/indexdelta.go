package recstore

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	"gds/indexer/recpack"
	"gds/snapshots/disk"
)

// An incremental build that keeps a store's base keeps its index too: the
// base's index (<kind>.idx-base, hard-linked, the <kind>.idx of the store
// written whole) and an index delta (<kind>.idx-delta) of the records the
// base does not hold as they are now. A rename of every 100th of 10M
// characters then writes about 2 MB of index instead of 156 MB (the whole
// index, rewritten: docs/fleet.md). Open reads the two as one: the keys and
// locations of base and delta merged into memory of the process's own
// (8 bytes a record), the hashes, which only a build reads, merged at their
// first use.
//
// The index delta, GDSSTD01, little-endian, every section padded to 8
// bytes:
//
//	 0 "GDSSTD01"
//	 8 records n, base and delta
//	16 records of the base index
//	24 size of the base index file
//	32 base records hidden h: removed, or replaced by a delta record
//	40 delta records m
//	48 blocks of the base
//	56 blocks, base and delta
//	64 largest block, uncompressed
//	72 flags: 8 = records are packed, and the file ends with their shapes
//	80 hidden: h uint32, the base positions, ascending
//	   keys: m int64, ascending
//	   locations: m uint32, block << 6 | record within the block, each in
//	     a block past the base's
//	   hashes: m uint64
//	   block ends: (blocks - blocks of the base) uint64, where each delta
//	     block ends in base and delta taken as one
//	   shapes (flag 8): uint64 length, then the shapes of base and delta
//
// The base index names no delta block (its blocks are the base's); a
// store written with a delta before the index delta (its index whole,
// locations in both files) is read as before, and the build after it
// writes its index whole again until the store is written whole.
const (
	deltaMagic  = "GDSSTD01"
	deltaHeader = 80
	// Suffixes of a store's index files: whole, or a base and a delta.
	idxWhole = ".idx"
	idxBase  = ".idx-base"
	idxDelta = ".idx-delta"
)

// DeltaFormatVersions are the index-delta format a build writes and those
// read, for `gds version`.
func DeltaFormatVersions() (writes string, reads []string) {
	return deltaMagic, []string{deltaMagic}
}

// indexDelta is a parsed index delta; every slice aliases its file.
type indexDelta struct {
	n, baseN, baseIdxSize       uint64
	baseBlocks, blocks, largest uint64
	packed                      bool
	hidden                      []uint32
	keys                        []int64
	locs                        []uint32
	hashes                      []uint64
	ends                        []uint64
	shapes                      []byte
}

// parseIndexDelta reads an index delta's layout, checking that its
// sections are in order: hidden positions and keys ascending, locations
// in delta blocks, block ends ascending.
func parseIndexDelta(b []byte) (*indexDelta, error) {
	if len(b) < deltaHeader || string(b[:8]) != deltaMagic {
		return nil, fmt.Errorf("bad index delta")
	}
	u := func(at uint64) uint64 { return binary.LittleEndian.Uint64(b[at:]) }
	d := &indexDelta{n: u(8), baseN: u(16), baseIdxSize: u(24), baseBlocks: u(48), blocks: u(56), largest: u(64)}
	h, m, flags := u(32), u(40), u(72)
	if flags&^uint64(flagPacked) != 0 {
		return nil, fmt.Errorf("index delta has unknown flags %#x", flags&^uint64(flagPacked))
	}
	d.packed = flags&flagPacked != 0
	size := uint64(len(b))
	if h > d.baseN || h > size || m > size || d.n != d.baseN-h+m || d.n > math.MaxUint32 ||
		d.blocks >= maxBlocks || d.baseBlocks > d.blocks {
		return nil, fmt.Errorf("index delta header is damaged")
	}
	p := uint64(deltaHeader)
	var short bool
	take := func(n uint64) []byte {
		if short || n > size-p || disk.Pad8(n) > size-p {
			short = true
			return nil
		}
		s := b[p : p+n]
		p += disk.Pad8(n)
		return s
	}
	hidden, keys, locs, hashes, ends := take(4*h), take(8*m), take(4*m), take(8*m), take(8*(d.blocks-d.baseBlocks))
	if d.packed {
		if l := take(8); l != nil {
			d.shapes = take(binary.LittleEndian.Uint64(l))
		}
	}
	if short || p != size {
		return nil, fmt.Errorf("index delta is %d bytes, its layout says otherwise", size)
	}
	d.hidden, d.keys = disk.FromBytes[uint32](hidden), disk.FromBytes[int64](keys)
	d.locs, d.hashes = disk.FromBytes[uint32](locs), disk.FromBytes[uint64](hashes)
	d.ends = disk.FromBytes[uint64](ends)
	for k := 1; k < len(d.hidden); k++ {
		if d.hidden[k] <= d.hidden[k-1] {
			return nil, fmt.Errorf("index delta's hidden positions are out of order")
		}
	}
	if h > 0 && uint64(d.hidden[h-1]) >= d.baseN {
		return nil, fmt.Errorf("index delta hides position %d of %d", d.hidden[h-1], d.baseN)
	}
	for k := 1; k < len(d.keys); k++ {
		if d.keys[k] <= d.keys[k-1] {
			return nil, fmt.Errorf("index delta's keys are out of order")
		}
	}
	for _, loc := range d.locs {
		if blk := uint64(loc >> blockShift); blk < d.baseBlocks || blk >= d.blocks {
			return nil, fmt.Errorf("index delta places a record in block %d, outside the delta's", blk)
		}
	}
	for k := 1; k < len(d.ends); k++ {
		if d.ends[k] < d.ends[k-1] {
			return nil, fmt.Errorf("index delta's block ends are out of order")
		}
	}
	return d, nil
}

// parseSplit reads a store of a base index and an index delta over its
// data files.
func (s *Store) parseSplit(baseIdx, idxd, data, delta []byte) error {
	d, err := parseIndexDelta(idxd)
	if err != nil {
		return err
	}
	u := &Store{}
	if err := u.parseIndex(baseIdx); err != nil {
		return fmt.Errorf("index base: %w", err)
	}
	ub := u.blk
	switch {
	case ub == nil || !ub.bare || ub.blocks != ub.baseBlocks:
		return fmt.Errorf("index base is no base of a delta")
	case d.baseN != uint64(u.n) || d.baseIdxSize != uint64(len(baseIdx)) || d.baseBlocks != uint64(ub.blocks):
		return fmt.Errorf("index delta was written over another base")
	case d.packed != (ub.shapes != nil):
		return fmt.Errorf("index delta packs records unlike its base")
	case len(d.ends) > 0 && d.ends[0] < u.baseSize:
		return fmt.Errorf("index delta's first block ends inside the base")
	}
	br := &blockReader{dict: ub.dict, offs: ub.offs, offs32: ub.offs32, tail: d.ends, blocks: uint32(d.blocks),
		baseBlocks: ub.blocks, largest: max(ub.largest, d.largest), bare: true}
	if d.packed {
		if br.shapes, err = recpack.Parse(d.shapes); err != nil {
			return err
		}
	}
	s.under, s.idxd, s.blk, s.baseSize = u, d, br, u.baseSize
	if err := s.merge(); err != nil {
		return err
	}
	if uint64(len(data)) != s.baseSize {
		return fmt.Errorf("data file is %d bytes, index says %d", len(data), s.baseSize)
	}
	s.base, s.delta = data, delta
	return br.newDecoder()
}

// merge fills s's keys and locations (and the delta records' positions)
// from its base index and index delta, in key order.
func (s *Store) merge() error {
	u, d := s.under, s.idxd
	n := int(d.n)
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	if u.n > 0 {
		lo, hi = u.Key(0), u.Key(u.n-1)
	}
	if len(d.keys) > 0 {
		lo, hi = min(lo, d.keys[0]), max(hi, d.keys[len(d.keys)-1])
	}
	narrow := n == 0 || uint64(hi)-uint64(lo) <= math.MaxUint32
	if narrow {
		s.keys32, s.keyBase = make([]uint32, 0, n), lo
	} else {
		s.keys = make([]int64, 0, n)
	}
	locs := make([]uint32, 0, n)
	s.dpos = make([]uint32, len(d.keys))
	baseLoc := u.blk.locsInOrder()
	last := int64(math.MinInt64)
	put := func(key int64, loc uint32) error {
		if len(locs) == n || (len(locs) > 0 && key <= last) {
			return fmt.Errorf("index delta and base disagree at key %d", key)
		}
		if narrow {
			s.keys32 = append(s.keys32, uint32(key-lo))
		} else {
			s.keys = append(s.keys, key)
		}
		locs, last = append(locs, loc), key
		return nil
	}
	hk, j := 0, 0
	for b := 0; b < u.n || j < len(d.keys); {
		if b < u.n && hk < len(d.hidden) && int(d.hidden[hk]) == b {
			b, hk = b+1, hk+1
			continue
		}
		var err error
		if b < u.n && (j == len(d.keys) || u.Key(b) < d.keys[j]) {
			loc, ok := baseLoc(b)
			if !ok {
				return fmt.Errorf("index base is damaged at record %d", b)
			}
			err = put(u.Key(b), loc)
			b++
		} else {
			s.dpos[j] = uint32(len(locs))
			err = put(d.keys[j], d.locs[j])
			j++
		}
		if err != nil {
			return err
		}
	}
	if len(locs) != n {
		return fmt.Errorf("index delta and base hold %d records, not %d", len(locs), n)
	}
	s.n, s.blk.locs = n, locs
	return nil
}

// locsInOrder returns record i's location for i ascending from 0, reading
// block starts (flag 4) without a search per record.
func (b *blockReader) locsInOrder() func(i int) (uint32, bool) {
	if b.locs != nil {
		return func(i int) (uint32, bool) {
			loc := b.locs[i]
			return loc, loc>>blockShift < b.blocks
		}
	}
	blk := 0
	return func(i int) (uint32, bool) {
		for blk < int(b.blocks) && uint32(i) >= b.starts[blk+1] {
			blk++
		}
		if blk >= int(b.blocks) || uint32(i) < b.starts[blk] || i-int(b.starts[blk]) >= blockRecords {
			return 0, false
		}
		return uint32(blk)<<blockShift | uint32(i-int(b.starts[blk])), true
	}
}

// mergeHashes fills the hashes of a store with an index delta, by
// position, at their first use.
func (s *Store) mergeHashes() {
	u, d := s.under, s.idxd
	hashes := make([]uint64, s.n)
	b, hk, j := 0, 0, 0
	for i := range hashes {
		if j < len(s.dpos) && int(s.dpos[j]) == i {
			hashes[i], j = d.hashes[j], j+1
			continue
		}
		for hk < len(d.hidden) && int(d.hidden[hk]) == b {
			b, hk = b+1, hk+1
		}
		hashes[i], b = u.hashes[b], b+1
	}
	s.hashes = hashes
}

// Split returns where the record at position i lies in a store with an
// index delta: at position j of its base index, or (delta) the j-th record
// of its index delta. A store without one holds every record at its own
// position. A column kept as a base and a delta (indexer/affcol) is read
// through it.
func (s *Store) Split(i int) (j int, delta bool) {
	if s.idxd == nil {
		return i, false
	}
	j, found := slices.BinarySearch(s.dpos, uint32(i))
	if found {
		return j, true
	}
	// i is the r-th base record not hidden: the base position r + k, k
	// the number of hidden positions before it.
	r, hidden := i-j, s.idxd.hidden
	k := sort.Search(len(hidden), func(k int) bool { return int(hidden[k])-k > r })
	return r + k, false
}

// IndexDelta reports whether the store reads a base index and an index
// delta, and how many records each holds.
func (s *Store) IndexDelta() (base, delta int, ok bool) {
	if s.idxd == nil {
		return 0, 0, false
	}
	return s.under.n, len(s.idxd.keys), true
}

// baseIndex is the store of the index a delta writer over s keeps, and
// its file's suffix; nil when s's index names delta blocks (a store
// written with a delta before index deltas), which no index delta can
// be written over.
func (s *Store) baseIndex() (*Store, string) {
	switch {
	case s.idxd != nil:
		return s.under, idxBase
	case s.blk != nil && s.blk.blocks == s.blk.baseBlocks:
		return s, idxWhole
	}
	return nil, ""
}

// indexDelta is the index delta of a delta writer over a base index of
// baseIdxSize bytes: the base's records it no longer keeps, and the
// records in the delta's blocks.
func (sw *Writer) indexDelta(baseIdxSize int64) ([]byte, error) {
	u, _ := sw.prev.baseIndex()
	bw := sw.bw
	baseBlocks := u.blk.blocks
	var hidden []uint32
	var keys []int64
	var locs []uint32
	var hashes []uint64
	b := 0
	for i, loc := range sw.locs.mem { // a delta writer's, in memory
		key := sw.keys.mem[i]
		if loc>>blockShift >= baseBlocks {
			keys, locs, hashes = append(keys, key), append(locs, loc), append(hashes, sw.hashes.mem[i])
			continue
		}
		for b < u.n && u.Key(b) < key {
			hidden, b = append(hidden, uint32(b)), b+1
		}
		if b == u.n || u.Key(b) != key {
			return nil, fmt.Errorf("record %d kept in the base is not in it", key)
		}
		b++
	}
	for ; b < u.n; b++ {
		hidden = append(hidden, uint32(b))
	}
	var flags uint64
	var shapes []byte
	if bw.pack != nil {
		flags, shapes = flagPacked, bw.pack.Marshal()
	}
	out := []byte(deltaMagic)
	for _, v := range []uint64{uint64(sw.keys.n), uint64(u.n), uint64(baseIdxSize), uint64(len(hidden)),
		uint64(len(keys)), uint64(baseBlocks), uint64(len(bw.offs) - 1), bw.largest, flags} {
		out = binary.LittleEndian.AppendUint64(out, v)
	}
	pad := func() {
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
	}
	out = append(out, disk.AsBytes(hidden)...)
	pad()
	out = append(out, disk.AsBytes(keys)...)
	out = append(out, disk.AsBytes(locs)...)
	pad()
	out = append(out, disk.AsBytes(hashes)...)
	out = append(out, disk.AsBytes(bw.offs[baseBlocks+1:])...)
	if flags&flagPacked != 0 {
		out = binary.LittleEndian.AppendUint64(out, uint64(len(shapes)))
		out = append(out, shapes...)
		pad()
	}
	return out, nil
}

package recstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gds/indexer/recpack"
	"gds/snapshots/disk"
)

// Writer writes a Store. A full writer puts every record in a new
// base file; a delta writer (NewDeltaWriter) hard-links the previous
// store's base and writes only records that are not in it to a delta file.
type Writer struct {
	dir, kind string
	f         *os.File          // the file new blocks go to: base or delta
	w         *disk.ChunkWriter // huge-page-sized writes: see disk.HugeChunk
	bw        *blockWriter
	// The records' keys, block positions and hashes in store order: on
	// disk for a full writer (spool.go).
	keys     *spool[int64]
	locs     *spool[uint32]
	hashes   *spool[uint64]
	baseSize uint64 // of a delta writer's shared base; 0 for a full writer
	delta    bool
	// split: a delta writer that keeps the base's index and writes an
	// index delta (indexdelta.go); deltaN counts the records it holds.
	split  bool
	deltaN int
	prev   *Store // the previous store, when records are kept from it
	// prevLoc walks prev's locations in order, for Keep.
	prevLoc   func(i int) (uint32, bool)
	prevGroup map[string][]int64
	groups    map[string][]int64
}

// NewWriter starts a store written whole. prev, when set, is the
// previous generation's store, which keep takes unchanged records from.
func NewWriter(dir, kind string, prev *Store) (*Writer, error) {
	for _, stale := range []string{".delta", idxBase, idxDelta} {
		if err := os.Remove(filepath.Join(dir, kind+stale)); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	f, err := disk.CreateFresh(filepath.Join(dir, kind+".data"), disk.PrivateFile)
	if err != nil {
		return nil, err
	}
	sw := &Writer{dir: dir, kind: kind, f: f, w: disk.NewChunkWriter(f, disk.HugeChunk), groups: map[string][]int64{}}
	sw.bw = &blockWriter{write: sw.writeFrame, offs: []uint64{0}, pack: recpack.NewPacker(nil)}
	if err := sw.spools(dir); err != nil {
		f.Close()
		return nil, err
	}
	sw.from(prev)
	return sw, nil
}

// NewDeltaWriter starts a store that shares prev's base file (linked
// into dir) and writes the rest to a delta file. prev must be compressed.
// The base's index is linked too, and an index delta written beside it,
// unless prev's index names delta blocks (IndexDelta).
func NewDeltaWriter(dir, kind string, prev *Store, prevDir string) (*Writer, error) {
	links := [][2]string{{".data", ".data"}}
	_, baseIdx := prev.baseIndex()
	if baseIdx != "" {
		links = append(links, [2]string{baseIdx, idxBase})
	}
	for _, l := range links {
		to := filepath.Join(dir, kind+l[1])
		if err := os.Remove(to); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if err := disk.LinkOrCopy(filepath.Join(prevDir, kind+l[0]), to, disk.PrivateFile); err != nil {
			return nil, err
		}
	}
	f, err := disk.CreateFresh(filepath.Join(dir, kind+".delta"), disk.PrivateFile)
	if err != nil {
		return nil, err
	}
	sw := &Writer{dir: dir, kind: kind, f: f, w: disk.NewChunkWriter(f, disk.HugeChunk), groups: map[string][]int64{},
		baseSize: prev.baseSize, delta: true, split: baseIdx != ""}
	pb := prev.blk
	offs := make([]uint64, pb.baseBlocks+1)
	for k := range offs {
		offs[k] = pb.off(uint32(k))
	}
	sw.bw = &blockWriter{write: sw.writeFrame, next: pb.baseBlocks, end: prev.baseSize, largest: pb.largest, offs: offs}
	if pb.shapes != nil {
		// The delta's records are packed as the base's, with its shapes
		// and any it meets besides.
		sw.bw.pack = recpack.NewPacker(pb.shapes)
	}
	if err := sw.bw.useDict(slices.Clone(pb.dict)); err != nil {
		f.Close()
		return nil, err
	}
	_ = sw.spools("") // in memory: cannot fail
	sw.from(prev)
	return sw, nil
}

// spools starts the index's arrays: in temporary files in dir, or in
// memory when dir is "".
func (sw *Writer) spools(dir string) error {
	var err error
	if sw.keys, err = newSpool[int64](dir); err != nil {
		return err
	}
	if sw.locs, err = newSpool[uint32](dir); err != nil {
		sw.closeSpools()
		return err
	}
	if sw.hashes, err = newSpool[uint64](dir); err != nil {
		sw.closeSpools()
		return err
	}
	return nil
}

// closeSpools lets go of the index's arrays (and their files).
func (sw *Writer) closeSpools() {
	for _, s := range []interface{ close() }{sw.keys, sw.locs, sw.hashes} {
		if s != nil {
			s.close()
		}
	}
}

func (sw *Writer) writeFrame(b []byte) error {
	_, err := sw.w.Write(b)
	return err
}

func (sw *Writer) from(prev *Store) {
	if prev == nil {
		return
	}
	sw.prev, sw.prevGroup = prev, map[string][]int64{}
	for name := range prev.groups {
		sw.prevGroup[name], _ = prev.groupKeys(name)
	}
}

// Reserve makes room for n records.
func (sw *Writer) Reserve(n int) {
	sw.keys.grow(n)
	sw.locs.grow(n)
	sw.hashes.grow(n)
}

// Add appends a new or changed record; keys arrive ascending (the snapshot
// guarantees it).
func (sw *Writer) Add(key int64, raw []byte) error {
	return sw.addHashed(key, raw, HashRecord(raw))
}

func (sw *Writer) addHashed(key int64, raw []byte, hash uint64) error {
	if len(raw) > maxDecoded/2 {
		return fmt.Errorf("record %d is too large (%d bytes)", key, len(raw))
	}
	loc, err := sw.bw.add(key, raw)
	if err != nil {
		return err
	}
	sw.keys.add(key)
	sw.locs.add(loc)
	sw.hashes.add(hash)
	if sw.delta {
		sw.deltaN++
	}
	return nil
}

// IndexDelta reports whether the writer writes an index delta beside the
// base's index, and how many records it holds so far: those added, and
// those kept from the previous delta.
func (sw *Writer) IndexDelta() (records int, ok bool) { return sw.deltaN, sw.split }

// Keep carries the previous store's record at position pi over unchanged;
// raw is its line (the same bytes); pi ascends from call to call. A delta
// writer leaves a record of the shared base where it is and copies one of
// the previous delta; a full writer writes it again. Its group keys come
// along.
func (sw *Writer) Keep(pi int, raw []byte) error {
	p := sw.prev
	var err error
	switch {
	case !sw.delta:
		err = sw.Add(p.Key(pi), raw) // hashed anew: p may use the old hash
	default:
		if sw.prevLoc == nil {
			sw.prevLoc = p.blk.locsInOrder()
		}
		loc, ok := sw.prevLoc(pi)
		if !ok || loc>>blockShift >= p.blk.baseBlocks { // in the previous delta (or damaged): written again
			err = sw.addHashed(p.Key(pi), raw, p.Hash(pi))
			break
		}
		sw.keys.add(p.Key(pi))
		sw.locs.add(loc)
		sw.hashes.add(p.Hash(pi))
	}
	if err != nil {
		return err
	}
	if len(sw.prevGroup) > 0 { // ranging over an empty map still starts an iterator
		for name, keys := range sw.prevGroup {
			sw.Group(name, keys[pi])
		}
	}
	return nil
}

// Group files the record just added under key in the named group.
func (sw *Writer) Group(name string, key int64) {
	sw.groups[name] = append(sw.groups[name], key, int64(sw.keys.n-1))
}

// Abort stops the writer after a failed read, leaving its files to the
// build directory's removal.
func (sw *Writer) Abort() {
	sw.bw.stop()
	sw.f.Close()
	sw.closeSpools()
}

func (sw *Writer) Close() error {
	defer sw.closeSpools()
	if err := sw.bw.finish(); err != nil {
		sw.f.Close()
		return err
	}
	if err := disk.SyncClose(sw.f, sw.w); err != nil {
		return err
	}
	if err := sw.writeIndex(); err != nil {
		return err
	}
	for name, pairs := range sw.groups {
		sortPairs(pairs)
		if err := disk.WriteFileSync(filepath.Join(sw.dir, sw.kind+".by-"+name), disk.AsBytes(pairs), disk.PrivateFile); err != nil {
			return err
		}
	}
	return nil
}

// writeIndex writes the index whole, or a split writer's index delta.
func (sw *Writer) writeIndex() error {
	if sw.split {
		fi, err := os.Stat(filepath.Join(sw.dir, sw.kind+idxBase))
		if err != nil {
			return err
		}
		idx, err := sw.indexDelta(fi.Size())
		if err != nil {
			return err
		}
		return disk.WriteFileSync(filepath.Join(sw.dir, sw.kind+idxDelta), idx, disk.PrivateFile)
	}
	bw := sw.bw
	base, baseBlocks := sw.baseSize, uint64(len(bw.offs)-1)
	if sw.delta {
		baseBlocks = uint64(sw.prev.blk.baseBlocks)
	} else {
		base = bw.end
	}
	f, err := disk.CreateFresh(filepath.Join(sw.dir, sw.kind+idxWhole), disk.PrivateFile)
	if err != nil {
		return err
	}
	w := disk.NewChunkWriter(f, disk.HugeChunk)
	if err := sw.index(w, base, baseBlocks); err != nil {
		f.Close()
		return err
	}
	return disk.SyncClose(f, w)
}

// index writes the GDSSTO04 index file (layout in blocks.go), or a
// GDSSTO03 one when the block writer keeps whole frames, to w.
func (sw *Writer) index(w io.Writer, base, baseBlocks uint64) error {
	bw := sw.bw
	n := sw.keys.n
	blocks := len(bw.offs) - 1
	narrow := n == 0 || keysFit(sw.keys.first, sw.keys.last)
	keyBase := sw.keys.first // 0 when there are no keys
	var flags uint64
	if narrow {
		flags |= flagKeys32
	}
	var starts []uint32
	var shapes []byte
	if bw.pack != nil {
		flags |= flagPacked
		shapes = bw.pack.Marshal()
	}
	if !bw.whole {
		if bw.end <= math.MaxUint32 {
			flags |= flagOffs32
		}
		if !sw.delta {
			var err error
			if starts, err = blockStarts(sw.locs, blocks); err != nil {
				return err
			}
			if starts != nil {
				flags |= flagStarts
			}
		}
	}
	magic := storeMagic
	if bw.whole {
		magic = storeMagicV3
	}
	out := &padWriter{w: w}
	out.write([]byte(magic))
	for _, v := range []uint64{uint64(n), base, uint64(blocks), baseBlocks, uint64(keyBase), flags,
		uint64(len(bw.dict)), bw.largest} {
		out.write(binary.LittleEndian.AppendUint64(nil, v))
	}
	out.write(bw.dict)
	out.pad()
	var err error
	if narrow {
		buf := make([]byte, 0, 4*spoolChunk)
		err = sw.keys.each(func(keys []int64) error {
			buf = buf[:0]
			for _, k := range keys {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(k-keyBase))
			}
			return out.write(buf)
		})
		out.pad()
	} else {
		err = eachBytes(sw.keys, out.write)
	}
	if err == nil && starts != nil {
		out.write(disk.AsBytes(starts))
	} else if err == nil {
		err = eachBytes(sw.locs, out.write)
	}
	out.pad()
	if err == nil {
		err = eachBytes(sw.hashes, out.write)
	}
	if err != nil {
		return err
	}
	if flags&flagOffs32 != 0 {
		offs := make([]byte, 0, 4*len(bw.offs))
		for _, o := range bw.offs {
			offs = binary.LittleEndian.AppendUint32(offs, uint32(o))
		}
		out.write(offs)
		out.pad()
	} else {
		out.write(disk.AsBytes(bw.offs))
	}
	if flags&flagPacked != 0 {
		out.write(binary.LittleEndian.AppendUint64(nil, uint64(len(shapes))))
		out.write(shapes)
		out.pad()
	}
	return out.err
}

// padWriter writes an index's sections to w, keeping the first error and
// the bytes written, which pad rounds up to a multiple of 8.
type padWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (p *padWriter) write(b []byte) error {
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
	p.n += uint64(len(b))
	return p.err
}

func (p *padWriter) pad() {
	var zero [8]byte
	p.write(zero[:disk.Pad8(p.n)-p.n])
}

// eachBytes hands s's values to write as bytes, a chunk at a time.
func eachBytes[T int64 | uint32 | uint64](s *spool[T], write func([]byte) error) error {
	return s.each(func(v []T) error { return write(disk.AsBytes(v)) })
}

// errOutOfOrder stops blockStarts' walk at the first record out of place.
var errOutOfOrder = errors.New("records out of block order")

// blockStarts returns, per block, the position of its first record (and
// then n), or nil unless the records fill the blocks in order, as a store
// written whole does.
func blockStarts(locs *spool[uint32], blocks int) ([]uint32, error) {
	starts := make([]uint32, 0, blocks+1)
	i := 0
	err := locs.each(func(chunk []uint32) error {
		for _, loc := range chunk {
			blk, slot := int(loc>>blockShift), int(loc&(blockRecords-1))
			switch {
			case slot == 0 && blk == len(starts):
				starts = append(starts, uint32(i))
			case blk != len(starts)-1 || i-int(starts[blk]) != slot:
				return errOutOfOrder
			}
			i++
		}
		return nil
	})
	switch {
	case err == errOutOfOrder:
		return nil, nil
	case err != nil:
		return nil, err
	case len(starts) != blocks:
		return nil, nil
	}
	return append(starts, uint32(i)), nil
}

func sortPairs(p []int64) {
	n := len(p) / 2
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if p[2*a] != p[2*b] {
			if p[2*a] < p[2*b] {
				return -1
			}
			return 1
		}
		return int(p[2*a+1] - p[2*b+1])
	})
	out := make([]int64, len(p))
	for j, i := range idx {
		out[2*j], out[2*j+1] = p[2*i], p[2*i+1]
	}
	copy(p, out)
}

package recstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"gds/indexer/recpack"
	"gds/snapshots/disk"
)

// A block store (GDSSTO04, and GDSSTO03 before it) keeps its records in
// zstd blocks: consecutive records up to packedTarget bytes (blockTarget
// for lines) or blockRecords records, each packed (flag 8,
// indexer/recpack: its shape's number and its values in binary, after its
// length as a uvarint; the shapes are in the index) or, in stores written
// before 2026-11-25, the line followed by a newline. Packed in 512-byte
// blocks, a 10M characters' store takes 283 MB of data against 508 as
// lines in 1 KiB blocks, a lookup a fifth less CPU and the build a tenth
// less (docs/performance.md). Each block is one zstd frame
// compressed with the store's dictionary. The dictionary is raw content,
// the first dictSize bytes of records the full build wrote; small frames
// gain most of their ratio from it. A lookup decodes one block into a
// pooled buffer, and a block's cost is partly fixed plus its length: 1 KiB
// blocks with a 128 KiB dictionary take about two thirds of the CPU of
// GDSSTO03's 2 KiB blocks with 32 KiB, in about the same disk (figures in
// docs/performance.md). The blocks are written without entropy coding
// (zstd's raw literals and predefined sequence tables): reading a block's
// own Huffman and FSE tables was a third of a lookup's CPU, for 8% of the
// disk; stores written with entropy coding are read alike. The encoder copies the
// dictionary into its history for every block, so a larger one costs
// the build more than it saves on disk (256 KiB until 2026-11-25: 1.6%
// less disk, 10% more of the first phase's CPU); stores written with it
// are read alike, the index holding the dictionary.
//
// The index file, little-endian, every section padded to 8 bytes:
//
//	 0 "GDSSTO04"
//	 8 records n
//	16 size of <kind>.data (the base)
//	24 blocks, base and delta
//	32 blocks in the base
//	40 key base: the smallest key
//	48 flags: 1 = keys are stored as uint32 offsets from the key base;
//	   2 = block offsets are uint32; 4 = records follow the blocks in
//	   order (a store written whole), so block starts replace locations;
//	   8 = records are packed, and the index ends with their shapes
//	56 dictionary length
//	64 largest block, uncompressed
//	72 dictionary
//	   keys: n uint32 (flag 1) or n int64
//	   locations: n uint32, block << 6 | record within the block; or
//	     (flag 4) block starts: blocks+1 uint32, the position of each
//	     block's first record, then n
//	   hashes: n uint64, xxhash64 of each record
//	   offsets: blocks+1 uint64 (uint32 with flag 2), where each block
//	     starts in base and delta taken as one (block b spans offsets b
//	     to b+1)
//	   shapes (flag 8: records are packed): uint64 length, then the
//	     shapes (recpack.Shapes.Marshal) of base and delta
//
// GDSSTO04's data files hold each frame without zstd's 4-byte magic
// number (the reader puts it back); GDSSTO03 had flag 1 only, its frames
// whole, 2 KiB blocks and a 32 KiB dictionary.
const (
	blockTarget  = 1 << 10
	packedTarget = 512
	blockRecords = 64 // a location holds the record within its block in 6 bits
	blockShift   = 6
	maxBlocks    = 1 << (32 - blockShift)
	dictSize     = 128 << 10
	dictID       = 1
	v3Header     = 72
	flagKeys32   = 1
	flagOffs32   = 2
	flagStarts   = 4
	flagPacked   = 8
	// maxDecoded bounds what one block may decode to, whatever the index
	// claims (files damaged or hostile).
	maxDecoded = 256 << 20
)

// zstdMagic begins every zstd frame; GDSSTO04 stores frames without it.
const zstdMagic = "\x28\xb5\x2f\xfd"

// blockReader reads a block store's records.
type blockReader struct {
	dec        *zstd.Decoder
	dict       []byte
	locs       []uint32 // per record: block << blockShift | slot; nil with starts
	starts     []uint32 // per block, its first record's position (flag 4)
	offs       []uint64 // where each block starts; nil with offs32
	offs32     []uint32
	tail       []uint64 // with an index delta: where each delta block ends
	blocks     uint32
	baseBlocks uint32
	largest    uint64 // the largest block, uncompressed
	bare       bool   // frames are stored without zstdMagic (GDSSTO04)
	// shapes: the blocks hold packed records (flag 8), each after its
	// length; nil: lines, each ended by a newline.
	shapes *recpack.Shapes
	bufs   sync.Pool // *blockBufs
}

// blockBufs are one lookup's buffers: the frame with its magic put back,
// the decoded block, and a packed record's line.
type blockBufs struct{ frame, out, line []byte }

// off is where block k starts (k == blocks: where the last one ends).
func (b *blockReader) off(k uint32) uint64 {
	if k > b.baseBlocks && b.tail != nil {
		return b.tail[k-b.baseBlocks-1]
	}
	if b.offs32 != nil {
		return uint64(b.offs32[k])
	}
	return b.offs[k]
}

// locate returns the block of record i and its place in the block; ok is
// false when the index is damaged there.
func (b *blockReader) locate(i int) (blk uint32, slot int, ok bool) {
	if b.locs != nil {
		loc := b.locs[i]
		blk, slot = loc>>blockShift, int(loc&(blockRecords-1))
		return blk, slot, blk < b.blocks
	}
	// The last block starting at or before i.
	j, found := slices.BinarySearch(b.starts, uint32(i))
	if !found {
		j--
	}
	if j < 0 || j >= int(b.blocks) || uint32(i) < b.starts[j] || uint32(i) >= b.starts[j+1] ||
		i-int(b.starts[j]) >= blockRecords {
		return 0, 0, false
	}
	return uint32(j), i - int(b.starts[j]), true
}

// block is the block of record i; a damaged entry counts as past the base.
func (b *blockReader) block(i int) uint32 {
	blk, _, ok := b.locate(i)
	if !ok {
		return b.blocks
	}
	return blk
}

func (b *blockReader) close() {
	if b.dec != nil {
		b.dec.Close()
		b.dec = nil
	}
}

// read decodes the block of record i and calls fn with the record.
func (b *blockReader) read(i int, s *Store, fn func([]byte) error) error {
	blk, slot, ok := b.locate(i)
	if !ok {
		return ErrDamagedRecord
	}
	bb, _ := b.bufs.Get().(*blockBufs)
	if bb == nil {
		bb = new(blockBufs)
	}
	defer func() {
		if cap(bb.out)+cap(bb.frame)+cap(bb.line) <= 1<<20 {
			b.bufs.Put(bb)
		}
	}()
	out, err := b.decode(blk, s, bb)
	if err != nil {
		return err
	}
	if b.shapes != nil {
		rec, ok := packedRecord(out, slot)
		if !ok {
			return ErrDamagedRecord
		}
		if bb.line, err = b.shapes.Unpack(bb.line[:0], rec, s.Key(i)); err != nil {
			return ErrDamagedRecord
		}
		return fn(bb.line)
	}
	for range slot {
		k := bytes.IndexByte(out, '\n')
		if k < 0 {
			return ErrDamagedRecord
		}
		out = out[k+1:]
	}
	end := bytes.IndexByte(out, '\n')
	if end < 0 {
		return ErrDamagedRecord
	}
	return fn(out[:end])
}

// packedRecord is record slot of a block of packed records.
func packedRecord(blk []byte, slot int) ([]byte, bool) {
	for k := 0; ; k++ {
		n, w := binary.Uvarint(blk)
		if w <= 0 || n > uint64(len(blk)-w) {
			return nil, false
		}
		if k == slot {
			return blk[w : w+int(n)], true
		}
		blk = blk[w+int(n):]
	}
}

// decode returns block blk decoded, in bb's buffers.
func (b *blockReader) decode(blk uint32, s *Store, bb *blockBufs) ([]byte, error) {
	if blk >= b.blocks {
		return nil, ErrDamagedRecord
	}
	start, end := b.off(blk), b.off(blk+1)
	src := s.span(start, end)
	if src == nil {
		return nil, ErrDamagedRecord
	}
	if b.bare {
		bb.frame = append(bb.frame[:0], zstdMagic...)
		if s.files != nil {
			var err error
			if bb.frame, err = s.files.appendSpan(bb.frame, start, end, s.baseSize); err != nil {
				return nil, ErrDamagedRecord
			}
		} else {
			bb.frame = append(bb.frame, src...)
		}
		src = bb.frame
	}
	out, err := b.dec.DecodeAll(src, bb.out[:0])
	bb.out = out[:0]
	if err != nil {
		return nil, ErrDamagedRecord
	}
	return out, nil
}

// parseBlocks reads a GDSSTO03 or GDSSTO04 index; every slice aliases idx.
func (s *Store) parseBlocks(idx []byte, n int, v4 bool) error {
	if len(idx) < v3Header {
		return fmt.Errorf("index file is %d bytes, shorter than its header", len(idx))
	}
	u := func(at int) uint64 { return binary.LittleEndian.Uint64(idx[at:]) }
	s.baseSize = u(16)
	blocks, baseBlocks := u(24), u(32)
	s.keyBase = int64(u(40))
	flags, dictLen, largest := u(48), u(56), u(64)
	known := uint64(flagKeys32)
	if v4 {
		known |= flagOffs32 | flagStarts | flagPacked
	}
	if flags&^known != 0 {
		return fmt.Errorf("index file has unknown flags %#x", flags&^known)
	}
	if blocks >= maxBlocks || baseBlocks > blocks || dictLen > uint64(len(idx)) {
		return fmt.Errorf("index file header is damaged")
	}
	if flags&flagStarts != 0 && baseBlocks != blocks {
		return fmt.Errorf("index file header is damaged: block starts in a store with a delta")
	}
	keyBytes := 8 * n
	if flags&flagKeys32 != 0 {
		keyBytes = int(disk.Pad8(uint64(4 * n)))
	}
	locBytes := int(disk.Pad8(uint64(4 * n)))
	if flags&flagStarts != 0 {
		locBytes = int(disk.Pad8(4 * (blocks + 1)))
	}
	offBytes := 8 * (int(blocks) + 1)
	if flags&flagOffs32 != 0 {
		offBytes = int(disk.Pad8(4 * (blocks + 1)))
	}
	need := v3Header + int(disk.Pad8(dictLen)) + keyBytes + locBytes + 8*n + offBytes
	var shapes []byte
	if flags&flagPacked != 0 {
		if len(idx) < need+8 {
			return fmt.Errorf("index file is %d bytes, shorter than its shapes", len(idx))
		}
		l := u(need)
		if l > uint64(len(idx)-need-8) {
			return fmt.Errorf("index file's shapes are damaged")
		}
		shapes = idx[need+8 : need+8+int(l)]
		need += 8 + int(disk.Pad8(l))
	}
	if len(idx) != need {
		return fmt.Errorf("index file is %d bytes, want %d", len(idx), need)
	}
	br := &blockReader{blocks: uint32(blocks), baseBlocks: uint32(baseBlocks), largest: largest, bare: v4}
	if shapes != nil {
		var err error
		if br.shapes, err = recpack.Parse(shapes); err != nil {
			return err
		}
	}
	p := v3Header
	br.dict = idx[p : p+int(dictLen)]
	p += int(disk.Pad8(dictLen))
	if flags&flagKeys32 != 0 {
		s.keys32 = disk.FromBytes[uint32](idx[p : p+4*n])
		if s.keys32 == nil {
			s.keys32 = []uint32{}
		}
	} else {
		s.keys = disk.FromBytes[int64](idx[p : p+8*n])
	}
	p += keyBytes
	if flags&flagStarts != 0 {
		br.starts = disk.FromBytes[uint32](idx[p : p+4*(int(blocks)+1)])
		if br.starts[0] != 0 || br.starts[blocks] != uint32(n) {
			return fmt.Errorf("block starts run from %d to %d, not 0 to %d records", br.starts[0], br.starts[blocks], n)
		}
	} else {
		br.locs = disk.FromBytes[uint32](idx[p : p+4*n])
	}
	p += locBytes
	s.hashes = disk.FromBytes[uint64](idx[p : p+8*n])
	p += 8 * n
	if flags&flagOffs32 != 0 {
		br.offs32 = disk.FromBytes[uint32](idx[p : p+4*(int(blocks)+1)])
	} else {
		br.offs = disk.FromBytes[uint64](idx[p : p+8*(int(blocks)+1)])
	}
	if end := br.off(br.baseBlocks); end != s.baseSize {
		return fmt.Errorf("base ends at %d, index says %d", end, s.baseSize)
	}
	s.blk = br
	return nil
}

// newDecoder makes the decoder of the store's blocks, over its dictionary
// (which the decoder reads in place).
func (b *blockReader) newDecoder() error {
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded)}
	if len(b.dict) > 0 {
		opts = append(opts, zstd.WithDecoderDictRaw(dictID, b.dict))
	}
	dec, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return err
	}
	b.close()
	b.dec = dec
	return nil
}

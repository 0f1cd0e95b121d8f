package indexer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A GDSSTO03 store keeps its records in zstd blocks: consecutive records
// (each followed by a newline) up to blockTarget bytes or blockRecords
// records, each block one zstd frame compressed with the store's
// dictionary. The dictionary is raw content, the first dictSize bytes of
// records the full build wrote; small frames gain most of their ratio from
// it (characters: 184 bytes a record as JSON, 42 in a 2 KiB block with the
// dictionary, 52 without). A lookup decodes one block into a pooled buffer:
// 2 KiB blocks cost about 8 µs, 4 KiB twice that for 6% less disk.
//
// The index file, little-endian, every section padded to 8 bytes:
//
//	 0 "GDSSTO03"
//	 8 records n
//	16 size of <kind>.data (the base)
//	24 blocks, base and delta
//	32 blocks in the base
//	40 key base: the smallest key
//	48 flags: 1 = keys are stored as uint32 offsets from the key base
//	56 dictionary length
//	64 largest block, uncompressed
//	72 dictionary
//	   keys: n uint32 (flag 1) or n int64
//	   locations: n uint32, block << 6 | record within the block
//	   hashes: n uint64, xxhash64 of each record
//	   offsets: blocks+1 uint64, where each block starts in base and delta
//	   taken as one (block b spans offsets b to b+1)
const (
	blockTarget  = 2 << 10
	blockRecords = 64 // a location holds the record within its block in 6 bits
	blockShift   = 6
	maxBlocks    = 1 << (32 - blockShift)
	dictSize     = 32 << 10
	dictID       = 1
	v3Header     = 72
	flagKeys32   = 1
	// maxDecoded bounds what one block may decode to, whatever the index
	// claims (files damaged or hostile).
	maxDecoded = 256 << 20
)

// blockReader reads a GDSSTO03 store's records.
type blockReader struct {
	dec        *zstd.Decoder
	dict       []byte
	locs       []uint32
	offs       []uint64
	baseBlocks uint32
	largest    uint64    // the largest block, uncompressed
	bufs       sync.Pool // *[]byte, decoded blocks
}

func (b *blockReader) block(i int) uint32 { return b.locs[i] >> blockShift }

func (b *blockReader) close() {
	if b.dec != nil {
		b.dec.Close()
		b.dec = nil
	}
}

// read decodes the block of record i and calls fn with the record.
func (b *blockReader) read(i int, s *Store, fn func([]byte) error) error {
	loc := b.locs[i]
	blk, slot := uint64(loc>>blockShift), int(loc&(blockRecords-1))
	if blk+1 >= uint64(len(b.offs)) {
		return ErrDamagedRecord
	}
	src := s.span(b.offs[blk], b.offs[blk+1])
	if src == nil {
		return ErrDamagedRecord
	}
	bp, _ := b.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer func() {
		if cap(*bp) <= 1<<20 {
			b.bufs.Put(bp)
		}
	}()
	out, err := b.dec.DecodeAll(src, (*bp)[:0])
	*bp = out[:0]
	if err != nil {
		return ErrDamagedRecord
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

// parseV3 reads a GDSSTO03 index; every slice aliases idx.
func (s *Store) parseV3(idx []byte, n int) error {
	if len(idx) < v3Header {
		return fmt.Errorf("index file is %d bytes, shorter than its header", len(idx))
	}
	u := func(at int) uint64 { return binary.LittleEndian.Uint64(idx[at:]) }
	s.baseSize = u(16)
	blocks, baseBlocks := u(24), u(32)
	s.keyBase = int64(u(40))
	flags, dictLen, largest := u(48), u(56), u(64)
	if blocks >= maxBlocks || baseBlocks > blocks || dictLen > uint64(len(idx)) {
		return fmt.Errorf("index file header is damaged")
	}
	keyBytes := 8 * n
	if flags&flagKeys32 != 0 {
		keyBytes = int(pad8(uint64(4 * n)))
	}
	need := v3Header + int(pad8(dictLen)) + keyBytes + int(pad8(uint64(4*n))) + 8*n + 8*(int(blocks)+1)
	if len(idx) != need {
		return fmt.Errorf("index file is %d bytes, want %d", len(idx), need)
	}
	br := &blockReader{baseBlocks: uint32(baseBlocks), largest: largest}
	p := v3Header
	br.dict = idx[p : p+int(dictLen)]
	p += int(pad8(dictLen))
	if flags&flagKeys32 != 0 {
		s.keys32 = fromBytes[uint32](idx[p : p+4*n])
		if s.keys32 == nil {
			s.keys32 = []uint32{}
		}
	} else {
		s.keys = fromBytes[int64](idx[p : p+8*n])
	}
	p += keyBytes
	br.locs = fromBytes[uint32](idx[p : p+4*n])
	p += int(pad8(uint64(4 * n)))
	s.hashes = fromBytes[uint64](idx[p : p+8*n])
	p += 8 * n
	br.offs = fromBytes[uint64](idx[p : p+8*(int(blocks)+1)])
	if br.offs[baseBlocks] != s.baseSize {
		return fmt.Errorf("base ends at %d, index says %d", br.offs[baseBlocks], s.baseSize)
	}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded)}
	if dictLen > 0 {
		opts = append(opts, zstd.WithDecoderDictRaw(dictID, br.dict))
	}
	dec, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return err
	}
	br.dec = dec
	s.blk = br
	return nil
}

// blockWriter groups a store writer's records into blocks and compresses
// them on worker goroutines, writing the frames in order.
type blockWriter struct {
	write      func([]byte) error // appends a frame to the file
	cur        []byte             // the block being filled
	curN       int
	next       uint32   // the number of the block being filled
	offs       []uint64 // where each block starts; the last entry is the end
	end        uint64   // where the next block starts
	largest    uint64
	dict       []byte
	haveDict   bool
	held       [][]byte // blocks filled before the dictionary was chosen
	heldBytes  int
	enc        *zstd.Encoder
	jobs       chan *blockJob
	order      chan *blockJob
	done       sync.WaitGroup
	mu         sync.Mutex
	err        error
	bufs       sync.Pool // *blockJob
	closeOnce  sync.Once
	workersRun bool
}

type blockJob struct {
	raw, out []byte
	done     chan struct{}
}

const blockWorkers = 2

// add places raw in the block being filled and returns its location.
func (bw *blockWriter) add(raw []byte) (uint32, error) {
	if bw.next >= maxBlocks {
		return 0, fmt.Errorf("record store has more than %d blocks", maxBlocks)
	}
	loc := bw.next<<blockShift | uint32(bw.curN)
	bw.cur = append(bw.cur, raw...)
	bw.cur = append(bw.cur, '\n')
	bw.curN++
	if len(bw.cur) >= blockTarget || bw.curN == blockRecords {
		if err := bw.flush(); err != nil {
			return 0, err
		}
	}
	return loc, nil
}

// flush ends the block being filled.
func (bw *blockWriter) flush() error {
	if bw.curN == 0 {
		return nil
	}
	raw := bw.cur
	bw.largest = max(bw.largest, uint64(len(raw)))
	bw.cur, bw.curN = nil, 0
	bw.next++
	if !bw.haveDict {
		bw.held = append(bw.held, raw)
		if bw.heldBytes += len(raw); bw.heldBytes < dictSize {
			return nil
		}
		return bw.chooseDict()
	}
	err := bw.submit(raw)
	bw.cur = raw[:0] // copied: the buffer is free again
	return err
}

// chooseDict makes the dictionary of the blocks held so far and starts
// compressing.
func (bw *blockWriter) chooseDict() error {
	for _, b := range bw.held {
		if len(bw.dict) >= dictSize {
			break
		}
		bw.dict = append(bw.dict, b[:min(len(b), dictSize-len(bw.dict))]...)
	}
	return bw.useDict(bw.dict)
}

// useDict starts compressing with dict and submits the held blocks.
func (bw *blockWriter) useDict(dict []byte) error {
	bw.dict, bw.haveDict = dict, true
	opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false),
		zstd.WithEncoderConcurrency(blockWorkers)}
	if len(dict) > 0 {
		opts = append(opts, zstd.WithEncoderDictRaw(dictID, dict))
	}
	enc, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return err
	}
	bw.enc = enc
	bw.jobs = make(chan *blockJob, 2*blockWorkers)
	bw.order = make(chan *blockJob, 4*blockWorkers)
	bw.workersRun = true
	for range blockWorkers {
		go func() {
			for j := range bw.jobs {
				j.out = bw.enc.EncodeAll(j.raw, j.out[:0])
				close(j.done)
			}
		}()
	}
	bw.done.Add(1)
	go bw.writeFrames()
	held := bw.held
	bw.held = nil
	for _, b := range held {
		if err := bw.submit(b); err != nil {
			return err
		}
	}
	return nil
}

func (bw *blockWriter) submit(raw []byte) error {
	if err := bw.failed(); err != nil {
		return err
	}
	j, _ := bw.bufs.Get().(*blockJob)
	if j == nil {
		j = &blockJob{}
	}
	j.raw = append(j.raw[:0], raw...)
	j.done = make(chan struct{})
	bw.order <- j
	bw.jobs <- j
	return nil
}

// writeFrames writes the compressed blocks in order, noting where each ends.
func (bw *blockWriter) writeFrames() {
	defer bw.done.Done()
	for j := range bw.order {
		<-j.done
		if bw.failed() == nil {
			if err := bw.write(j.out); err != nil {
				bw.mu.Lock()
				bw.err = err
				bw.mu.Unlock()
			}
			bw.end += uint64(len(j.out))
			bw.offs = append(bw.offs, bw.end)
		}
		bw.bufs.Put(j)
	}
}

func (bw *blockWriter) failed() error {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	return bw.err
}

// finish compresses and writes what is left, then stops the workers.
func (bw *blockWriter) finish() error {
	err := bw.flush()
	if err == nil && !bw.haveDict {
		err = bw.chooseDict()
	}
	bw.stop()
	if err != nil {
		return err
	}
	if err := bw.failed(); err != nil {
		return err
	}
	if uint64(len(bw.offs)) != uint64(bw.next)+1 {
		return fmt.Errorf("record store wrote %d blocks of %d", len(bw.offs)-1, bw.next)
	}
	return nil
}

// stop ends the worker goroutines, once.
func (bw *blockWriter) stop() {
	bw.closeOnce.Do(func() {
		if !bw.workersRun {
			return
		}
		close(bw.jobs)
		close(bw.order)
		bw.done.Wait()
		bw.enc.Close()
	})
}

// keysFit reports whether ascending keys fit uint32 offsets from the first.
func keysFit(keys []int64) bool {
	return len(keys) == 0 || uint64(keys[len(keys)-1])-uint64(keys[0]) <= math.MaxUint32
}

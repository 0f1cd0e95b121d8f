package recstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"

	"gds/indexer/recpack"
)

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
	// target and dictWant, when set, replace the block target
	// (packedTarget, or blockTarget for lines) and dictSize
	// (measurements of other block and dictionary sizes).
	target, dictWant int
	level            zstd.EncoderLevel
	// entropy codes literals and sequences with tables of each block's
	// own (Huffman, FSE), as stores written before 2026-11-25 are: for
	// measuring the difference.
	entropy bool
	// whole keeps each frame's magic number (a GDSSTO03 store, written
	// only by tests of reading one).
	whole bool
	// pack, when set, packs each record (recpack) into the block, after
	// its length; else a block holds the lines, each ended by a newline
	// (stores written before 2026-11-25, and tests of reading them).
	pack   *recpack.Packer
	packed []byte // the record being packed
}

func (bw *blockWriter) blockBytes() int {
	if bw.pack != nil {
		return cmp.Or(bw.target, packedTarget)
	}
	return cmp.Or(bw.target, blockTarget)
}
func (bw *blockWriter) dictBytes() int { return cmp.Or(bw.dictWant, dictSize) }

type blockJob struct {
	raw, out []byte
	done     chan struct{}
}

const blockWorkers = 2

// add places raw, the record of key, in the block being filled and
// returns its location.
func (bw *blockWriter) add(key int64, raw []byte) (uint32, error) {
	if bw.next >= maxBlocks {
		return 0, fmt.Errorf("record store has more than %d blocks", maxBlocks)
	}
	loc := bw.next<<blockShift | uint32(bw.curN)
	if bw.pack != nil {
		bw.packed = bw.pack.Append(bw.packed[:0], raw, key)
		bw.cur = binary.AppendUvarint(bw.cur, uint64(len(bw.packed)))
		bw.cur = append(bw.cur, bw.packed...)
	} else {
		bw.cur = append(bw.cur, raw...)
		bw.cur = append(bw.cur, '\n')
	}
	bw.curN++
	if len(bw.cur) >= bw.blockBytes() || bw.curN == blockRecords {
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
		if bw.heldBytes += len(raw); bw.heldBytes < bw.dictBytes() {
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
		if len(bw.dict) >= bw.dictBytes() {
			break
		}
		bw.dict = append(bw.dict, b[:min(len(b), bw.dictBytes()-len(bw.dict))]...)
	}
	return bw.useDict(bw.dict)
}

// useDict starts compressing with dict and submits the held blocks.
func (bw *blockWriter) useDict(dict []byte) error {
	bw.dict, bw.haveDict = dict, true
	opts := []zstd.EOption{zstd.WithEncoderLevel(cmp.Or(bw.level, zstd.SpeedFastest)), zstd.WithEncoderCRC(false),
		zstd.WithEncoderConcurrency(blockWorkers), zstd.WithNoEntropyCompression(!bw.entropy)}
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
			frame := j.out
			var err error
			if !bw.whole {
				if !bytes.HasPrefix(frame, []byte(zstdMagic)) {
					err = fmt.Errorf("zstd frame does not begin with its magic number")
				}
				frame = bytes.TrimPrefix(frame, []byte(zstdMagic))
			}
			if err == nil {
				err = bw.write(frame)
			}
			if err != nil {
				bw.mu.Lock()
				bw.err = err
				bw.mu.Unlock()
			}
			bw.end += uint64(len(frame))
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

// keysFit reports whether ascending keys from first to last fit uint32
// offsets from the first.
func keysFit(first, last int64) bool {
	return uint64(last)-uint64(first) <= math.MaxUint32
}

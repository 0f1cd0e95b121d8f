package nametable

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"sync"

	"gds/indexer/pace"
	"gds/snapshots/disk"
)

// A kind's posting lists are built by an external sort. One scan of the
// names emits a (key, ordinal) posting for every key a name is listed
// under into a buffer of postingsPerRun; each full buffer is sorted by key
// (ordinals stay in the order they came, ascending) and spilled to an
// unlinked temporary file as a run; the runs, each a stretch of ordinals,
// are then merged by (key, run) straight into the blob's lists. A key's
// list thus gets its ordinals in ascending order, and its bytes are those
// of the list built from every name at once.

// postingsPerRun is how many postings the scan holds before it spills
// them (split among its goroutines): 32 MiB of postings and as much again
// to sort them, about what the lists of 2^24 postings take. At 5M names
// twice as many cost 128 MiB more of heap at the build's peak for no CPU
// that a busy machine could tell apart. Tests lower it.
var postingsPerRun = 1 << 22

// runBuffers are a scan goroutine's postings and its sort's room, kept
// from one kind of list to the next.
type runBuffers struct {
	postings, room []uint64
}

// runFile holds one scan goroutine's runs, one after another, in an
// unlinked temporary file.
type runFile struct {
	f    *os.File
	w    *bufio.Writer
	out  []byte  // encoded groups waiting for w
	size int64   // bytes written
	ends []int64 // where each run ends
}

func newRunFile(dir string) (*runFile, error) {
	f, err := disk.UnlinkedTemp(dir, ".runs-*")
	if err != nil {
		return nil, err
	}
	return &runFile{f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

// scanRuns spills the postings of kind for the names of entries from
// first to end (exclusive) as runs.
func scanRuns(ctx context.Context, entries []Entry, kind listKind, first, end int, rf *runFile, bufs *runBuffers, perRun int) error {
	// A name of n bytes has at most n keys: a small table takes no more
	// room than its names.
	var size int
	for _, e := range entries[first:end] {
		if size += len(e.Folded); size >= perRun {
			break
		}
	}
	if cap(bufs.postings) < min(size, perRun) {
		bufs.postings = make([]uint64, 0, min(size, perRun))
	}
	post := bufs.postings[:0]
	tick := pace.Every(ctx, namesPerPace)
	var keys []uint32
	for i := first; i < end; i++ {
		tick()
		keys = kind.keys(entries[i].Folded, keys[:0])
		if len(post) > 0 && len(post)+len(keys) > cap(post) {
			if err := rf.spill(post, bufs, kind.bits); err != nil {
				return err
			}
			post = post[:0]
		}
		for _, k := range keys {
			post = append(post, uint64(k)<<32|uint64(i))
		}
	}
	bufs.postings = post[:0]
	if len(post) == 0 {
		return nil
	}
	return rf.spill(post, bufs, kind.bits)
}

// spill sorts postings by key and writes them as one run: for each key,
// ascending, the key less the run's previous one, the number of its
// distinct ordinals, and those ordinals, each less the one before it (the
// first as it is), all unsigned varints.
func (rf *runFile) spill(postings []uint64, bufs *runBuffers, bits uint) error {
	if cap(bufs.room) < len(postings) {
		bufs.room = make([]uint64, len(postings))
	}
	p := sortByKey(postings, bufs.room[:len(postings)], bits)
	var prevKey uint64
	for i := 0; i < len(p); {
		key := p[i] >> 32
		j, n := i+1, 1
		for ; j < len(p) && p[j]>>32 == key; j++ {
			if p[j] != p[j-1] { // a name holds a key once however often it repeats
				n++
			}
		}
		rf.out = binary.AppendUvarint(rf.out, key-prevKey)
		rf.out = binary.AppendUvarint(rf.out, uint64(n))
		var prev uint32
		for k, v := range p[i:j] {
			if k > 0 && v == p[i+k-1] {
				continue
			}
			rf.out = binary.AppendUvarint(rf.out, uint64(uint32(v)-prev))
			prev = uint32(v)
		}
		prevKey, i = key, j
		if len(rf.out) >= 64<<10 {
			if err := rf.flushOut(); err != nil {
				return err
			}
		}
	}
	if err := rf.flushOut(); err != nil {
		return err
	}
	rf.ends = append(rf.ends, rf.size)
	return nil
}

func (rf *runFile) flushOut() error {
	k, err := rf.w.Write(rf.out)
	rf.size += int64(k)
	rf.out = rf.out[:0]
	return err
}

// sortByKey sorts postings (key<<32 | ordinal, keys below 1<<bits) by
// key, stably: a least-significant-digit radix sort of the key's two
// halves, both counted in one read, skipping a half every posting
// shares. It returns the sorted postings, in postings or in room (as
// long).
func sortByKey(postings, room []uint64, bits uint) []uint64 {
	digit := (bits + 1) / 2
	mask := uint64(1)<<digit - 1
	low, high := make([]int, 1<<digit), make([]int, 1<<digit)
	for _, v := range postings {
		low[v>>32&mask]++
		high[v>>(32+digit)&mask]++
	}
	src, dst := postings, room
	for i, count := range [][]int{low, high} {
		shift := 32 + uint(i)*digit
		if count[src[0]>>shift&mask] == len(src) {
			continue
		}
		at := 0
		for d, c := range count {
			count[d], at = at, at+c
		}
		for _, v := range src {
			d := v >> shift & mask
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	return src
}

// spillAll scans every name of entries into runs, in parallel over
// stretches of ordinals: the files hold their runs in ordinal order.
func spillAll(ctx context.Context, dir string, entries []Entry, kind listKind, bufs []runBuffers) ([]*runFile, error) {
	files := make([]*runFile, len(bufs))
	for p := range files {
		rf, err := newRunFile(dir)
		if err != nil {
			closeRuns(files)
			return nil, err
		}
		files[p] = rf
	}
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	chunk := (len(entries) + len(files) - 1) / len(files)
	for p := range files {
		first, end := min(p*chunk, len(entries)), min((p+1)*chunk, len(entries))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = scanRuns(ctx, entries, kind, first, end, files[p], &bufs[p], postingsPerRun/len(files))
			if errs[p] == nil {
				errs[p] = files[p].w.Flush()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeRuns(files)
		return nil, err
	}
	return files, nil
}

func closeRuns(files []*runFile) {
	for _, rf := range files {
		if rf != nil {
			_ = rf.f.Close()
		}
	}
}

// scanInParallelFrom is the fewest names that are scanned in parallel.
// Tests lower it.
var scanInParallelFrom = 100000

// scanParts is how many goroutines scan a table of n names.
func scanParts(n int) int {
	if n < scanInParallelFrom {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// runReader reads one run's groups back, a key at a time.
type runReader struct {
	r        io.Reader
	buf      []byte
	pos, end int
	eof      bool
	err      error
	key      uint32 // the current group's key
	n        int    // and its number of ordinals
}

func newRunReader(r io.Reader) *runReader {
	return &runReader{r: r, buf: make([]byte, 64<<10)}
}

// fill makes sure the buffer holds a whole varint, unless the run ends.
func (rr *runReader) fill() {
	if rr.end-rr.pos >= binary.MaxVarintLen64 || rr.eof {
		return
	}
	rr.end = copy(rr.buf, rr.buf[rr.pos:rr.end])
	rr.pos = 0
	for rr.end < len(rr.buf) && !rr.eof {
		k, err := rr.r.Read(rr.buf[rr.end:])
		rr.end += k
		if err == io.EOF {
			rr.eof = true
		} else if err != nil {
			rr.err, rr.eof = err, true
		}
	}
}

func (rr *runReader) uvarint() uint64 {
	rr.fill()
	v, k := binary.Uvarint(rr.buf[rr.pos:rr.end])
	if k <= 0 {
		if rr.err == nil {
			rr.err = io.ErrUnexpectedEOF
		}
		return 0
	}
	rr.pos += k
	return v
}

// next moves to the run's next group and reports whether there is one.
func (rr *runReader) next() bool {
	rr.fill()
	if rr.pos == rr.end || rr.err != nil {
		return false
	}
	rr.key += uint32(rr.uvarint())
	rr.n = int(rr.uvarint())
	return rr.err == nil
}

// ordinals appends the current group's ordinals to buf, add(buf) as it
// fills, and returns buf emptied.
func (rr *runReader) ordinals(buf []uint32, add func([]uint32)) []uint32 {
	var o uint32
	for range rr.n {
		o += uint32(rr.uvarint())
		if buf = append(buf, o); len(buf) == cap(buf) {
			add(buf)
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		add(buf)
	}
	return buf[:0]
}

// mergeRuns merges the runs of files into one ascending sequence of keys
// with their ordinals: for each key, start, then add with its ordinals in
// ascending order, a slice at a time, then done. Ties between runs go to
// the lower run: the runs are stretches of ordinals, in order.
func mergeRuns(files []*runFile, start func(key uint32), add func([]uint32), done func() error) error {
	var readers []*runReader
	var heap []uint64 // key<<32 | reader: the next group of each run
	for _, rf := range files {
		var from int64
		for _, to := range rf.ends {
			rr := newRunReader(io.NewSectionReader(rf.f, from, to-from))
			if rr.next() {
				heap = append(heap, uint64(rr.key)<<32|uint64(len(readers)))
			}
			readers = append(readers, rr)
			from = to
		}
	}
	for i := len(heap)/2 - 1; i >= 0; i-- {
		siftDown(heap, i)
	}
	buf := make([]uint32, 0, 4096)
	open := false
	var key uint32
	for len(heap) > 0 {
		top := heap[0]
		rr := readers[uint32(top)]
		if open && rr.key != key {
			if err := done(); err != nil {
				return err
			}
			open = false
		}
		if !open {
			key, open = rr.key, true
			start(key)
		}
		buf = rr.ordinals(buf, add)
		if rr.next() {
			heap[0] = uint64(rr.key)<<32 | uint64(uint32(top))
		} else {
			heap[0] = heap[len(heap)-1]
			heap = heap[:len(heap)-1]
		}
		siftDown(heap, 0)
	}
	for _, rr := range readers {
		if rr.err != nil {
			return rr.err
		}
	}
	if open {
		return done()
	}
	return nil
}

// siftDown restores the min-heap below h[i].
func siftDown(h []uint64, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[i] <= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

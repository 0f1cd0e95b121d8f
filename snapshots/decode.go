package snapshots

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
)

// Decoding a record (encoding/json, strict) costs far more than reading,
// decompressing and hashing its line, so decode splits the file into chunks
// of lines that workers decode at once, while the caller still receives
// records one by one, in file order, with the same errors a line-by-line
// reading would report first.

const (
	// chunkLines and chunkBytes bound one chunk of lines.
	chunkLines = 512
	chunkBytes = 256 << 10
	// maxDecoders bounds the decoding workers.
	maxDecoders = 4
)

// lineChunk is a run of consecutive lines of a file.
type lineChunk struct {
	buf   []byte
	lines []chunkLine
	recs  []Record // decoded records (nil for skipped lines)
	// errAt is the index of the first line that failed to decode or
	// validate (err says why), or -1.
	errAt int
	err   error
	// readErr is a read error after the last line; readLine is the
	// number of the line it interrupted.
	readErr  error
	readLine int64
	done     chan struct{} // closed once the lines are decoded
}

// chunkLine is one non-blank line of a chunk.
type chunkLine struct {
	number   int64
	key      int64
	skip     bool // the caller's Skip accepted it: not decoded
	off, end int  // the trimmed line is buf[off:end]
}

// decoder runs one file's reader, workers and consumer.
type decoder struct {
	kind    Kind
	prefix  string
	skip    func(int64, []byte) bool
	ordered chan *lineChunk // chunks in file order, for the consumer
	work    chan *lineChunk // chunks to decode, for the workers
	free    chan *lineChunk // consumed chunks, for reuse
	stop    chan struct{}
	wg      sync.WaitGroup
}

func decode(r io.Reader, k Kind, name string, skip func(int64, []byte) bool, fn func(rec Record, line Line) error) (err error) {
	if k.New() == nil {
		return fmt.Errorf("%s: unknown kind %q", name, k)
	}
	workers := min(maxDecoders, max(1, runtime.GOMAXPROCS(0)))
	d := &decoder{
		kind:    k,
		prefix:  keyPrefix(k),
		skip:    skip,
		ordered: make(chan *lineChunk, 2*workers),
		work:    make(chan *lineChunk, 2*workers),
		free:    make(chan *lineChunk, 2*workers+2),
		stop:    make(chan struct{}),
	}
	d.wg.Add(1 + workers)
	go d.read(r)
	for range workers {
		go d.decodeChunks()
	}
	// Returning early (a bad line, or fn's error) stops the reader and the
	// workers, and waits for them: the caller closes r next.
	defer func() {
		close(d.stop)
		d.wg.Wait()
	}()
	var (
		lastKey int64
		haveKey bool
	)
	for c := range d.ordered {
		<-c.done
		for i, l := range c.lines {
			if i == c.errAt {
				return fmt.Errorf("%s line %d: %w", name, l.number, c.err)
			}
			rec, key := c.recs[i], l.key
			if haveKey && key <= lastKey {
				if key == lastKey {
					return fmt.Errorf("%s line %d: duplicate id %d", name, l.number, key)
				}
				return fmt.Errorf("%s line %d: id %d is out of order (after %d); records must be in ascending id order", name, l.number, key, lastKey)
			}
			lastKey, haveKey = key, true
			if ferr := fn(rec, Line{Number: l.number, Key: key, Raw: c.buf[l.off:l.end]}); ferr != nil {
				return ferr
			}
		}
		if c.readErr != nil {
			return fmt.Errorf("%s line %d: %w", name, c.readLine, c.readErr)
		}
		clear(c.recs)
		select {
		case d.free <- c:
		default:
		}
	}
	return nil
}

// newChunk returns an empty chunk, reusing a consumed one when there is one.
func (d *decoder) newChunk() *lineChunk {
	var c *lineChunk
	select {
	case c = <-d.free:
		c.buf, c.lines, c.recs = c.buf[:0], c.lines[:0], c.recs[:0]
	default:
		c = &lineChunk{buf: make([]byte, 0, chunkBytes+4096), lines: make([]chunkLine, 0, chunkLines)}
	}
	c.errAt, c.err, c.readErr, c.readLine = -1, nil, nil, 0
	c.done = make(chan struct{})
	return c
}

// send hands c to the workers and the consumer; false once stopped.
func (d *decoder) send(c *lineChunk) bool {
	select {
	case d.work <- c:
	case <-d.stop:
		return false
	}
	select {
	case d.ordered <- c:
		return true
	case <-d.stop:
		return false
	}
}

// read splits r into chunks of trimmed lines, reading the keys it can
// without decoding and asking Skip about them. It reads into the chunks'
// own buffers, so that a byte is copied once from r; the unfinished line
// at the end of a full chunk moves to the next one.
func (d *decoder) read(r io.Reader) {
	defer d.wg.Done()
	defer close(d.ordered)
	defer close(d.work)
	var lineNo int64
	c := d.newChunk()
	start := 0 // where c's unfinished line starts
	for {
		if len(c.buf) == cap(c.buf) { // a line longer than the room
			c.buf = slices.Grow(c.buf, cap(c.buf))
		}
		n, err := r.Read(c.buf[len(c.buf):cap(c.buf)])
		scan := len(c.buf)
		c.buf = c.buf[:scan+n]
		for {
			i := bytes.IndexByte(c.buf[scan:], '\n')
			if i < 0 {
				break
			}
			lineNo++
			scan += i + 1
			d.addLine(c, start, scan, lineNo)
			start = scan
		}
		if err == io.EOF {
			if start < len(c.buf) { // a last line without '\n'
				lineNo++
				d.addLine(c, start, len(c.buf), lineNo)
			}
			d.send(c)
			return
		}
		if err != nil {
			c.buf = c.buf[:start]
			c.readErr, c.readLine = err, lineNo+1
			d.send(c)
			return
		}
		if len(c.lines) >= chunkLines || start >= chunkBytes {
			next := d.newChunk()
			next.buf = append(next.buf, c.buf[start:]...)
			c.buf = c.buf[:start]
			if !d.send(c) {
				return
			}
			c, start = next, 0
		}
	}
}

// addLine adds line number of c, c.buf[start:end], unless it is blank.
func (d *decoder) addLine(c *lineChunk, start, end int, number int64) {
	raw := c.buf[start:end]
	line := bytes.TrimSpace(raw)
	if len(line) == 0 {
		return
	}
	off := start + cap(raw) - cap(line) // where line starts in raw
	l := chunkLine{number: number, off: off, end: off + len(line)}
	if key, ok := QuickKey(line, d.prefix); ok {
		l.key = key
		l.skip = d.skip != nil && d.skip(key, line)
	}
	c.lines = append(c.lines, l)
}

// decodeChunks decodes and validates the lines of chunks until the reader
// is done, stopping a chunk at its first bad line.
func (d *decoder) decodeChunks() {
	defer d.wg.Done()
	for c := range d.work {
		for i := range c.lines {
			l := &c.lines[i]
			if l.skip {
				c.recs = append(c.recs, nil)
				continue
			}
			rec, line := d.kind.New(), c.buf[l.off:l.end]
			if !decodeFast(line, rec) {
				if err := decodeStrict(line, rec); err != nil {
					c.errAt, c.err = i, err
					break
				}
			}
			if err := rec.Validate(); err != nil {
				c.errAt, c.err = i, err
				break
			}
			l.key = rec.Key()
			c.recs = append(c.recs, rec)
		}
		close(c.done)
	}
}

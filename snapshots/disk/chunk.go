package disk

import (
	"io"
	"unsafe"
)

// HugeChunk is the write size of files gds later maps and reads at
// random (record stores, value columns, name tables where they are
// mapped): written in writes of this size at offsets that are multiples
// of it, a file stays in the page cache in folios of a huge page's size
// (ext4 on recent kernels) that the kernel maps as huge pages, and reads
// scattered over the mapping miss the TLB far less. Written in smaller or
// unaligned pieces, it stays in small folios until it leaves the cache
// (10M names, 2026-11-25: 127 of a 691 MB table huge-mapped against 690,
// and a contains walk about 9% slower; the 10M characters' record store
// written through a 1 MiB buffer, none of its 446 MB). It is also the
// size of a transparent huge page (Load).
const HugeChunk = 2 << 20

// ChunkWriter buffers writes to a writer into whole chunks: every write it
// makes but the last (at Flush) is exactly the chunk size, so a file
// written from its start gets them at offsets that are multiples of it.
// As with bufio.Writer, the first error is kept: every later Write and
// Flush returns it.
type ChunkWriter struct {
	w   io.Writer
	buf []byte
	err error
}

// NewChunkWriter writes to w in chunks of size bytes.
func NewChunkWriter(w io.Writer, size int) *ChunkWriter {
	return &ChunkWriter{w: w, buf: make([]byte, 0, size)}
}

func (c *ChunkWriter) WriteString(s string) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n := len(s)
	for len(s) > 0 {
		k := copy(c.buf[len(c.buf):cap(c.buf)], s)
		c.buf, s = c.buf[:len(c.buf)+k], s[k:]
		if len(c.buf) == cap(c.buf) {
			if err := c.Flush(); err != nil {
				return n - len(s), err
			}
		}
	}
	return n, nil
}

func (c *ChunkWriter) Write(b []byte) (int, error) {
	return c.WriteString(unsafe.String(unsafe.SliceData(b), len(b)))
}

// Flush writes what is buffered.
func (c *ChunkWriter) Flush() error {
	if c.err != nil || len(c.buf) == 0 {
		return c.err
	}
	n, err := c.w.Write(c.buf)
	if err == nil && n < len(c.buf) {
		err = io.ErrShortWrite
	}
	c.buf, c.err = c.buf[:0], err
	return err
}

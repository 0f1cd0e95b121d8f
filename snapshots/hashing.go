package snapshots

import (
	"crypto/sha256"
	"hash"
	"io"
	"sync"
)

// hashingReader reads a file in chunks on a goroutine of its own, feeding
// each chunk to SHA-256 there before handing it on: the digest of a large
// file costs no time on the goroutine that decompresses and decodes it.
type hashingReader struct {
	chunks chan chunk
	free   chan []byte
	stop   chan struct{}
	once   sync.Once
	done   chan struct{} // closed when the producer has finished
	h      hash.Hash
	cur    []byte // unread part of the current chunk
	back   []byte // the current chunk's whole buffer, returned to free when read
	err    error
}

type chunk struct {
	buf []byte
	err error
}

const (
	hashChunk  = 1 << 20
	hashChunks = 4
)

func newHashingReader(r io.Reader) *hashingReader {
	hr := &hashingReader{
		chunks: make(chan chunk, hashChunks),
		free:   make(chan []byte, hashChunks+1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		h:      sha256.New(),
	}
	for range hashChunks + 1 {
		hr.free <- make([]byte, hashChunk)
	}
	go hr.produce(r)
	return hr
}

func (hr *hashingReader) produce(r io.Reader) {
	defer close(hr.done)
	defer close(hr.chunks)
	for {
		var buf []byte
		select {
		case buf = <-hr.free:
		case <-hr.stop:
			return
		}
		n, err := io.ReadFull(r, buf)
		hr.h.Write(buf[:n])
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		select {
		case hr.chunks <- chunk{buf: buf[:n], err: err}:
		case <-hr.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func (hr *hashingReader) Read(p []byte) (int, error) {
	for len(hr.cur) == 0 {
		if hr.err != nil {
			return 0, hr.err
		}
		if hr.back != nil {
			hr.free <- hr.back[:cap(hr.back)]
			hr.back = nil
		}
		c, ok := <-hr.chunks
		if !ok {
			hr.err = io.ErrUnexpectedEOF // stopped early: Close was called
			return 0, hr.err
		}
		hr.cur, hr.back, hr.err = c.buf, c.buf, c.err
	}
	n := copy(p, hr.cur)
	hr.cur = hr.cur[n:]
	return n, nil
}

// Sum returns the digest of everything read; call it after Read returned
// io.EOF.
func (hr *hashingReader) Sum() []byte {
	<-hr.done
	return hr.h.Sum(nil)
}

// Close stops the producer if the consumer gave up before the end.
func (hr *hashingReader) Close() {
	hr.once.Do(func() { close(hr.stop) })
	<-hr.done
}

package httplog

import (
	"bytes"
	"net"
	"sync"
	"time"
)

// connBufferSize is the size of net/http's buffered writer on a server
// connection: an answer whose head and body do not fit in it leaves in two
// writes, the first exactly this long.
const connBufferSize = 4 << 10

// CoalesceWrites wraps ln so that an answer just over net/http's 4 KiB
// connection buffer (a search answer of 500 IDs is about 5 KB) leaves in
// one write system call instead of two. net/http flushes the full buffer
// (the head and the start of the body) and then writes the rest when the
// handler returns; the wrapped connection holds back such a first full
// buffer and sends it with the next write in one writev. Whatever is held
// back goes out at the latest when net/http sets the connection's next
// deadline, which it does as soon as an answer is complete, or closes the
// connection: nothing waits on a timer. (Reads do not flush: net/http's
// background reader may start reading while the handler writes.)
//
// Only a write that starts an answer ("HTTP/1.1 "), fills the buffer
// exactly and whose Content-Length says more of the body follows is held:
// the client cannot use such an answer before its last byte anyway, and a
// streamed (chunked) answer is never delayed.
func CoalesceWrites(ln net.Listener) net.Listener {
	return &coalesceListener{Listener: ln}
}

type coalesceListener struct{ net.Listener }

func (l *coalesceListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &coalesceConn{Conn: c}, nil
}

// heldBuffers recycle the held-back copies between connections.
var heldBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, connBufferSize+maxAppend)
	return &b
}}

// coalesceConn's writes and deadlines come from the connection's serving
// goroutine, but a handler may close it from another; held is guarded.
type coalesceConn struct {
	net.Conn
	mu   sync.Mutex
	held *[]byte
}

// maxAppend is the most of a following write copied behind the held
// buffer; a larger one goes out beside it in one writev.
const maxAppend = 12 << 10

var (
	answerStart   = []byte("HTTP/1.1 ")
	headEnd       = []byte("\r\n\r\n")
	contentLength = []byte("\r\nContent-Length: ")
)

// holdable reports whether b is net/http's first flush of an answer whose
// declared body goes on past it.
func holdable(b []byte) bool {
	if len(b) != connBufferSize || !bytes.HasPrefix(b, answerStart) {
		return false
	}
	end := bytes.Index(b, headEnd)
	if end < 0 {
		return false
	}
	head := b[:end+2]
	i := bytes.Index(head, contentLength)
	if i < 0 {
		return false // chunked: it may be a deliberate flush of a stream
	}
	n := 0
	for _, d := range head[i+len(contentLength):] {
		if d < '0' || d > '9' || n > 1<<40 {
			break
		}
		n = n*10 + int(d-'0')
	}
	return end+4+n > len(b)
}

func (c *coalesceConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != nil {
		held := c.held
		c.held = nil
		var n int64
		var err error
		if len(b) <= maxAppend {
			// One buffer, one write, on any connection.
			*held = append(*held, b...)
			var w int
			w, err = c.Conn.Write(*held)
			n = int64(w)
		} else {
			bufs := net.Buffers{*held, b}
			n, err = bufs.WriteTo(c.Conn) // writev on a TCP connection
		}
		if cap(*held) <= connBufferSize+maxAppend {
			*held = (*held)[:0]
			heldBuffers.Put(held)
		}
		// The held part was already reported written.
		return max(int(n)-connBufferSize, 0), err
	}
	if holdable(b) {
		h := heldBuffers.Get().(*[]byte)
		*h = append((*h)[:0], b...)
		c.held = h
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// flush sends what is held back.
func (c *coalesceConn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held == nil {
		return nil
	}
	held := c.held
	c.held = nil
	_, err := c.Conn.Write(*held)
	*held = (*held)[:0]
	heldBuffers.Put(held)
	return err
}

func (c *coalesceConn) SetDeadline(t time.Time) error {
	c.flush()
	return c.Conn.SetDeadline(t)
}

func (c *coalesceConn) SetReadDeadline(t time.Time) error {
	c.flush()
	return c.Conn.SetReadDeadline(t)
}

func (c *coalesceConn) SetWriteDeadline(t time.Time) error {
	c.flush()
	return c.Conn.SetWriteDeadline(t)
}

func (c *coalesceConn) Close() error {
	c.flush()
	return c.Conn.Close()
}

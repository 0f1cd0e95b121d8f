// Package h1 is the public port's HTTP/1.1 server: it answers the plain
// GET requests that are nearly all of a search service's traffic itself,
// and hands every other connection to net/http.
//
// net/http spends about as much CPU on a small answer as the rest of
// gds's path together: a goroutine that reads in the background while the
// handler runs (a system call and two goroutine switches a request), a
// context, several deadlines and maps a request. This server reads a
// request head in one system call, builds the http.Request the handler
// sees in a handful of allocations, and writes the whole answer in one
// system call. A connection whose request is anything else (a body, HEAD,
// HTTP/1.0, an upgrade, a head over 4 KiB, anything malformed) is handed,
// with the bytes already read, to a net/http server for the rest of its
// life, so net/http answers (or refuses) it exactly as before.
package h1

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Server serves HTTP/1.1 on a listener with Handler, handing connections
// it does not take to Fallback.
type Server struct {
	Handler http.Handler
	// Fallback serves the connections handed over; its Handler should be
	// Handler. Its timeouts apply to them.
	Fallback *http.Server
	// WrapFallback, when set, wraps the listener Fallback serves (what a
	// listener wrapper did to every connection before).
	WrapFallback func(net.Listener) net.Listener
	// ReadHeaderTimeout bounds the reading of a request head once it has
	// started (and the first request's from the connection's start);
	// IdleTimeout the wait for the next request; WriteTimeout the handler
	// and the writing of its answer. A deadline is renewed only once it is
	// a second stale, so each may end up to a second early.
	ReadHeaderTimeout, IdleTimeout, WriteTimeout time.Duration
	Logger                                       zerolog.Logger

	accepted, handedOver atomic.Uint64

	mu       sync.Mutex
	ln       net.Listener
	conns    map[*conn]struct{}
	handoff  *handoffListener
	shutdown atomic.Bool
}

// bufSize is the read buffer: a request head must fit in it to be
// answered here.
const bufSize = 4 << 10

// maxOut is how much of an answer collects before it is written.
const maxOut = 64 << 10

// deadlineSlack is how stale a deadline may get before it is renewed:
// setting one costs a timer update, and every request would pay it.
const deadlineSlack = time.Second

// Serve accepts connections on ln until Shutdown or Close, and returns
// http.ErrServerClosed then.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.shutdown.Load() {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.ln = ln
	s.conns = map[*conn]struct{}{}
	s.handoff = newHandoffListener(ln.Addr())
	s.mu.Unlock()

	var fl net.Listener = s.handoff
	if s.WrapFallback != nil {
		fl = s.WrapFallback(fl)
	}
	go func() { _ = s.Fallback.Serve(fl) }()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.shutdown.Load() {
				return http.ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Too many open files, say: wait, as net/http does, and go on.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.Logger.Warn().Err(err).Dur("retry_in", backoff).Msg("accept failed")
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		s.accepted.Add(1)
		if c := s.newConn(nc); c != nil {
			go c.serve()
		}
	}
}

func (s *Server) newConn(nc net.Conn) *conn {
	c := &conn{srv: s, nc: nc, br: bufio.NewReaderSize(nc, bufSize)}
	c.bw = bufio.NewWriterSize(body{c}, bufferBeforeChunking)
	c.tmpl = (&http.Request{
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body:       http.NoBody,
		RemoteAddr: nc.RemoteAddr().String(),
	}).WithContext(c.context(nc))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown.Load() {
		nc.Close()
		return nil
	}
	s.conns[c] = struct{}{}
	return c
}

// Connections returns how many connections Serve accepted, and how many
// of them it handed to Fallback.
func (s *Server) Connections() (accepted, handedOver uint64) {
	return s.accepted.Load(), s.handedOver.Load()
}

// context is what a request's context carries, as with net/http: the
// server (Fallback, whose settings apply) and the connection's local
// address. Each request's context (reqContext) adds its cancellation.
func (c *conn) context(nc net.Conn) context.Context {
	ctx := context.WithValue(context.Background(), http.ServerContextKey, c.srv.Fallback)
	return context.WithValue(ctx, http.LocalAddrContextKey, nc.LocalAddr())
}

// Shutdown stops accepting, closes idle connections, waits for the
// answers under way and for Fallback's Shutdown, or until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	fallback := make(chan error, 1)
	go func() { fallback <- s.Fallback.Shutdown(ctx) }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !s.closeIdle() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return <-fallback
}

// Close closes the listener and every connection at once.
func (s *Server) Close() error {
	s.shutdown.Store(true)
	s.mu.Lock()
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
		delete(s.conns, c)
	}
	s.mu.Unlock()
	return s.Fallback.Close()
}

// closeIdle closes the connections waiting for a request and reports
// whether none is left.
func (s *Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.idle.Load() {
			c.nc.Close()
			delete(s.conns, c)
		}
	}
	return len(s.conns) == 0
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// conn is one connection served here.
type conn struct {
	srv  *Server
	nc   net.Conn
	br   *bufio.Reader
	tmpl *http.Request // what every request of the connection shares
	req  *http.Request // the request being answered
	rctx *reqContext   // and its context
	res  *response     // and its answer
	resp response      // what res points to
	bw   *bufio.Writer // the answer's body, before it is framed (response.body)
	out  []byte        // the answers being written
	outp *[]byte       // out's pooled buffer
	idle atomic.Bool

	readDeadline, writeDeadline time.Time
	never                       chan bool
	watching                    chan struct{} // closed when the background read (watch) ends
}

func (c *conn) serve() {
	keep := false // the connection is kept: handed over or hijacked
	defer func() {
		if err := recover(); err != nil && err != http.ErrAbortHandler {
			buf := make([]byte, 64<<10)
			buf = buf[:runtime.Stack(buf, false)]
			c.srv.Logger.Error().Interface("panic", err).Bytes("stack", buf).Str("remote", c.tmpl.RemoteAddr).Msg("http: panic serving a request")
			keep = false
		}
		c.srv.forget(c)
		c.releaseOut()
		if !keep {
			c.nc.Close()
		}
	}()
	first := true
	for {
		head, whole, ok := c.readHead(first)
		if !ok {
			return
		}
		first = false
		var req *http.Request
		var rc *reqContext
		if whole {
			rc = newReqContext(c)
			req, whole = parseHead(head, c.tmpl, rc)
		}
		if !whole {
			keep = c.handOver()
			return
		}
		if _, err := c.br.Discard(len(head)); err != nil {
			return
		}
		c.req, c.rctx = req, rc
		c.takeOut()
		// The answer and its header map are the connection's, cleared for
		// each request: nothing keeps them once the handler returns.
		w := &c.resp
		hdr := w.header
		if hdr == nil {
			hdr = make(http.Header, 12)
		} else {
			clear(hdr)
		}
		*w = response{c: c, header: hdr}
		c.res = w
		c.bw.Reset(body{c})
		c.renewWriteDeadline(time.Now())
		c.srv.Handler.ServeHTTP(w, req)
		rc.finish()
		again := w.finish()
		if w.hijacked {
			keep = true
			return
		}
		// Answers wait while another whole request is already here (a
		// pipelining client), and leave together.
		if !again || len(c.out) >= bufSize || !c.headBuffered() {
			if err := c.flushOut(); err != nil {
				return
			}
			c.releaseOut()
		}
		if !again {
			return
		}
	}
}

// readHead waits for a whole request head in the read buffer and returns
// it (still buffered), or whole=false when what arrived is not one this
// server can read (over bufSize, cut short by the client, or a start that
// cannot become one: headMayFinish), which then goes to net/http. ok=false: close the connection (nothing arrived before
// the client closed it, a timeout, shutdown).
func (c *conn) readHead(first bool) (head []byte, whole, ok bool) {
	now := time.Now()
	if c.br.Buffered() == 0 {
		if first {
			c.renewReadDeadline(now, c.srv.ReadHeaderTimeout)
		} else {
			c.renewReadDeadline(now, c.srv.IdleTimeout)
		}
		c.idle.Store(true)
		if c.srv.shutdown.Load() {
			return nil, false, false
		}
		_, err := c.br.Peek(1)
		c.idle.Store(false)
		if err != nil {
			return nil, false, false
		}
	}
	headerDeadline := first
	for {
		buf, _ := c.br.Peek(c.br.Buffered())
		if n := headLen(buf); n > 0 {
			return buf[:n], true, true
		}
		// A head that cannot finish as one taken here goes to net/http at
		// once; on a kept-alive connection only from 4 bytes on, as
		// net/http reads a next request (fewer, then the end: closed
		// without an answer, below).
		if len(buf) >= bufSize || (first || len(buf) >= 4) && !headMayFinish(buf) {
			return nil, false, true
		}
		if !headerDeadline {
			c.renewReadDeadline(time.Now(), c.srv.ReadHeaderTimeout)
			headerDeadline = true
		}
		if _, err := c.br.Peek(len(buf) + 1); err != nil {
			// A timeout closes the connection, as net/http does, and so
			// does the end of a kept-alive connection with under 4 bytes
			// of a next request (net/http waits for 4 before reading
			// one); what else a client sent before closing its side goes
			// to net/http, which answers a truncated request as it
			// always has.
			return nil, false, !isTimeout(err) && (first || len(buf) >= 4)
		}
	}
}

// headBuffered reports whether a whole request head is already read.
func (c *conn) headBuffered() bool {
	buf, _ := c.br.Peek(c.br.Buffered())
	return headLen(buf) > 0
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// renewReadDeadline sets the read deadline to now+d, unless the one set
// is at most deadlineSlack earlier than that.
func (c *conn) renewReadDeadline(now time.Time, d time.Duration) {
	if d <= 0 {
		return
	}
	want := now.Add(d)
	if c.readDeadline.After(want) || want.Sub(c.readDeadline) > deadlineSlack {
		c.readDeadline = want
		_ = c.nc.SetReadDeadline(want)
	}
}

func (c *conn) renewWriteDeadline(now time.Time) {
	d := c.srv.WriteTimeout
	if d <= 0 {
		return
	}
	want := now.Add(d)
	if want.Sub(c.writeDeadline) > deadlineSlack {
		c.writeDeadline = want
		_ = c.nc.SetWriteDeadline(want)
	}
}

// handOver gives the connection, with what was read and not answered, to
// the fallback server; it reports whether it was taken.
func (c *conn) handOver() bool {
	if c.flushOut() != nil { // answers held for a pipelining client go first
		return false
	}
	_ = c.nc.SetDeadline(time.Time{}) // net/http sets its own
	c.readDeadline, c.writeDeadline = time.Time{}, time.Time{}
	pending, _ := c.br.Peek(c.br.Buffered())
	hc := &handedConn{Conn: c.nc, pending: append([]byte(nil), pending...)}
	if !c.srv.handoff.give(hc) {
		return false
	}
	c.srv.handedOver.Add(1)
	return true
}

// closeAfter reports whether the answer being written must close the
// connection: the client asked, or the server is shutting down.
func (c *conn) closeAfter() bool {
	return c.req.Close || c.srv.shutdown.Load()
}

// appendBody adds p to the answer, as a chunk when chunked, and writes
// what collected once it is maxOut.
func (c *conn) appendBody(p []byte, chunked bool) error {
	if chunked {
		c.out = appendHex(c.out, len(p))
		c.out = append(c.out, "\r\n"...)
	}
	if len(c.out)+len(p) > maxOut {
		if err := c.flushOut(); err != nil {
			return err
		}
		if len(p) > maxOut {
			if _, err := c.nc.Write(p); err != nil {
				return err
			}
			p = nil
		}
	}
	c.out = append(c.out, p...)
	if chunked {
		c.out = append(c.out, "\r\n"...)
	}
	return nil
}

func appendHex(b []byte, n int) []byte {
	const digits = "0123456789abcdef"
	var tmp [16]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = digits[n&15]
		n >>= 4
		if n == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// flushOut writes the collected answer.
func (c *conn) flushOut() error {
	if len(c.out) == 0 {
		return nil
	}
	_, err := c.nc.Write(c.out)
	c.out = c.out[:0]
	return err
}

// outBuffers hold answers being written: a connection has one only while
// it answers, so idle connections hold none.
var outBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, bufSize)
	return &b
}}

// takeOut gives the connection an output buffer for its next answer.
func (c *conn) takeOut() {
	if c.outp == nil {
		c.outp = outBuffers.Get().(*[]byte)
		c.out = (*c.outp)[:0]
	}
}

// releaseOut returns the output buffer once the answers are written; one
// grown past maxOut is left to the collector.
func (c *conn) releaseOut() {
	if c.outp != nil && cap(c.out) <= maxOut+bufSize {
		*c.outp = c.out[:0]
		outBuffers.Put(c.outp)
	}
	c.outp, c.out = nil, nil
}

func (c *conn) neverClosed() <-chan bool {
	if c.never == nil {
		c.never = make(chan bool)
	}
	return c.never
}

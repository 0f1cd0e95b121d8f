package httplog

import (
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// LogBuffer gathers log lines and writes them in batches: one request line
// per write system call was some 5% of a cached search's CPU. Lines of
// level warn and above are written at once (after those held before
// them, in order); the others within FlushEvery, or as soon as
// maxLogBuffer bytes wait. A process that crashes loses at most the info
// lines of that interval; Close writes what is held.
type LogBuffer struct {
	w     io.Writer
	every time.Duration

	// mu guards the batch; wmu orders the writes of batches, taken under
	// mu and held without it, so that a line logged while a batch is being
	// written (even by the writer itself) only waits for mu.
	mu, wmu sync.Mutex
	buf     []byte
	spare   []byte
	timer   *time.Timer
	closed  bool
}

// FlushEvery is how long an info line may wait in a LogBuffer.
const FlushEvery = 100 * time.Millisecond

// maxLogBuffer bounds what a LogBuffer holds before it writes.
const maxLogBuffer = 32 << 10

// NewLogBuffer returns a LogBuffer writing to w at least every every
// (FlushEvery when 0).
func NewLogBuffer(w io.Writer, every time.Duration) *LogBuffer {
	if every <= 0 {
		every = FlushEvery
	}
	return &LogBuffer{w: w, every: every}
}

// Write holds p (one log line) for the next batch.
func (b *LogBuffer) Write(p []byte) (int, error) {
	return b.WriteLevel(zerolog.InfoLevel, p)
}

// WriteLevel holds p, or writes it now with what is held when its level
// is warn or above.
func (b *LogBuffer) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	if b.closed || (l >= zerolog.WarnLevel && l != zerolog.NoLevel) || len(b.buf) >= maxLogBuffer {
		return len(p), b.flushAndUnlock()
	}
	if len(b.buf) == len(p) {
		// The first line of a batch: the rest follow within b.every.
		if b.timer == nil {
			b.timer = time.AfterFunc(b.every, func() { b.Flush() })
		} else {
			b.timer.Reset(b.every)
		}
	}
	b.mu.Unlock()
	return len(p), nil
}

// Flush writes what is held.
func (b *LogBuffer) Flush() error {
	b.mu.Lock()
	return b.flushAndUnlock()
}

// flushAndUnlock writes the batch, called with mu held; it releases mu
// before writing.
func (b *LogBuffer) flushAndUnlock() error {
	if len(b.buf) == 0 {
		b.mu.Unlock()
		return nil
	}
	out := b.buf
	b.buf, b.spare = b.spare[:0], nil
	b.wmu.Lock()
	b.mu.Unlock()
	_, err := b.w.Write(out)
	b.wmu.Unlock()
	if cap(out) <= 4*maxLogBuffer { // one huge line must not stay allocated
		b.mu.Lock()
		if b.spare == nil {
			b.spare = out[:0]
		}
		b.mu.Unlock()
	}
	return err
}

// Close writes what is held; later lines are written at once.
func (b *LogBuffer) Close() error {
	b.mu.Lock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
	}
	return b.flushAndUnlock()
}

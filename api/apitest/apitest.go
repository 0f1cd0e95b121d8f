// Package apitest holds the test doubles that the api packages' tests
// share: a clock the test moves by hand, a buffer that a running
// component writes to while the test reads it, and free loopback
// addresses.
package apitest

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"
)

// Clock is a clock tests move by hand; its Now is what a component's
// injected clock calls. Safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading at.
func NewClock(at time.Time) *Clock { return &Clock{now: at} }

// Now is the clock's reading.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to at.
func (c *Clock) Set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = at
}

// Add moves the clock forward by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Buffer is a bytes.Buffer safe to read while others write to it (a
// timer, a child process's two pipes).
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// FreeAddr picks a free loopback port for a program that cannot report
// the one it bound (an S3 server, a proxy). gds itself binds 127.0.0.1:0
// and logs its address: a port picked here and bound later can be taken
// meanwhile.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

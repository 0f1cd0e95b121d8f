package disk

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// ChunkWriter passes on what it is given unchanged, in writes of exactly
// its chunk size but the last: at offsets that are multiples of it.
func TestChunkWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var rec chunkRecorder
	c := NewChunkWriter(&rec, 64)
	var want []byte
	for range 100 {
		b := make([]byte, rng.IntN(150))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		want = append(want, b...)
		if rng.IntN(2) == 0 {
			c.Write(b)
		} else {
			c.WriteString(string(b))
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.all, want) {
		t.Fatalf("wrote %d bytes, not the %d given", len(rec.all), len(want))
	}
	for i, n := range rec.sizes[:len(rec.sizes)-1] {
		if n != 64 {
			t.Fatalf("write %d of %d bytes, want 64", i, n)
		}
	}
}

type chunkRecorder struct {
	all   []byte
	sizes []int
}

func (r *chunkRecorder) Write(b []byte) (int, error) {
	r.all = append(r.all, b...)
	r.sizes = append(r.sizes, len(b))
	return len(b), nil
}

// A failed write is not forgotten: every later Write and Flush returns
// it, so a caller that checks only the final Flush (as with bufio.Writer)
// still sees it.
func TestChunkWriterKeepsError(t *testing.T) {
	fail := &failingWriter{after: 2}
	c := NewChunkWriter(fail, 8)
	for range 10 {
		c.Write([]byte("0123456")) // errors ignored, as valuecol.Write does
	}
	if err := c.Flush(); !errors.Is(err, errDiskFull) {
		t.Fatalf("Flush after a failed write: %v, want %v", err, errDiskFull)
	}
	if n, err := c.WriteString("more"); n != 0 || !errors.Is(err, errDiskFull) {
		t.Fatalf("WriteString after a failed write: %d, %v", n, err)
	}
	if fail.calls != 3 {
		t.Fatalf("%d writes reached the writer, want 3 (none after the failure)", fail.calls)
	}
}

var errDiskFull = errors.New("no space left on device")

type failingWriter struct{ after, calls int }

func (f *failingWriter) Write(b []byte) (int, error) {
	f.calls++
	if f.calls > f.after {
		return 0, errDiskFull
	}
	return len(b), nil
}

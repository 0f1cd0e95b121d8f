//go:build !linux

package disk

import "unsafe"

// Load maps a file read-only, populated up front (Map); on Linux it reads
// the file into anonymous memory in huge pages instead.
func Load(name string) (*Loaded, error) { return LoadMapped(name) }

// Copy holds parts in memory of the process's own, one after the other,
// each starting at a multiple of 8 bytes, and returns the copies in order;
// on Linux the memory is read-only and in huge pages where it can be.
func Copy(parts ...[]byte) (*Loaded, [][]byte, error) {
	size := 0
	for _, p := range parts {
		size += (len(p) + 7) &^ 7
	}
	all := make([]uint64, size/8) // 8-byte aligned
	var data []byte
	if size > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&all[0])), size)
	}
	out := make([][]byte, len(parts))
	at := 0
	for i, p := range parts {
		out[i] = data[at : at+len(p) : at+len(p)]
		copy(out[i], p)
		at += (len(p) + 7) &^ 7
	}
	return &Loaded{Bytes: data, close: func() error { return nil }}, out, nil
}

// HeldBytes is the memory held in copies on Linux; here copies are the
// heap's, counted by the Go runtime, and this is 0.
func HeldBytes() int64 { return 0 }

// Anon returns size bytes of zeroed memory, here the heap's, and the
// function that frees it (nothing to do).
func Anon(size int) ([]byte, func() error, error) {
	return make([]byte, max(size, 0)), func() error { return nil }, nil
}

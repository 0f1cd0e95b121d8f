//go:build !unix

package disk

import "os"

// Map reads the file into memory where mmap is not available.
func Map(name string, populate bool) ([]byte, error) {
	b, err := os.ReadFile(name)
	if len(b) == 0 {
		b = nil
	}
	return b, err
}

// Unmap releases what Map returned.
func Unmap(b []byte) error { return nil }

// Release does nothing where Map reads the file into the heap.
func Release(mapped []byte) {}

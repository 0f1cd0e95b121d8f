//go:build !unix

package disk

import (
	"io"
)

// MapID is Map, and tells the FileID of the file it read (ok false where
// the system has none).
func MapID(name string, populate bool) (b []byte, id FileID, ok bool, err error) {
	f, _, id, ok, err := openID(name)
	if err != nil {
		return nil, id, false, err
	}
	defer f.Close()
	if b, err = io.ReadAll(f); len(b) == 0 {
		b = nil
	}
	return b, id, ok, err
}

// Unmap releases what Map returned.
func Unmap(b []byte) error { return nil }

// Release does nothing where Map reads the file into the heap.
func Release(mapped []byte) {}

package disk

import "unsafe"

// Index files (name tables, value columns, record stores) hold arrays of
// fixed-size integers in the machine's byte order (little-endian on every
// platform gds runs on), each section padded to 8 bytes, mapped and read
// in place.

// Pad8 is n rounded up to a multiple of 8, where a file's next section
// starts.
func Pad8(n uint64) uint64 { return (n + 7) &^ 7 }

// AsBytes is s's memory as bytes, to write it.
func AsBytes[T int64 | uint64 | uint32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// FromBytes reads an array in place: b is 8-aligned in a mapping (the
// caller checks offsets); where it is not (a file the platform read into
// the heap) the array is copied.
func FromBytes[T int64 | uint64 | uint32](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%unsafe.Alignof(zero) != 0 {
		c := make([]T, len(b)/int(unsafe.Sizeof(zero)))
		copy(AsBytes(c), b)
		return c
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

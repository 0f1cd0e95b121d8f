package recstore

import "unsafe"

// The record store's index files hold arrays of fixed-size integers in the
// machine's byte order (little-endian on every platform gds runs on),
// mapped and read in place.

func pad8(n uint64) uint64 { return (n + 7) &^ 7 }

func asBytes[T int64 | uint64 | uint32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

func fromBytes[T int64 | uint64 | uint32](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

//go:build unix

package disk

import (
	"os"
	"syscall"
)

// Map maps a file read-only; an empty file maps to nil. populate asks the
// kernel to read the whole file in up front where it can (Linux), so first
// touches do not fault later.
func Map(name string, populate bool) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, nil
	}
	flags := syscall.MAP_SHARED
	if populate {
		flags |= mapPopulate
	}
	return syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, flags)
}

// Unmap releases a mapping Map returned; nil is fine.
func Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	return syscall.Munmap(b)
}

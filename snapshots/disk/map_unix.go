//go:build unix

package disk

import (
	"syscall"
)

// MapID is Map, and tells the FileID of the file it mapped (ok false where
// the system has none).
func MapID(name string, populate bool) (b []byte, id FileID, ok bool, err error) {
	f, st, id, ok, err := openID(name)
	if err != nil {
		return nil, id, false, err
	}
	defer f.Close()
	if st.Size() == 0 {
		return nil, id, ok, nil
	}
	flags := syscall.MAP_SHARED
	if populate {
		flags |= mapPopulate
	}
	b, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, flags)
	return b, id, ok, err
}

// Unmap releases a mapping Map returned; nil is fine.
func Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	return syscall.Munmap(b)
}

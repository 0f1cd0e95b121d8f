//go:build linux

package valuecol

import "syscall"

// release drops the checked file's pages from the process's resident set
// (the page cache keeps them): a generation opens its columns whole to
// check them, and ranges are rare enough not to hold them all resident.
func release(mm []byte) {
	if len(mm) > 0 {
		_ = syscall.Madvise(mm, syscall.MADV_DONTNEED)
	}
}

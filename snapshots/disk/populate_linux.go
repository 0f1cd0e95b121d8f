package disk

import "syscall"

const mapPopulate = syscall.MAP_POPULATE

// Release drops a mapping's pages from the process's resident set; the
// page cache keeps them, and a later read maps them again. For a file
// read once whole (to check it, or to copy parts of it) and then rarely.
func Release(mapped []byte) {
	if len(mapped) > 0 {
		_ = syscall.Madvise(mapped, syscall.MADV_DONTNEED)
	}
}

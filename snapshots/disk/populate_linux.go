package disk

import (
	"os"
	"syscall"
)

const mapPopulate = syscall.MAP_POPULATE

// Release drops a mapping's pages from the process's resident set; the
// page cache keeps them, and a later read maps them again. For a file
// read once whole (to check it, or to copy parts of it) and then rarely.
func Release(mapped []byte) {
	if len(mapped) > 0 {
		_ = syscall.Madvise(mapped, syscall.MADV_DONTNEED)
	}
}

// ReleasePages is Release for the whole pages within mapped[from:to]
// (mapped starts at a page boundary, as a mapping does): a check reading
// a large file through drops what it read as it goes, so that no more
// than a stretch of it is resident at once.
func ReleasePages(mapped []byte, from, to int) {
	page := os.Getpagesize()
	from = (from + page - 1) &^ (page - 1)
	to = min(to, len(mapped)) &^ (page - 1)
	if from < to {
		Release(mapped[from:to])
	}
}

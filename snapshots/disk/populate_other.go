//go:build unix && !linux

package disk

const mapPopulate = 0

// Release does nothing here (on Linux it drops a mapping's pages from the
// process's resident set).
func Release(mapped []byte) {}

// ReleasePages does nothing here either.
func ReleasePages(mapped []byte, from, to int) {}

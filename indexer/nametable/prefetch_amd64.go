package nametable

import "unsafe"

// prefetch asks for the cache line at p to be brought into every cache
// level (PREFETCHT0) and returns at once: unlike a load, it does not hold
// up the instructions after it until the line is there.
//
//go:noescape
func prefetch(p unsafe.Pointer)

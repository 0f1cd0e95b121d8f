//go:build !amd64

package nametable

import "unsafe"

// prefetch is a hint that does nothing on this machine.
func prefetch(p unsafe.Pointer) {}

//go:build !unix

package disk

import (
	"errors"
	"os"
)

// Lock is unsupported where flock is not available.
type Lock struct{}

// TryLock reports errors.ErrUnsupported: gds's build lock needs flock.
func TryLock(path string, perm os.FileMode) (*Lock, bool, error) {
	return nil, false, errors.ErrUnsupported
}

// Unlock does nothing.
func (l *Lock) Unlock() {}
